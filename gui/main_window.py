"""The main window: it renders a `livefill.session.session.Session` and sends it the user's intents.

How this works
--------------
The window makes one `Session` from its arguments and keeps no setting of its own: the Run
toolbar (`livefill.gui.run_toolbar`) shows the session's settings and writes the user's choices to it, the
wire inspector's slicing knob does the same, and Start / Stop / Compare are intents. The single
form is the session's single lane, drawn by the same `livefill.gui.lane.Lane` a compare lane uses (without
the lane's bar and header); the Compare toggle shows `livefill.gui.compare_view.CompareView`, which draws
the session's 2 to 5 compare lanes. The status line follows the single run (or every lane in one
line), the run log gets a line when a run ends. Nothing here decides anything about a run: that
is `livefill.session.session` and `livefill.session.run`.

Two docks follow whichever view is shown: the wire inspector (`livefill.gui.docks.InspectorDock`: a lane
selector and the selected lane's `WireRecorder`; pressing on a field in a form highlights the
bytes that carried it) and the timeline (`TimelineDock`). Presentation mode (F11,
`livefill.gui.presentation`), autoplay (`livefill.gui.autoplay`) and "Save picture" are actions of the View and
File menus (`livefill.gui.window_menus`).

The source pane is the session's document: a bar over it names it and gives its size and token
estimate for the provider; File → Open document…, Edit → Paste document and a file dropped on the
window make a document of one's own the session's (`livefill.gui.document_actions`). A dropped `.jsonl` file is a recorded
trace instead: File → Record runs, File → Recordings and replay are `livefill.gui.recordings`. File → Settings…
holds the keys (`livefill.gui.settings_dialog`, on the session's `KeyStore`); the remembered settings are
written to the window's store as they change (`livefill.gui.window_documents`).

Every slot that can fail is wrapped by `livefill.gui.errors.reporting`, so an exception reaches the user as
a message box. Closing the window emits `closed`; the application then shuts the runs down inside
the event loop (`shutdown()`) before it stops the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from livefill.session.app_settings import SavedSettings, SettingsStore
from livefill.extraction.documents import Document
from livefill.errors import InputError
from livefill.extraction.form import FieldKind, FieldState, FormModel
from livefill.recording.history import History
from livefill.wire.keys import KeyStore
from livefill.extraction.modes import Mode
from livefill.session.run import RunConfig, RunStatus
from livefill.session.session import SINGLE, LanesChanged, Session, SettingsChanged, ViewChanged
from livefill.session.settings import RunSettings
from livefill.recording.wiretap import DEFAULT_MAX_BYTES
from livefill.gui import warmup
from livefill.gui.autoplay import DEFAULT_PAUSE, Autoplay
from livefill.gui.controller import RunController
from livefill.gui.docks import DockFollower, InspectorDock, TimelineDock
from livefill.gui.document_actions import DocumentActions
from livefill.gui.errors import reporting, show_error
from livefill.gui.history_panel import HistoryPanel
from livefill.gui.lane import Lane
from livefill.gui.presentation import Presentation
from livefill.gui.run_toolbar import RunToolbar
from livefill.gui.window_documents import WindowDocuments
from livefill.gui.window_menus import build_menus, save_picture
from livefill.gui.window_views import ViewSwitching
from livefill.widgets.document_bar import DocumentBar
from livefill.widgets.legend import Legend
from livefill.widgets.run_log import RunLog
from livefill.widgets.source_view import SourceView
from livefill.widgets.status_line import StatusLine
from livefill.widgets.value_tips import install_value_tips

__all__ = ["MainWindow", "SINGLE", "live_choices"]

_REMEMBERED = frozenset({"provider", "model", "compatible_base_url", "compatible_model", "ollama_base_url",
                         "ollama_model", "document_path"})


def live_choices(provider: str, *, live: bool, base_url: str | None, model: str | None,
                 structured: str | None, schema_name: str | None) -> dict[str, Any]:
    """The settings a launch's live options make (`--live`, `--base-url`, `--model`, ...): the
    base URL and model go to the provider's own settings (the compatible server's, Ollama's, or
    Anthropic's / OpenAI's)."""
    from livefill.session.settings import base_url_setting, model_setting

    changes: dict[str, Any] = {"live": live} if live else {}
    if base_url:
        changes[base_url_setting(provider)] = base_url
    if model:
        changes[model_setting(provider) if live else "model"] = model
    if structured:
        changes["structured"] = structured
    if schema_name:
        changes["schema_name"] = schema_name
    return changes


_WAITING_FOR_WARMUP = "starting as soon as the demo provider is up…"
_AUTOPLAY_PAUSE = "Autoplay: run "  # the message between two autoplay runs begins so

DEFAULT_SIZE = (1280, 820)


def initial_size(window: QWidget) -> tuple[int, int]:
    """The window's first size: 1,280 × 820, or less on a smaller screen (a 1,024 × 768 projector)."""
    width, height = DEFAULT_SIZE
    if QGuiApplication.platformName() == "offscreen":
        return width, height  # a virtual screen: pictures and tests keep the default size
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return width, height
    frame = window.frameGeometry().size() - window.geometry().size()
    available = screen.availableGeometry()
    return (min(width, available.width() - max(0, frame.width())),
            min(height, available.height() - max(0, frame.height())))


class MainWindow(ViewSwitching, WindowDocuments, QMainWindow):
    """The livefill window. `base_url` / `relay_token` point at the (embedded) demo server.

    The keyword arguments are the first settings of the session (`window.session`): `compare`
    starts in the compare view with these lane modes (2 to 5); `seed` is the demo seed of every
    run (None: the demo provider's default, sent explicitly to every lane in compare view);
    `slicing` the demo slicing knob; `recorder_max_bytes` each run's wire recorder ceiling.
    `keys` gives runs their API keys (and the settings dialog its rows); `store` is where the
    remembered settings are saved whenever one changes (`remembered`: what the store holds, from
    the last launch, applied first; `theme` is saved with them); `document` a document of one's
    own to start with. `live` reads the real provider instead of the demo one (`live_base_url`,
    `model`: its address and model, put in the provider's own settings); `structured` how
    structure is forced; `schema_name` a bundled schema or a JSON Schema file to read with.

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
        *,
        base_url: str,
        relay_token: str | None,
        history: History | None = None,
        scenario: str = "invoice",
        mode: str = "partial",
        provider: str = "anthropic",
        speed: float = 30.0,
        fault: str | None = None,
        idle_timeout: float = 20.0,
        compare: Sequence[Mode | str] | None = None,
        seed: int | None = None,
        slicing: str | None = None,
        show_provisional_numbers: bool = False,
        recorder_max_bytes: int = DEFAULT_MAX_BYTES,
        keys: KeyStore | None = None,
        store: SettingsStore | None = None,
        remembered: SavedSettings | None = None,
        theme: str = "system",
        document: Document | None = None,
        live: bool = False,
        live_base_url: str | None = None,
        model: str | None = None,
        structured: str | None = None,
        schema_name: str | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("livefill — a form that fills itself while the model writes")
        settings = RunSettings(
            scenario=scenario, provider=provider, base_url=base_url, relay_token=relay_token, mode=mode,
            speed=speed, seed=seed, slicing=slicing or "event", fault=fault, idle_timeout=idle_timeout,
            show_provisional_numbers=show_provisional_numbers,
        )
        if remembered is not None:
            settings = remembered.apply(settings)
        settings = settings.with_(**live_choices(settings.provider, live=live, base_url=live_base_url, model=model,
                                                 structured=structured, schema_name=schema_name))
        self.session = Session(settings, history=history, recorder_max_bytes=recorder_max_bytes, keys=keys)
        self.store = store
        self.remembered = remembered
        self.theme_choice = theme
        self.settings_dialog: Any = None  # a SettingsDialog, made on first use
        self.history = history
        self.compare_view: Any = None  # a CompareView, made on first use
        self._top_sizes: list[int] | None = None
        self._body_sizes: list[int] | None = None

        self.toolbar = RunToolbar(self, self.session)
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

        self._build_body()
        self._build_docks()
        build_menus(self)
        self.presentation = Presentation(self)
        self.autoplay = Autoplay(self, pause=DEFAULT_PAUSE)
        self.autoplay.activeChanged.connect(self._on_autoplay)
        self.autoplay.cycleFinished.connect(self._on_autoplay_cycle)
        self.session.subscribe(self._on_session_event)
        self.setAcceptDrops(True)
        if document is not None:
            self.documents.use(document)
        self._show_document()
        self._sync_docks()
        self._on_active()

        QShortcut(QKeySequence("Ctrl+Return"), self, activated=self.start)
        QShortcut(QKeySequence("Ctrl+Enter"), self, activated=self.start)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.escape)
        self.resize(*initial_size(self))
        if compare:
            self.set_compare(True, compare)
        # a value cut short by a narrow lane: whole in its tooltip. Installed once the window is
        # built: an application-wide filter in Python runs for every event, the ~15,000 events
        # of building the window included, which need no tooltip.
        install_value_tips()

    # -- construction -----------------------------------------------------------------------

    def _build_body(self) -> None:
        self.source_view = SourceView()
        self.document_bar = DocumentBar()
        self.documents = DocumentActions(self, self.session, self.document_bar, self.source_view)
        self.source_pane = QWidget()
        self.source_pane.setObjectName("sourcePane")
        pane = QVBoxLayout(self.source_pane)
        pane.setContentsMargins(0, 0, 0, 0)
        pane.setSpacing(0)
        pane.addWidget(self.document_bar)
        pane.addWidget(self.source_view)
        self.single_view = Lane(self.session, self.session.single, chrome=False)
        self.single_view.statusChanged.connect(self._on_status)
        self.single_view.finished.connect(self._on_finished)
        self.single_view.activeChanged.connect(self._on_active)
        self.single_view.fieldPicked.connect(self.show_field_bytes)
        self.single_view.error.connect(lambda message: show_error(message, self))
        self.single_view.controller.started.connect(
            lambda _run: self.inspector_dock.set_recorder(SINGLE, self.session.single.recorder)
        )
        self.form_holder = QWidget()
        self.form_holder.setObjectName("formHolder")
        layout = QVBoxLayout(self.form_holder)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.legend = Legend()  # what the markers mean (View ▸ Legend; livefill.gui.window_menus)
        layout.addWidget(self.legend)
        layout.addWidget(self.single_view)
        self.stack = QStackedWidget()
        self.stack.setObjectName("viewStack")
        self.stack.addWidget(self.form_holder)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("topSplitter")
        top.addWidget(self.source_pane)
        top.addWidget(self.stack)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 3)
        top.setSizes([560, 720])
        self.top_splitter = top

        self.status_line = StatusLine()
        self.run_log = RunLog()
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.setSpacing(0)
        bottom_layout.addWidget(self.status_line)
        bottom_layout.addWidget(self.run_log)

        body = QSplitter(Qt.Orientation.Vertical)
        body.setObjectName("bodySplitter")
        body.addWidget(top)
        body.addWidget(bottom)
        body.setStretchFactor(0, 5)
        body.setStretchFactor(1, 1)
        body.setSizes([700, 90])
        self.body_splitter = body
        self.setCentralWidget(body)

    def _build_docks(self) -> None:
        self.inspector_dock = InspectorDock(self)
        self.inspector_dock.inspector.slicing.bind(self.session)
        self.timeline_dock = TimelineDock(self)
        self.docks = DockFollower(self, self.session, self.inspector_dock, self.timeline_dock)
        self.inspector_dock.pointerSelected.connect(self._inspector_pointer)
        self.history_panel = HistoryPanel(self, self.session, self.history)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.history_panel)
        self.history_panel.hide()

    # -- what the session holds, for scripts and tests --------------------------------------------


    @property
    def fault(self) -> str | None:
        """The demo fault `NAME[@FRACTION]`, or None."""
        return self.session.settings.fault

    @property
    def form(self) -> FormModel:
        """The single form's form model (of the scenario shown)."""
        return self.session.form

    @property
    def form_view(self) -> Any:
        """The single form's FormView."""
        return self.single_view.form_view

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
        return list(self.compare_view.lanes) if self.comparing else []

    @property
    def active(self) -> bool:
        """True while a run (the single one, or any lane's) is active."""
        return self.session.active

    @property
    def presenting(self) -> bool:
        """True in presentation mode."""
        return self.presentation.active

    def field(self, pointer: str) -> Any:
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

    def _on_session_event(self, event: Any) -> None:
        if isinstance(event, SettingsChanged):
            if event.changed & {"scenario", "document", "schema_name", "document_name", "provider"}:
                self._show_document()
            if event.changed & _REMEMBERED:
                self.save_settings()
            if "mode" in event.changed:
                self._sync_docks()
        elif isinstance(event, ViewChanged):
            self._show_view(event.comparing)
        elif isinstance(event, LanesChanged) and self.comparing:
            self._sync_docks()

    def _show_document(self) -> None:
        self.documents.render()

    # -- intents ------------------------------------------------------------------------------

    @reporting
    def start(self) -> None:
        """Start a run with the session's settings: the single form's, or every lane's (ignored while one is active)."""
        if self.active:
            return
        if warmup.defer(self.start):  # the server and SDKs still load, off this thread: start once they have
            self.statusBar().showMessage(_WAITING_FOR_WARMUP)
            return
        if self.statusBar().currentMessage() == _WAITING_FOR_WARMUP:
            self.statusBar().clearMessage()  # it starts now: the status line says the rest
        self.commit_pending_edits()  # a value still being typed belongs to the form the run snapshots
        try:
            if self.comparing:
                self.compare_view.start()
            else:
                self.session.start()
        except InputError as exc:  # no key, no address, a schema that cannot be used: nothing was sent
            self.say(str(exc))
            return
        self._show_status()

    def commit_pending_edits(self) -> None:
        """Send every edit still in progress (cursor still in the field) to its form."""
        for view in (self.form_view, *(lane.form_view for lane in self.lanes)):
            if view is not None:
                view.commit_pending_edits()

    def say(self, message: str) -> None:
        """One line in the status bar and the run log (a choice that cannot be used; nothing is lost)."""
        self.statusBar().showMessage(message, 15000)
        self.run_log.addItem(message)
        self.run_log.scrollToBottom()

    @reporting
    def stop(self) -> None:
        """Stop the active run(s) (a real cancel: every connection closes); ends autoplay too."""
        if self.autoplay.active:
            self.autoplay.stop()
        if warmup.cancel_deferred():
            self.statusBar().clearMessage()
        self.session.stop()

    def escape(self) -> None:
        """Esc: stop what runs; when nothing runs, leave presentation mode."""
        if warmup.cancel_deferred():  # a Start still waiting for the warm-up
            self.statusBar().clearMessage()
        elif self.active or self.autoplay.active:
            self.stop()
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
        if self.comparing:
            return self.compare_view.statuses()
        return [self.controller.last_status]

    # -- what the lanes report ------------------------------------------------------------------

    def _on_active(self, _active: bool = False) -> None:
        active = self.active
        self.toolbar.set_enabled(active, self.comparing, self.autoplay.active)
        self.document_bar.set_enabled(not active)
        self.inspector_dock.inspector.slicing.setEnabled(not active)
        self.activeChanged.emit(active)

    def _on_status(self, status: RunStatus) -> None:
        if not self.comparing:
            self.status_line.show_status(status)
        self.statusChanged.emit(status)

    def _on_finished(self, status: RunStatus) -> None:
        if not self.comparing:
            self.status_line.show_status(status)
        if status.phase.final:
            config = self.session.single.run.config if self.session.single.run is not None else None
            self.run_log.add_run(status, config.label if config is not None else "")
        self._update_timeline_note()
        self.runsFinished.emit()

    # -- docks ----------------------------------------------------------------------------------

    def _sync_docks(self) -> None:
        self.docks.sync()

    def _update_timeline_note(self) -> None:
        self.docks.update_note()

    def show_field_bytes(self, lane: str, pointer: str) -> None:
        """Highlight, in the wire inspector, the bytes that carried `pointer` in `lane`."""
        self.inspector_dock.show_field(lane, pointer)

    def _inspector_pointer(self, lane: str, pointer: str) -> None:
        if not pointer:
            return
        view = None
        if lane == SINGLE:
            view = self.form_view
        elif self.compare_view is not None:
            try:
                view = self.compare_view.lane(lane).form_view
            except KeyError:
                view = None
        widget = view.fields.get(pointer) if view is not None else None
        if widget is not None:
            view.ensureWidgetVisible(widget)

    # -- presenting and autoplay ----------------------------------------------------------------

    def toggle_presentation(self) -> None:
        """F11: enter or leave presentation mode."""
        self.presentation.toggle()
        self.present_action.setChecked(self.presentation.active)

    def presentation_hide(self) -> list[QWidget]:
        """What presentation mode hides besides the toolbar's extras and the menu bar."""
        out: list[QWidget] = [self.run_log, self.document_bar.open_button, self.document_bar.paste_button]
        if self.compare_view is not None:
            out.append(self.compare_view.add_button)
            out.append(self.compare_view.caption)
            for lane in self.compare_view.lanes:
                out.append(lane.bar)
                if lane.form_view is not None:  # the lane's header says "incorrect on purpose" already
                    out.extend(lane.form_view.findChildren(QLabel, "naiveBanner"))
        return out

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
        if pause is not None:
            self.autoplay.pause = pause
        self.autoplay.max_cycles = max_cycles
        self.autoplay.start()

    @reporting
    def _autoplay_clicked(self, checked: bool) -> None:
        if checked:
            self.start_autoplay()
        else:
            self.autoplay.stop()

    def _on_autoplay(self, active: bool) -> None:
        self.autoplay_action.setChecked(active)
        self._on_active()
        bar = self.statusBar()
        if not active and bar.currentMessage().startswith(_AUTOPLAY_PAUSE):
            bar.clearMessage()  # "the next starts in …" is no longer true

    def _on_autoplay_cycle(self, cycles: int) -> None:
        """Between autoplay's runs the screen says when the next one starts (it said nothing)."""
        autoplay = self.autoplay
        if autoplay.max_cycles is not None and cycles >= autoplay.max_cycles:
            return
        self.statusBar().showMessage(
            f"{_AUTOPLAY_PAUSE}{cycles} ended; the next starts in {autoplay.pause:g} s (Esc stops autoplay)",
            max(1, round(autoplay.pause * 1000)))

    # -- pictures and introspection -------------------------------------------------------------

    def save_picture(self, path: str | Path, picture: QPixmap | None = None) -> Path:
        """Write a PNG picture of the window (now, or `picture` taken earlier) to `path`."""
        return save_picture(self, path, picture)

    def refresh_now(self) -> None:
        """Show everything pending at once (forms, lane headers, the metrics table): before a picture."""
        if self.form_view is not None:
            self.form_view.signals.flush()
        for lane in self.lanes:
            if lane.form_view is not None:
                lane.form_view.signals.flush()
            lane.header.refresh()
        if self.comparing:
            self.compare_view.metrics_table.refresh()

    def field_states(self) -> dict[str, str]:
        """The `state` property of every field widget shown in the single form, by pointer."""
        return self.single_view.field_states()

    def any_provisional(self) -> bool:
        """True if a field of the forms shown shows a provisional value now (a value with text,
        not just an opened table or group)."""
        views = [lane.form_view for lane in self.lanes] if self.comparing else [self.form_view]
        return any(
            view is not None and any(
                str(w.property("state")) == FieldState.PROVISIONAL.value and w.property("displayValue")
                and w.spec.kind not in (FieldKind.TABLE, FieldKind.OBJECT)
                for w in view.fields.values()
            )
            for view in views
        )

    # -- closing --------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop autoplay, cancel every active run and wait until every stream is closed."""
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

    def dropEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        """A dropped `.jsonl` file is a trace to replay (livefill.gui.recordings); anything else a document."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        local = [u.toLocalFile() for u in urls if u.isLocalFile()]
        if local and local[0].lower().endswith(".jsonl"):
            event.acceptProposedAction()
            self.recordings.open_trace(local[0])
            return
        super().dropEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        self.save_settings()
        event.accept()
        self.closed.emit()
