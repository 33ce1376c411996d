"""The main window: it renders a `livefill.session.session.Session` and sends it the user's intents.

`MainWindow(session, ...)` keeps no setting of its own: the Run toolbar (`livefill.gui.run_toolbar`)
shows the session's settings and writes the user's choices to it; Start, Stop and Compare are
intents. The window is assembled from parts that each own their widgets and actions: the central
area (`livefill.gui.window_body`), the views (`livefill.gui.window_views`), the docks
(`livefill.gui.docks`, `livefill.gui.history_panel`), the menus (`livefill.gui.window_menus`), the
undo stack (`livefill.gui.form_undo`) and the remembered settings (`livefill.gui.remembered`).
How the parts fit together: docs/notes/main-window.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import QMainWindow, QWidget

from livefill.errors import InputError
from livefill.extraction.documents import Document
from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.gui.compare_view import CompareView
from livefill.gui.controller import RunController
from livefill.gui.docks import DockFollower
from livefill.gui.document_actions import DocumentActions
from livefill.gui.errors import reporting
from livefill.gui.form_undo import FormUndo
from livefill.gui.history_panel import HistoryPanel
from livefill.gui.lane import Lane
from livefill.gui.pending_start import PendingStart
from livefill.gui.presentation import Presentation
from livefill.gui.remembered import Remembered
from livefill.gui.run_toolbar import RunToolbar
from livefill.gui.settings_dialog import SettingsDialog
from livefill.gui.warmup import Warmup
from livefill.gui.window_autoplay import AutoplayControl
from livefill.gui.window_body import WindowBody, fit_to_screen
from livefill.gui.window_menus import WindowMenus, save_picture
from livefill.gui.window_views import ViewSwitcher
from livefill.recording.history import History
from livefill.session.app_settings import SavedSettings, SettingsStore
from livefill.session.run_config import RunConfig
from livefill.session.run_status import RunStatus
from livefill.session.session import Session
from livefill.session.session_events import LanesChanged, SessionEvent, SettingsChanged, ViewChanged
from livefill.widgets.field_base import FieldWidget
from livefill.widgets.form_view import FormView
from livefill.widgets.value_tips import install_value_tips
from livefill.wire.keys import KeyStore

__all__ = ["MainWindow"]

_REMEMBERED = frozenset({"provider", "model", "compatible_base_url", "compatible_model", "ollama_base_url",
                         "ollama_model", "scenario", "document", "document_path", "schema_name", "prices"})


class MainWindow(QMainWindow):
    """The livefill window on `session` (its settings, keys and history: `livefill.gui.launch_session`).

    The window's own options: `store` is where the remembered settings are saved whenever one
    changes (`remembered`: what it held at launch; `theme` is saved with them); `document` a
    document of one's own to start with; `compare` starts in the compare view with these lane
    modes (2 to 5).

    Signals: `closed()`, `statusChanged(RunStatus)` (the single run's or any lane's, at most once
    per frame each), `activeChanged(bool)` (some run is active / none is), `runsFinished()` (the
    single run, or the last lane of a compare run, ended).
    """

    closed = Signal()
    statusChanged = Signal(object)  # noqa: N815 - Qt signal naming
    activeChanged = Signal(bool)  # noqa: N815
    runsFinished = Signal()  # noqa: N815

    def __init__(
        self,
        session: Session,
        *,
        store: SettingsStore | None = None,
        remembered: SavedSettings | None = None,
        theme: str = "system",
        document: Document | None = None,
        compare: Sequence[Mode | str] | None = None,
        warmup: Warmup | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.warmup = warmup or Warmup()  # the app's (livefill.gui.launch's); one never started is ready
        self.setWindowTitle("livefill — a form that fills itself while the model writes")
        self.session = session
        self.store = store
        self.remembered = Remembered(session, store, remembered, theme)
        self.settings_dialog: SettingsDialog | None = None  # made on first use
        self._body_sizes: list[int] | None = None

        self.toolbar = RunToolbar(self, session, say=self._say_line)
        tb = self.toolbar
        self.run_toolbar = tb.bar
        self.scenario_combo, self.provider_combo = tb.scenario_combo, tb.provider_combo
        self.mode_combo, self.speed_combo = tb.mode_combo, tb.speed_combo
        self.faults_button, self.fault_actions = tb.faults_button, tb.fault_actions
        self.settings_button = tb.settings_button
        self.show_strings_action, self.show_numbers_action = tb.show_strings_action, tb.show_numbers_action
        self.start_button, self.stop_button, self.compare_action = tb.start_button, tb.stop_button, tb.compare_action
        self.presentation_keep = tb.presentation_keep
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.compare_action.toggled.connect(self._compare_toggled)

        self.single_view = Lane(session, session.single, chrome=False, defer_form=bool(compare))  # built when shown
        body = self.body = WindowBody(self.single_view)
        self.setCentralWidget(body)
        self.body_splitter, self.top_splitter = body, body.top_splitter
        self.source_pane, self.source_view, self.document_bar = body.source_pane, body.source_view, body.document_bar
        self.legend, self.status_line, self.run_log = body.legend, body.status_line, body.run_log
        self.pending_start = PendingStart(self, body.status_line, warmup=lambda: self.warmup, start=self.start,
                                          show_busy=self._show_busy, show_status=lambda: self.views.show_status())
        self.documents = DocumentActions(self, session, body.document_bar, body.source_view, run_log=body.run_log,
                                         commit_edits=self.commit_pending_edits)
        self.views = ViewSwitcher(self, session, body, self.single_view, self.compare_action)
        self._connect_views()

        self.form_undo = FormUndo(self, session, say=self._say_line, commit_edits=self.commit_pending_edits)
        self.undo_stack = self.form_undo.stack
        self.clear_action, self.undo_action, self.redo_action = (
            self.form_undo.clear_action, self.form_undo.undo_action, self.form_undo.redo_action)
        self.undo_clear_action = self.undo_action  # the one Undo: a clear is undone by it too
        self._build_docks()
        self.autoplay_control = AutoplayControl(self, on_active=self._on_active)
        self.autoplay = self.autoplay_control.autoplay
        self.menus = WindowMenus(
            self, session, toolbar=tb, documents=self.documents, undo=self.form_undo, legend=body.legend,
            run_log=body.run_log, store=store, inspector=self.inspector_dock, timeline=self.timeline_dock,
            history=self.history_panel, open_settings=self.open_settings, toggle_presentation=self.toggle_presentation,
            autoplay_clicked=self.autoplay_control.clicked,
        )
        m = self.menus
        self.open_document_action, self.open_schema_action = m.open_document_action, m.open_schema_action
        self.settings_action, self.paste_document_action = m.settings_action, m.paste_document_action
        self.save_picture_action, self.save_picture_button = m.save_picture_action, m.save_picture_button
        self.export_timeline_action, self.legend_action = m.export_timeline_action, m.legend_action
        self.inspector_action, self.timeline_action, self.history_action = m.inspector_action, m.timeline_action, m.history_action
        self.present_action, self.autoplay_action = m.present_action, m.autoplay_action
        self.recordings, self.animation_export = m.recordings, m.animation_export

        self.autoplay_control.action = self.autoplay_action
        self.presentation = Presentation(self, self.run_toolbar, keep=self.presentation_keep,
                                         hide=self.presentation_hide)
        self.presentation.changed.connect(self.presentation_changed)
        self.presentation.changed.connect(self.present_action.setChecked)  # Esc leaves too: the item unticks
        session.subscribe(self._on_session_event)
        self.setAcceptDrops(True)
        if document is not None:
            self.documents.use(document)
        self.documents.render()
        self.docks.sync()
        self._on_active()

        QShortcut(QKeySequence("Ctrl+Return"), self, activated=self.start)
        QShortcut(QKeySequence("Ctrl+Enter"), self, activated=self.start)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.escape)
        fit_to_screen(self)  # within the screen, with a usable minimum
        if compare:
            self.set_compare(True, compare)
        # a value cut short by a narrow lane: whole in its tooltip. Installed once the window is
        # built: an application-wide filter in Python runs for every event, the ~15,000 events
        # of building the window included, which need no tooltip.
        install_value_tips()

    # -- construction -----------------------------------------------------------------------

    def _connect_views(self) -> None:
        views = self.views
        views.statusChanged.connect(self.statusChanged)
        views.activeChanged.connect(self._on_active)
        views.runsFinished.connect(self._on_runs_finished)
        views.lanesChanged.connect(lambda: self.docks.sync())
        views.fieldPicked.connect(self.show_field_bytes)
        views.recorderChanged.connect(lambda lane, recorder: self.inspector_dock.set_recorder(lane, recorder))

    def _build_docks(self) -> None:
        self.docks = DockFollower(self, self.session)
        self.inspector_dock, self.timeline_dock = self.docks.inspector, self.docks.timeline
        self.inspector_dock.pointerSelected.connect(self.views.reveal)
        self.history_panel = HistoryPanel(self, self.session, undo_stack=self.undo_stack, store=self.store, say=self._say_line,
                                          commit_edits=self.commit_pending_edits,
                                          cancel_start=self.pending_start.cancel)

    # -- what the session holds, for scripts and tests --------------------------------------------

    @property
    def history(self) -> History | None:
        """Where the session's committed runs are recorded (None: nowhere)."""
        return self.session.history

    @property
    def compare_view(self) -> CompareView | None:
        """The compare view (None until it is first shown)."""
        return self.views.compare_view

    @property
    def fault(self) -> str | None:
        """The demo fault `NAME[@FRACTION]`, or None."""
        return self.session.settings.fault

    @property
    def form(self) -> FormModel:
        """The single form's form model (of the scenario shown)."""
        return self.session.form

    @property
    def form_view(self) -> FormView | None:
        """The single form's FormView (built now if the window opened in the compare view)."""
        return self.single_view.ensure_form()

    @property
    def controller(self) -> RunController:
        """The single form's run controller."""
        return self.single_view.controller

    @property
    def comparing(self) -> bool:
        """True while the compare view is shown."""
        return self.session.comparing

    @property
    def lanes(self) -> list[Lane]:
        """The compare view's lanes (empty when it is not shown)."""
        view = self.compare_view
        return list(view.lanes) if self.comparing and view is not None else []

    @property
    def active(self) -> bool:
        """True while a run (the single one, or any lane's) is active."""
        return self.session.active

    @property
    def presenting(self) -> bool:
        """True in presentation mode."""
        return self.presentation.active

    def field(self, pointer: str) -> FieldWidget:
        """The widget of the field at `pointer` in the single form."""
        return self.single_view.field(pointer)

    def set_fault(self, name: str | None) -> None:
        """Select a demo fault, `NAME` or `NAME@FRACTION` (None: none)."""
        self.session.replace(fault=name)

    def set_slicing(self, value: str) -> None:
        """The demo slicing knob for the next run of every lane ("event", "N", "coalesce:MS")."""
        self.session.replace(slicing=value)

    def run_config(self) -> RunConfig:
        """The RunConfig of the next run, from the session's settings."""
        return self.session.run_config()

    # -- rendering the session ----------------------------------------------------------------

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, SettingsChanged):
            if event.changed & {"scenario", "document", "schema_name", "document_name", "provider"}:
                self.documents.render()
            if event.changed & _REMEMBERED:
                self.save_settings()
            if "mode" in event.changed:
                self.docks.sync()
        elif isinstance(event, ViewChanged):
            self._show_view(event.comparing)
        elif isinstance(event, LanesChanged) and self.comparing:
            self.docks.sync()

    def _show_view(self, comparing: bool) -> None:
        self.views.show(comparing)
        self._on_active()
        self.docks.sync()
        self.views.show_status()

    # -- intents ------------------------------------------------------------------------------

    @reporting
    def start(self) -> None:
        """Start a run with the session's settings: the single form's, or every lane's (ignored while one is active)."""
        if self.active or self.pending_start.take():  # taken: it begins once the server and SDKs are up
            return
        self.commit_pending_edits()  # a value still being typed belongs to the form the run snapshots
        try:
            if self.comparing and self.compare_view is not None:
                self.compare_view.start()
            else:
                self.session.start()
        except InputError as exc:  # no key, no address, a schema that cannot be used: nothing was sent
            self.say(str(exc))
            return
        self.views.show_status()

    def commit_pending_edits(self) -> None:
        """Send every edit still in progress (cursor still in the field) to its form."""
        for view in (self.single_view.form_view, *(lane.form_view for lane in self.lanes)):
            if view is not None:
                view.commit_pending_edits()

    def say(self, message: str) -> None:
        """One line in the status bar and the run log (a choice that cannot be used; nothing is lost)."""
        self.statusBar().showMessage(message, 15000)
        self.run_log.addItem(message)
        self.run_log.scrollToBottom()

    def _say_line(self, message: str) -> None:
        self.say(message)  # what the parts say goes through `say` as it is then (a script may replace it)

    @reporting
    def stop(self) -> None:
        """Stop the active run(s) (a real cancel: every connection closes); ends autoplay too."""
        if self.autoplay.active:
            self.autoplay.stop()
        self.pending_start.cancel()
        self.session.stop()

    def escape(self) -> None:
        """Esc: stop what runs; when nothing runs, leave presentation mode."""
        if self.pending_start.waiting or self.active or self.autoplay.active:
            self.stop()  # (a Start still waiting for the warm-up is dropped)
        elif self.presenting:
            self.presentation.leave()

    def set_compare(self, on: bool, modes: Sequence[Mode | str] | None = None) -> None:
        """Show the compare view (with these lane modes, if given) or the single form."""
        if on:
            self.session.enter_compare(modes)
        else:
            self.session.leave_compare()
        self._show_view(on)

    @reporting
    def _compare_toggled(self, on: bool) -> None:
        if self.active:
            self.compare_action.blockSignals(True)
            self.compare_action.setChecked(not on)
            self.compare_action.blockSignals(False)
            return
        self.set_compare(on)

    async def wait_runs(self) -> list[RunStatus | None]:
        """Wait until no run is active; the final statuses (the single run's, or each lane's)."""
        await self.session.wait()
        await self.controller.wait()
        if self.compare_view is not None:
            await self.compare_view.wait()
        return self.last_statuses()

    def last_statuses(self) -> list[RunStatus | None]:
        """The latest status of the single run, or of each lane in compare view."""
        if self.comparing and self.compare_view is not None:
            return self.compare_view.statuses()
        return [self.controller.last_status]

    # -- settings and documents -----------------------------------------------------------------

    def save_settings(self) -> None:
        """Write the remembered settings (never a key) to the settings store, if there is one and
        they differ from what it holds."""
        self.remembered.save()

    def open_settings(self) -> SettingsDialog:
        """File → Settings…: the keys and the local servers' addresses (one dialog, non-modal)."""
        if self.session.keys is None:
            self.session.keys = KeyStore()
        if self.settings_dialog is None:
            self.settings_dialog = SettingsDialog(self, self.session, say=self._say_line)
        self.settings_dialog.render()
        self.settings_dialog.show()
        self.settings_dialog.raise_()
        return self.settings_dialog

    def restore_last_document(self) -> object:
        """Open the document the last launch had (if any, and none is shown); the loading task."""
        path = self.remembered.last_document
        if not path or self.session.settings.document is not None:
            return None
        return self.documents.open_path(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt API)
        if DocumentActions.accepts(event.mimeData()) and not self.active:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 (Qt API)
        self.dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt API)
        """A dropped `.jsonl` file is a trace to replay (livefill.gui.recordings); anything else a document."""
        mime = event.mimeData()
        urls = mime.urls() if mime.hasUrls() else []
        local = [u.toLocalFile() for u in urls if u.isLocalFile()]
        if local and local[0].lower().endswith(".jsonl"):
            event.acceptProposedAction()
            self.recordings.open_trace(local[0])
        elif self.documents.take_mime(mime, text_name="Dropped text"):
            event.acceptProposedAction()
        else:
            event.ignore()

    # -- what the lanes report ------------------------------------------------------------------

    def _on_active(self, _active: bool = False) -> None:
        self._show_busy()
        self.activeChanged.emit(self.active)

    def _show_busy(self) -> None:
        busy = self.active or self.pending_start.waiting  # a Start taken (livefill.gui.pending_start) shows as a run
        self.toolbar.set_enabled(busy, self.comparing, self.autoplay.active)
        self.document_bar.set_enabled(not busy)
        self.inspector_dock.set_busy(busy)  # (the slicing knob, greyed)

    def _on_runs_finished(self) -> None:
        self.docks.update_note()
        self.runsFinished.emit()

    def show_field_bytes(self, lane: str, pointer: str) -> None:
        """Highlight, in the wire inspector, the bytes that carried `pointer` in `lane`."""
        self.inspector_dock.show_field(lane, pointer)

    # -- presenting and autoplay ----------------------------------------------------------------

    def toggle_presentation(self) -> None:
        """F11: enter or leave presentation mode."""
        self.presentation.toggle()
        self.present_action.setChecked(self.presentation.active)

    def presentation_hide(self) -> list[QWidget]:
        """What presentation mode hides besides the toolbar's extras and the menu bar."""
        extras = self.compare_view.presentation_hide() if self.compare_view is not None else []
        return [self.run_log, self.document_bar.open_button, self.document_bar.paste_button, *extras]

    def presentation_changed(self, active: bool) -> None:
        """After entering / leaving presentation mode: the bottom area, the metrics table's height."""
        if active:
            self._body_sizes = self.body_splitter.sizes()
            total = sum(self._body_sizes)
            line = self.status_line.sizeHint().height()
            self.body_splitter.setSizes([total - line, line])
        elif self._body_sizes:
            self.body_splitter.setSizes(self._body_sizes)
        if self.compare_view is not None:
            self.compare_view.refit()

    def start_autoplay(self, pause: float | None = None, max_cycles: int | None = None) -> None:
        """Replay the chosen scenario in a loop (stop with Stop, Esc, or `autoplay.stop()`)."""
        self.autoplay_control.start(pause, max_cycles)

    # -- pictures and introspection -------------------------------------------------------------

    def save_picture(self, path: str | Path, picture: QPixmap | None = None) -> Path:
        """Write a PNG picture of the window (now, or `picture` taken earlier) to `path`."""
        return save_picture(self, path, picture)

    def refresh_now(self) -> None:
        """Show everything pending at once (forms, lane headers, the metrics table): before a picture."""
        for lane in (self.single_view, *self.lanes):
            if lane.form_view is not None:
                lane.form_view.signals.flush()
            if lane.header is not None:  # (the single form has none)
                lane.header.refresh()
        if self.comparing and self.compare_view is not None:
            self.compare_view.metrics_table.refresh()

    def field_states(self) -> dict[str, str]:
        """The `state` property of every field widget shown in the single form, by pointer."""
        return self.single_view.field_states()

    def any_provisional(self) -> bool:
        """True if a field of the forms shown shows a provisional value now (a value with text,
        not just an opened table or group)."""
        return self.views.any_provisional()

    # -- closing --------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop autoplay, cancel every active run (and a Start still waiting) and wait until every stream is closed."""
        self.pending_start.cancel()
        await self.autoplay.shutdown()
        self.toolbar.shutdown()
        await self.documents.wait()
        await self.history_panel.wait()
        await self.session.shutdown()
        await self.controller.shutdown()
        if self.compare_view is not None:
            await self.compare_view.shutdown()
            self.compare_view.release()
        self.single_view.release()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        self.save_settings()
        event.accept()
        self.closed.emit()
