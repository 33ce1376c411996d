"""A Qt table model over one array-of-objects field of a FormModel (rows appear as items start).

Each cell is the pointer `<array>/<row><column pointer>` (e.g. `/line_items/0/qty`). The model
answers Qt's roles from the form model (text, tooltip with the reason, italic while provisional)
and exposes the cell's state under `STATE_ROLE` so the delegate can draw it and tests can read it.
It owns nothing: every answer is read from the form when asked.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from core.form import MISSING, FieldKind, FieldSpec, FieldState, FormModel
from widgets.form_signals import FormSignals
from widgets.number_field import parse_number

STATE_ROLE = Qt.ItemDataRole.UserRole + 1
POINTER_ROLE = Qt.ItemDataRole.UserRole + 2
_NUMERIC = (FieldKind.NUMBER, FieldKind.INTEGER)
_Index = QModelIndex | QPersistentModelIndex


class FormTableModel(QAbstractTableModel):
    """Rows of the array at `pointer`; columns from `spec.children`."""

    def __init__(self, spec: FieldSpec, form: FormModel, signals: FormSignals, pointer: str | None = None) -> None:
        super().__init__()
        self.spec = spec
        self.form = form
        self.pointer = pointer if pointer is not None else spec.pointer
        self.columns = spec.children
        self._rows = self._count()
        signals.updated.connect(self._on_updated)
        signals.runningChanged.connect(lambda _running: self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, 0))

    def _count(self) -> int:
        value = self.form.value(self.pointer)
        return len(value) if isinstance(value, list) else 0

    def cell_pointer(self, row: int, column: int) -> str:
        """The JSON Pointer of a cell."""
        return f"{self.pointer}/{row}{self.columns[column].pointer}"

    # -- Qt model API -------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 (Qt API)
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 (Qt API)
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole:
            if orientation == Qt.Orientation.Horizontal:
                return self.columns[section].label
            return str(section + 1)
        return None

    def state_of(self, row: int, column: int) -> FieldState:
        """The state of a cell as the form knows it."""
        return self.form.state(self.cell_pointer(row, column))

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        ptr = self.cell_pointer(index.row(), index.column())
        col = self.columns[index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self.form.display(ptr)
        if role == STATE_ROLE:
            state = self.form.state(ptr)
            if not self.form.marking and state is not FieldState.INVALID:
                return "settled" if self.form.value(ptr) is not MISSING else "empty"
            return state.value
        if role == POINTER_ROLE:
            return ptr
        if role == Qt.ItemDataRole.ToolTipRole:
            state = self.form.state(ptr)
            reason = self.form.reason(ptr)
            return f"{ptr}: {state.value}" + (f" — {reason}" if reason else "")
        if role == Qt.ItemDataRole.TextAlignmentRole:
            horizontal = Qt.AlignmentFlag.AlignRight if col.kind in _NUMERIC else Qt.AlignmentFlag.AlignLeft
            return int(horizontal | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and self.form.marking:
            if self.form.state(ptr) is FieldState.PROVISIONAL:
                font = QFont()
                font.setItalic(True)
                return font
        if role == Qt.ItemDataRole.ForegroundRole and self.form.marking:
            if self.form.state(ptr) is FieldState.PROVISIONAL:
                return QColor("#7a6a4a")
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if not self.form.running and self.columns[index.column()].kind is not FieldKind.TABLE:
            base |= Qt.ItemFlag.ItemIsEditable
        return base

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or self.form.running or not index.isValid():
            return False
        col = self.columns[index.column()]
        ptr = self.cell_pointer(index.row(), index.column())
        text = str(value)
        if text.strip() == "":
            self.form.clear_value(ptr)
            return True
        reason = None
        parsed: Any = text
        if col.kind in _NUMERIC:
            parsed, reason = parse_number(text, col.kind)
        elif col.kind is FieldKind.BOOLEAN:
            low = text.strip().lower()
            parsed = low in ("yes", "true", "1")
            reason = None if low in ("yes", "no", "true", "false", "1", "0") else "yes or no"
        elif col.kind is FieldKind.CHIPS:
            parsed = [p.strip() for p in text.split(",") if p.strip()]
        self.form.set_value(ptr, parsed, invalid_reason=reason)
        return True

    # -- following the form ---------------------------------------------------------------------

    def _on_updated(self, pointers: set[str], reset: bool) -> None:
        if reset:
            self.beginResetModel()
            self._rows = self._count()
            self.endResetModel()
            return
        prefix = self.pointer + "/"
        rows: set[int] = set()
        touched = False
        for p in pointers:
            if p == self.pointer:
                touched = True
            elif p.startswith(prefix):
                touched = True
                head = p[len(prefix):].split("/", 1)[0]
                if head.isdigit():
                    rows.add(int(head))
        if not touched:
            return
        count = self._count()
        if count < self._rows:
            self.beginResetModel()
            self._rows = count
            self.endResetModel()
            return
        if count > self._rows:
            self.beginInsertRows(QModelIndex(), self._rows, count - 1)
            self._rows = count
            self.endInsertRows()
        if rows and self._rows:
            top = min(rows)
            bottom = min(max(rows), self._rows - 1)
            if top <= bottom:
                self.dataChanged.emit(self.index(top, 0), self.index(bottom, len(self.columns) - 1))
