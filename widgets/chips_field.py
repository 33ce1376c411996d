"""An array of scalars as a row of chips; each chip carries its element's state."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLineEdit, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.json_doc import MISSING
from livefill.widgets.chip import Chip
from livefill.widgets.field_base import FieldWidget
from livefill.widgets.flow_layout import FlowLayout


class ChipsField(FieldWidget):
    """Chips for `/tags/0`, `/tags/1` … as they arrive; a comma-separated editor when idle."""

    def make_editor(self) -> QWidget:
        box = QWidget()
        self._row = FlowLayout(box, spacing=4)  # chips wrap onto new lines instead of widening the form
        self._row.setContentsMargins(0, 0, 0, 0)
        self._chips: list[Chip] = []
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("comma, separated")
        self.edit.editingFinished.connect(self._edited)
        self._row.addWidget(self.edit)
        return box

    def watches(self, pointers: set[str]) -> bool:
        prefix = self.pointer + "/"
        return any(p.startswith(prefix) for p in pointers)

    def set_editable(self, editable: bool) -> None:
        self.edit.setVisible(editable and not self._chips)
        self.edit.setReadOnly(not editable)

    def chip(self, index: int) -> Chip | None:
        """The chip of element `index`, if shown."""
        return self._chips[index] if index < len(self._chips) else None

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        items = value if isinstance(value, list) else []
        while len(self._chips) > len(items):
            chip = self._chips.pop()
            self._row.removeWidget(chip)
            chip.deleteLater()
        while len(self._chips) < len(items):
            chip = Chip()
            chip.setObjectName("chip")
            self._row.insertWidget(len(self._chips), chip)
            self._chips.append(chip)
        for i, chip in enumerate(self._chips):
            ptr = f"{self.pointer}/{i}"
            chip.setText(self.form.display(ptr) or "…")
            st = self.form.state(ptr)
            shown = st.value if self.form.marking else "settled"
            if shown == "settled" and self.form.marking and chip.property("state") != "settled":
                self.signals.paint_probe.arm(chip, ptr)
            chip.set_state(shown)
            chip.setProperty("pointer", ptr)
        self.edit.setVisible(not self.form.running and not items)
        if not items:
            self.edit.setText("")
        self.edit.setPlaceholderText("waiting…" if state is FieldState.PENDING else "comma, separated")

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802 (Qt API): click the chips to edit them
        if not self.form.running and self._chips:
            self.edit.setText(", ".join(c.text() for c in self._chips))
            self.edit.setVisible(True)
            self.edit.setFocus()
        super().mousePressEvent(event)

    def _edited(self) -> None:
        if not self.edit.isModified():
            return
        self.edit.setModified(False)
        parts = [p.strip() for p in self.edit.text().split(",") if p.strip()]
        self.apply_edit(parts if parts else MISSING)
