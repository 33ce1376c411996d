"""The frames pane of the wire inspector: each frame cut from the bytes, and the events it carried.

`FrameTableModel` is a Qt table model over rows appended incrementally from a `WireRecorder`
(`append(recorder, frames, events)`): a frame row (index, time, byte span, kind, its text with
line breaks shown as `⏎`), followed by one indented row per event it carried (`↳ ArgsDelta` and the
delta's text as JSON). Rows past `max_rows` are removed from the top in batches, so the pane costs
the same on a stream of any length. An event's own bytes are asked of the recorder only when its
row is selected (`span`), not for every row appended. `FrameTable` is the view; it follows the
newest row while the user has not scrolled up.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from livefill.recording.wiretap import Frame, TappedEvent, WireRecorder

__all__ = ["FrameTable", "FrameTableModel", "describe_event"]

_COLUMNS = ("#", "t (s)", "bytes", "kind", "content")
_MAX_TEXT = 240


def describe_event(event: Any) -> tuple[str, str]:
    """(type name, short content) of a stream event or relay record, for one table row."""
    name = type(event).__name__
    text = getattr(event, "text", None)
    if isinstance(text, str):
        return name, json.dumps(text, ensure_ascii=False)
    dump = getattr(event, "model_dump_json", None)
    if callable(dump):
        return name, dump()
    reason = getattr(event, "reason", None)
    if reason is not None:
        raw = getattr(event, "raw", "")
        return name, f"{getattr(reason, 'value', reason)}" + (f" ({raw})" if raw else "")
    if hasattr(event, "message"):
        return name, f"{getattr(event, 'kind', '')}: {event.message}"
    fields = getattr(event, "__slots__", ()) or getattr(event, "__dataclass_fields__", {})
    return name, ", ".join(f"{f}={getattr(event, f, '')!r}" for f in fields)


def _one_line(text: str) -> str:
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT] + "…"
    return text.replace("\r", "␍").replace("\n", "⏎")


class FrameTableModel(QAbstractTableModel):
    """Frames and their events as table rows (see the module docstring)."""

    def __init__(self, parent: Any = None, *, max_rows: int = 4000) -> None:
        super().__init__(parent)
        self.max_rows = max_rows
        # row: (is_frame, index, t, frame span (start, end) | the event, kind, content, frame index)
        self._rows: list[tuple[bool, int, float, Any, str, str, int | None]] = []
        self._recorder: WireRecorder | None = None
        self.removed_rows = 0

    # -- Qt model -----------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return _COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        is_frame, idx, t, span, kind, content, _ = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return f"{idx}" if is_frame else ""
            if col == 1:
                return f"{t:.3f}" if is_frame else ""
            if col == 2:
                return "" if span is None or not is_frame else f"{span[0]:,}–{span[1]:,}"
            if col == 3:
                return kind if is_frame else f"  ↳ {kind}"
            return content
        if role == Qt.ItemDataRole.ForegroundRole and not is_frame:
            return QPalette().color(QPalette.ColorGroup.Active, QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 1, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col == 4:
            return content
        return None

    # -- feeding --------------------------------------------------------------------------------

    def clear(self) -> None:
        """Remove every row."""
        self.beginResetModel()
        self._rows = []
        self._recorder = None
        self.removed_rows = 0
        self.endResetModel()

    def append(self, recorder: WireRecorder, frames: list[Frame], events: list[TappedEvent]) -> None:
        """Append new frames and events (in stream order: each frame, then its events)."""
        self._recorder = recorder
        items: list[tuple[tuple[int, int, int], Any]] = []
        items += [((f.index, 0, 0), f) for f in frames]
        items += [((-1 if e.frame is None else e.frame, 1, e.index), e) for e in events]
        if not items:
            return
        items.sort(key=lambda kv: kv[0])
        rows = []
        for _, item in items:
            if isinstance(item, Frame):
                rows.append((True, item.index, item.t, (item.start, item.end), item.kind,
                             _one_line(item.text), item.index))
            else:
                name, content = describe_event(item.event)
                rows.append((False, item.index, item.t, item, name, _one_line(content), item.frame))
        if len(rows) > self.max_rows:
            self.removed_rows += len(rows) - self.max_rows
            rows = rows[-self.max_rows :]
        overflow = len(self._rows) + len(rows) - self.max_rows
        if overflow > 0:
            cut = min(len(self._rows), max(overflow, self.max_rows // 4))
            self.beginRemoveRows(QModelIndex(), 0, cut - 1)
            del self._rows[:cut]
            self.removed_rows += cut
            self.endRemoveRows()
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows.extend(rows)
        self.endInsertRows()

    def span(self, row: int) -> tuple[int, int] | None:
        """The stream bytes row `row` stands for (a frame's span, an event's own bytes)."""
        if not 0 <= row < len(self._rows):
            return None
        is_frame, _, _, span, _, _, _ = self._rows[row]
        if is_frame:
            return span  # type: ignore[no-any-return]
        found = None if self._recorder is None else self._recorder.event_span(span)
        return None if found is None else (found.start, found.end)

    def row_info(self, row: int) -> tuple[bool, int, int | None]:
        """(is a frame, its index in the recorder, the frame it belongs to) of row `row`."""
        is_frame, idx, _, _, _, _, frame = self._rows[row]
        return is_frame, idx, frame

    def row_of_frame(self, frame: int) -> int | None:
        """The row showing frame `frame`, or None if it is not shown."""
        lo, hi = 0, len(self._rows)
        while lo < hi:  # frame rows are in increasing frame order
            mid = (lo + hi) // 2
            f = self._rows[mid][6]
            if f is None or f < frame:
                lo = mid + 1
            else:
                hi = mid
        for r in range(lo, min(lo + 2, len(self._rows))):
            if self._rows[r][0] and self._rows[r][1] == frame:
                return r
        return None


class FrameTable(QTableView):
    """The view of a `FrameTableModel`; sticks to the bottom while the user has not scrolled up."""

    def __init__(self, model: FrameTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("wireFrames")
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        vh = self.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 4)
        hh = self.horizontalHeader()
        hh.setStretchLastSection(True)
        for col, width in enumerate((48, 56, 110, 110)):
            hh.resizeSection(col, width)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._follow = True
        self.verticalScrollBar().valueChanged.connect(self._on_scroll)
        model.rowsInserted.connect(self._on_rows)

    def _on_scroll(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._follow = value >= bar.maximum() - 2

    def _on_rows(self, *_: Any) -> None:
        if self._follow:
            self.scrollToBottom()
