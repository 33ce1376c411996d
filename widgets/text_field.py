"""A one-line text field (strings and ISO dates)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from PySide6.QtWidgets import QLineEdit, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.json_doc import MISSING
from livefill.extraction.schema import FieldKind
from livefill.widgets.field_base import PLACEHOLDERS, FieldWidget


class TextField(FieldWidget):
    """A string (or a date, typed as YYYY-MM-DD) in a one-line editor."""

    def make_editor(self) -> QWidget:
        edit = QLineEdit()
        edit.editingFinished.connect(self._edited)
        return edit

    def set_editable(self, editable: bool) -> None:
        self.editor.setReadOnly(not editable)

    def _placeholder(self, state: FieldState) -> str:
        if state in PLACEHOLDERS:
            return PLACEHOLDERS[state]
        return "YYYY-MM-DD" if self.spec.kind is FieldKind.DATE else ""

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        edit: QLineEdit = self.editor  # type: ignore[assignment]
        edit.setPlaceholderText(self._placeholder(state))
        if edit.text() != text:
            edit.setText(text)
            edit.setCursorPosition(0)

    def _edited(self) -> None:
        edit: QLineEdit = self.editor  # type: ignore[assignment]
        if not edit.isModified():
            return
        edit.setModified(False)
        text = edit.text()
        if text == "":
            self.apply_edit(MISSING)
            return
        reason = None
        if self.spec.kind is FieldKind.DATE:
            try:
                dt.date.fromisoformat(text)
            except ValueError:
                reason = "not a date (YYYY-MM-DD)"
        self.apply_edit(text, reason)
