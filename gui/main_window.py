"""The main window: toolbar, source document, the form, status line and run log.

How this works
--------------
The window keeps one `FormModel` per scenario (so what a person typed or committed for the
invoice is still there after a look at the ticket) and one `RunController`. Start builds a
`RunConfig` from the toolbar (scenario, provider, mode, speed, fault, the provisional-display
settings) and hands it to the controller; the form view renders the form model as the run writes
into it; the status line follows the controller's per-frame status; the run log gets a line when
a run ends. Nothing here decides anything about a run: that is `core.run`.

Every slot that can fail is wrapped by `gui.errors.reporting`, so an exception reaches the user as
a message box. Closing the window emits `closed`; the application then shuts the run down inside
the event loop (`shutdown()`) before it stops the server.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.form import FieldState, FormModel
from core.history import History
from core.run import MODE_LABELS, DemoKnobs, Mode, Phase, RunConfig, RunStatus
from core.scenarios import SCENARIO_NAMES, get_scenario
from core.schemas import schema_model
from gui.controller import RunController
from gui.errors import reporting, show_error
from widgets.form_view import FormView
from widgets.run_log import RunLog
from widgets.source_view import SourceView
from widgets.status_line import StatusLine

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


def demo_faults() -> list[str]:
    """Every fault the demo provider knows (names as the x-demo-fault knob takes them)."""
    try:
        from core.server.knobs import FaultName

        return [f.value for f in FaultName]
    except ImportError:  # the demo provider is not installed: no faults to offer
        return []


class MainWindow(QMainWindow):
    """The livefill window. `base_url` / `relay_token` point at the (embedded) demo server."""

    closed = Signal()

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
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("livefill — a form that fills itself while the model writes")
        self.base_url = base_url
        self.relay_token = relay_token
        self.history = history
        self.idle_timeout = idle_timeout
        self.forms: dict[str, FormModel] = {}
        self.form_view: FormView | None = None
        self.controller = RunController(self)
        self.controller.statusChanged.connect(self._on_status)
        self.controller.finished.connect(self._on_finished)
        self.controller.activeChanged.connect(self._on_active)
        self.controller.error.connect(lambda message: show_error(message, self))
        self._run_label = ""

        self._build_toolbar(scenario, mode, provider, speed, fault)
        self._build_body()
        self._show_scenario()
        self._on_active(False)

        QShortcut(QKeySequence("Ctrl+Return"), self, activated=self.start)
        QShortcut(QKeySequence("Ctrl+Enter"), self, activated=self.start)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.stop)
        self.resize(1280, 820)

    # -- construction -----------------------------------------------------------------------

    def _build_toolbar(self, scenario: str, mode: str, provider: str, speed: float, fault: str | None) -> None:
        bar = QToolBar("Run")
        bar.setObjectName("runToolbar")
        bar.setMovable(False)
        self.addToolBar(bar)

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
        (self.fault_actions.get(fault) or self.fault_actions[None]).setChecked(True)
        self.fault_group.triggered.connect(lambda _a: self._update_fault_label())
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

        for label, widget in (
            ("Scenario", self.scenario_combo),
            ("Provider", self.provider_combo),
            ("Mode", self.mode_combo),
            ("Speed", self.speed_combo),
        ):
            bar.addWidget(QLabel(f" {label} "))
            bar.addWidget(widget)
        bar.addSeparator()
        bar.addWidget(self.faults_button)
        bar.addWidget(self.settings_button)
        bar.addSeparator()
        bar.addWidget(self.start_button)
        bar.addWidget(self.stop_button)

    def _build_body(self) -> None:
        self.source_view = SourceView()
        self.form_holder = QWidget()
        self.form_holder.setObjectName("formHolder")
        self._form_layout = QVBoxLayout(self.form_holder)
        self._form_layout.setContentsMargins(0, 0, 0, 0)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.source_view)
        top.addWidget(self.form_holder)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 3)
        top.setSizes([560, 720])

        self.status_line = StatusLine()
        self.run_log = RunLog()
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.setSpacing(0)
        bottom_layout.addWidget(self.status_line)
        bottom_layout.addWidget(self.run_log)

        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        body.setStretchFactor(0, 5)
        body.setStretchFactor(1, 1)
        body.setSizes([700, 90])
        self.setCentralWidget(body)

    # -- current selections ---------------------------------------------------------------------

    @property
    def scenario(self) -> str:
        """The selected scenario's name."""
        return str(self.scenario_combo.currentData())

    @property
    def mode(self) -> Mode:
        """The selected mode."""
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
        return action.data() if action is not None else None

    @property
    def form(self) -> FormModel:
        """The form model of the selected scenario."""
        name = self.scenario
        if name not in self.forms:
            self.forms[name] = FormModel(schema_model(get_scenario(name).schema_name))
        return self.forms[name]

    def field(self, pointer: str):  # noqa: ANN201 (a FieldWidget)
        """The widget of the field at `pointer` in the shown form."""
        assert self.form_view is not None
        return self.form_view.field(pointer)

    def set_fault(self, name: str | None) -> None:
        """Select a demo fault (None: none)."""
        self.fault_actions[name].setChecked(True)
        self._update_fault_label()

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

    def _show_scenario(self) -> None:
        self.source_view.show_document(get_scenario(self.scenario).document)
        self._show_form()

    def _show_form(self) -> None:
        form = self.form
        form.marking = self.mode is not Mode.NAIVE
        if self.form_view is not None:
            self.form_view.detach()
            self._form_layout.removeWidget(self.form_view)
            self.form_view.deleteLater()
        self.form_view = FormView(form)
        self._form_layout.addWidget(self.form_view)

    @reporting
    def start(self) -> None:
        """Start a run with the toolbar's settings (ignored while one is active)."""
        if self.controller.active:
            return
        scenario = get_scenario(self.scenario)
        config = RunConfig(
            mode=self.mode,
            provider=self.provider,
            base_url=self.base_url,
            schema_name=scenario.schema_name,
            document=scenario.document,
            demo=DemoKnobs(scenario=scenario.name, speed=self.speed, fault=self.fault),
            relay_token=self.relay_token,
            idle_timeout=self.idle_timeout,
            show_provisional_strings=self.show_strings_action.isChecked(),
            show_provisional_numbers=self.show_numbers_action.isChecked(),
            label=f"{scenario.name} · {self.provider}" + (f" · fault {self.fault}" if self.fault else ""),
        )
        self._run_label = config.label
        self.controller.start(self.form, config, history=self.history)

    @reporting
    def stop(self) -> None:
        """Stop the active run (a real cancel)."""
        self.controller.stop()

    def _on_active(self, active: bool) -> None:
        self.start_button.setEnabled(not active)
        self.stop_button.setEnabled(active)
        for widget in (self.scenario_combo, self.mode_combo, self.provider_combo, self.speed_combo, self.faults_button):
            widget.setEnabled(not active)

    def _on_status(self, status: RunStatus) -> None:
        self.status_line.show_status(status)

    def _on_finished(self, status: RunStatus) -> None:
        self.status_line.show_status(status)
        if status.phase is not Phase.READY:
            self.run_log.add_run(status, self._run_label)

    # -- introspection for scripts and tests ----------------------------------------------------

    def field_states(self) -> dict[str, str]:
        """The `state` property of every field widget shown, by pointer."""
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
        """Cancel the active run and wait until its stream is closed."""
        await self.controller.shutdown()
        if self.form_view is not None:
            self.form_view.detach()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt API)
        event.accept()
        self.closed.emit()
