"""The window's Run toolbar: it shows the session's settings and writes the user's choices to it.

How this works
--------------
`RunToolbar(window, session)` builds the toolbar's controls (scenario, provider, mode and speed
combo boxes, the Faults menu, the Display menu with the provisional-display options, Start, Stop
and the Compare action) and keeps none of the values: each control shows `session.settings` (it
is re-set, with its signals blocked, on every `SettingsChanged`) and a user's choice becomes a
`session.replace(...)` intent. `set_enabled(active, comparing)` greys out what cannot change
while a run is active. The window connects Start, Stop and Compare.

While the session reads a document of one's own, the scenario picker shows it as its first entry
("Your document: NAME"); choosing a bundled scenario there goes back to that scenario's document
in one click.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QComboBox, QLabel, QMainWindow, QMenu, QPushButton, QToolBar, QToolButton

from core.modes import Mode
from core.scenarios import SCENARIO_NAMES, get_scenario
from core.session import Session, SettingsChanged
from core.settings import FAULT_NAMES, RunSettings
from gui.errors import reporting

__all__ = ["RunToolbar", "PROVIDER_LABELS", "SPEEDS", "OWN_DOCUMENT"]

OWN_DOCUMENT = "\x00own-document"
"""The scenario picker's data for the "Your document" entry."""

PROVIDER_LABELS: dict[str, str] = {
    "anthropic": "Anthropic (demo)",
    "openai-chat": "OpenAI Chat (demo)",
    "openai-responses": "OpenAI Responses (demo)",
    "ollama": "Ollama (demo)",
}

SPEEDS: tuple[tuple[float, str], ...] = (
    (10, "10 tokens/s"),
    (30, "30 tokens/s"),
    (100, "100 tokens/s"),
    (300, "300 tokens/s"),
    (1000, "1,000 tokens/s"),
    (0, "as fast as possible"),
)


def _select(combo: QComboBox, data: Any) -> None:
    index = combo.findData(data)
    if index >= 0 and index != combo.currentIndex():
        combo.blockSignals(True)
        combo.setCurrentIndex(index)
        combo.blockSignals(False)


class RunToolbar(QObject):
    """The Run toolbar's controls, rendering and editing a session's settings."""

    def __init__(self, window: QMainWindow, session: Session) -> None:
        super().__init__(window)
        self.session = session
        bar = QToolBar("Run")
        bar.setObjectName("runToolbar")
        bar.setMovable(False)
        window.addToolBar(bar)
        self.bar = bar

        self.scenario_combo = QComboBox()
        self.scenario_combo.setObjectName("scenarioCombo")
        for name in SCENARIO_NAMES:
            self.scenario_combo.addItem(name, name)
            self.scenario_combo.setItemData(self.scenario_combo.count() - 1, get_scenario(name).title, Qt.ItemDataRole.ToolTipRole)
        self.provider_combo = QComboBox()
        self.provider_combo.setObjectName("providerCombo")
        for name, label in PROVIDER_LABELS.items():
            self.provider_combo.addItem(label, name)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("modeCombo")
        for m in Mode:
            self.mode_combo.addItem(m.label, m.value)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speedCombo")
        for value, label in SPEEDS:
            self.speed_combo.addItem(label, float(value))

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

        self.show_settings(session.settings)
        session.subscribe(self._on_session_event)
        self.scenario_combo.currentIndexChanged.connect(self._scenario_chosen)
        self.provider_combo.currentIndexChanged.connect(self._provider_chosen)
        self.mode_combo.currentIndexChanged.connect(self._mode_chosen)
        self.speed_combo.currentIndexChanged.connect(self._speed_chosen)
        self.fault_group.triggered.connect(self._fault_chosen)
        self.show_strings_action.toggled.connect(self._strings_toggled)
        self.show_numbers_action.toggled.connect(self._numbers_toggled)

    # -- rendering the settings -----------------------------------------------------------------

    def show_settings(self, s: RunSettings) -> None:
        """Show `s` on every control (no intent is sent back)."""
        self._show_own_document(s)
        _select(self.scenario_combo, OWN_DOCUMENT if s.document is not None else s.scenario)
        _select(self.provider_combo, s.provider)
        _select(self.mode_combo, s.mode.value)
        if self.speed_combo.findData(s.speed) < 0:
            self.speed_combo.blockSignals(True)
            self.speed_combo.addItem(f"{s.speed:g} tokens/s", s.speed)
            self.speed_combo.blockSignals(False)
        _select(self.speed_combo, s.speed)
        name = (s.fault or "").partition("@")[0] or None
        action = self.fault_actions.get(name) or self.fault_actions[None]
        if not action.isChecked():
            self.fault_group.blockSignals(True)
            action.setChecked(True)
            self.fault_group.blockSignals(False)
        self.faults_button.setText(f"Fault: {s.fault or 'none'} ▾")
        for act, value in ((self.show_strings_action, s.show_provisional_strings),
                           (self.show_numbers_action, s.show_provisional_numbers)):
            if act.isChecked() != value:
                act.blockSignals(True)
                act.setChecked(value)
                act.blockSignals(False)

    def _show_own_document(self, s: RunSettings) -> None:
        combo = self.scenario_combo
        combo.blockSignals(True)
        try:
            index = combo.findData(OWN_DOCUMENT)
            if s.document is None:
                if index >= 0:
                    combo.removeItem(index)
                return
            label = f"Your document: {s.document_name or 'pasted text'}"
            if index < 0:
                combo.insertItem(0, label, OWN_DOCUMENT)
            else:
                combo.setItemText(index, label)
            combo.setItemData(combo.findData(OWN_DOCUMENT), f"{label} (read with the {s.scenario} schema)",
                              Qt.ItemDataRole.ToolTipRole)
        finally:
            combo.blockSignals(False)

    def set_enabled(self, active: bool, comparing: bool, autoplay: bool) -> None:
        """Grey out what cannot change while a run is active (the mode: also in compare view)."""
        self.start_button.setEnabled(not active)
        self.stop_button.setEnabled(active or autoplay)
        for widget in (self.scenario_combo, self.provider_combo, self.speed_combo, self.faults_button):
            widget.setEnabled(not active)
        self.mode_combo.setEnabled(not active and not comparing)
        self.compare_action.setEnabled(not active)

    def _on_session_event(self, event: Any) -> None:
        if isinstance(event, SettingsChanged):
            self.show_settings(event.settings)

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
        self._send(scenario=chosen, document=None, document_name=None, document_path=None)

    @reporting
    def _provider_chosen(self, _index: int) -> None:
        self._send(provider=str(self.provider_combo.currentData()))

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
