"""An array of objects as a table: rows appear as items start, every cell carries its state."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from core.form import FieldKind, FieldState
from widgets.field_base import FieldWidget
from widgets.paint_probe import on_screen
from widgets.state_delegate import StateDelegate
from widgets.table_model import FormTableModel

MAX_VISIBLE_ROWS = 8


class TableField(FieldWidget):
    """A titled table over `FormTableModel`; the table's own state is the array's."""

    stacked = True

    def make_editor(self) -> QWidget:
        self.model = FormTableModel(self.spec, self.form, self.signals, self.pointer)
        view = QTableView()
        view.setModel(self.model)
        view.setItemDelegate(StateDelegate(view))
        view.setObjectName("fieldTable")
        view.verticalHeader().setDefaultSectionSize(24)
        view.verticalHeader().setVisible(False)  # row numbers cost a header repaint per new row
        self.model.eager_rows = MAX_VISIBLE_ROWS
        header = view.horizontalHeader()
        header.setStretchLastSection(False)
        for column, spec in enumerate(self.spec.children):
            if spec.kind in (FieldKind.STRING, FieldKind.PROSE, FieldKind.CHIPS):
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            else:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
                # at most 110 px: a long label ("Dimensions · Width cm") elides rather than squeezing
                # the text columns (sku, name) to nothing
                header.resizeSection(column, min(110, max(70, header.fontMetrics().horizontalAdvance(spec.label) + 30)))
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        view.setWordWrap(False)
        self.model.cell_visible = self._cell_visible
        self.model.rowsInserted.connect(self._fit)
        self.model.modelReset.connect(self._fit)
        self.view = view
        return view

    def watches(self, pointers: set[str]) -> bool:
        return False  # rows and cells are the model's business

    def set_editable(self, editable: bool) -> None:
        triggers = QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        self.view.setEditTriggers(triggers if editable else QAbstractItemView.EditTrigger.NoEditTriggers)

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        self._fit()

    def _cell_visible(self, row: int, column: int) -> bool:
        view = self.view
        if not on_screen(view):
            return False
        return view.visualRect(self.model.index(row, column)).intersects(view.viewport().rect())

    def _fit(self) -> None:
        view = self.view
        rows = min(max(self.model.rowCount(), 1), MAX_VISIBLE_ROWS)
        height = view.horizontalHeader().height() + rows * view.verticalHeader().defaultSectionSize() + 2 * view.frameWidth() + 2
        if view.height() != height:
            view.setFixedHeight(height)
