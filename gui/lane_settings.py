"""A compare lane's own run settings, edited from its header: `LaneSettingsDialog`.

The dialog renders one lane's `livefill.session.lane_settings.LaneSettings` (overrides over the
session's settings) and keeps nothing: OK sends `session.set_lane_settings(name, ...)`, and a
combination the lane cannot run ("fine-grained" on Ollama, a fault its wire cannot carry) is said
in one line under the fields, the dialog staying open. Every choice starts at "as the session"
(the session's value in brackets); the demo knobs are greyed on a live lane, the fine-grained
toggle on a provider without it, and the structured modes offered are the provider's own.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget,
)

from livefill.extraction.modes import Mode
from livefill.session.lane_settings import LaneSettings
from livefill.session.session import Session
from livefill.session.settings import FAULT_NAMES, PROVIDERS, faults_for
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

__all__ = ["LaneSettingsDialog"]

SESSION = "as the session"


def _session(value: Any) -> str:
    return f"{SESSION} ({value})"


class LaneSettingsDialog(QDialog):
    """Edit compare lane `name`'s own settings (see the module docstring)."""

    def __init__(self, session: Session, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("laneSettingsDialog")
        self.session = session
        self.name = name
        lane = session.lane(name)
        self.setWindowTitle(f"Lane settings — {lane.title}")
        base = session.settings
        own = session.lane_settings(name)

        self.provider = self._combo("laneProvider", [(_session(base.provider), None)]
                                    + [(PROVIDER_SPECS[p].label, p) for p in PROVIDERS], own.provider)
        self.live = self._combo("laneLive", [(_session("live" if base.live else "demo provider"), None),
                                             ("demo provider", False), ("the live provider", True)], own.live)
        self.model = QLineEdit(own.model or "")
        self.model.setObjectName("laneModel")
        self.model.setPlaceholderText(_session(base.model or "default model") if own.provider in (None, base.provider)
                                      else "the provider's default model")
        self.structured = self._combo("laneStructured", [(_session(base.structured), None)]
                                      + [(s, s) for s in STRUCTURED], own.structured)
        self.fine_grained = self._combo("laneFineGrained", [(_session("on" if base.fine_grained else "off"), None),
                                                            ("on", True), ("off", False)], own.fine_grained)
        self.mode = self._combo("laneModeChoice", [(m.label, m) for m in Mode], own.mode)
        self.speed = QLineEdit("" if own.speed is None else f"{own.speed:g}")
        self.speed.setObjectName("laneSpeed")
        self.speed.setPlaceholderText(_session(f"{base.speed:g} tokens/s"))
        self.seed = QLineEdit("" if own.seed is None else str(own.seed))
        self.seed.setObjectName("laneSeed")
        self.seed.setPlaceholderText(_session(base.seed if base.seed is not None else "default"))
        self.fault = self._combo("laneFault", [(_session(base.fault or "none"), None), ("none", "none")]
                                 + [(f, f) for f in FAULT_NAMES], own.fault)
        self.slice = QLineEdit(own.slice or "")
        self.slice.setObjectName("laneSlice")
        self.slice.setPlaceholderText(_session(base.slicing))
        self.problem = QLabel(self)
        self.problem.setObjectName("laneSettingsProblem")
        self.problem.setWordWrap(True)
        self.problem.hide()
        self.setMinimumWidth(440)

        form = QFormLayout()
        for label, widget in (("Provider", self.provider), ("Answered by", self.live), ("Model", self.model),
                              ("Structured output", self.structured), ("Fine-grained", self.fine_grained),
                              ("Reading mode", self.mode), ("Speed (tokens/s)", self.speed), ("Seed", self.seed),
                              ("Fault", self.fault), ("Slice", self.slice)):
            form.addRow(label, widget)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        note = QLabel("What this lane changes; the rest follows the session's settings (the toolbar).", self)
        note.setObjectName("laneSettingsNote")
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        for combo in (self.provider, self.live):
            combo.currentIndexChanged.connect(self._sync)
        self._sync()

    def _combo(self, name: str, items: list[tuple[str, Any]], current: Any) -> QComboBox:
        combo = QComboBox(self)
        combo.setObjectName(name)
        for text, data in items:
            combo.addItem(text, data)
        for i, (_, data) in enumerate(items):
            if data == current and (data is None) == (current is None):
                combo.setCurrentIndex(i)
        return combo

    def _provider(self) -> str:
        return self.provider.currentData() or self.session.settings.provider

    def _sync(self) -> None:
        """Offer what the lane's provider and who answers allow."""
        provider = self._provider()
        spec = PROVIDER_SPECS[provider]
        live = self.live.currentData()
        live = self.session.settings.live if live is None else live
        self.fine_grained.setEnabled(spec.fine_grained)
        if not spec.fine_grained:
            self.fine_grained.setCurrentIndex(2)  # "off": this provider has no fine-grained streaming
        for combo, allowed in ((self.structured, spec.structured), (self.fault, ("none", *faults_for(provider)))):
            view = combo.view()
            for i in range(combo.count()):
                data = combo.itemData(i)
                view.setRowHidden(i, data is not None and data not in allowed)
            if combo.currentData() is not None and combo.currentData() not in allowed:
                combo.setCurrentIndex(0)
        for widget in (self.speed, self.seed, self.fault, self.slice):
            widget.setEnabled(not live)
            widget.setToolTip("a live lane asks the real provider: the demo provider's knobs do not apply" if live else "")

    def chosen(self) -> LaneSettings:
        """The lane settings the fields say (ValueError for a number that is not one)."""
        live = self.live.currentData()
        demo = not (self.session.settings.live if live is None else live)
        speed = self.speed.text().strip()
        seed = self.seed.text().strip()
        try:
            speed_value = float(speed) if speed and demo else None
        except ValueError:
            raise ValueError(f"speed {speed!r}: tokens per second, e.g. 30 (0 = as fast as possible)") from None
        try:
            seed_value = int(seed) if seed and demo else None
        except ValueError:
            raise ValueError(f"seed {seed!r}: a whole number, e.g. 7") from None
        spec = PROVIDER_SPECS[self._provider()]
        return LaneSettings(
            provider=self.provider.currentData(),
            live=live,
            model=self.model.text().strip() or None,
            structured=self.structured.currentData(),
            fine_grained=self.fine_grained.currentData() if spec.fine_grained else None,
            mode=self.mode.currentData(),
            speed=speed_value,
            seed=seed_value,
            fault=self.fault.currentData() if demo else None,
            slice=(self.slice.text().strip() or None) if demo else None,
        )

    def accept(self) -> None:
        """Give the lane the settings chosen, or say in one line why they cannot be used."""
        try:
            self.session.set_lane_settings(self.name, self.chosen())
        except (ValueError, RuntimeError) as exc:
            self.problem.setText(" ".join(str(exc).split()))
            self.problem.show()
            return
        super().accept()
