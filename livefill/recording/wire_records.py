"""What a `livefill.recording.wiretap.WireRecorder` keeps and answers with: reads, frames, events, value
locations, the drop report, and the indexed ring they are kept in.

`Ring` holds items with consecutive absolute indices (a list plus a head index): dropping from the
front is O(1) amortised, access by index O(1), so a viewer asks for "everything since index N".
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from livefill.wire.taps import WireFrame
from livefill.wording import plural

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DOC_CHAR_COST",
    "EVENT_OVERHEAD",
    "FRAME_OVERHEAD",
    "INDEX_ENTRY_COST",
    "READ_OVERHEAD",
    "RECORD_POINTER_COST",
    "SEGMENT_COST",
    "ByteSpan",
    "DropReport",
    "Frame",
    "Read",
    "Ring",
    "TappedEvent",
    "ValueLocation",
    "frame_cost",
    "merge_spans",
    "text_cost",
]

#: The default memory ceiling of a recorder: 4 MiB of estimated footprint.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024

# --- what a record costs (WireRecorder charges it against its ceiling) ------------------

# Per-object overheads charged on top of payload sizes (bytes). Measured with tracemalloc on
# CPython 3.11 (see tests/recording/test_wiretap.py::test_cost_estimate_covers_real_memory) and rounded up.
READ_OVERHEAD = 200
FRAME_OVERHEAD = 320
SEGMENT_COST = 120
EVENT_OVERHEAD = 360
INDEX_ENTRY_COST = 400
RECORD_POINTER_COST = 120
DOC_CHAR_COST = 8  # what a document's parser holds per character fed (values, keys, containers)


def text_cost(text: str) -> int:
    return len(text) if text.isascii() else 4 * len(text)


def frame_cost(frame: WireFrame) -> int:
    cost = text_cost(frame.text) + FRAME_OVERHEAD + SEGMENT_COST * len(frame.segments)
    if frame.payload is not frame.text:
        cost += text_cost(frame.payload)
    return cost


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class ByteSpan:
    """A half-open range [start, end) of absolute byte offsets in the stream."""

    start: int
    end: int

    def __len__(self) -> int:
        return max(0, self.end - self.start)


@dataclass(frozen=True, kw_only=True, slots=True)
class Read:
    """One network read: `data` arrived at `t` (seconds since the recorder's t0) at byte `offset`."""

    index: int
    offset: int
    t: float
    data: bytes

    @property
    def end(self) -> int:
        """The offset just past this read's last byte."""
        return self.offset + len(self.data)


@dataclass(frozen=True, kw_only=True, slots=True)
class Frame:
    """One frame cut from the bytes: `kind` is "sse", "ndjson" or "raw"; `text` the frame's text.

    `start`/`end` is the byte span it came from (as the framer reported it); `wire` the
    `livefill.wire.taps.WireFrame` it was told as (payload, segments, carriers: how to find a delta's
    characters in its bytes).
    """

    index: int
    kind: str
    text: str
    start: int
    end: int
    t: float
    wire: WireFrame

    @property
    def span(self) -> ByteSpan:
        """The frame's bytes as a `ByteSpan`."""
        return ByteSpan(start=self.start, end=self.end)


@dataclass(frozen=True, kw_only=True, slots=True)
class TappedEvent:
    """One event a frame carried.

    `frame` is the index of the frame it came in (None if no frame preceded it), `offset` the
    stream's byte count when it arrived. For an `ArgsDelta`: `doc_start` is where its text begins
    in that block's JSON document; `carried` whether its frame said where the text sits, and
    `carrier` where (the JSON Pointer of the string holding it in the frame's payload; None: the
    payload itself).
    """

    index: int
    event: Any
    frame: int | None
    t: float
    offset: int
    doc_start: int | None = None
    carried: bool = False
    carrier: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ValueLocation:
    """Where the value of `pointer` came from.

    `chars` is the value's [start, end) in the JSON document (`None` for a relay record, end None
    while the value is still arriving); `spans` the retained byte spans that carried it, in stream
    order (adjacent pieces merged); `complete` whether the value has ended; `partly_dropped` whether
    some of its bytes were dropped by the memory ceiling (or could not be told).
    """

    pointer: str
    chars: tuple[int, int | None] | None
    spans: tuple[ByteSpan, ...]
    complete: bool
    partly_dropped: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class DropReport:
    """What the memory ceiling dropped so far (counts since the recorder was made)."""

    reads: int = 0
    bytes: int = 0
    frames: int = 0
    events: int = 0
    pointers: int = 0
    first_offset: int = 0
    total_bytes: int = 0
    max_bytes: int = DEFAULT_MAX_BYTES

    @property
    def any(self) -> bool:
        """True once anything was dropped."""
        return bool(self.reads or self.frames or self.events or self.pointers)

    def describe(self) -> str:
        """One sentence for the UI: what is kept and what was dropped."""
        if not self.any:
            return f"all {format_size(self.total_bytes)} kept (ceiling {format_size(self.max_bytes)})"
        return (
            f"ceiling {format_size(self.max_bytes)}: dropped the first {format_size(self.bytes)} "
            f"({plural(self.reads, 'read')}, {plural(self.frames, 'frame')}, {plural(self.events, 'event')}); "
            f"showing bytes {self.first_offset:,}–{self.total_bytes:,}"
        )


def format_size(n: int) -> str:
    """A byte count for the wire views (binary units, as the recorder's ceiling is set)."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


# --- an indexed ring -------------------------------------------------------------------------

T = TypeVar("T")


class Ring(Generic[T]):
    """Items with consecutive absolute indices; drop from the front, O(1) access by index."""

    __slots__ = ("_items", "_head", "first")

    def __init__(self) -> None:
        self._items: list[T] = []
        self._head = 0  # position of the first retained item in _items
        self.first = 0  # absolute index of the first retained item

    def __len__(self) -> int:
        return len(self._items) - self._head

    @property
    def next(self) -> int:
        return self.first + len(self._items) - self._head

    def append(self, item: T) -> None:
        self._items.append(item)

    def peek(self) -> T:
        return self._items[self._head]

    def last(self) -> T:
        return self._items[-1]

    def popleft(self) -> T:
        item = self._items[self._head]
        self._items[self._head] = None  # type: ignore[call-overload]
        self._head += 1
        self.first += 1
        if self._head > 1024 and self._head * 2 > len(self._items):
            del self._items[: self._head]
            self._head = 0
        return item

    def replace_first(self, item: T) -> None:
        self._items[self._head] = item

    def get(self, index: int) -> T | None:
        if index < self.first or index >= self.next:
            return None
        return self._items[self._head + index - self.first]

    def since(self, index: int) -> list[T]:
        start = max(index, self.first) - self.first + self._head
        return self._items[start:]

    def __iter__(self) -> Iterator[T]:
        return iter(self._items[self._head :])

    def bisect(self, value: Any, key: Callable[[T], Any]) -> int:
        """Absolute index of the last item whose key <= value (first - 1 if none)."""
        pos = bisect_right(self._items, value, lo=self._head, key=key)
        return self.first + (pos - self._head) - 1


def merge_spans(spans: list[ByteSpan]) -> tuple[ByteSpan, ...]:
    """`spans` in stream order, overlapping or touching ones merged."""
    out: list[ByteSpan] = []
    for s in sorted(spans, key=lambda s: s.start):
        if out and s.start <= out[-1].end:
            if s.end > out[-1].end:
                out[-1] = ByteSpan(start=out[-1].start, end=s.end)
        else:
            out.append(s)
    return tuple(out)
