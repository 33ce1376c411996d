"""A Qt table model over one array-of-objects field of a FormModel (rows appear as items start).

Each cell is the pointer `<array>/<row><column pointer>` (e.g. `/line_items/0/qty`). The model
answers Qt's roles from the form model (text, tooltip with the reason, italic while provisional)
and exposes the cell's state under `STATE_ROLE` so the delegate can draw it and tests can read it;
once a committed run was scored (livefill.session.expected_answer.form_marks), each scored cell's
"right" / "wrong" under `ANSWER_ROLE`, and the expected value in its tooltip.
It owns nothing: every answer is read from the form when asked. A cell that starts to show its
value settled while on screen (`cell_visible`, given by the view) is `armed` until its delegate
paints it (the form's `PaintProbe`: byte-to-pixel latency).

What the view tells it: which rows it shows (`shown_rows`: a change to another row only forgets
that row's cells) and whether it follows the newest row (`follows_newest`: then a new row is
inserted at once, so the row being written is seen as it streams; rows past the first
`eager_rows` that would land below the view are inserted every `INSERT_MS`, each insertion
laying the view out again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor, QFont

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.field_text import shown_text
from livefill.extraction.json_doc import MISSING, get_at
from livefill.extraction.schema import FieldKind, FieldSpec
from livefill.session.expected_answer import field_mark, form_marks
from livefill.session.scoring import FieldScore, Verdict
from livefill.widgets.form_signals import FormSignals
from livefill.widgets.number_field import parse_number

INSERT_MS = 500
STATE_ROLE = Qt.ItemDataRole.UserRole + 1
POINTER_ROLE = Qt.ItemDataRole.UserRole + 2
ANSWER_ROLE = Qt.ItemDataRole.UserRole + 3
_READ_ONLY = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_EDITABLE = _READ_ONLY | Qt.ItemFlag.ItemIsEditable
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
        self._cache: dict[tuple[int, int], tuple[str, str]] = {}
        right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        left = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self._align = [right if c.kind in _NUMERIC else left for c in self.columns]
        # each column's pointer inside a row, and the containers above it there ("/dimensions" for
        # "/dimensions/width_cm"): see _on_updated
        self._pointers = [c.pointer for c in self.columns]
        self._above = [frozenset(_inside_row(c.pointer)[:-1]) for c in self.columns]
        #: rows inserted as soon as they start; later ones every `insert_ms` (see _on_updated)
        self.eager_rows = 8
        self._insert_timer = QTimer(self)
        self._insert_timer.setSingleShot(True)
        self._insert_timer.setInterval(INSERT_MS)
        self._insert_timer.timeout.connect(lambda: self._insert_rows(self._count()))
        self.probe = signals.paint_probe
        self.armed: set[tuple[int, int]] = set()  # cells now settled, their paint not yet seen
        self.cell_visible: Callable[[int, int], bool] = lambda _row, _column: False
        #: the same question for many cells at once: a test for the cells of one update (what is
        #: on screen is worked out once for them all, not once a cell)
        self.cell_visibility: Callable[[], Callable[[int, int], bool]] = lambda: self.cell_visible
        #: whether the view keeps the newest row in view (it follows a run that writes the table):
        #: then a new row is what the user looks at, and is inserted at once, not on the timer
        self.follows_newest: Callable[[], bool] = lambda: False
        #: the rows the view shows now, (first, last) inclusive, or None for all (no view): a
        #: change to a row outside them only forgets that row's cells (read again when painted)
        self.shown_rows: Callable[[], tuple[int, int] | None] = lambda: None
        signals.updated.connect(self._on_updated)
        signals.runningChanged.connect(self._on_running)
        self.marks = form_marks(form)
        self._answers: dict[str, FieldScore] = {}  # a scored cell's pointer -> its score
        unsubscribe = self.marks.subscribe(self._marks_changed)
        self.destroyed.connect(lambda *_: unsubscribe())

    def _marks_changed(self) -> None:
        self._answers = {f.pointer: f for f in self.marks.of(self.pointer)}
        if self._rows and self.columns:
            self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, len(self.columns) - 1))

    @property
    def answers_seen(self) -> object:
        """What `answer` reads: another object whenever any cell's answer may have changed."""
        return self._answers

    def answer(self, row: int, column: int) -> str:
        """"right" / "wrong" for a cell scored against the expected answer ("": not scored)."""
        if not self._answers:
            return ""
        found = self._answers.get(self.cell_pointer(row, column))
        if found is None:
            return ""
        return "right" if found.verdict is Verdict.RIGHT else "wrong"

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

    def alignment(self, column: int) -> int:
        """Right for numeric columns, left otherwise (as an int of Qt.AlignmentFlag)."""
        return self._align[column]

    def cell(self, row: int, column: int) -> tuple[str, str]:
        """(display text, state name) of a cell, cached until the form changes that row.

        The text is `FormModel.display`'s, read without its lookups: the cell's spec is its
        column's, and its value is read inside its row's (a new cell's pointer is not parsed
        whole, nor its spec looked up, for every cell of every row a run writes)."""
        key = (row, column)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._read_cell(row, column, self.form.value(f"{self.pointer}/{row}"))
        return hit

    def _read_cell(self, row: int, column: int, row_value: Any) -> tuple[str, str]:
        """(display text, state name) of a cell of the row whose value is `row_value`, read now."""
        form = self.form
        state = form.state(self.cell_pointer(row, column))
        value = get_at(row_value, self._pointers[column])
        if not form.marking and state is not FieldState.INVALID:
            name = "settled" if value is not MISSING else "empty"
        else:
            name = state.value
        return shown_text(self.columns[column], value, provisional=form.marking and state is FieldState.PROVISIONAL), name

    def cached_text(self, row: int, column: int) -> str | None:
        """The text a cell shows, if it has been read since it last changed (None: not read)."""
        hit = self._cache.get((row, column))
        return hit[0] if hit is not None else None

    def column_texts(self, column: int, limit: int = 500) -> list[str]:
        """The display texts of a column's first `limit` cells, read from the form (what the view
        sizes the column by; the cells' cache is neither read nor filled). Each row's value is
        read once and the cell inside it, as `cell` does: `FormModel.display` per cell looked up
        the cell's spec and parsed its pointer whole (~800 cells, each end of a catalog run)."""
        rows = min(self._rows, limit)
        value = self.form.value(self.pointer)
        values = value if isinstance(value, list) else []
        return [self._read_cell(row, column, values[row] if row < len(values) else MISSING)[0] for row in range(rows)]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self.cell(index.row(), index.column())[0]
        if role == STATE_ROLE:
            return self.cell(index.row(), index.column())[1]
        ptr = self.cell_pointer(index.row(), index.column())
        col = self.columns[index.column()]
        if role == POINTER_ROLE:
            return ptr
        if role == ANSWER_ROLE:
            return self.answer(index.row(), index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            state = self.form.state(ptr)
            reason = self.form.reason(ptr)
            scored = self._answers.get(ptr)
            mark = field_mark((scored,), ptr) if scored is not None else None
            return f"{ptr}: {state.value}" + (f" — {reason}" if reason else "") + (f"\n{mark.tip}" if mark else "")
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self._align[index.column()]
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
        # asked for every cell painted: the flags are made once (an enum `|` per call cost more
        # than the rest of the call)
        if not self.form.running and self.columns[index.column()].kind is not FieldKind.TABLE:
            return _EDITABLE
        return _READ_ONLY

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

    def _insert_rows(self, count: int) -> None:
        self._insert_timer.stop()
        if count > self._rows:
            self.beginInsertRows(QModelIndex(), self._rows, count - 1)
            self._rows = count
            self.endInsertRows()

    def _on_running(self, running: bool) -> None:
        if not running:
            self._insert_rows(self._count())

    def _columns_of(self, inside: set[str]) -> list[int]:
        """The columns whose cells a change to `inside` (pointers within one row) concerns: the
        cell's own pointer, a container between it and the row ("/dimensions"), or a part of its
        value (a tag of "/tags")."""
        around = {above for changed in inside for above in _inside_row(changed)}
        return [c for c, pointer in enumerate(self._pointers) if pointer in around or not inside.isdisjoint(self._above[c])]

    def _on_updated(self, pointers: set[str], reset: bool) -> None:
        if reset:
            self.armed.clear()
            self.beginResetModel()
            self._cache.clear()
            self._rows = self._count()
            self.endResetModel()
            return
        prefix = self.pointer + "/"
        rows: dict[int, set[str] | None] = {}  # row -> what changed inside it (None: the row itself)
        touched = False
        for p in pointers:
            if p == self.pointer or prefix.startswith(p + "/"):
                # the array itself or a container above it: written whole, any row may have changed
                touched = True
                rows.update(dict.fromkeys(range(self._rows)))
            elif p.startswith(prefix):
                touched = True
                head, sep, rest = p[len(prefix):].partition("/")
                if head.isdigit():
                    row = int(head)
                    if not sep:
                        rows[row] = None
                    else:
                        inside = rows.setdefault(row, set())
                        if inside is not None:
                            inside.add("/" + rest)
        if not touched:
            return
        count = self._count()
        if count < self._rows:
            self.beginResetModel()
            self._cache.clear()
            self._rows = count
            self.endResetModel()
            return
        if count > self._rows:
            if self._rows >= self.eager_rows and self.form.running and not self.follows_newest():
                # rows below the visible ones: insert a few times a second, not every frame
                # (each insertion lays the view out again); the row being written, when the view
                # follows it, is inserted at once (else its values would appear settled, late)
                if not self._insert_timer.isActive():
                    self._insert_timer.start()
            else:
                self._insert_rows(count)
        # repaint only the cells whose text or state changed; rows out of view are only forgotten
        # (a settling table marks every row: reading a hundred rows' cells again cost 4 ms a time)
        ncols = len(self.columns)
        probing = self.probe.sink is not None and self.form.marking
        shown = self.shown_rows()
        first, last = shown if shown is not None else (0, self._rows - 1)
        visible: Callable[[int, int], bool] | None = None  # asked for at the first settled cell
        for row in sorted(r for r in rows if r < self._rows):
            columns = range(ncols) if rows[row] is None else self._columns_of(rows[row])
            if not first <= row <= last:
                for col in columns:
                    self._cache.pop((row, col), None)
                continue
            changed = []
            for col in columns:
                old = self._cache.pop((row, col), None)
                new = self.cell(row, col)
                if old != new:
                    changed.append(col)
                    if probing and new[1] == "settled" and (old is None or old[1] != "settled"):
                        if visible is None:
                            visible = self.cell_visibility()
                        if visible(row, col):
                            self.armed.add((row, col))
            if changed:
                self.dataChanged.emit(self.index(row, changed[0]), self.index(row, changed[-1]))


def _inside_row(pointer: str) -> list[str]:
    """A column's pointer inside its row and every container above it there, outermost first."""
    parts = pointer.split("/")[1:]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]
