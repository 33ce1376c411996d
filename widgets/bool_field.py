"""A boolean field: a check box with the value in words beside it (never the box alone)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QWidget

from livefill.extraction.form import FieldState
from livefill.widgets.field_base import FieldWidget


class BoolField(FieldWidget):
    """true / false as a check; partially checked while nothing is known."""

    def make_editor(self) -> QWidget:
        check = QCheckBox()
        check.setTristate(False)
        check.clicked.connect(self._clicked)
        return check

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        check: QCheckBox = self.editor  # type: ignore[assignment]
        if isinstance(value, bool):
            check.setCheckState(Qt.CheckState.Checked if value else Qt.CheckState.Unchecked)
            check.setText(text)
        else:
            check.setCheckState(Qt.CheckState.Unchecked)
            check.setText("waiting…" if state is FieldState.PENDING else "—")

    def _clicked(self, checked: bool) -> None:
        self.apply_edit(bool(checked))
