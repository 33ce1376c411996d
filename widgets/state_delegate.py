"""Draws a table cell and its state the way the field widgets show theirs (outline + a glyph).

It paints the cell itself (background, elided text, the state's outline and glyph) instead of
calling QStyledItemDelegate.paint: under a style sheet that call costs ~0.3 ms per cell, and a
table of the catalog scenario repaints hundreds of cells per second while it streams. A settled
cell the user typed (`Origin.USER`) shows "✎" instead of the check, as the field widgets do.
A cell scored against the expected answer (the model's `answer`) shows "✓" or "✗" over a line
under its text (green / red: the glyph says it without the colour), in any mode.
A table that follows the row being written moves every visible row up for each new row, so each
cell is drawn once into a transparent picture (keyed by everything that decides its look) and
copied while it does not change; a selected or still growing (provisional) cell is drawn directly.
The text colour is read once per paint event of the table (`begin_paint` / `end_paint`).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from livefill.extraction.form import Origin
from livefill.widgets.table_model import STATE_ROLE, FormTableModel

AMBER = QColor("#d08a00")
RED = QColor("#c62828")
GREEN = QColor("#2e7d32")
USER = QColor("#6a3fb5")
MUTED = QColor("#8a8a8a")
PROVISIONAL_TEXT = QColor("#7a6a4a")
PROVISIONAL_FILL = QColor("#fffaf0")
INVALID_FILL = QColor("#fff5f5")

GLYPH_SPACE = 14
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_SELECTED = QStyle.StateFlag.State_Selected.value  # tested as an int: an enum `&` per cell is slow
_ELIDE = Qt.TextElideMode.ElideRight
_ALIGN_ROLE = Qt.ItemDataRole.TextAlignmentRole
_ANTIALIASED = QPainter.RenderHint.Antialiasing

GLYPHS = {"provisional": "…", "settled": "✓", "invalid": "✗", "pending": "◌"}
GLYPH_COLOURS = {"settled": GREEN, "invalid": RED}
USER_GLYPH = "✎"
ANSWER_GLYPHS = {"right": "✓", "wrong": "✗"}
_ELIDED_MEMO = 4096  # (text, width, italic) -> elided text, remembered for the cells repainted
_PIXMAPS = 2048  # cell pictures kept (a few hundred KB at the catalog's cell size)


class StateDelegate(QStyledItemDelegate):
    """provisional: italic muted text in a dashed amber outline (the text ends in "…");
    settled: a check; invalid: red outline + "✗"; pending: a "waiting…" placeholder.
    The glyph makes the state readable without colour."""

    _font_cache: tuple[QFont, tuple[QFont, QFont, QFont]] | None = None
    #: True during the table's paint event (`FieldTable` says so): then the text colour, the same
    #: for every cell of one paint, is read from the first cell's option only (reading a cell's
    #: palette cost more than copying its picture)
    painting = False
    _text: tuple[QColor, int] | None = None
    _elided: dict[tuple[str, int, bool], str] | None = None
    _pixmaps: dict[tuple, QPixmap] = {}  # noqa: RUF012 - replaced per instance with the fonts
    _context: tuple[tuple[QFont, QFont, QFont], float, int, bool] | None = None  # see paint_cell
    #: (row, column) -> the model's cell() tuple, answers, size and context it was drawn for, and its picture
    _shown: dict[tuple[int, int], tuple] = {}  # noqa: RUF012 - replaced per instance with the fonts
    _outlines: dict[tuple[int, int, float], QPixmap] = {}  # noqa: RUF012 - see _dashed_outline

    def _fonts(self, base: QFont) -> tuple[QFont, QFont, QFont]:
        """(normal, italic, small) fonts for `base`, made once (and the elided texts forgotten
        when it changes)."""
        if self._font_cache is None or self._font_cache[0] != base:
            italic = QFont(base)
            italic.setItalic(True)
            small = QFont(base)
            small.setPointSizeF(max(6.0, base.pointSizeF() * 0.8))
            self._font_cache = (QFont(base), (QFont(base), italic, small))
            self._elided = {}
            self._pixmaps = {}
            self._shown = {}
            self._outlines = {}
        return self._font_cache[1]

    def begin_paint(self) -> None:
        """The table's paint event begins: its cells share one text colour."""
        self.painting, self._text, self._context = True, None, None

    def end_paint(self) -> None:
        self.painting, self._text, self._context = False, None, None

    def _text_colour(self, option: QStyleOptionViewItem) -> tuple[QColor, int]:
        """The cells' text colour (and its rgba), read once per paint event."""
        text = self._text
        if text is None:
            colour = option.palette.text().color()
            text = (colour, colour.rgba())
            if self.painting:
                self._text = text
        return text

    def _elide(self, painter: QPainter, text: str, width: int, italic: bool) -> str:
        """`text` elided to `width` in the painter's font (remembered: a repaint of the table asks
        again for every visible cell, and most have not changed)."""
        memo = self._elided
        if memo is None:
            memo = self._elided = {}
        key = (text, width, italic)
        elided = memo.get(key)
        if elided is None:
            if len(memo) >= _ELIDED_MEMO:
                memo.clear()
            elided = memo[key] = painter.fontMetrics().elidedText(text, _ELIDE, width)
        return elided

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        model = index.model()
        selected = bool(option.state.value & _SELECTED)
        if hasattr(model, "cell"):
            rect = option.rect
            self.paint_cell(painter, rect.x(), rect.y(), rect.width(), rect.height(), option, model, index.row(), index.column(),
                            selected=selected)
            return
        text, state = str(index.data() or ""), str(index.data(STATE_ROLE) or "empty")
        align = model.alignment(index.column()) if hasattr(model, "alignment") else _LEFT
        form = getattr(model, "form", None)
        marking = form is None or form.marking
        answer = model.answer(index.row(), index.column()) if hasattr(model, "answer") else ""
        self._paint_look(painter, option.rect, option, (text, state, align, marking, False, answer), selected=selected)

    def paint_cell(self, painter: QPainter, x: int, y: int, width: int, height: int, option: QStyleOptionViewItem,
                   model: FormTableModel, row: int, column: int, *, selected: bool = False) -> None:
        """Paint the cell (`row`, `column`) of a FormTableModel at (`x`, `y`), `width` × `height`:
        `option` gives its font, and its palette when selected (or when the text colour of this
        paint is not known yet)."""
        hit = model.cell(row, column)
        text, state = hit
        if model.armed and state == "settled":
            key = (row, column)
            if key in model.armed:  # the first paint that shows it settled: byte-to-pixel
                model.armed.discard(key)
                model.probe.painted(model.cell_pointer(*key))
        context = self._context
        if context is None:  # what every cell of one paint shares: fonts, pixel ratio, text colour
            context = (self._fonts(option.font), painter.device().devicePixelRatioF(), self._text_colour(option)[1], model.form.marking)
            if self.painting:
                self._context = context
        shown = self._shown.get((row, column))
        # the picture this cell had, while its model's answer for it, its size and the paint's look
        # are the same (the model's cell() gives the same tuple until the form changes that cell)
        if (shown is not None and shown[0] is hit and shown[1] is model.answers_seen and shown[2] == width
                and shown[3] == height and shown[4] == context and not selected):
            painter.drawPixmap(x, y, shown[5])
            return
        rect = QRect(x, y, width, height)
        form = model.form
        marking = context[3]
        user = marking and state == "settled" and form.origin(model.cell_pointer(row, column)) is Origin.USER
        look = (text, state, model.alignment(column), marking, user, model.answer(row, column))
        pixmap = self._paint_look(painter, rect, option, look, selected=selected, context=context)
        if pixmap is not None:
            if len(self._shown) >= _PIXMAPS:
                self._shown.clear()
            self._shown[(row, column)] = (hit, model.answers_seen, width, height, context, pixmap)

    def _paint_look(self, painter: QPainter, rect: QRect, option: QStyleOptionViewItem,
                    look: tuple[str, str, int, bool, bool, str], *, selected: bool,
                    context: tuple[tuple[QFont, QFont, QFont], float, int, bool] | None = None) -> QPixmap | None:
        """Paint a cell that looks like `look`; the picture copied (None: drawn directly)."""
        text, state, align, marking, user, answer = look
        fonts = self._fonts(option.font) if context is None else context[0]
        if selected or state == "provisional" or rect.isEmpty():
            # a growing value changes with every delta: a picture of it would be used once
            self._draw(painter, rect, option, fonts, text, state, align, marking, user, selected=selected, answer=answer)
            return None
        # A following table moves every row up by one for each new row, so a cell is painted again
        # and again with the same content: drawn once into a pixmap, then copied.
        if context is None:
            ratio, colour = painter.device().devicePixelRatioF(), self._text_colour(option)[1]
        else:
            ratio, colour = context[1], context[2]
        key = (look, rect.width(), rect.height(), ratio, colour)
        pixmaps = self._pixmaps
        pixmap = pixmaps.get(key)
        if pixmap is None:
            if len(pixmaps) >= _PIXMAPS:
                pixmaps.clear()
            pixmap = QPixmap(round(rect.width() * ratio), round(rect.height() * ratio))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.GlobalColor.transparent)
            cell = QPainter(pixmap)
            self._draw(cell, QRect(0, 0, rect.width(), rect.height()), option, fonts, text, state, align, marking, user,
                       selected=False, answer=answer)
            cell.end()
            pixmaps[key] = pixmap
        painter.drawPixmap(rect.topLeft(), pixmap)
        return pixmap

    def _dashed_outline(self, painter: QPainter, rect: QRect, inner: QRect) -> None:
        """The provisional cell's dashed amber outline around `inner`: stroking a dashed pen cost
        more than the rest of the cell, so the outline is drawn once per cell size into a
        transparent picture and copied (its pixels are opaque: the same as stroking it there).
        Stroked as before where a copy might differ (antialiased, a fractional pixel ratio)."""
        ratio = painter.device().devicePixelRatioF()
        if ratio != int(ratio) or painter.testRenderHint(_ANTIALIASED):
            painter.setPen(QPen(AMBER, 1.5, Qt.PenStyle.DashLine))
            painter.drawRect(inner)
            return
        key = (rect.width(), rect.height(), ratio)
        outline = self._outlines.get(key)
        if outline is None:
            if len(self._outlines) >= 64:
                self._outlines.clear()
            outline = QPixmap(round(rect.width() * ratio), round(rect.height() * ratio))
            outline.setDevicePixelRatio(ratio)
            outline.fill(Qt.GlobalColor.transparent)
            drawing = QPainter(outline)
            drawing.setPen(QPen(AMBER, 1.5, Qt.PenStyle.DashLine))
            drawing.drawRect(inner.translated(-rect.x(), -rect.y()))
            drawing.end()
            self._outlines[key] = outline
        painter.drawPixmap(rect.x(), rect.y(), outline)

    def _draw(self, painter: QPainter, rect: QRect, option: QStyleOptionViewItem, fonts: tuple[QFont, QFont, QFont],
              text: str, state: str, align: int, marking: bool, user: bool, *, selected: bool, answer: str = "") -> None:
        painter.save()
        if selected:
            painter.fillRect(rect, option.palette.highlight())
        elif state == "provisional":
            painter.fillRect(rect, PROVISIONAL_FILL)
        elif state == "invalid" or answer == "wrong":
            painter.fillRect(rect, INVALID_FILL)
        text_rect = rect.adjusted(4, 0, -GLYPH_SPACE, 0)
        font = fonts[0]
        if state == "provisional":
            font = fonts[1]
            painter.setPen(PROVISIONAL_TEXT)
        elif selected:
            painter.setPen(option.palette.highlightedText().color())
        else:
            painter.setPen(self._text_colour(option)[0])
        painter.setFont(font)
        if text:
            painter.drawText(text_rect, align, self._elide(painter, text, text_rect.width(), font is fonts[1]))
        elif state == "pending":
            painter.setPen(MUTED)
            painter.drawText(text_rect, _LEFT, "waiting…")
        inner = rect.adjusted(1, 1, -2, -2)
        if answer:  # scored against the expected answer: that is what the cell says now
            colour = GREEN if answer == "right" else RED
            painter.setPen(QPen(colour, 2 if answer == "wrong" else 1))
            painter.drawLine(inner.left() + 2, inner.bottom(), inner.right() - 2, inner.bottom())
            painter.setFont(fonts[2])
            painter.drawText(inner.adjusted(0, 0, -2, 0), _RIGHT, ANSWER_GLYPHS[answer])
            painter.restore()
            return
        if not marking and state != "invalid":
            painter.restore()  # a client that shows no states (naive): no outline, no glyph
            return
        if state == "provisional":
            self._dashed_outline(painter, rect, inner)
        elif state == "invalid":
            painter.setPen(QPen(RED, 2))
            painter.drawRect(inner)
        glyph = GLYPHS.get(state)
        colour = GLYPH_COLOURS.get(state, MUTED)
        if user:
            glyph, colour = USER_GLYPH, USER
        if glyph and state != "provisional":
            painter.setPen(colour)
            painter.setFont(fonts[2])
            painter.drawText(inner.adjusted(0, 0, -2, 0), _RIGHT, glyph)
        painter.restore()
