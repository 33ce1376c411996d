"""The main window: toolbar, source document, the form (or the compare view), status line and run log.

How this works
--------------
The window keeps one `FormModel` per scenario (so what a person typed or committed for the
invoice is still there after a look at the ticket) and one `RunController`. Start builds a
`RunConfig` from the toolbar (scenario, provider, mode, speed, fault, the provisional-display
settings, the inspector's slicing knob and one seed) and hands it to the controller; the form view
renders the form model as the run writes into it; the status line follows the controller's
per-frame status; the run log gets a line when a run ends. Nothing here decides anything about a
run: that is `core.run`.

The Compare toggle swaps the single form for `gui.compare_view.CompareView`: 2 to 5 lanes, each
its own form, mode and run; Start gives every lane the same `RunConfig` (so the same x-demo-*
knobs), Stop stops every lane. Two docks follow whichever view is shown: the wire inspector
(`gui.docks.InspectorDock`: a lane selector and the selected lane's `WireRecorder`; pressing on a
field in a form highlights the bytes that carried it) and the timeline (`TimelineDock`). Every run
gets a fresh `WireRecorder` as its wire tap. Presentation mode (F11, `gui.presentation`), autoplay
(`gui.autoplay`) and "Save picture" (a PNG of the window) are actions of the View and File menus.

Every slot that can fail is wrapped by `gui.errors.reporting`, so an exception reaches the user as
a message box. Closing the window emits `closed`; the application then shuts the run down inside
the event loop (`shutdown()`) before it stops the server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.form import FieldState, FormModel
from core.history import History
from core.metrics import FormProbe, leaves
from core.run import MODE_LABELS, DemoKnobs, Mode, Phase, RunConfig, RunStatus
from core.scenarios import SCENARIO_NAMES, get_scenario
from core.schemas import schema_model
from core.timeline import TimelineModel
from core.wiretap import DEFAULT_MAX_BYTES, WireRecorder
from gui.autoplay import DEFAULT_PAUSE, Autoplay
from gui.controller import RunController
from gui.docks import InspectorDock, TimelineDock
from gui.errors import reporting, show_error
from gui.field_picker import FieldPicker
from gui.lane import outcome_of
from gui.presentation import Presentation
from gui.timeline_feed import TimelineFeed
from widgets.field_base import repolish
from widgets.form_view import FormView
from widgets.run_log import RunLog
from widgets.source_view import SourceView
from widgets.status_line import PHASE_MARKS, StatusLine

PROVIDERS: tuple[tuple[str, str], ...] = (
    ("anthropic", "Anthropic (demo)"),
    ("openai-chat", "OpenAI Chat (demo)"),
    ("openai-responses", "OpenAI Responses (demo)"),
    ("ollama", "Ollama (demo)"),
)

SPEEDS: tuple[tuple[float, str], ...] = (
    (10, "10 tokens/s"),
    (30, "30 tokens/s"),
    (100, "100 tokens/s"),
    (300, "300 tokens/s"),
    (1000, "1,000 tokens/s"),
    (0, "as fast as possible"),
)

SINGLE = "single"
"""The name the single form goes by in the inspector and the timeline."""


def default_seed() -> int:
    """The demo provider's default seed (what a request without x-demo-seed gets)."""
    try:
        from core.demo_protocol import DEFAULT_SEED

        return int(DEFAULT_SEED)
    except ImportError:  # the demo provider is not installed
        return 1


def demo_faults() -> list[str]:
    """Every fault the demo provider knows (names as the x-demo-fault knob takes them)."""
    try:
        from core.demo_protocol import FaultName

        return [f.value for f in FaultName]
    except ImportError:  # the demo provider is not installed: no faults to offer
        return []


class MainWindow(QMainWindow):
    """The livefill window. `base_url` / `relay_token` point at the (embedded) demo server.

    `compare`: start in the compare view with these lane modes (2 to 5). `seed`: the demo seed of
    every run (None: the demo provider's default, sent explicitly to every lane in compare view). `slicing`: the demo slicing
    knob's first value. `recorder_max_bytes`: each run's wire recorder ceiling.

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
        recorder_max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("livefill — a form that fills itself while the model writes")
        self.base_url = base_url
        self.relay_token = relay_token
        self.history = history
        self.idle_timeout = idle_timeout
        self.seed = seed
        self.recorder_max_bytes = recorder_max_bytes
        self.forms: dict[str, FormModel] = {}
        self.form_view: FormView | None = None
        self.compare_view = None  # a CompareView, made on first use
        self.controller = RunController(self)
        self.controller.statusChanged.connect(self._on_status)
        self.controller.finished.connect(self._on_finished)
        self.controller.activeChanged.connect(self._on_active)
        self.controller.error.connect(lambda message: show_error(message, self))
        self._run_label = ""
        self._compare_label = ""
        self.single_recorder: WireRecorder | None = None
        self.single_feed = TimelineFeed(TimelineModel([SINGLE]))
        self._single_probe: FormProbe | None = None
        self._picker: FieldPicker | None = None
        self._top_sizes: list[int] | None = None
        self._last_seed: int | None = None

        self._build_toolbar(scenario, mode, provider, speed, fault)
        self._build_body()
        self._build_docks(slicing)
        self._build_menus()
        self.presentation = Presentation(self)
        self.autoplay = Autoplay(self, pause=DEFAULT_PAUSE)
        self.autoplay.activeChanged.connect(self._on_autoplay)
        self._show_scenario()
        self._on_active(False)

        QShortcut(QKeySequence("Ctrl+Return"), self, activated=self.start)
        QShortcut(QKeySequence("Ctrl+Enter"), self, activated=self.start)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.escape)
        self.resize(1280, 820)
        if compare:
            self.set_compare(True, compare)

    # -- construction -----------------------------------------------------------------------

    def _build_toolbar(self, scenario: str, mode: str, provider: str, speed: float, fault: str | None) -> None:
        bar = QToolBar("Run")
        bar.setObjectName("runToolbar")
        bar.setMovable(False)
        self.addToolBar(bar)
        self.run_toolbar = bar

        self.scenario_combo = QComboBox()
        self.scenario_combo.setObjectName("scenarioCombo")
        for name in SCENARIO_NAMES:
            self.scenario_combo.addItem(name, name)
            self.scenario_combo.setItemData(self.scenario_combo.count() - 1, get_scenario(name).title, Qt.ItemDataRole.ToolTipRole)
        self.scenario_combo.setCurrentIndex(max(0, self.scenario_combo.findData(scenario)))
        self.scenario_combo.currentIndexChanged.connect(self._scenario_changed)

        self.provider_combo = QComboBox()
        self.provider_combo.setObjectName("providerCombo")
        for name, label in PROVIDERS:
            self.provider_combo.addItem(label, name)
        self.provider_combo.setCurrentIndex(max(0, self.provider_combo.findData(provider)))

        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("modeCombo")
        for m in Mode:
            self.mode_combo.addItem(MODE_LABELS[m], m.value)
        self.mode_combo.setCurrentIndex(max(0, self.mode_combo.findData(Mode(mode).value)))
        self.mode_combo.currentIndexChanged.connect(self._mode_changed)

        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speedCombo")
        for value, label in SPEEDS:  # noqa: B007
            self.speed_combo.addItem(label, value)
        index = self.speed_combo.findData(float(speed))
        if index < 0:
            self.speed_combo.addItem(f"{speed:g} tokens/s", float(speed))
            index = self.speed_combo.count() - 1
        self.speed_combo.setCurrentIndex(index)

        self.faults_button = QToolButton()
        self.faults_button.setObjectName("faultsButton")
        self.faults_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.faults_menu = QMenu("Faults", self)
        self.fault_group = QActionGroup(self)
        self.fault_group.setExclusive(True)
        self.fault_actions: dict[str | None, QAction] = {}
        for name in [None, *demo_faults()]:
            action = QAction("no fault" if name is None else name, self)
            action.setCheckable(True)
            action.setData(name)
            action.setObjectName(f"fault:{name or 'none'}")
            self.fault_group.addAction(action)
            self.faults_menu.addAction(action)
            self.fault_actions[name] = action
        fault_name, _, fraction = (fault or "").partition("@")
        self._fault_fraction = fraction or None  # NAME@FRACTION from the command line, kept until changed
        (self.fault_actions.get(fault_name or None) or self.fault_actions[None]).setChecked(True)
        self.fault_group.triggered.connect(lambda _a: self._fault_picked())
        self.faults_button.setMenu(self.faults_menu)
        self._update_fault_label()

        self.settings_button = QToolButton()
        self.settings_button.setObjectName("settingsButton")
        self.settings_button.setText("Display ▾")
        self.settings_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        settings = QMenu("Display", self)
        self.show_strings_action = QAction("Show provisional strings", self, checkable=True, checked=True)
        self.show_numbers_action = QAction("Show provisional numbers (12 before 1200)", self, checkable=True, checked=False)
        settings.addAction(self.show_strings_action)
        settings.addAction(self.show_numbers_action)
        self.settings_button.setMenu(settings)

        self.start_button = QPushButton("▶ Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setToolTip("Start a run (Ctrl+Return)")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("■ Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the run: closes the connection (Esc)")
        self.stop_button.clicked.connect(self.stop)

        self.compare_action = QAction("Compare", self, checkable=True)
        self.compare_action.setObjectName("compareAction")
        self.compare_action.setToolTip("Show 2–5 lanes side by side, one per reading mode, all fed the same generation")
        self.compare_action.setShortcut(QKeySequence("Ctrl+K"))
        self.compare_action.toggled.connect(self._compare_toggled)

        keep: list[QAction] = []
        for label, widget in (
            ("Scenario", self.scenario_combo),
            ("Provider", self.provider_combo),
            ("Mode", self.mode_combo),
            ("Speed", self.speed_combo),
        ):
            label_action = bar.addWidget(QLabel(f" {label} "))
            widget_action = bar.addWidget(widget)
            if widget is self.scenario_combo:
                keep += [label_action, widget_action]
        bar.addSeparator()
        bar.addWidget(self.faults_button)
        bar.addWidget(self.settings_button)
        bar.addSeparator()
        keep.append(bar.addWidget(self.start_button))
        keep.append(bar.addWidget(self.stop_button))
        bar.addSeparator()
        bar.addAction(self.compare_action)
        self.presentation_keep: list[QAction] = keep

    def _build_body(self) -> None:
        self.source_view = SourceView()
        self.form_holder = QWidget()
        self.form_holder.setObjectName("formHolder")
        self._form_layout = QVBoxLayout(self.form_holder)
        self._form_layout.setContentsMargins(0, 0, 0, 0)
        self.stack = QStackedWidget()
        self.stack.setObjectName("viewStack")
        self.stack.addWidget(self.form_holder)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("topSplitter")
        top.addWidget(self.source_view)
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

    def _build_docks(self, slicing: str | None) -> None:
        self.inspector_dock = InspectorDock(self)
        self.inspector_dock.slicingChanged.connect(self._slicing_changed)
        self.inspector_dock.pointerSelected.connect(self._inspector_pointer)
        if slicing:
            self.inspector_dock.inspector.set_slicing(slicing)
        self.timeline_dock = TimelineDock(self)
        # both under the lanes, side by side: the lanes keep the window's whole width
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.timeline_dock)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.inspector_dock)
        self.splitDockWidget(self.timeline_dock, self.inspector_dock, Qt.Orientation.Horizontal)
        self.timeline_dock.hide()
        self.inspector_dock.hide()
        for dock in (self.timeline_dock, self.inspector_dock):
            dock.visibilityChanged.connect(lambda visible, dock=dock: self._dock_shown(dock) if visible else None)
        self._docks_sized = False
        self.slicing = self.inspector_dock.inspector.slicing_value()

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.save_picture_action = QAction("Save picture…", self)
        self.save_picture_action.setObjectName("savePictureAction")
        self.save_picture_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
        self.save_picture_action.setToolTip("Write a PNG picture of the window")
        self.save_picture_action.triggered.connect(self._save_picture_clicked)
        file_menu.addAction(self.save_picture_action)
        self.export_timeline_action = QAction("Export timeline as PNG…", self)
        self.export_timeline_action.triggered.connect(self.timeline_dock._export_clicked)
        file_menu.addAction(self.export_timeline_action)
        file_menu.addSeparator()
        quit_action = QAction("Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        view = self.menuBar().addMenu("&View")
        view.addAction(self.compare_action)
        self.inspector_action = self.inspector_dock.toggleViewAction()
        self.inspector_action.setText("Wire inspector")
        self.inspector_action.setShortcut(QKeySequence("Ctrl+I"))
        view.addAction(self.inspector_action)
        self.timeline_action = self.timeline_dock.toggleViewAction()
        self.timeline_action.setText("Timeline")
        self.timeline_action.setShortcut(QKeySequence("Ctrl+T"))
        view.addAction(self.timeline_action)
        view.addSeparator()
        self.present_action = QAction("Presentation mode", self, checkable=True)
        self.present_action.setObjectName("presentAction")
        self.present_action.setShortcut(QKeySequence(Qt.Key.Key_F11))
        self.present_action.triggered.connect(lambda _checked: self.toggle_presentation())
        view.addAction(self.present_action)
        self.autoplay_action = QAction("Autoplay (replay in a loop)", self, checkable=True)
        self.autoplay_action.setObjectName("autoplayAction")
        self.autoplay_action.triggered.connect(self._autoplay_clicked)
        view.addAction(self.autoplay_action)
        self.save_picture_button = QToolButton()
        self.save_picture_button.setObjectName("savePictureButton")
        self.save_picture_button.setDefaultAction(self.save_picture_action)
        self.save_picture_button.setText("Save picture")
        self.run_toolbar.addWidget(self.save_picture_button)
        # window-level copies so the shortcuts work while the menu bar is hidden (presentation)
        for action in (self.save_picture_action, self.compare_action, self.present_action,
                       self.inspector_action, self.timeline_action):
            self.addAction(action)

    # -- current selections ---------------------------------------------------------------------

    @property
    def scenario(self) -> str:
        """The selected scenario's name."""
        return str(self.scenario_combo.currentData())

    @property
    def mode(self) -> Mode:
        """The selected mode (of the single form)."""
        return Mode(self.mode_combo.currentData())

    @property
    def provider(self) -> str:
        """The selected provider's name."""
        return str(self.provider_combo.currentData())

    @property
    def speed(self) -> float:
        """The selected demo speed (tokens/s; 0 = as fast as possible)."""
        return float(self.speed_combo.currentData())

    @property
    def fault(self) -> str | None:
        """The selected demo fault, or None."""
        action = self.fault_group.checkedAction()
        name = action.data() if action is not None else None
        if name and self._fault_fraction:
            return f"{name}@{self._fault_fraction}"
        return name

    @property
    def form(self) -> FormModel:
        """The form model of the selected scenario (the single form)."""
        name = self.scenario
        if name not in self.forms:
            self.forms[name] = FormModel(schema_model(get_scenario(name).schema_name))
        return self.forms[name]

    @property
    def comparing(self) -> bool:
        """True while the compare view is shown."""
        return self.compare_view is not None and self.stack.currentWidget() is self.compare_view

    @property
    def lanes(self) -> list:
        """The compare view's lanes (empty when it is not shown)."""
        return list(self.compare_view.lanes) if self.comparing else []

    @property
    def active(self) -> bool:
        """True while a run (the single one, or any lane's) is active."""
        return self.controller.active or (self.compare_view is not None and self.compare_view.active)

    @property
    def presenting(self) -> bool:
        """True in presentation mode."""
        return self.presentation.active

    def field(self, pointer: str):  # noqa: ANN201 (a FieldWidget)
        """The widget of the field at `pointer` in the single form."""
        assert self.form_view is not None
        return self.form_view.field(pointer)

    def set_fault(self, name: str | None) -> None:
        """Select a demo fault, `NAME` or `NAME@FRACTION` (None: none)."""
        fault_name, _, fraction = (name or "").partition("@")
        self.fault_actions[fault_name or None].setChecked(True)
        self._fault_fraction = fraction or None
        self._update_fault_label()

    def _fault_picked(self) -> None:
        self._fault_fraction = None  # a fault picked from the menu comes at its default point
        self._update_fault_label()

    def set_slicing(self, value: str) -> None:
        """The demo slicing knob for the next run of every lane ("event", "N", "coalesce:MS")."""
        self.inspector_dock.inspector.set_slicing(value)
        self.slicing = self.inspector_dock.inspector.slicing_value()

    def demo_knobs(self, seed: int | None = None) -> DemoKnobs:
        """The x-demo-* knobs of the next run (every lane gets the same)."""
        return DemoKnobs(
            scenario=self.scenario,
            speed=self.speed,
            seed=seed,
            slice=self.slicing or None,
            fault=self.fault,
        )

    def run_config(self, mode: Mode | None = None) -> RunConfig:
        """The RunConfig of the next run from the toolbar (the compare view puts each lane's mode in)."""
        scenario = get_scenario(self.scenario)
        seed = self.seed
        if seed is None and self.comparing:
            seed = default_seed()  # said explicitly, so every lane's request shows the same seed
        self._last_seed = seed
        label = f"{scenario.name} · {self.provider}" + (f" · fault {self.fault}" if self.fault else "")
        return RunConfig(
            mode=mode or self.mode,
            provider=self.provider,
            base_url=self.base_url,
            schema_name=scenario.schema_name,
            document=scenario.document,
            demo=self.demo_knobs(seed),
            relay_token=self.relay_token,
            idle_timeout=self.idle_timeout,
            show_provisional_strings=self.show_strings_action.isChecked(),
            show_provisional_numbers=self.show_numbers_action.isChecked(),
            label=label,
        )

    # -- slots ----------------------------------------------------------------------------------

    def _update_fault_label(self) -> None:
        fault = self.fault
        self.faults_button.setText(f"Fault: {fault or 'none'} ▾")

    @reporting
    def _scenario_changed(self, _index: int) -> None:
        self._show_scenario()

    @reporting
    def _mode_changed(self, _index: int) -> None:
        self._show_form()
        self._sync_docks()

    def _show_scenario(self) -> None:
        self.source_view.show_document(get_scenario(self.scenario).document)
        self._show_form()
        if self.compare_view is not None:
            self.compare_view.set_scenario(self.scenario)
        self._sync_docks()

    def _show_form(self) -> None:
        form = self.form
        form.marking = self.mode is not Mode.NAIVE
        if self._picker is not None:
            self._picker.close()
        if self.form_view is not None:
            self.form_view.detach()
            self._form_layout.removeWidget(self.form_view)
            self.form_view.deleteLater()
        self.form_view = FormView(form)
        self._picker = FieldPicker(self.form_view)
        self._picker.picked.connect(lambda pointer: self.show_field_bytes(SINGLE, pointer))
        self._form_layout.addWidget(self.form_view)

    def _slicing_changed(self, value: str) -> None:
        self.slicing = value

    @reporting
    def start(self) -> None:
        """Start a run with the toolbar's settings: the single form's, or every lane's (ignored while one is active)."""
        if self.active:
            return
        if self.comparing:
            config = self.run_config()
            self._compare_label = config.label
            self.compare_view.start(config)
            self._show_compare_status()
            return
        config = self.run_config()
        t0 = time.monotonic()
        recorder = WireRecorder(t0=t0, max_bytes=self.recorder_max_bytes)
        self.single_recorder = recorder
        self.inspector_dock.set_recorder(SINGLE, recorder)
        scenario = get_scenario(self.scenario)
        if self._single_probe is not None:
            self._single_probe.close()
        self.single_feed.set_fields(p for p, _ in leaves(scenario.output))
        self.single_feed.model.start(t0)
        self._single_probe = FormProbe(self.form, None, lane=SINGLE, timeline=self.single_feed)
        self._run_label = config.label
        self.controller.start(self.form, config, history=self.history, tap=recorder)

    @reporting
    def stop(self) -> None:
        """Stop the active run(s) (a real cancel: every connection closes); ends autoplay too."""
        if self.autoplay.active:
            self.autoplay.stop()
        self.controller.stop()
        if self.compare_view is not None:
            self.compare_view.stop()

    def escape(self) -> None:
        """Esc: stop what runs; when nothing runs, leave presentation mode."""
        if self.active or self.autoplay.active:
            self.stop()
        elif self.presenting:
            self.presentation.leave()

    async def wait_runs(self) -> list[RunStatus | None]:
        """Wait until no run is active; the final statuses (the single run's, or each lane's)."""
        while True:
            await self.controller.wait()
            if self.compare_view is not None:
                await self.compare_view.wait()
            if not self.active:
                break
            await asyncio.sleep(0.01)
        return self.last_statuses()

    def last_statuses(self) -> list[RunStatus | None]:
        """The latest status of the single run, or of each lane in compare view."""
        if self.comparing:
            return self.compare_view.statuses()
        return [self.controller.last_status]

    def _on_active(self, _active: bool = False) -> None:
        active = self.active
        self.start_button.setEnabled(not active)
        self.stop_button.setEnabled(active or self.autoplay.active)
        for widget in (self.scenario_combo, self.provider_combo, self.speed_combo, self.faults_button):
            widget.setEnabled(not active)
        self.mode_combo.setEnabled(not active and not self.comparing)
        self.compare_action.setEnabled(not active)
        self.inspector_dock.inspector.slicing.setEnabled(not active)
        self.activeChanged.emit(active)

    def _on_status(self, status: RunStatus) -> None:
        self.status_line.show_status(status)
        self.statusChanged.emit(status)

    def _on_finished(self, status: RunStatus) -> None:
        self.status_line.show_status(status)
        if status.phase is not Phase.READY:
            self.run_log.add_run(status, self._run_label)
            now = time.monotonic()
            self.single_feed.model.stop(SINGLE, now, outcome_of(status))
        if self._single_probe is not None:
            self._single_probe.close()
            self._single_probe = None
        self._update_timeline_note()
        self.runsFinished.emit()

    # -- compare view ---------------------------------------------------------------------------

    def set_compare(self, on: bool, modes: Sequence[Mode | str] | None = None) -> None:
        """Show the compare view (with these lane modes, if given) or the single form."""
        if self.active:
            raise RuntimeError("cannot switch views while a run is active")
        if on:
            self._ensure_compare()
            if modes is not None and [Mode(m) for m in modes] != self.compare_view.modes:
                self.compare_view.set_modes(modes)
            if self.stack.currentWidget() is not self.compare_view:
                self._top_sizes = self.top_splitter.sizes()
                self.stack.setCurrentWidget(self.compare_view)
                total = sum(self._top_sizes) or self.width()
                self.top_splitter.setSizes([0, total])  # the lanes need the width; drag to see the source
        elif self.comparing:
            self.stack.setCurrentWidget(self.form_holder)
            if self._top_sizes:
                self.top_splitter.setSizes(self._top_sizes)
        if self.compare_action.isChecked() != on:
            self.compare_action.blockSignals(True)
            self.compare_action.setChecked(on)
            self.compare_action.blockSignals(False)
        self._on_active()
        self._sync_docks()
        if on:
            self._show_compare_status()
        else:
            self.status_line.show_status(self.controller.last_status)

    @reporting
    def _compare_toggled(self, on: bool) -> None:
        if self.active:
            self.compare_action.blockSignals(True)
            self.compare_action.setChecked(not on)
            self.compare_action.blockSignals(False)
            return
        self.set_compare(on)

    def _ensure_compare(self) -> None:
        if self.compare_view is not None:
            return
        from gui.compare_view import CompareView

        view = CompareView(scenario=self.scenario, recorder_max_bytes=self.recorder_max_bytes)
        view.statusChanged.connect(self._on_lane_status)
        view.laneFinished.connect(self._on_lane_finished)
        view.activeChanged.connect(self._on_active)
        view.allFinished.connect(self._on_compare_finished)
        view.lanesChanged.connect(self._sync_docks)
        view.timelineChanged.connect(lambda model: self._sync_docks())
        view.recorderChanged.connect(lambda lane: self.inspector_dock.set_recorder(lane, view.lane(lane).recorder))
        view.fieldPicked.connect(self.show_field_bytes)
        view.notesReady.connect(self._show_compare_status)
        view.error.connect(lambda message: show_error(message, self))
        self.compare_view = view
        self.stack.addWidget(view)

    def _on_lane_status(self, status: RunStatus) -> None:
        self._show_compare_status()
        self.statusChanged.emit(status)

    def _on_lane_finished(self, lane_name: str, status: RunStatus) -> None:
        if status.phase is not Phase.READY:
            lane = self.compare_view.lane(lane_name)
            self.run_log.add_run(status, f"{self._compare_label} · lane {lane.title}")
        self._show_compare_status()

    def _on_compare_finished(self) -> None:
        self._show_compare_status()
        self._update_timeline_note()
        self.runsFinished.emit()

    def _show_compare_status(self) -> None:
        """The status line in compare view: every lane's phase in one line."""
        view = self.compare_view
        if view is None or not self.comparing:
            return
        parts = []
        phases = []
        for lane in view.lanes:
            s = lane.last_status
            if s is None:
                parts.append(f"{lane.title}: ready")
                continue
            phases.append(s.phase)
            parts.append(f"{lane.title}: {PHASE_MARKS[s.phase]} {s.phase.value} ({s.tokens_received} tokens)")
        if any(p.active for p in phases):
            phase = "streaming"
        elif phases and all(p is Phase.COMMITTED for p in phases):
            phase = "committed"
        elif any(p is Phase.FAILED for p in phases):
            phase = "failed"
        elif any(p is Phase.STOPPED for p in phases):
            phase = "stopped"
        else:
            phase = "ready"
        seed = f"  ·  seed {self._last_seed}" if self._last_seed is not None and phases else ""
        self.status_line.setText(f"compare · {len(view.lanes)} lanes  ·  " + "  ·  ".join(parts) + seed)
        if self.status_line.property("phase") != phase:
            self.status_line.setProperty("phase", phase)
            repolish(self.status_line)

    # -- docks ----------------------------------------------------------------------------------

    def _sync_docks(self) -> None:
        """Point the inspector and the timeline at the view shown."""
        if self.comparing:
            view = self.compare_view
            self.inspector_dock.set_lanes(
                [(lane.name, f"lane {i + 1}: {lane.title}") for i, lane in enumerate(view.lanes)],
                {lane.name: lane.recorder for lane in view.lanes},
            )
            self.timeline_dock.set_model(view.timeline)
        else:
            self.inspector_dock.set_lanes([(SINGLE, f"this form ({self.mode.value})")], {SINGLE: self.single_recorder})
            self.single_feed.model.add_lane(SINGLE, self.mode.value)
            self.timeline_dock.set_model(self.single_feed.model)
        self._update_timeline_note()

    def _update_timeline_note(self) -> None:
        feed = self.compare_view.feed if self.comparing else self.single_feed
        self.timeline_dock.set_note(
            f"Seconds from Start. Showing the first {feed.max_fields} fields ({feed.skipped:,} more not drawn)."
            if feed.skipped else "Seconds from Start; one row per field and lane."
        )

    def _dock_shown(self, dock: QWidget) -> None:
        """The first time a dock is shown, give the bottom docks a useful height (a third of the window)."""
        if self._docks_sized:
            return
        self._docks_sized = True
        height = max(220, self.height() // 3)
        self.resizeDocks([dock], [height], Qt.Orientation.Vertical)
        half = max(300, self.width() // 2)
        self.resizeDocks([self.timeline_dock, self.inspector_dock], [half, half], Qt.Orientation.Horizontal)

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

    # -- presenting -----------------------------------------------------------------------------

    def toggle_presentation(self) -> None:
        """F11: enter or leave presentation mode."""
        self.presentation.toggle()
        self.present_action.setChecked(self.presentation.active)

    def presentation_hide(self) -> list[QWidget]:
        """What presentation mode hides besides the toolbar's extras and the menu bar."""
        out: list[QWidget] = [self.run_log]
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
        elif getattr(self, "_body_sizes", None):
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

    # -- pictures -------------------------------------------------------------------------------

    def save_picture(self, path: str | Path) -> Path:
        """Write a PNG picture of the window to `path`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not self.grab().save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
        return path

    @reporting
    def _save_picture_clicked(self) -> None:
        folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.PicturesLocation) or str(Path.home())
        name = time.strftime("livefill-%Y%m%d-%H%M%S.png")
        dialog = QFileDialog(self, "Save a picture of the window", str(Path(folder) / name), "PNG (*.png)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("png")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(reporting(lambda chosen: self.save_picture(chosen) if chosen else None))
        dialog.open()  # never a nested event loop under qasync

    # -- introspection for scripts and tests ----------------------------------------------------

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
        if self.form_view is None:
            return {}
        return {p: str(w.property("state")) for p, w in self.form_view.fields.items()}

    def any_provisional(self) -> bool:
        """True if any field (or table cell) shows a provisional value now."""
        if self.form_view is None:
            return False
        if any(v == FieldState.PROVISIONAL.value for v in self.field_states().values()):
            return True
        return any(s is FieldState.PROVISIONAL for s in self.form.states().values()) and self.form.running

    # -- closing --------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop autoplay, cancel every active run and wait until every stream is closed."""
        await self.autoplay.shutdown()
        await self.controller.shutdown()
        if self.compare_view is not None:
            await self.compare_view.shutdown()
        if self._picker is not None:
            self._picker.close()
        if self.form_view is not None:
            self.form_view.detach()
        if self._single_probe is not None:
            self._single_probe.close()
            self._single_probe = None

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        event.accept()
        self.closed.emit()
