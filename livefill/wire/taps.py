"""The one observer shape of a stream's wire (`WireTap`), the frame it is told about, and a tee.

A stream (livefill.wire.providers' `EventStream`, livefill.relay.client's `RelayStream`) tells its optional
tap, in order: every network read as received (`on_read`), every frame cut from those bytes
(`on_frame`, a `WireFrame` that knows its byte span), and every event or record that frame
carried (`on_event`). The frame is reported after its events were decoded when decoding
succeeds (so it can say where each delta's text sits in it), and before the failure is raised
when it does not; either way a frame is always told before its events.

`WireFrame` positions: `start`/`end` is the frame's byte span in the response body. `payload`
is what the vocabulary decoded (an SSE event's data, an NDJSON line, a raw text piece) and
`segments` says where it was written: `payload[c:]` up to the next segment's character offset
was written contiguously, in UTF-8, from byte `b` for each `(c, b)` (an SSE event with several
data lines has one segment per line; the LF that joins them stands for the line's ending).
Offsets are exact for valid UTF-8 (NDJSON and raw frames are decoded strictly); an SSE character
that stood for invalid bytes (U+FFFD) is counted as its own 3-byte encoding.
`carriers` names, for each `ArgsDelta` the frame carried (in order), the JSON Pointer inside the
payload of the string whose decoded text is that delta (None: the payload itself, verbatim).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from livefill.wire.sse import ServerSentEvent

__all__ = ["ReadWatch", "Tee", "WireFrame", "WireTap", "arrival", "arriving", "sse_frame", "tee", "text_frame"]


@dataclass(frozen=True, kw_only=True, slots=True)
class WireFrame:
    """One frame cut from the bytes: `kind` "sse" / "ndjson" / "raw", `text` as shown (SSE as its
    lines), byte span `[start, end)`, and where its payload's characters lie (see the top)."""

    kind: str
    text: str
    start: int
    end: int
    payload: str
    segments: tuple[tuple[int, int], ...]
    carriers: tuple[str | None, ...] = ()

    def payload_byte(self, offset: int) -> int:
        """The byte offset in the stream where payload character `offset` begins (or, at the end
        of a segment, just past the segment's last byte)."""
        seg_char, seg_byte = self.segments[0]
        for c, b in self.segments[1:]:
            if c > offset:
                break
            seg_char, seg_byte = c, b
        piece = self.payload[seg_char:offset]
        return seg_byte + (len(piece) if piece.isascii() else len(piece.encode("utf-8", "surrogatepass")))


class WireTap(Protocol):
    """An optional observer of one stream (the wire inspector, a byte counter). Called in order."""

    def on_read(self, data: bytes) -> None:
        """Each network read, exactly as received."""

    def on_frame(self, frame: WireFrame) -> None:
        """Each frame cut from the reads so far."""

    def on_event(self, event: Any) -> None:
        """Each unified event (or relay record) the last frame carried (ProviderError included,
        before it is raised)."""


def sse_frame(event: ServerSentEvent, carriers: tuple[str | None, ...] = ()) -> WireFrame:
    """The WireFrame of one SSE event (its text rendered as `event:` / `data:` lines)."""
    lines = event.data.split("\n")
    head = [] if event.event == "message" else [f"event: {event.event}"]
    text = "\n".join(head + ["data: " + line for line in lines])
    segments: list[tuple[int, int]] = []
    at = 0
    for line, byte in zip(lines, event.data_starts):
        segments.append((at, byte))
        at += len(line) + 1
    return WireFrame(
        kind="sse", text=text, start=event.start, end=event.end, payload=event.data,
        segments=tuple(segments) or ((0, event.start),), carriers=carriers,
    )


def text_frame(kind: str, text: Any, carriers: tuple[str | None, ...] = ()) -> WireFrame:
    """The WireFrame of a text frame written contiguously (an `NDJSONLine`: NDJSON or raw)."""
    plain = str(text)
    return WireFrame(
        kind=kind, text=plain, start=text.start, end=text.end, payload=plain,
        segments=((0, text.start),), carriers=carriers,
    )


class Tee:
    """A WireTap that tells each of its taps everything, in the order given."""

    __slots__ = ("taps",)

    def __init__(self, *taps: WireTap) -> None:
        self.taps = taps

    def on_read(self, data: bytes) -> None:
        for t in self.taps:
            t.on_read(data)

    def on_frame(self, frame: WireFrame) -> None:
        for t in self.taps:
            t.on_frame(frame)

    def on_event(self, event: Any) -> None:
        for t in self.taps:
            t.on_event(event)


_arrival = threading.local()


@contextmanager
def arriving(at: float) -> Iterator[None]:
    """Within the block, `arrival(time.monotonic)` is `at`: a read taken on another thread (livefill.wire.net_thread)
    and told to the taps later keeps the time it arrived."""
    before = getattr(_arrival, "at", None)
    _arrival.at = at
    try:
        yield
    finally:
        _arrival.at = before


def arrival(clock: Callable[[], float]) -> float:
    """When the read being told arrived, on `clock`: now, unless it arrived earlier on the
    monotonic clock (`arriving`); a tap on any other clock (a test's) always gets `clock()`."""
    at = getattr(_arrival, "at", None)
    return at if at is not None and clock is time.monotonic else clock()


def tee(*taps: WireTap | None) -> WireTap | None:
    """One tap telling every given tap (None entries skipped): None, the tap itself, or a Tee."""
    present = tuple(t for t in taps if t is not None)
    if not present:
        return None
    return present[0] if len(present) == 1 else Tee(*present)


class ReadWatch:
    """A WireTap that counts the bytes read and notes when the last read arrived (`clock`)."""

    __slots__ = ("bytes", "last_read", "_clock")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.bytes = 0
        self.last_read = clock()

    def on_read(self, data: bytes) -> None:
        self.bytes += len(data)
        self.last_read = arrival(self._clock)

    def on_frame(self, frame: WireFrame) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass
