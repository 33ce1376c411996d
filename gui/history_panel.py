"""The History panel (View → History): past runs, newest first; open one into the form; delete one.

`HistoryPanel` is a dock over the session's `History`: the history file's full path (and a button
that opens its folder), one row per committed run (`livefill.recording.history_entries`), newest
first, and the selected run's values as JSON below, so a run whose document cannot be opened
again can still be read. The file is read off the GUI thread (`asyncio.to_thread`) when the panel
is shown, after every run, after a delete and on Refresh; a damaged line is skipped, and said once
(`History.new_problems`). Open into form is `livefill.gui.open_run` (one step of the window's undo
stack). Delete… asks first, then removes the record for good (`History.delete`: an atomic rewrite
under the lock every append takes). "Record compare and autoplay runs" is
`session.record_all_runs`: off by default, remembered in the window's settings store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
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

from livefill.gui.open_run import RunOpener
from livefill.gui.saves import open_folder
from livefill.recording.history import HistoryEntry, HistoryReadError, HistoryWriteError
from livefill.recording.history_entries import RunSummary, newest_first, summarize
from livefill.session.app_settings import SettingsStore
from livefill.session.session import Session
from livefill.session.session_events import ActiveChanged, AllDone, SessionEvent
from livefill.widgets.elided_label import ElidedLabel

__all__ = ["HistoryPanel", "RECORD_ALL_KEY"]

RECORD_ALL_KEY = "history_record_all_runs"
PATH_WIDTH = 460
"""The widest a path is shown in the delete prompt before the box has laid it out, in pixels."""


def _fit_path(box: QMessageBox, path: str) -> None:
    """Show `path` as the informative line of `box` (shown) at the width the box gives it: whole,
    or without its middle, never wrapped inside a name (the whole path is the box's tooltip)."""
    label = box.findChild(QLabel, "qt_msgbox_informativelabel")
    if label is None or label.contentsRect().width() <= 0:
        return
    shown = label.fontMetrics().elidedText(path, Qt.TextElideMode.ElideMiddle, label.contentsRect().width())
    if shown != box.informativeText():
        box.setInformativeText(shown)
COLUMNS = ("When", "Document", "Mode", "Wire", "Outcome")


class HistoryPanel(QDockWidget):
    """The History dock (see the module docstring). Signals: `opened(str)` / `deleted(str)` (a
    record's key), `loaded(int)` (rows listed after a read)."""

    opened = Signal(str)
    deleted = Signal(str)
    loaded = Signal(int)

    def __init__(self, window: QMainWindow, session: Session, *, undo_stack: QUndoStack, store: SettingsStore | None,
                 say: Callable[[str], None], commit_edits: Callable[[], None], cancel_start: Callable[[], bool]) -> None:
        super().__init__("History", window)
        self.setObjectName("historyDock")
        self.window_ = window
        self.session = session
        self.history = session.history
        self.store = store
        self._say = say
        self.opener = RunOpener(session, undo_stack, say=say, commit_edits=commit_edits,
                                cancel_start=cancel_start)
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
        self.problems_label = ElidedLabel(max_lines=2)  # cut: "…", whole in the tooltip (never mid-word)
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
        self.empty_label = ElidedLabel(max_lines=2)  # it was cut mid-word ("every run of the s")
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

        remembered = store.value(RECORD_ALL_KEY) if store is not None else None
        self.record_all.setChecked(remembered == "1")
        session.record_all_runs = self.record_all.isChecked()
        session.subscribe(self._on_session_event)
        self.visibilityChanged.connect(self._visibility)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self)
        self.hide()
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

    def _on_session_event(self, event: SessionEvent) -> None:
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
        opened = await self.opener.open(self.entry(key))
        if opened:
            self.opened.emit(key)
        return opened

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
                          f"Delete {what} from this history file? It cannot be brought back.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("historyDeleteBox")
        # the file on a line of its own, never wrapped inside a name: too long, it loses its middle
        path = str(self.history.path)
        box.setInformativeText(box.fontMetrics().elidedText(path, Qt.TextElideMode.ElideMiddle, PATH_WIDTH))
        box.setToolTip(path)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda result: self.delete_entry(key)
                             if result == QMessageBox.StandardButton.Yes else None)
        box.open()  # never a nested event loop under qasync
        _fit_path(box, path)
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
        store = self.store
        if store is not None:
            store.set_value(RECORD_ALL_KEY, "1" if on else "0")
            store.sync()

    # -- plumbing -------------------------------------------------------------------------------

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait(self) -> None:
        """Wait for every read, open and delete in progress."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

