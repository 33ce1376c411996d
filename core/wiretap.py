"""A bounded recorder of one stream's wire: raw reads, the frames cut from them, the events they carried.

`WireRecorder` implements the `WireTap` protocol of `core.providers` (and of `open_relay`): hand it
to `open_stream(request, tap=recorder)` and it keeps

- every network read exactly as received, with its byte offset in the stream and its arrival time
  (so every read boundary is known),
- every frame (an SSE event, an NDJSON line, a raw chunk) with the byte span it was cut from,
- every event the frames carried (`ArgsDelta`, `Stop`, relay records ...) with the frame it came in,

and answers "which bytes carried the value of `/customer_name`?" (`locate`). It is Qt-free and does
no IO; the wire inspector widget renders it.

How this works
--------------
Memory. Everything kept is charged an estimated cost (payload size + a fixed per-object
overhead, calibrated against tracemalloc). When the total passes `max_bytes`, the oldest reads are
dropped, then the frames that lay wholly inside dropped bytes, then the events of dropped frames
(frames and events go on their own only if reads alone cannot bring the cost down). What was
dropped is counted in `dropped` (a `DropReport`, with a sentence for the UI). Items carry
monotonically increasing indices, so a viewer asks for "everything since index N" and appends.
Retained items live in `_Ring`s (a list plus a head index) for O(1) indexed access.

Frame spans. `on_frame` only gets the frame's text, so its bytes are found again: the recorder
keeps the bytes read since the last located frame (`_tail`, capped) and searches them for the
frame's text, encoded as the wire would carry it (verbatim; for SSE also as `data: ` lines). The
frame's span runs from the first non-newline byte after the previous frame to the end of the match
(so an SSE frame includes its `event:` line). A frame whose text is not found gets the span of all
unlocated bytes and `exact=False`.

Value spans. The `ArgsDelta` texts of each block index are concatenated into the JSON document
being extracted. `_OffsetIndex` scans that document incrementally (structure only: brackets,
strings, scalar runs; keys are decoded, values are not) and records, per JSON Pointer, the
[start, end) character span of its value. Each delta remembers its [start, end) in the document
and, when it can be found in its frame's bytes as a JSON string (escaped the way Python or Go
escape) or verbatim (raw frames), the byte offset where it starts (`anchor`) and the escaping used.
`locate(pointer)` intersects the value's characters with the deltas' characters and maps each
piece to bytes: exactly (per-character escaped lengths from the anchor) when anchored, else the
whole frame. Relay records (anything with a `pointer` attribute) are mapped to their frame
directly: a record for `/line_items/0` carried every byte of `/line_items/0/sku`.
"""

from __future__ import annotations

import json
import re
import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from core.events import ArgsDelta


class ForwardingTap:
    """A WireTap that passes everything on to `inner` (if any); subclasses watch what they need."""

    __slots__ = ("inner",)

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner

    def on_read(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.on_read(data)

    def on_frame(self, kind: str, text: str) -> None:
        if self.inner is not None:
            self.inner.on_frame(kind, text)

    def on_event(self, event: Any) -> None:
        if self.inner is not None:
            self.inner.on_event(event)

__all__ = [
    "ByteSpan",
    "DEFAULT_MAX_BYTES",
    "DropReport",
    "Frame",
    "Read",
    "TappedEvent",
    "ValueLocation",
    "WireRecorder",
    "escape_pointer_token",
]

#: The default memory ceiling of a recorder: 4 MiB of estimated footprint.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024

# Per-object overheads charged on top of payload sizes (bytes). Measured with tracemalloc on
# CPython 3.11 (see tests/core/test_wiretap.py::test_cost_estimate_covers_real_memory) and rounded up.
_READ_OVERHEAD = 200
_FRAME_OVERHEAD = 240
_EVENT_OVERHEAD = 360
_INDEX_ENTRY_COST = 400
_RECORD_POINTER_COST = 120

_BUFFER_CAP = 1 << 20  # most unlocated bytes (and current-frame bytes) kept to search frames in


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

    `start`/`end` is the byte span it came from; `exact` is False when the text could not be
    found in the bytes and the span is every byte since the previous frame.
    """

    index: int
    kind: str
    text: str
    start: int
    end: int
    t: float
    exact: bool

    @property
    def span(self) -> ByteSpan:
        """The frame's bytes as a `ByteSpan`."""
        return ByteSpan(start=self.start, end=self.end)


@dataclass(frozen=True, kw_only=True, slots=True)
class TappedEvent:
    """One event a frame carried.

    `frame` is the index of the frame it came in (None if no frame preceded it), `offset` the
    stream's byte count when it arrived. For an `ArgsDelta`: `doc_start` is where its text begins
    in that block's JSON document; `anchor` the byte offset where its text begins in the frame
    (None if not found) and `escaping` how it is written there ("raw", "json", "ascii", "go").
    """

    index: int
    event: Any
    frame: int | None
    t: float
    offset: int
    doc_start: int | None = None
    anchor: int | None = None
    escaping: str | None = None


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
            return f"all {_size(self.total_bytes)} kept (ceiling {_size(self.max_bytes)})"
        return (
            f"ceiling {_size(self.max_bytes)}: dropped the first {_size(self.bytes)} "
            f"({self.reads:,} reads, {self.frames:,} frames, {self.events:,} events); "
            f"showing bytes {self.first_offset:,}–{self.total_bytes:,}"
        )


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


# --- an indexed ring -------------------------------------------------------------------------

T = TypeVar("T")


class _Ring(Generic[T]):
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
        return self.first + len(self)

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


# --- escaping: how a delta's text is written inside its frame ----------------------------------

_GO_EXTRA = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _esc_json(ch: str) -> str:
    return json.dumps(ch, ensure_ascii=False)[1:-1]


def _esc_ascii(ch: str) -> str:
    return json.dumps(ch)[1:-1]


def _esc_go(ch: str) -> str:
    return _GO_EXTRA.get(ch) or json.dumps(ch, ensure_ascii=False)[1:-1]


def _esc_raw(ch: str) -> str:
    return ch


_ESCAPERS: dict[str, Callable[[str], str]] = {
    "raw": _esc_raw,
    "json": _esc_json,
    "ascii": _esc_ascii,
    "go": _esc_go,
}


def _needle(text: str, escaping: str) -> bytes:
    if escaping == "raw":
        return text.encode("utf-8", "surrogatepass")
    if escaping == "json":
        body = json.dumps(text, ensure_ascii=False)[1:-1]
    elif escaping == "ascii":
        body = json.dumps(text)[1:-1]
    else:
        body = json.dumps(text, ensure_ascii=False)[1:-1]
        for ch, rep in _GO_EXTRA.items():
            body = body.replace(ch, rep)
    return b'"' + body.encode("utf-8", "surrogatepass") + b'"'


def _byte_offsets(text: str, escaping: str) -> list[int]:
    """Cumulative byte offsets of each character of `text` as written with `escaping` (len+1)."""
    esc = _ESCAPERS[escaping]
    out = [0]
    total = 0
    for ch in text:
        total += len(esc(ch).encode("utf-8", "surrogatepass"))
        out.append(total)
    return out


def escape_pointer_token(token: str) -> str:
    """One JSON Pointer reference token, escaped as RFC 6901 says (`~` -> `~0`, `/` -> `~1`)."""
    return token.replace("~", "~0").replace("/", "~1")


# --- the incremental offset index --------------------------------------------------------------

_STR_STOP = re.compile(r'["\\]')
_SCALAR_END = re.compile(r"[\s,\]}]")
_WS = frozenset(" \t\r\n")
_SCALAR_START = frozenset("-0123456789tfn")

# Container/parse states: what the scanner expects next.
_VALUE = 0  # a value (top level, after ':' or after ',' in an array)
_VALUE_OR_CLOSE = 1  # right after '[': a value or ']'
_KEY_OR_CLOSE = 2  # right after '{': a key or '}'
_KEY = 3  # after ',' in an object: a key
_COLON = 4  # after a key
_COMMA_OR_CLOSE = 5  # after a value inside a container
_DONE = 6  # the top-level value has ended


class _OffsetIndex:
    """pointer -> [start, end) character span of its value, for a JSON text fed in pieces."""

    def __init__(self) -> None:
        self.spans: dict[str, list[int | None]] = {}
        self.closed: deque[tuple[int, str]] = deque()  # (end, pointer) in the order values ended
        self.length = 0
        self.broken = False
        # stack entries: [is_object, pointer, key or index]
        self._stack: list[list[Any]] = []
        self._state = _VALUE
        self._in_string = False  # inside a string (key or value)
        self._string_is_key = False
        self._escape = False  # the previous character was a backslash inside a string
        self._key_parts: list[str] = []
        self._open_pointer: str | None = None  # the string/scalar value being scanned
        self._in_scalar = False

    def _value_pointer(self) -> str:
        if not self._stack:
            return ""
        is_obj, pointer, sel = self._stack[-1]
        return f"{pointer}/{escape_pointer_token(sel) if is_obj else sel}"

    def _after_value(self) -> None:
        self._state = _COMMA_OR_CLOSE if self._stack else _DONE

    def feed(self, text: str) -> None:
        base = self.length
        self.length += len(text)
        if self.broken or self._state == _DONE and not self._in_scalar:
            return
        i, n = 0, len(text)
        spans = self.spans
        while i < n:
            if self._in_string:
                if self._escape:
                    if self._string_is_key:
                        self._key_parts.append(text[i])
                    self._escape = False
                    i += 1
                    continue
                m = _STR_STOP.search(text, i)
                if m is None:
                    if self._string_is_key:
                        self._key_parts.append(text[i:])
                    return
                j = m.start()
                if self._string_is_key:
                    self._key_parts.append(text[i:j])
                if text[j] == "\\":
                    if self._string_is_key:
                        self._key_parts.append("\\")
                    self._escape = True
                    i = j + 1
                    continue
                self._in_string = False
                i = j + 1
                if self._string_is_key:
                    try:
                        key = json.loads('"' + "".join(self._key_parts) + '"')
                    except ValueError:
                        self.broken = True
                        return
                    self._key_parts = []
                    self._stack[-1][2] = key
                    self._state = _COLON
                else:
                    spans[self._open_pointer][1] = base + i  # type: ignore[index]
                    self.closed.append((base + i, self._open_pointer))  # type: ignore[arg-type]
                    self._after_value()
                continue
            if self._in_scalar:
                m = _SCALAR_END.search(text, i)
                if m is None:
                    return
                j = m.start()
                spans[self._open_pointer][1] = base + j  # type: ignore[index]
                self.closed.append((base + j, self._open_pointer))  # type: ignore[arg-type]
                self._in_scalar = False
                self._after_value()
                i = j
                continue
            c = text[i]
            if c in _WS:
                i += 1
                continue
            state = self._state
            if state == _DONE:
                return
            if state in (_VALUE, _VALUE_OR_CLOSE) and not (state == _VALUE_OR_CLOSE and c == "]"):
                pointer = self._value_pointer()
                pos = base + i
                if c == "{":
                    spans[pointer] = [pos, None]
                    self._stack.append([True, pointer, None])
                    self._state = _KEY_OR_CLOSE
                elif c == "[":
                    spans[pointer] = [pos, None]
                    self._stack.append([False, pointer, 0])
                    self._state = _VALUE_OR_CLOSE
                elif c == '"':
                    spans[pointer] = [pos, None]
                    self._open_pointer = pointer
                    self._in_string = True
                    self._string_is_key = False
                elif c in _SCALAR_START:
                    spans[pointer] = [pos, None]
                    self._open_pointer = pointer
                    self._in_scalar = True
                else:
                    self.broken = True
                    return
                i += 1
                continue
            if state in (_KEY_OR_CLOSE, _KEY):
                if c == '"':
                    self._in_string = True
                    self._string_is_key = True
                    self._key_parts = []
                    i += 1
                    continue
                if c == "}" and state == _KEY_OR_CLOSE:
                    self._close(base + i)
                    i += 1
                    continue
                self.broken = True
                return
            if state == _COLON:
                if c != ":":
                    self.broken = True
                    return
                self._state = _VALUE
                i += 1
                continue
            # _COMMA_OR_CLOSE, or ']' right after '['
            top = self._stack[-1]
            if c == ",":
                if top[0]:
                    self._state = _KEY
                else:
                    top[2] += 1
                    self._state = _VALUE
            elif c == ("}" if top[0] else "]"):
                self._close(base + i)
            else:
                self.broken = True
                return
            i += 1

    def _close(self, pos: int) -> None:
        _, pointer, _ = self._stack.pop()
        self.spans[pointer][1] = pos + 1
        self.closed.append((pos + 1, pointer))
        self._after_value()

    def prune(self, before: int) -> int:
        """Forget values that ended at or before character `before`; returns how many."""
        gone = 0
        closed, spans = self.closed, self.spans
        while closed and closed[0][0] <= before:
            end, pointer = closed.popleft()
            span = spans.get(pointer)
            if span is not None and span[1] == end:
                del spans[pointer]
                gone += 1
        return gone


# --- the recorder ------------------------------------------------------------------------------


@dataclass
class _Doc:
    index: _OffsetIndex = field(default_factory=_OffsetIndex)
    # (doc_start, doc_end, event index) for every retained ArgsDelta of this block, in order
    deltas: _Ring[tuple[int, int, int]] = field(default_factory=_Ring)


class WireRecorder:
    """Records one stream's reads, frames and events under a memory ceiling (a `WireTap`).

    `max_bytes` is the ceiling on the estimated memory of everything kept (default 4 MiB);
    `clock` gives seconds (monotonic); times are kept relative to `t0` (default: the clock at
    construction, i.e. when the run started). Not thread-safe: feed it from one thread.
    """

    def __init__(
        self,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
        t0: float | None = None,
    ) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self._clock = clock
        self.t0 = clock() if t0 is None else t0
        self._reads: _Ring[Read] = _Ring()
        self._frames: _Ring[Frame] = _Ring()
        self._events: _Ring[TappedEvent] = _Ring()
        self._docs: dict[int, _Doc] = {}
        self._record_pointers: dict[str, list[int]] = {}  # relay record pointer -> frame indices
        self._total = 0
        self._first_offset = 0
        self._tail = bytearray()
        self._tail_offset = 0
        self._frame_bytes = b""
        self._frame_bytes_offset = 0
        self._frame_search = 0  # where in _frame_bytes the next delta is searched from
        # two search buffers (unlocated bytes, the current frame) take up to 1/8 of the ceiling each;
        # the stored reads, frames and events get the rest
        self._buf_cap = max(1, min(_BUFFER_CAP, max_bytes // 8))
        self._budget = max_bytes - 2 * self._buf_cap
        self._cost = 0
        self._drop = {"reads": 0, "bytes": 0, "frames": 0, "events": 0, "pointers": 0}
        self._index_entries = 0
        self.version = 0  # bumps on every change (viewers poll it)

    # -- the WireTap protocol ------------------------------------------------------------------

    def on_read(self, data: bytes) -> None:
        """Record one network read, exactly as received."""
        data = bytes(data)
        read = Read(index=self._reads.next, offset=self._total, t=self._now(), data=data)
        self._reads.append(read)
        self._total += len(data)
        self._cost += len(data) + _READ_OVERHEAD
        self._tail += data
        if len(self._tail) > self._buf_cap:
            cut = len(self._tail) - self._buf_cap
            del self._tail[:cut]
            self._tail_offset += cut
        self.version += 1
        self._enforce()

    def on_frame(self, kind: str, text: str) -> None:
        """Record one frame cut from the bytes read so far."""
        start, end, exact = self._locate_frame(kind, text)
        frame = Frame(
            index=self._frames.next, kind=kind, text=text, start=start, end=end,
            t=self._now(), exact=exact,
        )
        self._frames.append(frame)
        self._cost += _text_cost(text) + _FRAME_OVERHEAD
        self.version += 1
        self._enforce()

    def on_event(self, event: Any) -> None:
        """Record one event, attributed to the most recent frame."""
        frame = self._frames.last().index if len(self._frames) else None
        if frame is None and self._frames.next:
            frame = self._frames.next - 1  # the frame was already dropped
        index = self._events.next
        cost = _EVENT_OVERHEAD
        doc_start = anchor = escaping = None
        if isinstance(event, ArgsDelta):
            doc = self._docs.get(event.index)
            if doc is None:
                doc = self._docs[event.index] = _Doc()
            doc_start = doc.index.length
            before = len(doc.index.spans)
            doc.index.feed(event.text)
            added = len(doc.index.spans) - before
            self._index_entries += added
            cost += _text_cost(event.text) + added * _INDEX_ENTRY_COST
            doc.deltas.append((doc_start, doc_start + len(event.text), index))
            if event.text and frame is not None:
                anchor, escaping = self._anchor(event.text)
        else:
            pointer = _record_pointer(event)
            if pointer is not None and frame is not None:
                self._record_pointers.setdefault(pointer, []).append(frame)
                cost += _RECORD_POINTER_COST
            text = getattr(event, "text", None)
            if isinstance(text, str):
                cost += _text_cost(text)
        self._events.append(
            TappedEvent(
                index=index, event=event, frame=frame, t=self._now(), offset=self._total,
                doc_start=doc_start, anchor=anchor, escaping=escaping,
            )
        )
        self._cost += cost
        self.version += 1
        self._enforce()

    # -- queries --------------------------------------------------------------------------------

    @property
    def total_bytes(self) -> int:
        """Every byte ever fed (retained or dropped)."""
        return self._total

    @property
    def first_offset(self) -> int:
        """The offset of the first retained byte (0 until the ceiling dropped something)."""
        return self._first_offset

    @property
    def cost(self) -> int:
        """The estimated memory of everything retained, in bytes (stays <= max_bytes)."""
        return self._cost + len(self._tail) + len(self._frame_bytes)

    @property
    def dropped(self) -> DropReport:
        """What the ceiling has dropped so far."""
        return DropReport(
            **self._drop, first_offset=self._first_offset, total_bytes=self._total,
            max_bytes=self.max_bytes,
        )

    @property
    def next_read(self) -> int:
        """The index the next read will get (a viewer's cursor)."""
        return self._reads.next

    @property
    def next_frame(self) -> int:
        """The index the next frame will get."""
        return self._frames.next

    @property
    def next_event(self) -> int:
        """The index the next event will get."""
        return self._events.next

    @property
    def first_read(self) -> int:
        """The index of the first retained read."""
        return self._reads.first

    @property
    def first_frame(self) -> int:
        """The index of the first retained frame."""
        return self._frames.first

    @property
    def first_event(self) -> int:
        """The index of the first retained event."""
        return self._events.first

    def reads(self, since: int = 0) -> list[Read]:
        """Retained reads with index >= `since`, oldest first."""
        return self._reads.since(since)

    def frames(self, since: int = 0) -> list[Frame]:
        """Retained frames with index >= `since`, oldest first."""
        return self._frames.since(since)

    def events(self, since: int = 0) -> list[TappedEvent]:
        """Retained events with index >= `since`, oldest first."""
        return self._events.since(since)

    def read(self, index: int) -> Read | None:
        """The retained read `index`, or None."""
        return self._reads.get(index)

    def frame(self, index: int) -> Frame | None:
        """The retained frame `index`, or None."""
        return self._frames.get(index)

    def event(self, index: int) -> TappedEvent | None:
        """The retained event `index`, or None."""
        return self._events.get(index)

    def bytes_view(self) -> bytes:
        """Every retained byte, in order (bytes `first_offset` .. `total_bytes`)."""
        return b"".join(r.data for r in self._reads)

    def boundaries(self) -> list[int]:
        """The stream offset at which each retained read starts."""
        return [r.offset for r in self._reads]

    def read_at(self, offset: int) -> Read | None:
        """The retained read that holds byte `offset`, or None."""
        i = self._reads.bisect(offset, key=lambda r: r.offset)
        r = self._reads.get(i)
        return r if r is not None and offset < r.end else None

    def frame_at(self, offset: int) -> Frame | None:
        """The last retained frame whose span holds byte `offset`, or None."""
        i = self._frames.bisect(offset, key=lambda f: f.start)
        while i >= self._frames.first:
            f = self._frames.get(i)
            if f is not None and f.start <= offset < f.end:
                return f
            if f is not None and f.end <= offset and f.exact:
                return None
            i -= 1
        return None

    def events_of_frame(self, frame: int) -> list[TappedEvent]:
        """The retained events frame `frame` carried."""
        return [e for e in self._events if e.frame == frame]

    def event_span(self, event: TappedEvent) -> ByteSpan | None:
        """The bytes that carried `event`: an anchored delta's own text, else its frame's span."""
        if isinstance(event.event, ArgsDelta) and event.event.text:
            return self._delta_bytes(event, 0, len(event.event.text))
        if event.frame is None:
            return None
        frame = self._frames.get(event.frame)
        return None if frame is None else frame.span

    def document(self, index: int = 0) -> tuple[int, bool] | None:
        """(length, well-formed so far) of block `index`'s JSON document, or None if none."""
        doc = self._docs.get(index)
        return None if doc is None else (doc.index.length, not doc.index.broken)

    def pointers(self, index: int = 0) -> list[str]:
        """Every pointer whose value span is known (document order), then relay record pointers."""
        out: list[str] = []
        doc = self._docs.get(index)
        if doc is not None:
            out.extend(p for p in doc.index.spans if p)
        seen = set(out)
        out.extend(p for p in self._record_pointers if p not in seen)
        return out

    def locate(self, pointer: str, *, index: int = 0) -> ValueLocation | None:
        """The byte spans that carried the value of `pointer` (None if the recorder never saw it)."""
        doc = self._docs.get(index)
        if doc is not None and pointer in doc.index.spans:
            return self._locate_in_doc(doc, pointer)
        return self._locate_in_records(pointer)

    # -- internals ------------------------------------------------------------------------------

    def _now(self) -> float:
        return self._clock() - self.t0

    def _locate_frame(self, kind: str, text: str) -> tuple[int, int, bool]:
        tail = self._tail
        pos = -1
        needle = b""
        for needle in _frame_needles(kind, text):
            if needle:
                pos = tail.find(needle)
                if pos >= 0:
                    break
        if pos < 0:
            start = self._tail_offset
            self._frame_bytes = bytes(tail[-self._buf_cap :])
            self._frame_bytes_offset = self._total - len(self._frame_bytes)
            self._frame_search = 0
            return start, self._total, False
        end_rel = pos + len(needle)
        start_rel = 0
        while start_rel < pos and tail[start_rel] in (10, 13):
            start_rel += 1
        start = self._tail_offset + start_rel
        end = self._tail_offset + end_rel
        keep_from = max(start_rel, end_rel - self._buf_cap)
        self._frame_bytes = bytes(tail[keep_from:end_rel])
        self._frame_bytes_offset = self._tail_offset + keep_from
        self._frame_search = 0
        del tail[:end_rel]
        self._tail_offset += end_rel
        return start, end, True

    def _anchor(self, text: str) -> tuple[int | None, str | None]:
        frame = self._frames.last() if len(self._frames) else None
        if frame is None:
            return None, None
        fb = self._frame_bytes
        order = ("raw", "json", "ascii", "go") if frame.kind == "raw" else ("json", "ascii", "go", "raw")
        for escaping in order:
            needle = _needle(text, escaping)
            pos = fb.find(needle, self._frame_search)
            if pos >= 0:
                inner = 0 if escaping == "raw" else 1
                self._frame_search = pos + len(needle) - inner
                return self._frame_bytes_offset + pos + inner, escaping
        return None, None

    def _locate_in_doc(self, doc: _Doc, pointer: str) -> ValueLocation:
        v_start, v_end = doc.index.spans[pointer]
        hi = doc.index.length if v_end is None else v_end
        spans: list[ByteSpan] = []
        missing = False
        deltas = doc.deltas
        if not len(deltas) or deltas.peek()[0] > v_start:
            missing = v_start < hi  # the value's first characters came in dropped deltas
        i = max(deltas.first, deltas.bisect(v_start, key=lambda d: d[0]))
        while i < deltas.next:
            d = deltas.get(i)
            i += 1
            if d is None:
                continue
            d_start, d_end, ev_index = d
            if d_start >= hi:
                break
            a, b = max(d_start, v_start), min(d_end, hi)
            if a >= b:
                continue
            ev = self._events.get(ev_index)
            span = None if ev is None else self._delta_bytes(ev, a - d_start, b - d_start)
            if span is None:
                missing = True
            elif span.start < self._first_offset:
                missing = True
                if span.end > self._first_offset:
                    spans.append(ByteSpan(start=self._first_offset, end=span.end))
            else:
                spans.append(span)
        return ValueLocation(
            pointer=pointer, chars=(v_start, v_end), spans=_merge(spans),
            complete=v_end is not None, partly_dropped=missing,
        )

    def _delta_bytes(self, ev: TappedEvent, a: int, b: int) -> ByteSpan | None:
        if ev.anchor is not None and ev.escaping is not None:
            text = ev.event.text
            if a == 0 and b == len(text):
                size = len(_needle(text, ev.escaping)) - (0 if ev.escaping == "raw" else 2)
                return ByteSpan(start=ev.anchor, end=ev.anchor + size)
            cum = _byte_offsets(text, ev.escaping)
            return ByteSpan(start=ev.anchor + cum[a], end=ev.anchor + cum[b])
        if ev.frame is None:
            return None
        frame = self._frames.get(ev.frame)
        return None if frame is None else frame.span

    def _locate_in_records(self, pointer: str) -> ValueLocation | None:
        hits: list[int] = []
        found = False
        for rec_pointer, frames in self._record_pointers.items():
            if _related(rec_pointer, pointer):
                found = True
                hits.extend(frames)
        if not found:
            return None
        spans: list[ByteSpan] = []
        missing = False
        for fi in sorted(set(hits)):
            f = self._frames.get(fi)
            if f is None:
                missing = True
            else:
                spans.append(f.span)
        return ValueLocation(
            pointer=pointer, chars=None, spans=_merge(spans), complete=True, partly_dropped=missing
        )

    def _enforce(self) -> None:
        if self._cost <= self._budget:
            return
        reads, frames, events = self._reads, self._frames, self._events
        while self._cost > self._budget:
            if len(reads) > 1:
                r = reads.popleft()
                self._cost -= len(r.data) + _READ_OVERHEAD
                self._drop["reads"] += 1
                self._drop["bytes"] += len(r.data)
                self._first_offset = r.end
                while len(frames) and frames.peek().end <= self._first_offset:
                    self._drop_frame()  # frames wholly inside dropped bytes go too
                self._drop_orphan_events()
            elif len(frames) > 1:
                self._drop_frame()
                self._drop_orphan_events()
            elif len(events) > 1:
                self._drop_event()
            elif len(reads) == 1 and len(reads.peek().data) > self._budget // 2:
                # one huge read is all that is left: keep its tail only
                r = reads.peek()
                keep = self._budget // 2
                cut = len(r.data) - keep
                reads.replace_first(Read(index=r.index, offset=r.offset + cut, t=r.t, data=r.data[cut:]))
                self._cost -= cut
                self._drop["bytes"] += cut
                self._first_offset = r.offset + cut
            else:
                break

    def _drop_frame(self) -> None:
        f = self._frames.popleft()
        self._cost -= _text_cost(f.text) + _FRAME_OVERHEAD
        self._drop["frames"] += 1

    def _drop_orphan_events(self) -> None:
        events = self._events
        first_frame = self._frames.first
        while len(events):
            e = events.peek()
            if e.frame is not None and e.frame >= first_frame:
                break
            if e.frame is None and e.offset > self._first_offset:
                break
            self._drop_event()

    def _drop_event(self) -> None:
        e = self._events.popleft()
        cost = _EVENT_OVERHEAD
        ev = e.event
        text = getattr(ev, "text", None)
        if isinstance(text, str):
            cost += _text_cost(text)
        if isinstance(ev, ArgsDelta):
            doc = self._docs.get(ev.index)
            if doc is not None and len(doc.deltas) and doc.deltas.peek()[2] == e.index:
                doc.deltas.popleft()
                # values that ended before the first retained delta have no bytes left
                horizon = doc.deltas.peek()[0] if len(doc.deltas) else doc.index.length
                gone = doc.index.prune(horizon)
                self._index_entries -= gone
                cost += gone * _INDEX_ENTRY_COST
                self._drop["pointers"] += gone
        else:
            pointer = _record_pointer(ev)
            frames = self._record_pointers.get(pointer) if pointer is not None else None
            if frames is not None and e.frame is not None and e.frame in frames:
                cost += _RECORD_POINTER_COST
                frames.remove(e.frame)
                if not frames:
                    del self._record_pointers[pointer]  # type: ignore[arg-type]
                    self._drop["pointers"] += 1
        self._cost -= cost
        self._drop["events"] += 1


def _text_cost(text: str) -> int:
    return len(text) if text.isascii() else 4 * len(text)


def _frame_needles(kind: str, text: str) -> Iterator[bytes]:
    yield text.encode("utf-8", "surrogatepass")
    if kind == "sse" and not text.startswith(("data:", "event:", "id:", "retry:", ":")):
        lines = text.split("\n")
        yield "\n".join("data: " + line for line in lines).encode("utf-8", "surrogatepass")
        yield "\n".join("data:" + line for line in lines).encode("utf-8", "surrogatepass")
    if "\n" in text:
        yield text[text.rfind("\n") + 1 :].encode("utf-8", "surrogatepass")


def _record_pointer(event: Any) -> str | None:
    pointer = getattr(event, "pointer", None)
    if not isinstance(pointer, str):
        return None
    idx = getattr(event, "index", None)
    if getattr(event, "type", None) == "item" and isinstance(idx, int):
        return f"{pointer}/{idx}"
    return pointer


def _related(a: str, b: str) -> bool:
    """True if pointer a is b, or an ancestor or a descendant of b."""
    return a == b or b.startswith(a + "/") or a.startswith(b + "/")


def _merge(spans: list[ByteSpan]) -> tuple[ByteSpan, ...]:
    out: list[ByteSpan] = []
    for s in sorted(spans, key=lambda s: s.start):
        if out and s.start <= out[-1].end:
            if s.end > out[-1].end:
                out[-1] = ByteSpan(start=out[-1].start, end=s.end)
        else:
            out.append(s)
    return tuple(out)
