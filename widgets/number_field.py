"""A numeric field (number or integer), right-aligned."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.json_doc import MISSING
from livefill.extraction.schema import FieldKind
from livefill.widgets.field_base import PLACEHOLDERS, FieldWidget


def parse_number(text: str, kind: FieldKind) -> tuple[Any, str | None]:
    """The number `text` spells for a field of `kind`, or (text, reason) when it is not one."""
    cleaned = text.strip().replace(",", "")
    try:
        if kind is FieldKind.INTEGER:
            return int(cleaned), None
        value = float(cleaned)
        return (int(value) if value.is_integer() and "." not in cleaned and "e" not in cleaned.lower() else value), None
    except ValueError:
        return text, "not a whole number" if kind is FieldKind.INTEGER else "not a number"


class NumberField(FieldWidget):
    """A number or integer, right-aligned; the user's text is parsed on edit."""

    def make_editor(self) -> QWidget:
        edit = QLineEdit()
        edit.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        edit.setMaximumWidth(180)
        edit.editingFinished.connect(self._edited)
        return edit

    def set_editable(self, editable: bool) -> None:
        self.editor.setReadOnly(not editable)

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        edit: QLineEdit = self.editor  # type: ignore[assignment]
        edit.setPlaceholderText(PLACEHOLDERS.get(state, ""))
        if edit.text() != text:
            edit.setText(text)

    def _edited(self) -> None:
        edit: QLineEdit = self.editor  # type: ignore[assignment]
        if not edit.isModified():
            return
        edit.setModified(False)
        if edit.text().strip() == "":
            self.apply_edit(MISSING)
            return
        value, reason = parse_number(edit.text(), self.spec.kind)
        self.apply_edit(value, reason)
