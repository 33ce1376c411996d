"""A table field's paint, done without Qt's per-cell machinery, looking exactly as Qt's does.

QTableView.paintEvent builds, for every cell it paints, a QStyleOptionViewItem, asks the model
for the cell's flags, draws the style's item-row panel (through the style sheet's style) and calls
the delegate with the option, painter and index each wrapped for Python: ~25 us a cell beyond the
delegate's own work, while a run repaints the table's cells many times a second. `paint_table`
walks the same cells, in the same order, over the same parts of the event's region, and draws
each one from the model's `cell()` and the delegate's picture of it (`StateDelegate.paint_cell`),
then the grid lines as Qt draws them (same pen, same lines, same half-pixel offsets).

Where its picture could differ from Qt's it does what Qt does: a selected cell, and the current
cell while the table has the focus, go through the style's panel and the delegate's `paint` with
an option of their own (as QTableViewPrivate::drawCell). It returns False (the caller then lets
Qt paint) when it cannot match Qt: right-to-left, alternating row colours, spans, a drag in
progress, a delegate for a row or column, a model other than `FormTableModel`, or a style whose
item-row panel draws anything for an ordinary cell (found once per style and palette by drawing it).
Cell editors are widgets of their own, painted over the cells by Qt either way.
"""

from __future__ import annotations

from PySide6.QtCore import QLineF, QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPalette, QPaintEvent, QPen
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyleOptionViewItem, QTableView

from livefill.widgets.state_delegate import StateDelegate
from livefill.widgets.table_model import FormTableModel

_ENABLED = QStyle.StateFlag.State_Enabled.value
_SELECTED = QStyle.StateFlag.State_Selected
_MOUSE_OVER = QStyle.StateFlag.State_MouseOver
_HAS_FOCUS = QStyle.StateFlag.State_HasFocus
_PANEL = QStyle.PrimitiveElement.PE_PanelItemViewRow
_GRID_COLOUR = QStyle.StyleHint.SH_Table_GridLineColor
_LEFT_TOP_LINES = QStyle.StyleHint.SH_Table_AlwaysDrawLeftTopGridLines
_DRAGGING = QAbstractItemView.State.DraggingState
_KEYBOARD_FOCUS = Qt.WidgetAttribute.WA_KeyboardFocusChange
_Index = QModelIndex | QPersistentModelIndex


class PaintLook:
    """What every paint of one table shares while its style, palette, focus and activation stay
    the same: the option Qt would start each cell from (its palette's group set as drawCell sets
    it), the grid's pen, the viewport's background, the text colour, and whether the style's
    item-row panel (PE_PanelItemViewRow) draws anything for a cell that is neither selected nor
    the focused current one (found by drawing it into a transparent image). Worked out again
    after `forget` (the table's style, palette or font changed) or when the focus, activation or
    enabled state differ from the last paint's."""

    def __init__(self) -> None:
        self._key: tuple[bool, bool, bool, bool] | None = None
        self._look: tuple | None = None
        self._panels: dict[tuple[int, int, int], bool] = {}

    def forget(self) -> None:
        self._key = None
        self._panels.clear()

    def get(self, view: QTableView) -> tuple | None:
        """(option, (grid pen, whether the style draws the left and top grid lines when the
        headers are hidden), background brush, (text colour, rgba)), or None: the panel draws."""
        window = view.window()
        key = (view.hasFocus(), window.isActiveWindow(), view.isEnabled(), window.testAttribute(_KEYBOARD_FOCUS))
        if key == self._key:
            return self._look
        option = QStyleOptionViewItem()
        view.initViewItemOption(option)
        palette = QPalette(option.palette)
        if option.state.value & _ENABLED:  # as drawCell: an enabled cell's colours are the Normal group's
            palette.setCurrentColorGroup(QPalette.ColorGroup.Normal)
        option.palette = palette
        viewport = view.viewport()
        look = None
        # the cell under the mouse (Qt's own record of it is private) is painted as any other when
        # the panel draws nothing for it either
        if self._empty(view, option, viewport.testAttribute(Qt.WidgetAttribute.WA_Hover)):
            style = view.style()
            grid = (QPen(QColor.fromRgba(style.styleHint(_GRID_COLOUR, option, view) & 0xFFFFFFFF), 1, view.gridStyle()),
                    bool(style.styleHint(_LEFT_TOP_LINES, option, view)))
            colour = palette.text().color()
            look = (option, grid, viewport.palette().brush(viewport.backgroundRole()), (colour, colour.rgba()))
        self._key, self._look = key, look
        return look

    def _empty(self, view: QTableView, option: QStyleOptionViewItem, hover: bool) -> bool:
        style = view.style()
        states = (option.state.value,) + ((option.state.value | _MOUSE_OVER.value,) if hover else ())
        for state in states:
            key = (id(style), option.palette.cacheKey(), state)
            known = self._panels.get(key)
            if known is None:
                probe = QStyleOptionViewItem(option)
                probe.state = QStyle.StateFlag(state)
                probe.rect = QRect(0, 0, 24, 12)
                image = QImage(24, 12, QImage.Format.Format_ARGB32_Premultiplied)
                image.fill(0)
                painter = QPainter(image)
                style.drawPrimitive(_PANEL, probe, painter, view)
                painter.end()
                known = self._panels[key] = all(image.pixel(x, y) == 0 for y in range(12) for x in range(24))
            if not known:
                return False
        return True


def paint_table(view: QTableView, event: QPaintEvent, delegate: StateDelegate, shared: PaintLook,
                hover: QPersistentModelIndex | None) -> bool:
    """Paint `view`'s viewport for `event` as QTableView.paintEvent would, over the viewport's
    background (the module docstring); False, having painted nothing, when it cannot. The caller
    says when Qt must paint for what it alone knows of (spans, a delegate of a row or column)."""
    model = view.model()
    if type(model) is not FormTableModel or view.isRightToLeft() or view.alternatingRowColors() or view.state() == _DRAGGING:
        return False
    look = shared.get(view)
    if look is None:
        return False
    option, grid, background, text = look
    delegate._text = text  # noqa: SLF001 - the text colour of this paint
    painter = QPainter(view.viewport())
    try:  # ended here, also when a cell raises: a painter left to the garbage collector outlives the paint event
        painter.fillRect(event.rect(), background)
        if view.horizontalHeader().count() and view.verticalHeader().count():
            _paint_cells(view, model, painter, option, grid, event, delegate, hover)
    finally:
        painter.end()
    return True


def _paint_cells(view: QTableView, model: FormTableModel, painter: QPainter, option: QStyleOptionViewItem, grid_look: tuple[QPen, bool],
                 event: QPaintEvent, delegate: StateDelegate, hover: QPersistentModelIndex | None) -> None:
    hh, vh = view.horizontalHeader(), view.verticalHeader()
    show_grid = view.showGrid()
    grid = 1 if show_grid else 0
    x_end = hh.length() - hh.offset() - 1
    y_end = vh.length() - vh.offset() - 1
    selection = view.selectionModel()
    selected_box = _selection_box(selection)
    current = view.currentIndex()
    focused = current.isValid() and (view.hasFocus() or view.viewport().hasFocus())
    special = (current.row(), current.column()) if focused else None
    hovered = (hover.row(), hover.column()) if hover is not None and hover.isValid() else None
    first_row, last_row = max(vh.visualIndexAt(0), 0), vh.visualIndexAt(vh.height())
    last_row = model.rowCount() - 1 if last_row == -1 else last_row
    first_column, last_column = hh.visualIndexAt(0), hh.visualIndexAt(hh.width())
    first_column = 0 if first_column == -1 else first_column
    last_column = hh.count() - 1 if last_column == -1 else last_column
    drawn: set[tuple[int, int]] = set()
    paint = delegate.paint_cell
    # the columns' places and widths and the rows' are asked once a paint, not once a cell
    column_at: dict[int, tuple[int, int, int] | None] = {}
    row_at: dict[int, tuple[int, int, int] | None] = {}

    def column_of(visual: int) -> tuple[int, int, int] | None:
        found = column_at.get(visual, ...)
        if found is ...:
            logical = hh.logicalIndex(visual)
            found = None if hh.isSectionHidden(logical) else (logical, hh.sectionViewportPosition(logical), hh.sectionSize(logical))
            column_at[visual] = found
        return found

    def row_of(visual: int) -> tuple[int, int, int] | None:
        found = row_at.get(visual, ...)
        if found is ...:
            logical = vh.logicalIndex(visual)
            found = None if vh.isSectionHidden(logical) else (logical, vh.sectionViewportPosition(logical), vh.sectionSize(logical))
            row_at[visual] = found
        return found

    rows, columns = vh.count(), hh.count()
    for dirty in event.region():
        dirty.setBottom(min(dirty.bottom(), y_end))
        dirty.setRight(min(dirty.right(), x_end))
        if not dirty.isValid():
            continue
        left, right = hh.visualIndexAt(dirty.left()), hh.visualIndexAt(dirty.right())
        left = 0 if left == -1 else left
        right = columns - 1 if right == -1 else right
        bottom = vh.visualIndexAt(dirty.bottom())
        bottom = rows - 1 if bottom == -1 else bottom
        top = vh.visualIndexAt(dirty.top())
        if top == -1 or top > bottom:
            continue
        # the columns of this part of the region Qt would paint (its record of the cells drawn
        # covers only those between the first and last visible ones)
        spans = [(visual, *place) for visual in range(max(left, first_column), min(right, last_column) + 1)
                 if (place := column_of(visual)) is not None]
        for visual_row in range(max(top, first_row), min(bottom, last_row) + 1):
            row_place = row_of(visual_row)
            if row_place is None:
                continue
            row, y, height = row_place
            height -= grid
            for visual_column, column, x, width in spans:
                if (visual_row, visual_column) in drawn:
                    continue
                drawn.add((visual_row, visual_column))
                chosen = selected_box is not None and selected_box[0] <= row <= selected_box[2] \
                    and selected_box[1] <= column <= selected_box[3] and selection.isSelected(model.index(row, column))
                if chosen or (row, column) == special:
                    _draw_cell(view, painter, option, QRect(x, y, width - grid, height), model.index(row, column),
                               selected=chosen, hover=(row, column) == hovered, focus=(row, column) == special)
                else:
                    paint(painter, x, y, width - grid, height, option, model, row, column)
        if show_grid:
            _grid(view, painter, grid_look, dirty, top, bottom, left, right, row_of, column_of)


def _selection_box(selection: object) -> tuple[int, int, int, int] | None:
    """(top, left, bottom, right) around everything selected, or None: nothing is."""
    if selection is None or not selection.hasSelection():
        return None
    ranges = selection.selection()
    if ranges.isEmpty():
        return None
    return (min(r.top() for r in ranges), min(r.left() for r in ranges),
            max(r.bottom() for r in ranges), max(r.right() for r in ranges))


def _draw_cell(view: QTableView, painter: QPainter, base: QStyleOptionViewItem, rect: QRect, index: _Index, *,
               selected: bool, hover: bool, focus: bool) -> None:
    """One cell as QTableViewPrivate::drawCell draws it: the style's panel, then the delegate."""
    option = QStyleOptionViewItem(base)
    option.rect = rect
    state = option.state
    if selected:
        state |= _SELECTED
    if hover:
        state |= _MOUSE_OVER
    if focus:
        state |= _HAS_FOCUS
    option.state = state
    view.style().drawPrimitive(_PANEL, option, painter, view)
    view.itemDelegateForIndex(index).paint(painter, option, index)


def _grid(view: QTableView, painter: QPainter, grid_look: tuple[QPen, bool], dirty: QRect,
          top: int, bottom: int, left: int, right: int, row_of, column_of) -> None:  # noqa: ANN001
    """The grid lines over `dirty`, as QTableView.paintEvent draws them."""
    vh = view.verticalHeader()
    while bottom > top and vh.isSectionHidden(vh.logicalIndex(bottom)):
        bottom -= 1
    old = painter.pen()
    painter.setPen(grid_look[0])
    for visual in range(top, bottom + 1):
        place = row_of(visual)
        if place is not None:
            line_y = place[1] + place[2] - 1
            painter.drawLine(QLineF(dirty.left() + 0.5, line_y + 0.5, dirty.right() + 0.5, line_y + 0.5))
    for visual in range(left, right + 1):
        place = column_of(visual)
        if place is not None:
            line_x = place[1] + place[2] - 1
            painter.drawLine(QLineF(line_x + 0.5, dirty.top() + 0.5, line_x + 0.5, dirty.bottom() + 0.5))
    always = grid_look[1]
    if always and view.horizontalHeader().isHidden():
        place = row_of(top)
        if place is not None and place[1] == dirty.top():
            painter.drawLine(dirty.left(), place[1], dirty.right(), place[1])
    if always and vh.isHidden():
        place = column_of(left)
        if place is not None and place[1] == dirty.left():
            painter.drawLine(place[1], dirty.top(), place[1], dirty.bottom())
    painter.setPen(old)
