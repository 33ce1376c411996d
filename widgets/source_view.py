"""The source document the extraction is read from (read-only, monospace).

How this works
--------------
Every line wraps at the pane's width, at a word boundary (a word longer than the whole width
breaks where it must): nothing is cut at the pane's edge and nothing scrolls sideways.

A document laid out in columns (an invoice's table, a ticket's headers) is shown in a font that
fits `FIT_COLUMNS` columns in the pane when it can (at most the widget's own font size, at least
`MIN_SCALE` of it), so that its rows stay whole lines; a longer line wraps. A document of running
prose (most of its lines longer than `PROSE_COLUMNS`) is shown in the widget's own font.

The widget's font (set here, or by a style sheet such as presentation mode's) is the largest size
used; the fitted size is the document's default font, re-chosen when the pane or the font changes.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent
from PySide6.QtGui import QFont, QFontDatabase, QFontMetricsF, QTextOption
from PySide6.QtWidgets import QPlainTextEdit, QWidget

__all__ = ["SourceView", "font_size", "FIT_COLUMNS", "MIN_SCALE", "PROSE_COLUMNS", "is_prose"]

FIT_COLUMNS = 80
"""A columned document is shown in a font that fits this many columns in the pane, when it can."""

MIN_SCALE = 0.75
"""The fitted font is never smaller than this share of the widget's font (then longer lines wrap)."""

PROSE_COLUMNS = 100
"""A document most of whose lines are longer than this is prose: shown in the widget's own font."""


def is_prose(text: str) -> bool:
    """True if `text` is running prose (wrap it) rather than lines laid out in columns."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    long = sum(1 for line in lines if len(line) > PROSE_COLUMNS)
    return long * 4 > len(lines)


def _set_size(font: QFont, size: float, points: bool) -> None:
    if points:
        font.setPointSizeF(size)
    else:
        font.setPixelSize(max(1, int(size)))


def font_size(font: QFont) -> float:
    """A font's size in points, or in pixels when it was given in pixels."""
    return font.pointSizeF() if font.pointSizeF() > 0 else float(font.pixelSize())


class SourceView(QPlainTextEdit):
    """Shows the scenario's document (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sourceView")
        self.setReadOnly(True)
        self.prose = False
        self._columns = FIT_COLUMNS
        self._fitting = False
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

    def show_document(self, text: str) -> None:
        """Replace the shown document."""
        self.prose = is_prose(text)
        longest = max((len(line) for line in text.splitlines()), default=0)
        self._columns = max(1, min(FIT_COLUMNS, longest))
        self.setPlainText(text)
        self.fit()

    def text_font(self) -> QFont:
        """The font the document is drawn in now."""
        return self.document().defaultFont()

    def fit(self) -> None:
        """Choose the document's font for the pane's width (see the module docstring)."""
        if self._fitting:
            return
        self._fitting = True
        try:
            base = QFont(self.font())
            font = QFont(base)
            if not self.prose:
                points = base.pointSizeF() > 0  # a style sheet may give the size in pixels
                size = base.pointSizeF() if points else float(base.pixelSize())
                width = self.viewport().width() - 2 * self.document().documentMargin() - 2
                wanted = QFontMetricsF(base).horizontalAdvance("M" * self._columns)
                if width > 0 and wanted > width and size > 0:
                    least = size * MIN_SCALE
                    step = 0.25 if points else 1.0  # whole steps: dragging the splitter re-lays the text out rarely
                    fitted = max(least, math.floor(size * width / wanted / step) * step)
                    _set_size(font, fitted, points)
                    while fitted > least and QFontMetricsF(font).horizontalAdvance("M" * self._columns) > width:
                        fitted = max(least, fitted - step)  # sizes do not scale exactly
                        _set_size(font, fitted, points)
            if font != self.document().defaultFont():
                self.document().setDefaultFont(font)
        finally:
            self._fitting = False

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        self.fit()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)  # a new widget font becomes the document's: fit it again
        if event.type() == QEvent.Type.FontChange:
            self.fit()
