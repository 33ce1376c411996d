"""An enum field: its value as a chip; the user picks one of the choices while no run is active."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.json_doc import MISSING
from livefill.widgets.chip import Chip
from livefill.widgets.field_base import FieldWidget

_NONE = "—"


class EnumField(FieldWidget):
    """One of a few strings: shown as a chip during a run, a choice box when idle."""

    def make_editor(self) -> QWidget:
        box = QWidget()
        layout = QHBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.chip = Chip()
        self.combo = QComboBox()
        self.combo.addItems([_NONE, *self.spec.choices])
        self.combo.setToolTip("choices: " + ", ".join(self.spec.choices))
        self.combo.activated.connect(self._picked)
        keep = self.combo.sizePolicy()  # hidden during a run, its room kept: the row keeps its height
        keep.setRetainSizeWhenHidden(True)
        self.combo.setSizePolicy(keep)
        layout.addWidget(self.chip)
        layout.addWidget(self.combo)
        layout.addStretch(1)
        return box

    def extra_styled(self) -> tuple[QWidget, ...]:
        return (self.chip,)

    def set_editable(self, editable: bool) -> None:
        self.combo.setVisible(editable)  # idle: pick from the choices; during a run: the chip
        self.combo.setEnabled(editable)
        self.chip.setVisible(not editable)

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        self.chip.setText(text if text else ("waiting…" if state is FieldState.PENDING else _NONE))
        index = self.combo.findText(value) if isinstance(value, str) else 0
        self.combo.setCurrentIndex(max(index, 0))

    def _picked(self, index: int) -> None:
        text = self.combo.itemText(index)
        self.apply_edit(MISSING if text == _NONE else text)
