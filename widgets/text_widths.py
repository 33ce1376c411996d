"""Text widths in one font, each text measured once: `TextWidths`.

A field table measures every value of every column when a run ends (its columns may narrow
again): ~800 cells of the catalog, ~20 us each through QFontMetrics, one ~18 ms stall in the turn
after the commit. The same texts were measured as they arrived (a column widens with them), so
the end's measure is mostly lookups. The memo belongs to one font: asked with another, it starts
again; it is emptied when it holds `limit` texts.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QFont, QFontMetrics

__all__ = ["TextWidths"]


class TextWidths:
    """`of(font)` -> a function giving a text's horizontal advance in `font`, remembered."""

    def __init__(self, limit: int = 8192) -> None:
        self._limit = limit
        self._font_key = ""
        self._memo: dict[str, int] = {}
        self._metrics: QFontMetrics | None = None

    def of(self, font: QFont) -> Callable[[str], int]:
        key = font.key()
        if key != self._font_key or self._metrics is None:
            self._font_key, self._memo, self._metrics = key, {}, QFontMetrics(font)
        memo, advance, limit = self._memo, self._metrics.horizontalAdvance, self._limit

        def width(text: str) -> int:
            found = memo.get(text)
            if found is None:
                if len(memo) >= limit:
                    memo.clear()
                found = memo[text] = advance(text)
            return found

        return width
