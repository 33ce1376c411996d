"""A multi-line prose field that grows with its text."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.json_doc import MISSING
from livefill.widgets.field_base import PLACEHOLDERS, FieldWidget

MIN_LINES = 2
MAX_LINES = 12


class ProseField(FieldWidget):
    """Free prose (x-prose or a long maxLength): the editor grows line by line as text arrives."""

    stacked = True

    def make_editor(self) -> QWidget:
        edit = QPlainTextEdit()
        edit.setTabChangesFocus(True)
        edit.installEventFilter(self)
        edit.document().contentsChanged.connect(self._fit)
        lines = MIN_LINES
        edit.setFixedHeight(int(edit.fontMetrics().lineSpacing() * lines + 14))
        return edit

    def set_editable(self, editable: bool) -> None:
        self.editor.setReadOnly(not editable)

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        edit: QPlainTextEdit = self.editor  # type: ignore[assignment]
        edit.setPlaceholderText(PLACEHOLDERS.get(state, ""))
        if edit.toPlainText() != text:
            doc = edit.document()
            old = edit.toPlainText()
            if text.startswith(old) and old:
                cursor = edit.textCursor()
                cursor.movePosition(cursor.MoveOperation.End)
                cursor.insertText(text[len(old):])  # append: no full relayout per delta
            else:
                doc.setPlainText(text)
            doc.setModified(False)

    def _fit(self) -> None:
        edit: QPlainTextEdit = self.editor  # type: ignore[assignment]
        lines = max(MIN_LINES, min(MAX_LINES, edit.document().blockCount() + _wrapped_extra(edit)))
        height = int(edit.fontMetrics().lineSpacing() * lines + 14)
        if edit.height() != height:
            edit.setFixedHeight(height)
            self.updateGeometry()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if watched is self.editor and event.type() == QEvent.Type.FocusOut:
            self._edited()
        elif watched is self.editor and event.type() == QEvent.Type.Resize:
            self._fit()  # a new width re-wraps the text
        return super().eventFilter(watched, event)

    def _edited(self) -> None:
        edit: QPlainTextEdit = self.editor  # type: ignore[assignment]
        if edit.document().isModified():
            edit.document().setModified(False)
            text = edit.toPlainText()
            self.apply_edit(text if text else MISSING)


def _wrapped_extra(edit: QPlainTextEdit) -> int:
    """Visual lines beyond the text's own lines, its blocks (soft wrapping).

    Estimated from the text and the width alone, so that the same text at the same width always
    gets the same height (compare lanes' rows line up): the document's own line count follows its
    layout, which re-wraps later than a resize, and the viewport narrows while a scroll bar shows.
    So: the width inside the frame less a scroll bar's, whether one shows or not.
    """
    bar = edit.verticalScrollBar().sizeHint().width()
    width = max(50, edit.contentsRect().width() - bar - 8)
    metrics = edit.fontMetrics()
    extra = 0
    block = edit.document().firstBlock()
    while block.isValid():
        extra += max(0, metrics.horizontalAdvance(block.text()) // width)
        block = block.next()
    return extra
