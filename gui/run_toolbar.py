"""The window's Run toolbar: it shows the session's settings and writes the user's choices to it.

`RunToolbar(window, session, say=...)` builds the controls (scenario, provider, model, structured
output, mode and speed pickers, the Faults and Display menus, Start, Stop, Compare) and keeps none
of the values: each control shows `session.settings` (re-set, signals blocked, on every
`SettingsChanged`) and a user's choice becomes a `session.replace(...)` intent. The provider
picker offers each provider's demo wire and its live service (`live:NAME`, `livefill.wire.providers.spec`);
for a live one the demo-only controls give way to the model list (`livefill.gui.model_list`).
How it fits a 1,280 px window: docs/notes/run-toolbar.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QToolBar,
    QToolButton,
)

from livefill.extraction.modes import Mode
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.extraction.schemas import is_schema_path
from livefill.gui.errors import reporting
from livefill.gui.model_list import ModelList
from livefill.session.replay import ReplayChanged
from livefill.session.session import Session
from livefill.session.session_events import SessionEvent, SettingsChanged
from livefill.session.settings import FAULT_NAMES, LIVE_PROVIDERS, RunSettings, faults_for, model_setting
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = ["RunToolbar", "PROVIDER_LABELS", "LIVE_LABELS", "LIVE_PREFIX", "STRUCTURED_LABELS", "SPEEDS", "OWN_DOCUMENT"]

OWN_DOCUMENT = "\x00own-document"
"""The scenario picker's data for the "Your document" entry."""

PROVIDER_LABELS: dict[str, str] = {s.name: f"{s.label} (demo)" for s in PROVIDER_SPECS.values() if s.in_app}
"""The provider picker's demo entries: "Anthropic (demo)"."""

PROVIDER_TIP = "Provider: the demo provider speaking a real wire, or a live one"

LIVE_PREFIX = "live:"
"""The provider picker's data for a live provider: "live:anthropic"."""

LIVE_LABELS: dict[str, str] = {name: f"{PROVIDER_SPECS[name].label} (live)" for name in LIVE_PROVIDERS}
"""The provider picker's live entries: "Anthropic (live)"."""

STRUCTURED_LABELS: dict[str, str] = {
    "tools": "forced tool",
    "json_schema": "json_schema",
    "json_object": "json_object",
}

SPEEDS: tuple[tuple[float, str], ...] = (
    (10, "10 tokens/s"),
    (30, "30 tokens/s"),
    (100, "100 tokens/s"),
    (300, "300 tokens/s"),
    (1000, "1,000 tokens/s"),
    (0, "as fast as possible"),
)


_ONE_ARROW = "QToolButton::menu-indicator { image: none; width: 0px; }"
"""The drop-down buttons say "▾" in their text; the style's own indicator would be a second arrow."""


def _fault_text(name: str) -> str:
    return f"Fault: {name} ▾"


def _structured_choices(provider: str) -> tuple[str, ...]:
    """The ways `provider` can be made to write structure, its default first."""
    spec = PROVIDER_SPECS.get(provider)
    return spec.structured if spec is not None else ("tools",)


SCENARIO_CHARS = 12
"""The scenario picker is this many characters wide, whatever it lists: a long entry ("✎ replay:
invoice/trace-smollm2.jsonl") ends in "…" in the box (whole in its list and tooltip) instead of
widening the toolbar, and presentation mode's larger type gives it back at its width."""


class ElidingCombo(QComboBox):
    """A combo box whose shown text ends in "…" when it is longer than the box (its list shows it whole)."""

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001 - Qt override
        painter = QStylePainter(self)
        try:
            option = self._option()
            painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
            painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)
        finally:
            painter.end()

    def shown_text(self) -> str:
        """The text the box shows now (elided as painted)."""
        return self._option().currentText

    def _option(self) -> QStyleOptionComboBox:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        room = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                           QStyle.SubControl.SC_ComboBoxEditField, self).width()
        option.currentText = self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideRight, max(room - 2, 0))
        return option


def _select(combo: QComboBox, data: Any) -> None:
    index = combo.findData(data)
    if index >= 0 and index != combo.currentIndex():
        combo.blockSignals(True)
        combo.setCurrentIndex(index)
        combo.blockSignals(False)


class RunToolbar(QObject):
    """The Run toolbar's controls, rendering and editing a session's settings."""

    def __init__(self, window: QMainWindow, session: Session, *, say: Callable[[str], None]) -> None:
        super().__init__(window)
        self.session = session
        self.say = say
        bar = QToolBar("Run")
        bar.setObjectName("runToolbar")
        bar.setMovable(False)
        window.addToolBar(bar)
        self.bar = bar

        self.scenario_combo = ElidingCombo()
        self.scenario_combo.setObjectName("scenarioCombo")
        self.scenario_combo.setMinimumContentsLength(SCENARIO_CHARS)  # its width never follows what it lists
        self.scenario_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scenario_combo.setIconSize(QSize(0, 0))  # it shows no icons: no room kept for one
        for name in SCENARIO_NAMES:
            self.scenario_combo.addItem(name, name)
            self.scenario_combo.setItemData(self.scenario_combo.count() - 1, get_scenario(name).title, Qt.ItemDataRole.ToolTipRole)
        self.provider_combo = QComboBox()
        self.provider_combo.setObjectName("providerCombo")
        for name, label in PROVIDER_LABELS.items():
            self.provider_combo.addItem(label, name)
        self.provider_combo.insertSeparator(self.provider_combo.count())
        for name in LIVE_PROVIDERS:
            self.provider_combo.addItem(LIVE_LABELS[name], LIVE_PREFIX + name)
        self.provider_combo.setItemData(self.provider_combo.findData(LIVE_PREFIX + "openai-compatible"),
                                        "Any OpenAI-compatible server by its base URL: llama.cpp, vLLM, LM Studio, "
                                        "Ollama's /v1, a gateway (File → Settings…)", Qt.ItemDataRole.ToolTipRole)
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("modelCombo")
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_combo.setMinimumContentsLength(10)
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.model_combo.setToolTip("The model: pick one the provider lists, or type its name")
        self.model_combo.lineEdit().setPlaceholderText("provider's default")
        self.structured_combo = QComboBox()
        self.structured_combo.setObjectName("structuredCombo")
        self.structured_combo.setToolTip("How structure is forced: a forced tool, response_format json_schema, or json_object")
        self.fine_grained_action = QAction("Fine-grained", window, checkable=True)
        self.fine_grained_action.setObjectName("fineGrainedAction")
        self.fine_grained_action.setToolTip("Anthropic fine-grained tool streaming (raw, unbuffered tool-input fragments)")
        self.models = ModelList(session, self.model_combo, say)
        # the pickers are as wide as a short label (their lists show the whole labels), so the
        # toolbar fits the default 1,280 px window in the demo and in the live layout
        for combo, chars in ((self.provider_combo, 14),):
            combo.setMinimumContentsLength(chars)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.view().setMinimumWidth(combo.view().sizeHintForColumn(0) + 24)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("modeCombo")
        for m in Mode:
            self.mode_combo.addItem(m.label, m.value)
        self.mode_combo.setMinimumContentsLength(10)
        self.mode_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode_combo.view().setMinimumWidth(self.mode_combo.view().sizeHintForColumn(0) + 24)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speedCombo")
        for value, label in SPEEDS:
            self.speed_combo.addItem(label, float(value))
        self.speed_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # "as fast as possible" whole
        self.speed_combo.view().setMinimumWidth(self.speed_combo.view().sizeHintForColumn(0) + 24)

        self.faults_button = QToolButton()
        self.faults_button.setObjectName("faultsButton")
        self.faults_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.faults_menu = QMenu("Faults", window)
        self.fault_group = QActionGroup(window)
        self.fault_group.setExclusive(True)
        self.fault_actions: dict[str | None, QAction] = {}
        for name in [None, *FAULT_NAMES]:
            action = QAction("no fault" if name is None else name, window)
            action.setCheckable(True)
            action.setData(name)
            action.setObjectName(f"fault:{name or 'none'}")
            self.fault_group.addAction(action)
            self.faults_menu.addAction(action)
            self.fault_actions[name] = action
        self.faults_button.setMenu(self.faults_menu)
        self.faults_button.setStyleSheet(_ONE_ARROW)
        self.faults_button.setText(_fault_text(max(FAULT_NAMES, key=len) + "@0.25"))  # a fault at a point fits too
        self.faults_button.setFixedWidth(self.faults_button.sizeHint().width())  # a chosen fault never widens it

        self.settings_button = QToolButton()
        self.settings_button.setObjectName("settingsButton")
        self.settings_button.setText("Display ▾")
        self.settings_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        display = QMenu("Display", window)
        self.show_strings_action = QAction("Show provisional strings", window, checkable=True)
        self.show_numbers_action = QAction("Show provisional numbers (12 before 1200)", window, checkable=True)
        display.addAction(self.show_strings_action)
        display.addAction(self.show_numbers_action)
        self.settings_button.setMenu(display)
        self.settings_button.setStyleSheet(_ONE_ARROW)

        self.start_button = QPushButton("▶ Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setToolTip("Start a run (Ctrl+Return)")
        self.stop_button = QPushButton("■ Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the run: closes the connection (Esc)")

        self.compare_action = QAction("Compare", window, checkable=True)
        self.compare_action.setObjectName("compareAction")
        self.compare_action.setToolTip("Show 2–5 lanes side by side, one per reading mode, all fed the same generation")
        self.compare_action.setShortcut(QKeySequence("Ctrl+K"))

        keep: list[QAction] = []
        # Start and Stop first: a toolbar too narrow for everything hides its last items, never these
        keep.append(bar.addWidget(self.start_button))
        keep.append(bar.addWidget(self.stop_button))
        bar.addSeparator()
        self._demo_actions: list[QAction] = []
        self._live_actions: list[QAction] = []
        self._structured_actions: list[QAction] = []
        self.provider_combo.setToolTip(PROVIDER_TIP)
        self.speed_combo.setToolTip("Speed of the demo provider")
        for label, widget in (  # the provider and speed pickers say what they are in their own text
            ("Scenario", self.scenario_combo),
            ("", self.provider_combo),
            ("Model", self.model_combo),
            ("", self.structured_combo),
            ("Mode", self.mode_combo),
            ("", self.speed_combo),
        ):
            added = [bar.addWidget(QLabel(f" {label} "))] if label else []
            added.append(bar.addWidget(widget))
            if widget is self.scenario_combo:
                keep += added
            elif widget is self.model_combo:
                self._live_actions += added
            elif widget is self.structured_combo:
                self._structured_actions += added
            elif widget is self.speed_combo:
                self._demo_actions += added
        bar.addAction(self.fine_grained_action)
        bar.addSeparator()
        self._demo_actions.append(bar.addWidget(self.faults_button))
        bar.addWidget(self.settings_button)
        bar.addSeparator()
        bar.addAction(self.compare_action)
        self.presentation_keep: list[QAction] = keep

        self.show_settings(session.settings)
        session.subscribe(self._on_session_event)
        self.scenario_combo.currentIndexChanged.connect(self._scenario_chosen)
        self.provider_combo.currentIndexChanged.connect(self._provider_chosen)
        self.model_combo.activated.connect(self._model_chosen)
        self.model_combo.lineEdit().editingFinished.connect(self._model_chosen)
        self.structured_combo.currentIndexChanged.connect(self._structured_chosen)
        self.fine_grained_action.toggled.connect(self._fine_grained_toggled)
        self.mode_combo.currentIndexChanged.connect(self._mode_chosen)
        self.speed_combo.currentIndexChanged.connect(self._speed_chosen)
        self.fault_group.triggered.connect(self._fault_chosen)
        self.show_strings_action.toggled.connect(self._strings_toggled)
        self.show_numbers_action.toggled.connect(self._numbers_toggled)

    # -- rendering the settings -----------------------------------------------------------------

    def show_settings(self, s: RunSettings) -> None:
        """Show `s` on every control (no intent is sent back)."""
        self._show_own_document(s)
        combo = self.scenario_combo
        _select(combo, OWN_DOCUMENT if s.document is not None else s.scenario)
        combo.setToolTip(str(combo.itemData(combo.currentIndex(), Qt.ItemDataRole.ToolTipRole) or combo.currentText()))
        combo.view().setMinimumWidth(combo.view().sizeHintForColumn(0) + 24)  # its list shows every entry whole
        self._show_provider(s)
        self._show_live(s)
        _select(self.mode_combo, s.mode.value)
        if self.speed_combo.findData(s.speed) < 0:
            self.speed_combo.blockSignals(True)
            self.speed_combo.addItem(f"{s.speed:g} tokens/s", s.speed)
            self.speed_combo.blockSignals(False)
        _select(self.speed_combo, s.speed)
        offered = set(faults_for(s.provider))  # only the faults that apply to this wire
        for fault_name, fault_action in self.fault_actions.items():
            fault_action.setVisible(fault_name is None or fault_name in offered)
        name = (s.fault or "").partition("@")[0] or None
        action = self.fault_actions.get(name) or self.fault_actions[None]
        if not action.isChecked():
            self.fault_group.blockSignals(True)
            action.setChecked(True)
            self.fault_group.blockSignals(False)
        full = _fault_text(s.fault or "none")
        metrics = self.faults_button.fontMetrics()
        room = self.faults_button.width() - (self.faults_button.sizeHint().width() - metrics.horizontalAdvance(self.faults_button.text()))
        self.faults_button.setText(metrics.elidedText(full, Qt.TextElideMode.ElideMiddle, max(room, metrics.horizontalAdvance(full[:8]))))
        self.faults_button.setToolTip(f"The demo fault of the next run: {s.fault or 'none'}")
        for act, value in ((self.show_strings_action, s.show_provisional_strings),
                           (self.show_numbers_action, s.show_provisional_numbers)):
            if act.isChecked() != value:
                act.blockSignals(True)
                act.setChecked(value)
                act.blockSignals(False)

    def _show_provider(self, s: RunSettings) -> None:
        """The provider the next Start reads: while a recording is replayed, the one it was
        recorded from (the demo provider replays it on that wire; greyed by `_on_session_event` and
        `set_enabled`: it is the recording's)."""
        replay = self.session.replay
        if replay is None:
            _select(self.provider_combo, LIVE_PREFIX + s.provider if s.live else s.provider)
            self.provider_combo.setToolTip(PROVIDER_TIP)
            return
        trace = replay.trace
        _select(self.provider_combo, trace.provider if trace.provider in PROVIDER_LABELS else trace.wire)
        model = f" ({trace.model})" if trace.model else ""
        self.provider_combo.setToolTip(f"Replaying {replay.name}: recorded from {trace.provider}{model} on the "
                                       f"{trace.wire} wire. Leave the replay (× in the status bar) to choose a provider.")

    def _show_live(self, s: RunSettings) -> None:
        """Show the live controls for a live provider, the demo-only ones for the demo provider."""
        for action in self._demo_actions:
            action.setVisible(not s.live)
        for action in self._live_actions:
            action.setVisible(s.live)
        choices = _structured_choices(s.provider)
        for action in self._structured_actions:
            action.setVisible(s.live and len(choices) > 1)
        spec = PROVIDER_SPECS.get(s.provider)
        self.fine_grained_action.setVisible(s.live and spec is not None and spec.fine_grained)
        if self.fine_grained_action.isChecked() != s.fine_grained:
            self.fine_grained_action.blockSignals(True)
            self.fine_grained_action.setChecked(s.fine_grained)
            self.fine_grained_action.blockSignals(False)
        combo = self.structured_combo
        combo.blockSignals(True)
        try:
            if [combo.itemData(i) for i in range(combo.count())] != list(choices):
                combo.clear()
                for name in choices:
                    combo.addItem(STRUCTURED_LABELS.get(name, name), name)
            index = combo.findData(s.structured if s.structured in choices else choices[0])
            combo.setCurrentIndex(max(index, 0))
        finally:
            combo.blockSignals(False)
        if not s.live:
            return
        model = getattr(s, model_setting(s.provider)) or ""
        line = self.model_combo.lineEdit()
        if line.text() != model and not line.hasFocus():
            self.model_combo.blockSignals(True)
            line.setText(model)
            self.model_combo.blockSignals(False)
        self.models.refresh()

    def shutdown(self) -> None:
        """Forget a model list still being fetched (its thread ends on its own within 15 s)."""
        self.models.forget()

    def _show_own_document(self, s: RunSettings) -> None:
        combo = self.scenario_combo
        combo.blockSignals(True)
        try:
            index = combo.findData(OWN_DOCUMENT)
            if s.document is None:
                if index >= 0:
                    combo.removeItem(index)
                return
            name = s.document_name or "pasted text"
            label = f"✎ {name}"  # yours (as a value you typed is marked): the box is narrow ("Your docume" said nothing)
            if index < 0:
                combo.insertItem(0, label, OWN_DOCUMENT)
            else:
                combo.setItemText(index, label)
            combo.setItemData(combo.findData(OWN_DOCUMENT), f"Your document: {name} (read with the {self._schema_label(s)} schema)",
                              Qt.ItemDataRole.ToolTipRole)
        finally:
            combo.blockSignals(False)

    @staticmethod
    def _schema_label(s: RunSettings) -> str:
        if s.schema_name is None:
            return s.scenario
        return Path(s.schema_name).name if is_schema_path(s.schema_name) else s.schema_name

    def set_enabled(self, active: bool, comparing: bool, autoplay: bool) -> None:
        """Grey out what cannot change while a run is active (the mode: also in compare view)."""
        self.start_button.setEnabled(not active)
        self.stop_button.setEnabled(active or autoplay)
        for widget in (self.scenario_combo, self.provider_combo, self.speed_combo, self.faults_button,
                       self.model_combo, self.structured_combo):
            widget.setEnabled(not active)
        if self.session.replay is not None:
            self.provider_combo.setEnabled(False)  # the recording's (see _show_provider)
        self.fine_grained_action.setEnabled(not active)
        self.mode_combo.setEnabled(not active and not comparing)
        self.compare_action.setEnabled(not active)

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, ReplayChanged):
            self.provider_combo.setEnabled(event.replay is None and not self.session.active)
            self.show_settings(self.session.settings)
        elif isinstance(event, SettingsChanged):
            self.show_settings(event.settings)
            if {"provider", "fault"} <= event.changed and event.old.fault and event.settings.fault is None:
                label = self.provider_combo.currentText() or event.settings.provider
                self.say(f"Fault {event.old.fault} cannot be sent on the {label} wire: back to no fault")

    # -- the user's choices become intents --------------------------------------------------------

    def _send(self, **changes: Any) -> None:
        try:
            self.session.replace(**changes)
        finally:
            self.show_settings(self.session.settings)  # a refused change shows the settings as they are

    @reporting
    def _scenario_chosen(self, _index: int) -> None:
        chosen = str(self.scenario_combo.currentData())
        if chosen == OWN_DOCUMENT:
            self.show_settings(self.session.settings)
            return
        self._send(scenario=chosen, document=None, document_name=None, document_path=None, schema_name=None)

    @reporting
    def _provider_chosen(self, _index: int) -> None:
        data = str(self.provider_combo.currentData())
        live = data.startswith(LIVE_PREFIX)
        provider = data.removeprefix(LIVE_PREFIX)
        changes: dict[str, Any] = {"provider": provider, "live": live}
        choices = _structured_choices(provider)
        if self.session.settings.structured not in choices:
            changes["structured"] = choices[0]
        self._send(**changes)

    @reporting
    def _model_chosen(self, _index: int | None = None) -> None:
        s = self.session.settings
        if not s.live:
            return
        text = self.model_combo.lineEdit().text().strip()
        self._send(**{model_setting(s.provider): text or None})

    @reporting
    def _structured_chosen(self, _index: int) -> None:
        data = self.structured_combo.currentData()
        if data is not None:
            self._send(structured=str(data))

    @reporting
    def _fine_grained_toggled(self, on: bool) -> None:
        self._send(fine_grained=on)

    @reporting
    def _mode_chosen(self, _index: int) -> None:
        self._send(mode=Mode(self.mode_combo.currentData()))

    @reporting
    def _speed_chosen(self, _index: int) -> None:
        self._send(speed=float(self.speed_combo.currentData()))

    @reporting
    def _fault_chosen(self, action: QAction) -> None:
        self._send(fault=action.data())  # a fault picked from the menu comes at its default point

    @reporting
    def _strings_toggled(self, on: bool) -> None:
        self._send(show_provisional_strings=on)

    @reporting
    def _numbers_toggled(self, on: bool) -> None:
        self._send(show_provisional_numbers=on)

