"""A label that never widens its window: it wraps onto at most `max_lines` lines, elides the rest
with "…", and then carries the whole text in its tooltip.

A plain `QLabel` without word wrap asks for the width of its whole text as its minimum, so one long
error message ("connection lost: … incomplete chunked read …") pushes its layout, and the window
around it, off the screen. `ElidedLabel` asks for a few characters of width at least, lays its
text out with `QTextLayout` in whatever width it is given, and paints the first `max_lines` lines,
the last one elided. `text()` is always the whole text; `elided()` says whether some of it is
hidden (then the tooltip holds all of it).

A one-line label may be given shorter forms of its text (`set_shorter`: "Scenario: invoice" for
"Scenario document: invoice"): where the whole text does not fit, the first shorter form that fits
is shown, else the last one elided. Cut at a word, never mid-word without an "…".
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel, QSizePolicy, QStyle, QStyleOption, QWidget

__all__ = ["ElidedLabel"]

MIN_CHARS = 6
"""The label's minimum width, in average characters."""

_MEMO_SIZE = 8  # (text, width) layouts remembered


class ElidedLabel(QLabel):
    """Plain text on at most `max_lines` lines, elided, whole in the tooltip (see the module docstring)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, max_lines: int = 1, min_lines: int = 1) -> None:
        super().__init__(parent)
        self._memo: dict[tuple[str, int], tuple[list[str], bool]] = {}
        self._max_lines = max(1, max_lines)
        self.min_lines = max(1, min(min_lines, self.max_lines))  # lines kept even when the text is shorter: no jumping
        self._own_tip = ""
        self._shown_tip: str | None = None
        self._elided = False
        self._text = ""
        self._shorter: tuple[str, ...] = ()
        self.setTextFormat(Qt.TextFormat.PlainText)
        policy = QSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(self.max_lines > 1)
        self.setSizePolicy(policy)
        self.setText(text)

    @property
    def max_lines(self) -> int:
        """The most lines shown (the last one elided)."""
        return self._max_lines

    @max_lines.setter
    def max_lines(self, lines: int) -> None:
        self._max_lines = max(1, lines)
        self._memo.clear()

    # -- QLabel API ---------------------------------------------------------------------------

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        if text == self._text:
            return
        width = self._content_width(self.width())
        before = self._height_for_lines(len(self._lines(width)[0])) if width > 0 else -1
        # The text is kept here, not in QLabel: QLabel.setText asks every layout up to the window
        # again (QMainWindow re-lays its docks and toolbars, making animation objects as it goes),
        # and a status line changes text tens of times a second while its height stays.
        self._text = text
        self.setAccessibleName(text)
        if width <= 0 or self._height_for_lines(len(self._lines(width)[0])) != before:
            self.updateGeometry()
        self._sync_tip()
        self.update()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._memo.clear()
        super().changeEvent(event)

    def set_shorter(self, *forms: str) -> None:
        """Shorter forms of the text, longest first, shown (one line only) where it does not fit whole."""
        if forms == self._shorter:
            return
        self._shorter = forms
        self._memo.clear()
        self._sync_tip()
        self.update()

    def form_widths(self) -> list[int]:
        """The width the whole text and each shorter form need on one line, margins included."""
        fm = QFontMetrics(self.font())
        m = self.contentsMargins()
        pad = m.left() + m.right() + 2 * self.margin() + 1
        return [fm.horizontalAdvance(form) + pad for form in (self.text(), *self._shorter)]

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt API
        """A tooltip of one's own (shown when the text is whole; the whole text is added when elided)."""
        self._own_tip = tip
        self._sync_tip()

    def shown_text(self) -> str:
        """What is painted now, its lines joined by newlines."""
        return "\n".join(self._lines(self._content_width(self.width()))[0])

    def elided(self) -> bool:
        """True if some of the text is hidden at the current width."""
        return self._elided

    # -- geometry -----------------------------------------------------------------------------

    def _lines(self, width: int) -> tuple[list[str], bool]:
        """The lines shown in `width` pixels, and whether the text was cut (remembered for the
        last few texts and widths: a layout, a paint and a tooltip ask the same question)."""
        key = (self.text(), width)  # (the memo is cleared when the shorter forms change)
        found = self._memo.get(key)
        if found is None:
            found = self._lay_out(width)
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = found
        return list(found[0]), found[1]

    def _lay_out(self, width: int) -> tuple[list[str], bool]:
        text = self.text()
        if not text or width <= 0:
            return ([text] if text else []), bool(text) and width <= 0
        fm = QFontMetrics(self.font())
        if self._shorter and self.max_lines == 1 and fm.horizontalAdvance(text) > width:
            for form in self._shorter:
                if fm.horizontalAdvance(form) <= width:
                    return [form], True
            return [fm.elidedText(self._shorter[-1], Qt.TextElideMode.ElideRight, width)], True
        out: list[str] = []
        cut = False
        paragraphs = text.split("\n")
        for p_index, paragraph in enumerate(paragraphs):
            layout = QTextLayout(paragraph, self.font())
            option = QTextOption()
            option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
            layout.setTextOption(option)
            layout.beginLayout()
            starts: list[tuple[int, int]] = []
            while True:
                line = layout.createLine()
                if not line.isValid():
                    break
                line.setLineWidth(width)
                starts.append((line.textStart(), line.textLength()))
            layout.endLayout()
            for index, (start, length) in enumerate(starts or [(0, 0)]):
                if len(out) == self.max_lines - 1 and (index < len(starts) - 1 or p_index < len(paragraphs) - 1):
                    rest = paragraph[start:] + ("\n" + "\n".join(paragraphs[p_index + 1:]) if p_index < len(paragraphs) - 1 else "")
                    rest = " ".join(rest.split())
                    out.append(fm.elidedText(rest, Qt.TextElideMode.ElideRight, width))
                    return out, True
                out.append(paragraph[start:start + length].rstrip())
                if len(out) >= self.max_lines:
                    cut = index < len(starts) - 1 or p_index < len(paragraphs) - 1
                    return out, cut
        return out, cut

    def _content_width(self, width: int) -> int:
        m = self.contentsMargins()
        return width - m.left() - m.right() - 2 * self.margin()

    def _height_for_lines(self, lines: int) -> int:
        m = self.contentsMargins()
        fm = QFontMetrics(self.font())
        return max(self.min_lines, lines) * fm.lineSpacing() + m.top() + m.bottom() + 2 * self.margin()

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt API
        return self.max_lines > 1

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt API
        lines, _ = self._lines(self._content_width(width))
        return self._height_for_lines(len(lines))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = QFontMetrics(self.font())
        longest = max((fm.horizontalAdvance(line) for line in self.text().split("\n")), default=0)
        m = self.contentsMargins()
        width = min(longest, 40 * fm.averageCharWidth()) + m.left() + m.right() + 2 * self.margin() + 1
        return QSize(width, self.heightForWidth(width) if self.max_lines > 1 else self._height_for_lines(1))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = QFontMetrics(self.font())
        return QSize(MIN_CHARS * fm.averageCharWidth(), self._height_for_lines(self.min_lines))

    # -- painting -----------------------------------------------------------------------------

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        self._sync_tip()

    def _sync_tip(self) -> None:
        _, self._elided = self._lines(self._content_width(self.width()))
        tip = self.text() if self._elided else self._own_tip
        if self._elided and self._own_tip and self._own_tip != self.text():
            tip = f"{self.text()}\n{self._own_tip}"
        if tip != self._shown_tip:
            self._shown_tip = tip
            QLabel.setToolTip(self, tip)

    def paintEvent(self, _event) -> None:  # noqa: N802, ANN001 - Qt override
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, painter: QPainter) -> None:
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_Widget, option, painter, self)  # a QSS background
        self.drawFrame(painter)
        rect = self.contentsRect().adjusted(self.margin(), self.margin(), -self.margin(), -self.margin())
        lines, _ = self._lines(rect.width())
        fm = QFontMetrics(self.font())
        painter.setFont(self.font())
        painter.setPen(self.palette().color(self.foregroundRole()))
        total = len(lines) * fm.lineSpacing()
        top = rect.top()
        if self.alignment() & Qt.AlignmentFlag.AlignVCenter:
            top += max(0, (rect.height() - total) // 2)
        for i, line in enumerate(lines):
            y = top + i * fm.lineSpacing()
            painter.drawText(rect.left(), y, rect.width(), fm.lineSpacing(),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), line)
