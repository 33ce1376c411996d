"""The History panel (View → History): past runs, newest first; open one into the form; delete one.

How this works
--------------
`HistoryPanel(window, session, history)` is a dock. Its top line is the history file's full path,
with a button that opens its folder. The list has one row per committed run (`livefill.recording.history_entries`:
when, document, mode, wire, outcome), newest first; the selected run's values are shown below it
as JSON, so a run whose document cannot be opened again can still be read. The file is read off
the GUI thread (`asyncio.to_thread`) when the panel is shown, after every run, after a delete and
on Refresh. A torn or damaged line is skipped; the panel keeps saying how many, and the status and
run log say each one once (`History.new_problems`).

Open into form (the button, Enter or a double click) brings the run's document and schema back
(`livefill.recording.history_entries.reopen_plan`: a bundled scenario, or a document file found again by its
path; the single view is shown) and loads the run's values into that document's form, exactly,
every value settled. It is one step on the window's undo stack (`window.undo_stack`): Undo puts the
form back exactly as it was (`FormModel.snapshot` / `put_back`), marks included, and the document
shown before — unless the form changed since (an edit, a run): then nothing is undone, the step
is dropped and the status says so, so Undo never throws away later work. What cannot be opened (a pasted text, a moved file) is one line in the status.

Delete… asks first, then removes the record from the file for good (`History.delete`: an atomic
rewrite under the lock every append takes; another instance appending meanwhile loses nothing).

"Record compare and autoplay runs" is `session.record_all_runs`: off by default, so the history
holds what a person ran in the single form; the choice is remembered in the window's store.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from livefill.extraction.documents import DocumentError, load_document
from livefill.extraction.form import FormModel, FormSnapshot
from livefill.recording.history import History, HistoryEntry, HistoryReadError, HistoryWriteError
from livefill.recording.history_entries import RunSummary, newest_first, recording_id, reopen_plan, summarize, text_sha256
from livefill.session.session import ActiveChanged, AllDone, Session
from livefill.session.replay import trace_settings
from livefill.recording.trace import TraceError, load_trace
from livefill.gui import warmup
from livefill.gui.saves import open_folder

__all__ = ["HistoryPanel", "OpenRunCommand", "undo_stack_of", "RECORD_ALL_KEY"]

RECORD_ALL_KEY = "history_record_all_runs"
COLUMNS = ("When", "Document", "Mode", "Wire", "Outcome")
_DOCUMENT_SETTINGS = ("scenario", "document", "document_name", "document_path", "schema_name")


def undo_stack_of(window: Any) -> QUndoStack:
    """The window's undo stack (made on first use)."""
    stack = getattr(window, "undo_stack", None)
    if stack is None:
        stack = QUndoStack(window)
        window.undo_stack = stack
    return stack


class OpenRunCommand(QUndoCommand):
    """Open a past run into the form, as one undoable step."""

    def __init__(self, session: Session, text: str, before_settings: dict[str, Any], after_settings: dict[str, Any],
                 form: FormModel, before: FormSnapshot, after: FormSnapshot, say: Any = None) -> None:
        super().__init__(text)
        self.session = session
        self.say = say
        self.before_settings, self.after_settings = before_settings, after_settings
        self.form, self.before, self.after = form, before, after
        self._done = True  # the step was taken before it was pushed

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        if self.form.snapshot() != self.before:
            self._changed_since()
            return
        self.session.replace(**self.after_settings)
        self.form.put_back(self.after)

    def undo(self) -> None:
        if self.form.snapshot() != self.after:  # edited (or run) since: undoing would lose that
            self._changed_since()
            return
        self.form.put_back(self.before)
        self.session.replace(**self.before_settings)
        if self.say is not None:  # (the line that said "Edit → Undo puts the form back" is done with)
            self.say(f"Undone: {self.text().lower()}; the form shows what it showed before")

    def _changed_since(self) -> None:
        self.setObsolete(True)  # the stack drops it; the form stays as it is
        if self.say is not None:
            self.say(f"The form has changed since \u201c{self.text()}\u201d: it stays as it is (nothing was undone)")


class HistoryPanel(QDockWidget):
    """The History dock (see the module docstring). Signals: `opened(str)` / `deleted(str)` (a
    record's key), `loaded(int)` (rows listed after a read)."""

    opened = Signal(str)
    deleted = Signal(str)
    loaded = Signal(int)

    def __init__(self, window: Any, session: Session, history: History | None) -> None:
        super().__init__("History", window)
        self.setObjectName("historyDock")
        self.window_ = window
        self.session = session
        self.history = history
        self.entries: list[HistoryEntry] = []
        self.summaries: list[RunSummary] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reading = False
        self._again = False

        self.path_field = QLineEdit()  # the full path, scrollable and selectable, never widening the window
        self.path_field.setObjectName("historyPath")
        self.path_field.setReadOnly(True)
        self.folder_button = QPushButton("Open folder")
        self.folder_button.setObjectName("historyOpenFolder")
        self.folder_button.setToolTip("Show the history file's folder in the file manager")
        self.folder_button.clicked.connect(lambda: open_folder(self.history.path.parent) if self.history else None)
        self.problems_label = QLabel()
        self.problems_label.setObjectName("historyProblems")
        self.problems_label.setTextFormat(Qt.TextFormat.PlainText)
        self.problems_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.problems_label.hide()
        self.record_all = QCheckBox("Record compare && autoplay runs")
        self.record_all.setObjectName("recordAllRuns")
        self.record_all.setToolTip("Off: only runs of the single form are recorded. On: every lane of a compare"
                                   " run, and every loop of autoplay, is recorded too.")
        self.record_all.toggled.connect(self.set_record_all)

        self.list = QTreeWidget()
        self.list.setObjectName("historyList")
        self.list.setColumnCount(len(COLUMNS))
        self.list.setHeaderLabels(list(COLUMNS))
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.list.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.list.itemSelectionChanged.connect(self._selection_changed)
        self.list.itemActivated.connect(lambda _item, _col: self.open_selected())
        self.preview = QPlainTextEdit()
        self.preview.setObjectName("historyPreview")
        self.preview.setReadOnly(True)
        self.preview.setPlaceholderText("The values of the run selected above")
        self.empty_label = QLabel()
        self.empty_label.setObjectName("historyEmpty")
        self.empty_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        self.open_button = QPushButton("Open into form")
        self.open_button.setObjectName("historyOpen")
        self.open_button.setToolTip("Show this run's document and load its values into the form (Undo puts the form back)")
        self.open_button.clicked.connect(lambda: self.open_selected())
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("historyDelete")
        self.delete_button.setToolTip("Remove this run from the history file, for good")
        self.delete_button.clicked.connect(lambda: self.delete_selected())
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setObjectName("historyRefresh")
        self.refresh_button.clicked.connect(lambda: self.refresh())
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.list, activated=lambda: self.delete_selected())

        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)
        count_row = QHBoxLayout()
        count_row.addWidget(self.empty_label, 1)
        count_row.addWidget(self.refresh_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(self.list)
        split.addWidget(self.preview)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        where = QHBoxLayout()
        where.addWidget(QLabel("File:"))
        where.addWidget(self.path_field, 1)
        where.addWidget(self.folder_button)
        layout.addLayout(where)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.record_all)
        layout.addLayout(count_row)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        # a width of its own: what the panel holds never moves the window's layout (a dock whose
        # size hint follows its content makes the main window re-lay the source pane out)
        body.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        body.setMinimumWidth(240)
        self._sized = False
        self.setWidget(body)

        store = getattr(window, "store", None)
        remembered = store.value(RECORD_ALL_KEY) if store is not None else None
        self.record_all.setChecked(remembered == "1")
        session.record_all_runs = self.record_all.isChecked()
        session.subscribe(self._on_session_event)
        self.visibilityChanged.connect(self._visibility)
        self._render_path()
        self._render_rows()

    # -- reading --------------------------------------------------------------------------------

    def _visibility(self, visible: bool) -> None:
        if not visible:
            return
        if not self._sized and not self.isFloating():  # room for every column the first time
            self._sized = True
            QTimer.singleShot(0, lambda: self.window_.resizeDocks(
                [self], [min(480, max(240, self.window_.width() // 3))], Qt.Orientation.Horizontal))
        self.refresh()

    def _render_path(self) -> None:
        if self.history is None:
            self.path_field.setText("none: runs are not recorded in this window")
            self.folder_button.setEnabled(False)
            self.record_all.setEnabled(False)
            return
        path = self.history.path
        self.path_field.setText(str(path))
        self.path_field.setCursorPosition(0)
        self.path_field.setToolTip(f"Every committed run is one line of {path}")

    def refresh(self) -> asyncio.Task[None] | None:
        """Read the history file again (off the GUI thread); the task."""
        if self.history is None:
            return None
        return self._spawn(self.reload())

    async def reload(self) -> None:
        """Read the file and list its runs, newest first."""
        if self.history is None:
            return
        if self._reading:  # one read at a time; one more after it if asked meanwhile
            self._again = True
            return
        self._reading = True
        try:
            while True:
                self._again = False
                try:
                    entries = await asyncio.to_thread(self.history.entries)
                except HistoryReadError as exc:
                    self._say(str(exc))
                    entries = []
                self.entries = newest_first(entries)
                self.summaries = [summarize(e) for e in self.entries]
                self._render_rows()
                self._show_problems()
                if not self._again:
                    break
        finally:
            self._reading = False
        self.loaded.emit(len(self.entries))

    def _render_rows(self) -> None:
        selected = self.selected_key()
        self.list.clear()
        for summary in self.summaries:
            item = QTreeWidgetItem([summary.when, summary.what, summary.mode, summary.wire, summary.outcome])
            item.setData(0, Qt.ItemDataRole.UserRole, summary.key)
            tip = f"{summary.when} · {summary.what} · {summary.mode} · {summary.wire} · {summary.outcome}"
            for column in range(len(COLUMNS)):
                item.setToolTip(column, tip)
            self.list.addTopLevelItem(item)
            if summary.key == selected:
                item.setSelected(True)
        for column in range(len(COLUMNS) - 1):
            self.list.resizeColumnToContents(column)
        if self.history is None:
            self.empty_label.setText("")
        elif not self.summaries:
            self.empty_label.setText("No runs yet: every run of the single form that commits is listed here.")
        else:
            count = len(self.summaries)
            self.empty_label.setText(f"{count} run{'s' if count != 1 else ''}, newest first")
        if self.list.currentItem() is None and self.list.topLevelItemCount():
            self.list.setCurrentItem(self.list.topLevelItem(0))
        self._selection_changed()

    def _show_problems(self) -> None:
        assert self.history is not None
        problems = self.history.problems
        if problems:
            count = len(problems)
            self.problems_label.setText(
                f"{count} damaged line{'s' if count != 1 else ''} skipped (an app stopped while writing):"
                f" {problems[0]}" + (" …" if count > 1 else ""))
            self.problems_label.setToolTip("\n".join(problems))
            self.problems_label.show()
        else:
            self.problems_label.hide()
        for note in self.history.new_problems():  # each one said once
            self._say(f"history: {note}")

    def selected_key(self) -> str | None:
        """The key of the run selected in the list, or None."""
        items = self.list.selectedItems()
        return items[0].data(0, Qt.ItemDataRole.UserRole) if items else None

    def entry(self, key: str) -> HistoryEntry | None:
        return next((e for e in self.entries if e.key == key), None)

    def select(self, key: str) -> bool:
        """Select the row of `key`; False if it is not listed."""
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole) == key:
                self.list.setCurrentItem(item)
                return True
        return False

    def _selection_changed(self) -> None:
        key = self.selected_key()
        entry = self.entry(key) if key is not None else None
        self.open_button.setEnabled(entry is not None and not self.session.active)
        self.delete_button.setEnabled(entry is not None)
        self.preview.setPlainText(
            json.dumps(entry.record.get("extraction"), ensure_ascii=False, indent=2) if entry is not None else "")

    def _on_session_event(self, event: Any) -> None:
        if isinstance(event, AllDone) and self.isVisible():
            self.refresh()
        elif isinstance(event, ActiveChanged):
            self.open_button.setEnabled(not event.active and self.selected_key() is not None)

    # -- opening --------------------------------------------------------------------------------

    def open_selected(self) -> asyncio.Task[bool] | None:
        key = self.selected_key()
        return self.open_entry(key) if key is not None else None

    def open_entry(self, key: str) -> asyncio.Task[bool]:
        """Open the run `key` into the form (see the module docstring); the task (True: opened)."""
        return self._spawn(self._open(key))

    async def _open(self, key: str) -> bool:
        entry = self.entry(key)
        if entry is None:
            self._say("That run is no longer in the history.")
            return False
        if self.session.active:
            self._say("Stop the run before opening a past run into the form.")
            return False
        plan = reopen_plan(entry.record)
        if plan.problem is not None:
            self._say(f"Cannot open this run into the form: {plan.problem}. Its values are shown in the History panel.")
            return False
        settings = dict(plan.settings)
        note = ""
        if plan.trace_path is not None:
            try:
                trace = await asyncio.to_thread(load_trace, plan.trace_path, replayable=False)
            except TraceError as exc:
                self._say(f"Cannot open this run into the form: {exc}")
                return False
            if plan.trace_id is not None and recording_id(trace) != plan.trace_id:
                self._say(f"Cannot open this run into the form: its recording {plan.trace_path} now holds another run."
                          " Its values are shown in the History panel.")
                return False
            settings.update(trace_settings(trace))
            note = _changed_note(trace.name, settings["document"], plan.document_sha256)
        if plan.document_path is not None:
            try:
                doc = await asyncio.to_thread(load_document, plan.document_path)
            except DocumentError as exc:
                self._say(f"Cannot open this run into the form: {exc.message}")
                return False
            note = _changed_note(doc.name, doc.text, plan.document_sha256)
            settings.update(document=doc.text, document_name=doc.name, document_path=str(doc.path.resolve())
                            if doc.path is not None else plan.document_path)
        if self.session.active:  # a Start while the file was read
            self._say("Stop the run before opening a past run into the form.")
            return False
        window = self.window_
        window.commit_pending_edits()  # a value still being typed is part of what Undo puts back
        if warmup.cancel_deferred():  # a Start still waiting for the demo provider would overwrite the opened run
            self._say("The Start waiting for the demo provider was cancelled: a past run was opened instead.")
        if self.session.replay is not None:
            self.session.leave_replay()
        if self.session.comparing:
            window.set_compare(False)
            window.compare_action.blockSignals(True)
            window.compare_action.setChecked(False)
            window.compare_action.blockSignals(False)
        old = self.session.settings
        before_settings = {name: getattr(old, name) for name in _DOCUMENT_SETTINGS}
        after_settings = {**before_settings, **settings}
        self.session.replace(**after_settings)
        form = self.session.form
        before = form.snapshot()
        form.load(plan.extraction)
        summary = summarize(entry)
        text = f"Open run of {summary.when}"
        undo_stack_of(window).push(OpenRunCommand(self.session, text, before_settings, after_settings, form, before,
                                                  form.snapshot(), say=self._say))
        self._say(f"Opened the run of {summary.when} ({summary.what}, {summary.mode}) into the form{note};"
                  " Edit → Undo puts the form back")
        self.opened.emit(key)
        return True

    # -- deleting -------------------------------------------------------------------------------

    def delete_selected(self, *, confirm: bool = True) -> Any:
        """Delete the selected run (asking first, unless `confirm` is False)."""
        key = self.selected_key()
        if key is None or self.history is None:
            return None
        if not confirm:
            return self.delete_entry(key)
        entry = self.entry(key)
        summary = summarize(entry) if entry is not None else None
        if summary is None:
            what = key
        elif summary.when:
            what = f"the run of {summary.when} ({', '.join(x for x in (summary.what, summary.mode, summary.wire) if x)})"
        else:  # not a run's record
            what = f"{summary.what}, {summary.outcome},"
        box = QMessageBox(QMessageBox.Icon.Question, "Delete this run?",
                          f"Delete {what} from {self.history.path}? It cannot be brought back.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("historyDeleteBox")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda result: self.delete_entry(key)
                             if result == QMessageBox.StandardButton.Yes else None)
        box.open()  # never a nested event loop under qasync
        return box

    def delete_entry(self, key: str) -> asyncio.Task[bool]:
        """Remove the run `key` from the file for good; the task (True: removed)."""
        return self._spawn(self._delete(key))

    async def _delete(self, key: str) -> bool:
        assert self.history is not None
        entry = self.entry(key)
        try:
            removed = await asyncio.to_thread(self.history.delete, [key])
        except HistoryWriteError as exc:
            self._say(f"{exc}; nothing was deleted")
            return False
        if removed:
            what = summarize(entry) if entry is not None else None
            self._say(f"Deleted the run of {what.when} from {self.history.path}" if what else
                      f"Deleted a run from {self.history.path}")
            self.deleted.emit(key)
        else:
            self._say("That run was no longer in the history.")
        await self.reload()
        return bool(removed)

    # -- the record-all choice ------------------------------------------------------------------

    def set_record_all(self, on: bool) -> None:
        """Record compare and autoplay runs too (remembered)."""
        self.session.record_all_runs = on
        if self.record_all.isChecked() != on:
            self.record_all.setChecked(on)
        store = getattr(self.window_, "store", None)
        if store is not None:
            store.set_value(RECORD_ALL_KEY, "1" if on else "0")
            store.sync()

    # -- plumbing -------------------------------------------------------------------------------

    def _say(self, line: str) -> None:
        say = getattr(self.window_, "say", None)
        if say is not None:
            say(line)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait(self) -> None:
        """Wait for every read, open and delete in progress."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


def _changed_note(name: str, text: str, sha256: str | None) -> str:
    """The words added when a run's document has changed since the run ("" when it has not)."""
    if sha256 is not None and text_sha256(text) != sha256:
        return f" ({name} has changed since this run: the values are the run's)"
    return ""
