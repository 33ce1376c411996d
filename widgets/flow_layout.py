"""A layout that places its widgets left to right and wraps them onto new lines, like text.

Used for chips (tags, enum values): a row of chips grows downwards instead of widening the form.
Hidden widgets take no room. Height follows width (`heightForWidth`), so the parent gives the
wrapped lines the height they need; `width_for_lines(n)` is the least width that keeps them to `n`
lines (a legend that must stay short sets its minimum width by it).
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget, QWidgetItem


class FlowLayout(QLayout):
    """Left-to-right, wrapping. `insertWidget(index, w)` places a widget among the others."""

    def __init__(self, parent: QWidget | None = None, *, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        self._heights: dict[int, int] = {}  # heightForWidth, until the layout is invalidated

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt API)
        self._items.append(item)
        self._heights.clear()

    def insertWidget(self, index: int, widget: QWidget) -> None:  # noqa: N802 (Qt API naming)
        self.addChildWidget(widget)
        self._items.insert(max(0, min(index, len(self._items))), QWidgetItem(widget))
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 (Qt API)
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 (Qt API)
        self._heights.clear()
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 (Qt API)
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt API)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt API)
        # Qt asks this several times per layout pass (and a pass per changed label): answered once
        # per width until something in the layout changes (`invalidate`).
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = self._arrange(QRect(0, 0, width, 0), apply=False)
        return height

    def invalidate(self) -> None:
        self._heights.clear()
        super().invalidate()

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 (Qt API)
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 (Qt API)
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def lines_at(self, width: int) -> int:
        """How many lines the shown widgets take at `width` (margins included)."""
        m = self.contentsMargins()
        room, lines, x = width - m.left() - m.right(), 0, None
        for item in self._items:
            if item.isEmpty():
                continue
            w = item.sizeHint().width()
            if x is None or x + w > room:
                lines, x = lines + 1, 0
            x += w + self._gap
        return lines

    def width_for_lines(self, lines: int) -> int:
        """The least width (margins included) at which the shown widgets take at most `lines` lines."""
        widths = [item.sizeHint().width() for item in self._items if not item.isEmpty()]
        m = self.contentsMargins()
        if not widths:
            return m.left() + m.right()
        # the answer is the width of some run of consecutive widgets (the longest line)
        runs = sorted({sum(widths[i:j]) + self._gap * (j - i - 1) for i in range(len(widths)) for j in range(i + 1, len(widths) + 1)})
        return next(w + m.left() + m.right() for w in runs if w >= max(widths) and self.lines_at(w + m.left() + m.right()) <= lines)

    def _arrange(self, rect: QRect, *, apply: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line_height = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():  # a hidden widget
                continue
            hint = item.sizeHint()
            if line_height and x + hint.width() > area.x() + area.width():
                x, y, line_height = area.x(), y + line_height + self._gap, 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._gap
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y() + m.bottom()
