"""Which network read carried the byte that settled each value, and when that read arrived.

The first half of the byte-to-pixel latency (`livefill.session.metrics.LaneMetrics.painted` is the second):
`SettleReads` is a `livefill.wire.taps.WireTap` that notes, for every value of a stream that settles, the
arrival time (on `clock`) of the read holding its settling byte — a string's closing quote, a
literal's last letter, a container's closing bracket, the delimiter after a number; for a relay
`field` or `item` record, the newline that ends its line (the client has the value only then).

How this works
--------------
Reads are kept as (stream offset, arrival time). Provider streams: the `ArgsDelta` texts of the
first block are fed to a `livefill.extraction.prefix.PrefixParser` as they come; a value settles in the delta
whose text holds its settling character (the parser reports it while that delta is fed), and that
delta came in the frame the tap was told about last. If the frame lies inside one read, that read
carried the byte; otherwise the character's byte is found exactly as the wire inspector finds a
value's bytes (`livefill.recording.wire_positions.FrameLiterals` → payload offset → `WireFrame.payload_byte`).
Settling bytes always lie in the latest frame, so reads before it are let go. A document that
cannot be parsed (or a second document) stops the noting; `time_of` then answers None.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from livefill.wire.events import ArgsDelta
from livefill.extraction.prefix import PrefixParser, ValueState
from livefill.wire.taps import WireFrame, arrival
from livefill.recording.wire_positions import FrameLiterals, record_pointer

__all__ = ["SettleReads"]

_SETTLED = ValueState.SETTLED
_SETTLING_RECORDS = ("field", "item")
_MAX_POINTERS = 200_000


class SettleReads:
    """A WireTap: `time_of(pointer)` is when the read carrying the value's settling byte arrived."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._starts: list[int] = []  # stream offset where each kept read begins
        self._times: list[float] = []
        self._offset = 0
        self._frame: WireFrame | None = None
        self._frames = 0
        self._carrier = 0  # which ArgsDelta of the latest frame comes next
        self._parser: PrefixParser | None = PrefixParser()
        self._block: int | None = None
        self._chars = 0  # characters of the document fed so far
        self._literals = FrameLiterals(size=8)
        self.times: dict[str, float] = {}

    # -- the tap ----------------------------------------------------------------------------

    def on_read(self, data: bytes) -> None:
        self._starts.append(self._offset)
        self._times.append(arrival(self._clock))
        self._offset += len(data)

    def on_frame(self, frame: WireFrame) -> None:
        self._frame = frame
        self._frames += 1
        self._carrier = 0
        first = bisect_right(self._starts, frame.start) - 1
        if first > 256:  # reads wholly before this frame can carry nothing that settles later
            del self._starts[:first]
            del self._times[:first]

    def on_event(self, event: Any) -> None:
        if isinstance(event, ArgsDelta):
            carrier_index = self._carrier
            self._carrier += 1
            self._delta(event, carrier_index)
            return
        if getattr(event, "type", None) in _SETTLING_RECORDS and self._frame is not None:
            pointer = record_pointer(event)
            if pointer is not None and len(self.times) < _MAX_POINTERS:
                # the line is whole (and the record usable) once the byte after it (its newline) is in
                self.times[pointer] = self._time_at(min(self._frame.end, self._offset - 1))

    # -- answers ----------------------------------------------------------------------------

    def time_of(self, pointer: str) -> float | None:
        """When the read that carried `pointer`'s settling byte arrived (None: not known). A value
        inside a relay `item` record settled with its record."""
        times = self.times
        p = pointer
        while True:
            t = times.get(p)
            if t is not None:
                return t
            if not p:
                return None
            p = p.rsplit("/", 1)[0]

    # -- internals --------------------------------------------------------------------------

    def _delta(self, delta: ArgsDelta, carrier_index: int) -> None:
        parser = self._parser
        if parser is None:
            return
        if self._block is None:
            self._block = delta.index
        elif delta.index != self._block:
            return  # one document is extracted
        start = self._chars
        text = delta.text
        self._chars += len(text)
        try:
            changes = parser.feed(text)
        except Exception:  # noqa: BLE001 - not JSON (the run says so): nothing more to note
            self._parser = None
            return
        frame = self._frame
        if frame is None:
            return
        times = self.times
        whole: float | None = None  # the frame's read, if the frame lies inside one read
        for change in changes:
            if change.state is not _SETTLED or change.span is None:
                continue
            a, b = change.span
            value = change.value
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            k = (b if number else b - 1) - start  # the settling character, in this delta's text
            if whole is None:
                whole = self._frame_time(frame)
            t = whole if whole >= 0 else self._char_time(frame, carrier_index, k, text)
            if len(times) < _MAX_POINTERS or change.pointer in times:
                times[change.pointer] = t

    def _frame_time(self, frame: WireFrame) -> float:
        """The arrival time of the one read holding all of `frame`, or -1 if several hold it."""
        starts = self._starts
        i = bisect_right(starts, frame.start) - 1
        j = bisect_right(starts, max(frame.start, frame.end - 1)) - 1
        if i == j and i >= 0:
            return self._times[i]
        return -1.0

    def _char_time(self, frame: WireFrame, carrier_index: int, k: int, text: str) -> float:
        carriers = frame.carriers
        carrier = carriers[carrier_index] if carrier_index < len(carriers) else None
        k = min(max(k, 0), len(text) - 1)
        span = self._literals.char_span(self._frames, frame, carrier, k, k + 1, len(text))
        if span is None:  # the frame does not hold it as expected: its last byte is the latest
            return self._time_at(frame.end - 1)
        return self._time_at(frame.payload_byte(span[1]) - 1)

    def _time_at(self, offset: int) -> float:
        i = bisect_right(self._starts, offset) - 1
        return self._times[max(i, 0)] if self._times else self._clock()
