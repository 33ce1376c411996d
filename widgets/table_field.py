"""An array of objects as a table: rows appear as items start, every cell carries its state."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QEvent, QItemSelection, QModelIndex, QPersistentModelIndex, QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPaintEvent
from PySide6.QtWidgets import QAbstractItemDelegate, QAbstractItemView, QApplication, QHeaderView, QScrollArea, QTableView, QWidget

from livefill.extraction.form import FieldState
from livefill.extraction.schema import FieldKind
from livefill.widgets.field_base import FieldWidget
from livefill.widgets.paint_probe import on_screen
from livefill.widgets.column_widths import Column, fit_columns
from livefill.widgets.state_delegate import GLYPH_SPACE, StateDelegate
from livefill.widgets.table_model import FormTableModel
from livefill.widgets.text_widths import TextWidths
from livefill.widgets.table_paint import PaintLook, paint_table
from livefill.widgets.turn_timer import next_turn_timer
from livefill.widgets.value_tips import watch

MAX_VISIBLE_ROWS = 8
LONG_TEXT_CHARS = 16  # a text column whose widest value is longer (in average characters) takes the spare width
CELL_PADDING = 4 + GLYPH_SPACE + 6  # a cell's text inset, its state glyph, and room for the provisional italics
_TEXT_KINDS = (FieldKind.STRING, FieldKind.PROSE, FieldKind.CHIPS)
MIN_COLUMN_WIDTH = 72  # px: no text column narrower (a narrow table scrolls sideways instead)
_HOVERING = (QEvent.Type.HoverEnter, QEvent.Type.HoverMove)
_LEFT = (QEvent.Type.HoverLeave, QEvent.Type.Leave)
_RESTYLED = (QEvent.Type.StyleChange, QEvent.Type.PaletteChange, QEvent.Type.FontChange)
_CHANGES_KEPT = 64  # changed cells remembered while a row-append layout is pending (more: it repaints all)


class FieldTable(QTableView):
    """The table of a table field, repainting as little as it can while rows stream in.

    Its viewport is opaque: a cell that changes repaints that cell alone. Under a style sheet
    Qt's viewport is not (the style sheet turns its background fill off), so each cell update
    also repainted, behind it, the table's frame, the field, the form and the form's scroll area.
    The viewport paints its own background (the colour the style sheet gives it) under the cells,
    and the cells themselves where it can (livefill.widgets.table_paint: Qt's picture, cheaper).

    A row added at the end does not repaint the rows already shown. Qt lays the view out again
    after every row insertion and then repaints the whole viewport (every visible cell: 60-80
    cells for one new row while a run is followed). Here that layout, when the only change since
    the last one is rows added at the end (`_appended`), keeps what is on screen: it moves the
    pixels (not the cell editors, which the layout has placed) by as much as the rows moved since
    they were drawn (the view's offset may change with the scroll range, there or in between) and
    repaints from the first new row down, and the cells that changed while it was pending (Qt
    repaints none of those: it counts on the whole repaint). Anything else (a reset, a removal, a
    model's layout or columns changing, a font or style change), or a layout that resized the
    viewport, moved it sideways or scrolled it itself, or one Qt runs while painting the table,
    repaints the whole viewport as Qt does.
    """

    #: paint with livefill.widgets.table_paint where it can (False: Qt's own paint, as tests compare)
    fast_paint = True

    def __init__(self) -> None:
        super().__init__()
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # kept through a repolish
        self._appended: int | None = None  # the first row added at the end since the last layout
        self._changed = False  # ... or any other change of rows or columns since then (a whole repaint)
        self._shown_at = (0, 0)  # the offsets what is on screen was drawn at, while a row is appended
        self._scrolled = False  # the view scrolled during a layout
        # cells changed while that layout is pending: Qt does not repaint a changed cell then (the
        # layout's whole repaint will), so a layout that repaints less must (None: too many)
        self._data_changed: list[tuple[int, int, int, int]] | None = []
        self.font_changed: Callable[[], None] | None = None  # told after the table's font changed
        self.viewport_resized: Callable[[], None] | None = None  # told when the viewport's width changed
        self._look = PaintLook()  # what the paints share (livefill.widgets.table_paint)
        self._hover: QPersistentModelIndex | None = None  # the cell under the mouse
        self.qt_paints = False  # a span or a delegate of a row or column was set: Qt paints the table
        self.fast_paints = 0  # paints table_paint did (tests)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind == QEvent.Type.Resize and self.viewport_resized is not None:
            if event.size().width() != event.oldSize().width():
                self.viewport_resized()
        elif kind in _HOVERING:  # the cell under the mouse, as Qt notes it for its own paint
            self._hover = QPersistentModelIndex(self.indexAt(event.position().toPoint()))
        elif kind in _LEFT:
            self._hover = None
        elif kind in _RESTYLED:
            self._look.forget()
        return super().viewportEvent(event)

    def setSpan(self, row: int, column: int, row_span: int, column_span: int) -> None:  # noqa: N802 - Qt override
        self.qt_paints = True  # painted by Qt from now on (livefill.widgets.table_paint)
        super().setSpan(row, column, row_span, column_span)

    def setItemDelegateForColumn(self, column: int, delegate: QAbstractItemDelegate | None) -> None:  # noqa: N802
        self.qt_paints = True
        super().setItemDelegateForColumn(column, delegate)

    def setItemDelegateForRow(self, row: int, delegate: QAbstractItemDelegate | None) -> None:  # noqa: N802
        self.qt_paints = True
        super().setItemDelegateForRow(row, delegate)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        delegate = self.itemDelegate()
        ours = isinstance(delegate, StateDelegate)
        if ours:
            delegate.begin_paint()  # the cells of one paint share their text colour
        try:
            if ours and self.fast_paint and not self.qt_paints and paint_table(self, event, delegate, self._look, self._hover):
                self.fast_paints += 1
                return  # livefill.widgets.table_paint: Qt's picture, without Qt's per-cell cost
            viewport = self.viewport()
            painter = QPainter(viewport)
            painter.fillRect(event.rect(), viewport.palette().brush(viewport.backgroundRole()))
            painter.end()
            super().paintEvent(event)
        finally:
            if ours:
                delegate.end_paint()

    def setModel(self, model: QAbstractItemModel | None) -> None:  # noqa: N802 - Qt override
        super().setModel(model)
        if model is not None:  # changes that lay the view out again, not by appending rows
            for signal in (model.layoutChanged, model.rowsMoved, model.columnsInserted, model.columnsRemoved, model.columnsMoved):
                signal.connect(self._lay_out_all)

    def _lay_out_all(self, *_args: Any) -> None:
        self._changed = True

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._changed = True
        if event.type() in _RESTYLED:
            self._look.forget()
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and self.font_changed is not None:
            self.font_changed()

    def rowsInserted(self, parent: QModelIndex | QPersistentModelIndex, first: int, last: int) -> None:  # noqa: N802
        # noted before Qt's own handling, which lays the view out at once when a cell editor is open
        model = self.model()
        if model is not None and not parent.isValid() and last == model.rowCount() - 1:
            if self._appended is None:
                self._shown_at = self._offsets()
            self._appended = first if self._appended is None else min(first, self._appended)
        else:
            self._changed = True
        super().rowsInserted(parent, first, last)

    def _offsets(self) -> tuple[int, int]:
        return self.verticalHeader().offset(), self.horizontalHeader().offset()

    def rowsAboutToBeRemoved(self, parent: QModelIndex | QPersistentModelIndex, first: int, last: int) -> None:  # noqa: N802
        self._changed = True
        super().rowsAboutToBeRemoved(parent, first, last)

    def reset(self) -> None:
        self._changed = True
        super().reset()

    def dataChanged(self, top_left: QModelIndex | QPersistentModelIndex, bottom_right: QModelIndex | QPersistentModelIndex,  # noqa: N802
                    roles: Sequence[int] = ()) -> None:
        super().dataChanged(top_left, bottom_right, roles)
        changed = self._data_changed
        if changed is not None and self._appended is not None:  # a layout is pending (at most a loop turn)
            if len(changed) < _CHANGES_KEPT:
                changed.append((top_left.row(), top_left.column(), bottom_right.row(), bottom_right.column()))
            else:
                self._data_changed = None  # too many to repaint one by one: the next layout repaints all

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt override
        self._scrolled = True
        super().scrollContentsBy(dx, dy)  # moves what is shown with the rows
        if self._appended is not None:
            self._shown_at = self._offsets()

    def doItemsLayout(self) -> None:  # noqa: N802 - Qt override
        first, changed, cells = self._appended, self._changed, self._data_changed
        self._appended, self._changed, self._data_changed = None, False, []
        viewport = self.viewport()
        if first is None or changed or cells is None or self._painting(viewport):
            super().doItemsLayout()
            return
        size, (top, left) = viewport.size(), self._shown_at
        self._scrolled = False
        self.updateGeometries()  # also moves the cell editors to their rows' new places
        offset, sideways = self._offsets()
        if self._scrolled or viewport.size() != size or sideways != left:
            viewport.update()
            return
        if offset != top:  # the pixels shown follow the rows; the editors, placed already, stay
            viewport.scroll(0, top - offset, viewport.rect())
        y = self.rowViewportPosition(first)
        if y < viewport.height():
            viewport.update(QRect(0, max(0, y), viewport.width(), viewport.height() - max(0, y)))
        model = self.model()
        for top_row, left, bottom_row, right in cells:  # where they are now (columns hidden or moved too)
            viewport.update(self.visualRegionForSelection(QItemSelection(model.index(top_row, left), model.index(bottom_row, right))))

    def _painting(self, viewport: QWidget) -> bool:
        """Whether the table is being painted: Qt runs a pending layout from the view's paint event
        too, and a repaint asked for there is applied only after it -- after the view may have
        scrolled to follow the newest row, at the cells' old places. Then the whole repaint."""
        attribute = Qt.WidgetAttribute.WA_WState_InPaintEvent
        return self.testAttribute(attribute) or viewport.testAttribute(attribute)


class TableField(FieldWidget):
    """A titled table over `FormTableModel`; the table's own state is the array's."""

    stacked = True

    def make_editor(self) -> QWidget:
        self.model = FormTableModel(self.spec, self.form, self.signals, self.pointer)
        view = FieldTable()
        view.setModel(self.model)
        view.setItemDelegate(StateDelegate(view))
        view.setObjectName("fieldTable")
        view.verticalHeader().setVisible(False)  # row numbers cost a header repaint per new row
        self.model.eager_rows = MAX_VISIBLE_ROWS
        header = view.horizontalHeader()
        header.setStretchLastSection(False)
        # a long column title wraps onto a second line (then elides, whole in its tooltip:
        # livefill.widgets.value_tips) rather than being cut at both ends ("nensions · Width")
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap)
        header.setTextElideMode(Qt.TextElideMode.ElideNone)  # eliding first would leave nothing to wrap
        watch(view.viewport())  # a cell or a title cut short: whole in its tooltip
        watch(header.viewport())
        view.setTextElideMode(Qt.TextElideMode.ElideRight)
        for column in range(len(self.spec.children)):  # sized by what they hold: _measure, _size_columns
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
        self._needs: list[tuple[int, int, int]] = []  # per column: its title's longest word, its title, its widest value (px)
        self._widths = TextWidths()  # the values' widths, each text measured once (in the table's font)
        self._columns_timer = next_turn_timer(view, self._size_columns)
        self._measure_timer = next_turn_timer(view, self._measure)
        view.viewport_resized = self._columns_timer.start
        self.model.dataChanged.connect(self._measure_changed)
        self.model.modelReset.connect(self._measure_timer.start)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        view.setWordWrap(False)
        self.model.cell_visible = self._cell_visible
        self.model.cell_visibility = self._cell_visibility
        self.model.shown_rows = self._shown_rows
        self.model.follows_newest = self._follows_newest
        self.model.rowsInserted.connect(self._rows_added)
        self._follow_timer = next_turn_timer(view, self._scroll_to_newest)
        self.model.rowsInserted.connect(self._follow)
        self.model.modelAboutToBeReset.connect(self._note_position)
        self.model.modelReset.connect(self._fit)
        self._position_timer = next_turn_timer(view, self._put_position_back)  # once the rows are laid out
        self._following = False  # a run is writing the table and the user has not scrolled up from its newest row
        self._in_run = False
        self._lane_followed = False  # this run has brought the table into its lane's view
        self._noted: tuple[int, int, bool] | None = None  # see _note_position
        self._before_run: tuple[int, int, bool] | None = None
        self._position: tuple[int, int, bool] | None = None  # where _position_timer puts the view back
        view.horizontalScrollBar().rangeChanged.connect(self._fit_sideways)
        self.view = view
        self._size_to_font()
        # after a font change has reached the header too (its size hint is what the fit reads)
        view.font_changed = next_turn_timer(view, self._size_to_font).start
        return view

    def _size_to_font(self) -> None:
        """Row height and column widths for the table's font, now and whenever it changes
        (presentation mode makes every font larger: prices were cut to "385.…" in rows too low)."""
        view = self.view
        scale = max(1.0, view.fontMetrics().height() / QFontMetrics(QApplication.font()).height())
        view.verticalHeader().setDefaultSectionSize(round(24 * scale))
        header = view.horizontalHeader()
        # No column narrower than a short value ("SKU-1000…", "4999.00 ✓"): in a narrow compare lane
        # the text columns were squeezed to a sliver (their values unreadable); now the table scrolls.
        header.setMinimumSectionSize(1)  # each column's least width is _size_columns' to say
        self._needs = []  # measured again in the new font
        self._measure()
        self._size_columns()

    def _scale(self) -> float:
        return max(1.0, self.view.fontMetrics().height() / QFontMetrics(QApplication.font()).height())

    def _measure(self) -> None:
        """What each column needs: its title's longest word (the title wraps at words) and its
        widest value, in the table's font. A table emptied by a run that begins keeps its columns
        until values arrive; during a run a column only widens (no jumping as rows stream)."""
        model, view = self.model, self.view
        if model.rowCount() == 0 and self._needs:
            return
        words, value_width = view.horizontalHeader().fontMetrics(), self._widths.of(view.font())
        needs = []
        for column, spec in enumerate(self.spec.children):
            word = max((words.horizontalAdvance(w) for w in spec.label.split()), default=0) + 24
            title = words.horizontalAdvance(spec.label) + 24
            widest = max((value_width(t) for t in model.column_texts(column) if t), default=0)
            needs.append((word, title, widest + CELL_PADDING if widest else 0))
        if self.form.running and len(self._needs) == len(needs):
            needs = [(w, t, max(v, old[2])) for (w, t, v), old in zip(needs, self._needs)]
        if needs != self._needs:
            self._needs = needs
            self._columns_timer.start()

    def _measure_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, _roles: Sequence[int] = ()) -> None:
        """Cells that changed (they were just read): a column whose value grew wider widens."""
        needs, model = self._needs, self.model
        if not needs:
            return
        value_width = self._widths.of(self.view.font())
        for column in range(top_left.column(), min(bottom_right.column(), len(needs) - 1) + 1):
            for row in range(top_left.row(), bottom_right.row() + 1):
                text = model.cached_text(row, column)
                width = value_width(text) + CELL_PADDING if text else 0
                if width > needs[column][2]:
                    needs[column] = (*needs[column][:2], width)
                    self._columns_timer.start()

    def _size_columns(self) -> None:
        """Share the table's width out by what each column holds (livefill.widgets.column_widths):
        short codes narrow, numbers whole, the long text columns take the rest."""
        view = self.view
        available = view.viewport().width()
        if available <= 0 or len(self._needs) != len(self.spec.children):
            return
        scale = self._scale()
        floor, long_text = round(MIN_COLUMN_WIDTH * scale), LONG_TEXT_CHARS * view.fontMetrics().averageCharWidth()
        columns = []
        for (word, title, value), spec in zip(self._needs, self.spec.children):
            if spec.kind in _TEXT_KINDS:
                columns.append(Column(max(word, value), floor, text=True, long=value - CELL_PADDING > long_text))
            else:  # its values whole, its title on one line when there is room (at most 110 px: it wraps)
                most = round(110 * scale)
                value = min(value, round(220 * scale))
                columns.append(Column(max(min(title, most), value), max(min(word, most), value)))
        header = view.horizontalHeader()
        for column, width in enumerate(fit_columns(columns, available)):
            if header.sectionSize(column) != width:
                header.resizeSection(column, width)
        self._fit()

    def watches(self, pointers: set[str]) -> bool:
        return False  # rows and cells are the model's business

    def set_editable(self, editable: bool) -> None:
        triggers = QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        self.view.setEditTriggers(triggers if editable else QAbstractItemView.EditTrigger.NoEditTriggers)

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        self._fit()

    def _header_height(self) -> int:
        """One line of title, or two when a title is wider than its column (it wraps)."""
        header = self.view.horizontalHeader()
        fm = header.fontMetrics()
        wraps = any(fm.horizontalAdvance(spec.label) > header.sectionSize(column) - 12
                    for column, spec in enumerate(self.spec.children))
        return (2 if wraps else 1) * fm.lineSpacing() + 10

    def _follow(self, _parent: QModelIndex, first: int, _last: int) -> None:
        """While a run writes the table, its newest row (the one being written) is kept in view:
        once the view has laid the new rows out (its scroll range grows a moment later). Not while
        the user has scrolled up to read: the table stays where they put it until they scroll back
        down to the newest row (checked as each row arrives, so the view follows again then)."""
        if not self.form.running or self._follow_timer.isActive():
            return
        last_shown = self._last_shown_row()
        self._following = last_shown < 0 or last_shown >= first - 1  # the newest row so far is in view
        if self._following:
            self._follow_timer.start()

    def _note_position(self) -> None:
        """Before the rows are reset (a run begins or ends): where the table is scrolled, and
        whether the newest row is in view."""
        view = self.view
        last_shown = self._last_shown_row()
        # (a follow still pending: the rows a fast run wrote in its last turn are not in view yet)
        at_newest = self._follow_timer.isActive() or last_shown < 0 or last_shown >= self.model.rowCount() - 1
        self._noted = (view.verticalScrollBar().value(), view.horizontalScrollBar().value(), at_newest)

    def _last_shown_row(self) -> int:
        """The row at the bottom of the table's viewport (-1: below the last row)."""
        return self.view.rowAt(self.view.viewport().height() - 1)

    def _on_running(self, running: bool) -> None:
        super()._on_running(running)
        if not running:
            self._measure_timer.start()  # the run's values measured exactly again (they may be narrower)
        if running:
            self._in_run = self._following = True
            self._lane_followed = False
            self._before_run = self._noted  # where the committed rows were read: a restore goes back there
            return
        if not self._in_run:
            return  # the widget is being made
        self._in_run = self._following = False
        noted = self._noted
        if self.form.restored:  # the rows shown before the run are back: so is where they were read
            self._position = self._before_run
        elif noted is None or noted[2]:
            self._follow_timer.start()  # the rows a run's end inserted: the last one written stays in view
            return
        else:  # the user was reading above the newest row when the run ended: the table stays there
            self._position = noted
        if self._position is not None:
            self._position_timer.start()

    def _put_position_back(self) -> None:
        position, self._position = self._position, None
        if position is not None:
            self.view.executeDelayedItemsLayout()  # the scroll range of the rows now shown
            self.view.verticalScrollBar().setValue(position[0])
            self.view.horizontalScrollBar().setValue(position[1])

    def _scroll_to_newest(self) -> None:
        last = self.model.rowCount() - 1
        if last < 0:
            return
        self.view.scrollTo(self.model.index(last, self._first_whole_column()), QAbstractItemView.ScrollHint.EnsureVisible)
        area = self._scroll_area()
        if area is None or last < MAX_VISIBLE_ROWS or not self.form.running:
            return
        if not self._lane_followed or self._bottom_shown_in(area):
            # a long table, in a short lane: the table itself too -- the first time, and then while
            # the user has not scrolled the lane away from the table's last rows (to read a field)
            area.ensureWidgetVisible(self.view, 0, 0)
            self._lane_followed = True

    def _bottom_shown_in(self, area: QScrollArea) -> bool:
        """Whether the table's bottom edge lies inside `area`'s visible part."""
        bottom = self.view.mapTo(area.viewport(), QPoint(0, self.view.height())).y()
        return 0 < bottom <= area.viewport().height() + 2

    def _first_whole_column(self) -> int:
        """The leftmost column wholly in view: following the newest row with it keeps a table the
        user scrolled sideways where it is (column 0 would snap it back)."""
        view = self.view
        column = view.columnAt(0)
        if column < 0:
            return 0
        if view.columnViewportPosition(column) < 0 and column + 1 < self.model.columnCount():
            column += 1  # cut on the left
        return column

    def _scroll_area(self) -> QScrollArea | None:
        widget = self.parentWidget()
        while widget is not None and not isinstance(widget, QScrollArea):
            widget = widget.parentWidget()
        return widget
    def _cell_visible(self, row: int, column: int) -> bool:
        """Whether the cell can be painted now: inside the table's viewport and not clipped away
        by what holds the table (a short lane whose visible part ends above the row)."""
        return self._cell_visibility()(row, column)

    def _cell_visibility(self) -> Callable[[int, int], bool]:
        """`_cell_visible` for many cells while nothing moves (the cells of one update): whether
        the table is on screen and its visible region worked out once."""
        view = self.view
        if not on_screen(view):
            return lambda _row, _column: False
        region, index = view.viewport().visibleRegion(), self.model.index
        return lambda row, column: region.intersects(view.visualRect(index(row, column)))

    def _follows_newest(self) -> bool:
        """While a run writes the table and the view is at its last row (the user has not
        scrolled up to read), the newest row is the one in view."""
        if not (self.form.running and self._following and self.view.isVisible()):
            return False
        last_shown = self._last_shown_row()
        return last_shown < 0 or last_shown >= self.model.rowCount() - 2

    def _shown_rows(self) -> tuple[int, int]:
        """The first and last row inside the table's viewport ((0, -1): none)."""
        view = self.view
        rows = self.model.rowCount()
        if rows == 0 or not view.isVisible():
            return (0, -1)
        first, last = view.rowAt(0), self._last_shown_row()
        return (max(first, 0), rows - 1 if last < 0 else last)

    def _rows_added(self, _parent: QModelIndex, first: int, _last: int) -> None:
        if first < MAX_VISIBLE_ROWS:  # past that the rows added change nothing _fit reads
            self._fit()

    def _fit_sideways(self, _minimum: int, _maximum: int) -> None:
        self._fit()  # the sideways scroll bar came or went

    def _fit(self) -> None:
        view = self.view
        rows = min(max(self.model.rowCount(), 1), MAX_VISIBLE_ROWS)
        header = view.horizontalHeader()
        header.setMinimumHeight(self._header_height())
        height = max(header.minimumHeight(), header.sizeHint().height()) + rows * view.verticalHeader().defaultSectionSize() + 2 * view.frameWidth() + 2
        bar = view.horizontalScrollBar()
        if bar.maximum() > bar.minimum():  # wider than the table (a narrow lane): room for its scroll bar, whole rows above it
            height += bar.sizeHint().height()
        if view.height() != height:
            view.setFixedHeight(height)
