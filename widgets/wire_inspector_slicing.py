"""The demo provider's slicing knob, one click away: event / N bytes / coalesce.

`SlicingControl` shows three mutually exclusive buttons and a number for the chosen regime. It
emits `slicingChanged(str)` with the value of the demo provider's `x-demo-slice` header
("event", "N", or "coalesce:MS") whenever the user changes it. `bind(session)` makes it render a
`livefill.session.session.Session`'s `settings.slicing` and send the user's changes to the session as intents
(the setting is the session's; the control only remembers each regime's last number to show).
`value()` / `set_value(text)` read and set what it shows without the user.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QLabel, QSpinBox, QToolButton, QWidget

from livefill.session.session import Session
from livefill.session.session_events import SettingsChanged
from livefill.session.settings import parse_slicing
from livefill.wording import unit

__all__ = ["SlicingControl", "parse_slicing"]

_REGIMES = ("event", "bytes", "coalesce")


class SlicingControl(QWidget):
    """Three buttons (event / N bytes / coalesce) and the number for the chosen one."""

    slicingChanged = Signal(str)  # noqa: N815 - Qt signal naming

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("slicingControl")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(QLabel("Slicing:"))
        self._group = QButtonGroup(self)
        self._buttons: dict[str, QToolButton] = {}
        tips = {
            "event": "One network write per event: frames arrive whole",
            "bytes": "Cut the byte stream every N bytes: frames and characters split across reads",
            "coalesce": "Hold writes for MS milliseconds: several events per read",
        }
        labels = {"event": "event", "bytes": "N bytes", "coalesce": "coalesce"}
        for i, regime in enumerate(_REGIMES):
            b = QToolButton(self)
            b.setText(labels[regime])
            b.setToolTip(tips[regime])
            b.setCheckable(True)
            b.setAutoRaise(False)
            b.setObjectName(f"slicing:{regime}")
            self._group.addButton(b, i)
            self._buttons[regime] = b
            layout.addWidget(b)
        self._number = QSpinBox(self)
        self._number.setObjectName("slicingNumber")
        self._number.setRange(1, 65536)
        layout.addWidget(self._number)
        self._unit = QLabel(self)
        layout.addWidget(self._unit)
        layout.addStretch(1)
        self._amounts = {"bytes": 7, "coalesce": 50}
        self._regime = "event"
        self._quiet = False
        self._buttons["event"].setChecked(True)
        self._sync_number()
        self._group.idClicked.connect(self._on_regime)
        self._number.valueChanged.connect(self._on_number)

    def bind(self, session: Session) -> None:
        """Show `session.settings.slicing` from now on and send the user's changes to `session`."""
        self._session = session
        self.set_value(session.settings.slicing)
        self._unsubscribe = session.subscribe(self._on_session_event)
        self.slicingChanged.connect(self._send)

    def _on_session_event(self, event: Any) -> None:
        if isinstance(event, SettingsChanged) and "slicing" in event.changed and event.settings.slicing != self.value():
            self.set_value(event.settings.slicing)

    def _send(self, value: str) -> None:
        self._session.replace(slicing=value)

    def value(self) -> str:
        """The current `x-demo-slice` value."""
        if self._regime == "event":
            return "event"
        if self._regime == "bytes":
            return str(self._amounts["bytes"])
        return f"coalesce:{self._amounts['coalesce']}"

    def set_value(self, text: str) -> None:
        """Show `text` ("event" / "N" / "coalesce:MS") without emitting `slicingChanged`."""
        regime, amount = parse_slicing(text)
        self._quiet = True
        try:
            self._regime = regime
            if amount:
                self._amounts[regime] = amount
            self._buttons[regime].setChecked(True)
            self._sync_number()
        finally:
            self._quiet = False

    def _sync_number(self) -> None:
        regime = self._regime
        self._number.setVisible(regime != "event")
        self._unit.setVisible(regime != "event")
        if regime != "event":
            self._number.blockSignals(True)
            self._number.setValue(self._amounts[regime])
            self._number.blockSignals(False)
            self._unit.setText(unit(self._amounts[regime], "byte") if regime == "bytes" else "ms")

    def _on_regime(self, button_id: int) -> None:
        self._regime = _REGIMES[button_id]
        self._sync_number()
        self._emit()

    def _on_number(self, value: int) -> None:
        if self._regime in self._amounts:
            self._amounts[self._regime] = value
            if self._regime == "bytes":
                self._unit.setText(unit(value, "byte"))
            self._emit()

    def _emit(self) -> None:
        if not self._quiet:
            self.slicingChanged.emit(self.value())
