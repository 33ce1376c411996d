"""The wire inspector: one lane's stream as it arrived, byte by byte, frame by frame.

`WireInspector` renders a `livefill.recording.wiretap.WireRecorder` (it owns no business state): the raw bytes
with every read boundary marked (`ByteView`, text or hex), beneath them the frames the bytes were
cut into and the events each frame carried (`FrameTable`), a field selector that highlights the
bytes that carried a field's value, a line saying how much the recorder kept and what its memory
ceiling dropped, and the demo provider's slicing knob (`SlicingControl`).

How this works
--------------
The recorder is fed from the stream's task; the inspector polls it on a timer (`poll_ms`, only
while visible) and appends what is new since its cursors (read, frame and event indices), so a
fast stream costs one batch per tick, not one repaint per read, and a tick costs what arrived
since the last one, never what the run already showed: the field selector's list (every pointer
the stream carried, thousands on a long document) is brought up to date only when the user opens
it or gives it the focus (`list_fields()`), not on every tick. `refresh()` does one poll now.
Selecting a field (the combo, or `select_pointer` from the form) asks the recorder where the value
came from and re-asks on every poll while the value is still arriving. Selecting a row in the
frame table outlines that frame's (or event's) bytes.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelection, Qt, QTimer, Signal
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from livefill.recording.wire_records import format_size
from livefill.recording.wiretap import ValueLocation, WireRecorder
from livefill.wording import plural
from livefill.widgets.wire_inspector_bytes import ByteView
from livefill.widgets.wire_inspector_frames import FrameTable, FrameTableModel
from livefill.widgets.wire_inspector_slicing import SlicingControl

__all__ = ["WireInspector"]

_NO_FIELD = "(no field)"


class _FieldCombo(QComboBox):
    """The field selector: asks for its list to be brought up to date (`wanted`) as it opens or
    takes the focus (arrow keys then step through every field)."""

    def __init__(self, parent: QWidget, wanted: Callable[[], None]) -> None:
        super().__init__(parent)
        self._wanted = wanted

    def showPopup(self) -> None:  # noqa: N802 - Qt override
        self._wanted()
        super().showPopup()

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt override
        self._wanted()
        super().focusInEvent(event)

    def in_use(self) -> bool:
        """Its list is open or it has the focus: new fields go into the list as they come."""
        return self.hasFocus() or self.view().isVisible()


class WireInspector(QWidget):
    """Raw bytes, frames, events and field highlighting for one `WireRecorder`.

    Signals: `slicingChanged(str)` (an `x-demo-slice` value for the next run),
    `pointerSelected(str)` (the user picked a field; "" for none).
    """

    slicingChanged = Signal(str)  # noqa: N815 - Qt signal naming
    pointerSelected = Signal(str)  # noqa: N815

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        recorder: WireRecorder | None = None,
        poll_ms: int = 50,
        view_limit: int = 256 * 1024,
        max_rows: int = 4000,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("wireInspector")
        self._recorder: WireRecorder | None = None
        self._pointer = ""
        self._known_pointers: set[str] = set()
        self._cursor = (0, 0, 0)
        self._seen_version = -1

        # top row: field selector, text/hex, slicing knob
        self.field_combo = _FieldCombo(self, self.list_fields)
        self.field_combo.setObjectName("wireField")
        self.field_combo.setMinimumContentsLength(18)
        self.field_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.field_combo.addItem(_NO_FIELD, "")
        self.field_combo.setToolTip("Highlight the bytes that carried this field's value")
        self.mode_combo = QComboBox(self)
        self.mode_combo.setObjectName("wireMode")
        self.mode_combo.addItem("text", "text")
        self.mode_combo.addItem("hex", "hex")
        self.slicing = SlicingControl(self)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Field:"))
        top.addWidget(self.field_combo, 1)
        top.addWidget(QLabel("Bytes as:"))
        top.addWidget(self.mode_combo)
        top.addSpacing(12)
        top.addWidget(self.slicing)

        self.stats_label = QLabel(self)
        self.stats_label.setObjectName("wireStats")
        self.stats_label.setWordWrap(True)
        self.value_label = QLabel(self)
        self.value_label.setObjectName("wireValue")
        self.value_label.setWordWrap(True)

        self.byte_view = ByteView(self, view_limit=view_limit)
        self.frame_model = FrameTableModel(self, max_rows=max_rows)
        self.frame_table = FrameTable(self.frame_model, self)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.byte_view)
        split.addWidget(self.frame_table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.stats_label)
        layout.addWidget(self.value_label)  # above the bytes: in a short dock it stays in view
        layout.addWidget(split, 1)

        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._tick)

        self.slicing.slicingChanged.connect(self.slicingChanged)
        self.field_combo.activated.connect(self._on_field_chosen)
        self.mode_combo.currentIndexChanged.connect(self._on_mode)
        self.frame_table.selectionModel().selectionChanged.connect(self._on_row_selected)
        self.set_recorder(recorder)

    # -- public API -----------------------------------------------------------------------------

    @property
    def recorder(self) -> WireRecorder | None:
        """The recorder shown (None: nothing)."""
        return self._recorder

    def set_recorder(self, recorder: WireRecorder | None) -> None:
        """Show `recorder` (a new run's) from its start; None empties the inspector."""
        self._recorder = recorder
        self._cursor = (0, 0, 0)
        self._seen_version = -1
        self.byte_view.clear_view()
        self.frame_model.clear()
        self._known_pointers = set()
        self.field_combo.blockSignals(True)
        self.field_combo.clear()
        self.field_combo.addItem(_NO_FIELD, "")
        if self._pointer:
            self._add_pointer_item(self._pointer)
            self.field_combo.setCurrentIndex(self.field_combo.count() - 1)
        self.field_combo.blockSignals(False)
        self.value_label.clear()
        if recorder is None:
            self._timer.stop()
            self.stats_label.setText("No stream yet: press Start.")
        else:
            self._timer.start()
            self.refresh()

    def refresh(self) -> None:
        """Append everything the recorder got since the last refresh."""
        rec = self._recorder
        if rec is None or rec.version == self._seen_version:
            return
        self._seen_version = rec.version
        next_read, next_frame, next_event = self._cursor
        reads = rec.reads(next_read)
        self.byte_view.append_reads((r.index, r.offset, r.data) for r in reads)
        self.frame_model.append(rec, rec.frames(next_frame), rec.events(next_event))
        self._cursor = (rec.next_read, rec.next_frame, rec.next_event)
        if self.field_combo.in_use():
            self._update_pointers(rec)
        self._update_stats(rec)
        if self._pointer:
            self._show_pointer(scroll=False)

    def list_fields(self) -> None:
        """Bring the field selector's list up to date: every field the stream carried so far."""
        if self._recorder is not None:
            self._update_pointers(self._recorder)

    def select_pointer(self, pointer: str | None) -> None:
        """Highlight the bytes that carried `pointer`'s value (None or "" clears)."""
        self._pointer = pointer or ""
        i = self.field_combo.findData(self._pointer)
        if i < 0 and self._pointer:
            self._add_pointer_item(self._pointer)
            i = self.field_combo.count() - 1
        self.field_combo.setCurrentIndex(max(i, 0))
        self._show_pointer(scroll=True)

    @property
    def pointer(self) -> str:
        """The field whose bytes are highlighted ("" for none)."""
        return self._pointer

    def slicing_value(self) -> str:
        """The slicing knob's `x-demo-slice` value."""
        return self.slicing.value()

    def set_slicing(self, value: str) -> None:
        """Show `value` on the slicing knob (does not emit `slicingChanged`)."""
        self.slicing.set_value(value)

    def location(self) -> ValueLocation | None:
        """Where the selected field's value came from (None if none selected or not seen)."""
        if not self._pointer or self._recorder is None:
            return None
        return self._recorder.locate(self._pointer)

    # -- internals ------------------------------------------------------------------------------

    def _tick(self) -> None:
        if self.isVisible():
            self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.refresh()

    def _add_pointer_item(self, pointer: str) -> None:
        self._known_pointers.add(pointer)
        self.field_combo.addItem(pointer, pointer)

    def _update_pointers(self, rec: WireRecorder) -> None:
        pointers = rec.pointers()
        if len(pointers) == len(self._known_pointers):
            return
        for p in pointers:
            if p not in self._known_pointers:
                self._add_pointer_item(p)

    def _update_stats(self, rec: WireRecorder) -> None:
        shown = self.byte_view
        view = ""
        if shown.skipped_bytes:
            first = shown.first_offset
            view = f" · view shows the last {format_size(rec.total_bytes - (first or rec.total_bytes))}"
        self.stats_label.setText(
            f"{plural(rec.next_read, 'read')} · {format_size(rec.total_bytes)} · {plural(rec.next_frame, 'frame')} · "
            f"{plural(rec.next_event, 'event')} — {rec.dropped.describe()}{view}"
        )
        self.stats_label.setProperty("dropped", rec.dropped.any)

    def _show_pointer(self, *, scroll: bool) -> None:
        loc = self.location()
        if loc is None:
            self.byte_view.highlight([], scroll=False)
            self.value_label.setText(
                f"{self._pointer}: not in this stream yet" if self._pointer else ""
            )
            return
        pieces = self.byte_view.highlight([(s.start, s.end) for s in loc.spans], scroll=scroll)
        size = sum(len(s) for s in loc.spans)
        state = "complete" if loc.complete else "still arriving"
        notes = []
        if loc.partly_dropped:
            notes.append("some of its bytes were dropped by the memory ceiling")
        if pieces == 0 and loc.spans:
            notes.append("its bytes are older than the view")
        where = "" if loc.chars is None else f", characters {loc.chars[0]}–{loc.chars[1] if loc.chars[1] is not None else '…'} of the document"
        self.value_label.setText(
            f"{loc.pointer}: {plural(size, 'byte')} on the wire in {plural(len(loc.spans), 'piece')}{where}; {state}"
            + ("" if not notes else " (" + "; ".join(notes) + ")")
        )

    def _on_field_chosen(self, index: int) -> None:
        pointer = self.field_combo.itemData(index) or ""
        self._pointer = pointer
        self._show_pointer(scroll=True)
        self.pointerSelected.emit(pointer)

    def _on_mode(self, _index: int) -> None:
        rec = self._recorder
        reads = [] if rec is None else rec.reads()
        mode = self.mode_combo.currentData()
        limit = self.byte_view.view_limit
        tail, kept = [], 0
        for r in reversed(reads):
            if kept >= limit:
                break
            tail.append((r.index, r.offset, r.data))
            kept += len(r.data)
        self.byte_view.set_mode(mode, tail[::-1])
        if self._pointer:
            self._show_pointer(scroll=False)

    def _on_row_selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = [i.row() for i in selected.indexes()]
        if not rows:
            return
        span = self.frame_model.span(rows[0])
        if span is not None:
            self.byte_view.select_span(*span)
