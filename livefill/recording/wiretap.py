"""A bounded recorder of one stream's wire: raw reads, the frames cut from them, the events they carried.

`WireRecorder` is a `livefill.wire.taps.WireTap`: hand it to `open_stream(request, tap=recorder)` (or to
`open_relay`) and it keeps

- every network read exactly as received, with its byte offset in the stream and its arrival time
  (so every read boundary is known),
- every frame (an SSE event, an NDJSON line, a raw chunk) with the byte span its framer reported,
- every event the frames carried (`ArgsDelta`, `Stop`, relay records ...) with the frame it came in,

and answers "which bytes carried the value of `/customer_name`?" (`locate`). It is Qt-free and does
no IO; the wire inspector widget renders it. The records it answers with live in
livefill/recording/wire_records.py, the position arithmetic in livefill/recording/wire_positions.py.

A run read in a worker process runs the recorder there with a `journal`; the app's recorder
`adopt`s it: the same records and answers, without parsing (docs/notes/run-worker.md).

Everything kept is charged an estimated cost and the oldest is dropped past the budget (counted
in `dropped`); how, and how `locate` maps a value's characters to bytes: docs/notes/wire-recorder.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from livefill.wire.events import ArgsDelta
from livefill.wire.taps import WireFrame, arrival
from livefill.recording.wire_positions import DocumentSpans, FrameLiterals, record_pointer, related
from livefill.recording.wire_records import (
    DEFAULT_MAX_BYTES, DOC_CHAR_COST, EVENT_OVERHEAD, INDEX_ENTRY_COST, READ_OVERHEAD, RECORD_POINTER_COST,
    ByteSpan, DropReport, Frame, Read, Ring, TappedEvent, ValueLocation, frame_cost, merge_spans, text_cost,
)

__all__ = ["ByteSpan", "DEFAULT_MAX_BYTES", "DropReport", "Frame", "Read", "TappedEvent", "ValueLocation", "WireRecorder"]

_FEED, _NOTE = object(), object()  # how `_add_event` feeds a delta to its document


@dataclass
class _Doc:
    index: DocumentSpans
    cost: int = 0  # what its parser holds (charged to the recorder's document share)
    # (doc_start, doc_end, event index) for every retained ArgsDelta of this block, in order
    deltas: Ring[tuple[int, int, int]] = field(default_factory=Ring)


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
        self._reads: Ring[Read] = Ring()
        self._frames: Ring[Frame] = Ring()
        self._events: Ring[TappedEvent] = Ring()
        self._docs: dict[int, _Doc] = {}
        self._record_pointers: dict[str, list[int]] = {}  # relay record pointer -> frame indices
        literals = max(1, max_bytes // 4096)  # cached literal positions: under 1/12 of the ceiling
        self._literals = FrameLiterals(literals)
        self._carried = 0  # ArgsDeltas of the last frame so far (its n-th carrier is the next one's)
        self._total = 0
        self._first_offset = 0
        # the documents being indexed (their parsers keep the values they build) get up to 1/4
        # of the ceiling, charged as they grow, and the literal cache its fixed share; the stored
        # reads, frames and events get the rest
        self._doc_cap = max(1, max_bytes // (4 * DOC_CHAR_COST))
        self._budget = max(1, max_bytes - max_bytes // 4 - FrameLiterals.ENTRY_COST * literals)
        self._doc_cost = 0
        self._cost = 0
        self._drop = {"reads": 0, "bytes": 0, "frames": 0, "events": 0, "pointers": 0}
        self._index_entries = 0
        self.version = 0  # bumps on every change (viewers poll it)
        # what was recorded, for a copy to `adopt` (a run read in a worker process): None, or a
        # list the recorder appends to ("r", data, arrival), ("f", frame, t), ("e", event, t, effect)
        self.journal: list[tuple[Any, ...]] | None = None
        self._copy = False  # told by `adopt`: its documents are not parsed here

    # -- the WireTap protocol ------------------------------------------------------------------

    def on_read(self, data: bytes) -> None:
        """Record one network read, exactly as received."""
        at = arrival(self._clock)
        if self.journal is not None:
            self.journal.append(("r", data, at))
        self._add_read(bytes(data), at - self.t0)

    def on_frame(self, frame: WireFrame) -> None:
        """Record one frame cut from the bytes read so far (its span as the framer reported it)."""
        t = self._now()
        if self.journal is not None:
            self.journal.append(("f", frame, t))
        self._add_frame(frame, t)

    def on_event(self, event: Any) -> None:
        """Record one event, attributed to the most recent frame."""
        t = self._now()
        if self.journal is None:
            self._add_event(event, t, _FEED)
            return
        self.journal.append(("e", event, t, self._add_event(event, t, _NOTE)))

    def adopt(self, journal: Iterable[tuple[Any, ...]]) -> None:
        """Record what another recorder with the same t0 and max_bytes recorded (its `journal`):
        the same records, drops and answers, without parsing the documents again. A recorder
        that adopts is only ever told this way."""
        self._copy = True
        for item in journal:
            kind = item[0]
            if kind == "e":
                self._add_event(item[1], item[2], item[3])
            elif kind == "r":
                self._add_read(bytes(item[1]), item[2] - self.t0)
            else:
                self._add_frame(item[1], item[2])

    def _add_read(self, data: bytes, t: float) -> None:
        self._reads.append(Read(index=self._reads.next, offset=self._total, t=t, data=data))
        self._total += len(data)
        self._cost += len(data) + READ_OVERHEAD
        self.version += 1
        if self._cost > self._budget:
            self._enforce()

    def _add_frame(self, frame: WireFrame, t: float) -> None:
        self._frames.append(
            Frame(
                index=self._frames.next, kind=frame.kind, text=frame.text, start=frame.start,
                end=frame.end, t=t, wire=frame,
            )
        )
        self._carried = 0
        self._cost += frame_cost(frame)
        self.version += 1
        if self._cost > self._budget:
            self._enforce()

    def _add_event(self, event: Any, t: float, effect: Any) -> Any:
        """Record `event`; a delta's document is fed (`_FEED`), fed and its effect returned
        (`_NOTE`), or told the effect the original's feed had (anything else: `adopt`)."""
        frames = self._frames
        frame = frames.next - 1 if frames.next else None  # the latest frame (perhaps already dropped)
        index = self._events.next
        cost = EVENT_OVERHEAD
        doc_start = carrier = None
        carried = False
        if isinstance(event, ArgsDelta):
            doc = self._docs.get(event.index)
            if doc is None:
                doc = self._docs[event.index] = _Doc(DocumentSpans(self._doc_cap, parse=not self._copy))
            doc_start = doc.index.length
            if effect is _FEED:
                added = doc.index.feed(event.text)
            elif effect is _NOTE:
                added, effect = doc.index.feed_noting(event.text)
            else:
                added = doc.index.replay(len(event.text), effect)
            if doc.index.parsing:
                doc.cost += DOC_CHAR_COST * len(event.text)
                self._doc_cost += DOC_CHAR_COST * len(event.text)
            elif doc.cost:  # its parser was let go, and the values it held with it
                self._doc_cost -= doc.cost
                doc.cost = 0
            self._index_entries += added
            cost += text_cost(event.text) + added * INDEX_ENTRY_COST
            doc.deltas.append((doc_start, doc_start + len(event.text), index))
            carriers = frames.last().wire.carriers if len(frames) else ()
            if self._carried < len(carriers):
                carried, carrier = True, carriers[self._carried]
                self._carried += 1
        else:
            effect = None
            pointer = record_pointer(event)
            if pointer is not None and frame is not None:
                self._record_pointers.setdefault(pointer, []).append(frame)
                cost += RECORD_POINTER_COST
            text = getattr(event, "text", None)
            if isinstance(text, str):
                cost += text_cost(text)
        self._events.append(
            TappedEvent(
                index=index, event=event, frame=frame, t=t, offset=self._total,
                doc_start=doc_start, carried=carried, carrier=carrier,
            )
        )
        self._cost += cost
        self.version += 1
        if self._cost > self._budget:
            self._enforce()
        return None if effect is _FEED else effect

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
        return self._cost + self._doc_cost

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
        """The retained frame whose span holds byte `offset`, or None."""
        f = self._frames.get(self._frames.bisect(offset, key=lambda f: f.start))
        return f if f is not None and f.start <= offset < f.end else None

    def events_of_frame(self, frame: int) -> list[TappedEvent]:
        """The retained events frame `frame` carried."""
        return [e for e in self._events if e.frame == frame]

    def event_span(self, event: TappedEvent) -> ByteSpan | None:
        """The bytes that carried `event`: a delta's own text in its frame, else its frame's span."""
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
            pointer=pointer, chars=(v_start, v_end), spans=merge_spans(spans),
            complete=v_end is not None, partly_dropped=missing,
        )

    def _delta_bytes(self, ev: TappedEvent, a: int, b: int) -> ByteSpan | None:
        """The bytes of characters [a, b) of the delta `ev` (None if its frame was dropped); the
        whole frame if the frame did not say where the delta sits in it."""
        if ev.frame is None:
            return None
        frame = self._frames.get(ev.frame)
        if frame is None:
            return None
        if ev.carried:
            wire = frame.wire
            chars = self._literals.char_span(frame.index, wire, ev.carrier, a, b, len(ev.event.text))
            if chars is not None:
                return ByteSpan(start=wire.payload_byte(chars[0]), end=wire.payload_byte(chars[1]))
        return frame.span

    def _locate_in_records(self, pointer: str) -> ValueLocation | None:
        hits: list[int] = []
        found = False
        for rec_pointer, frames in self._record_pointers.items():
            if related(rec_pointer, pointer):
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
            pointer=pointer, chars=None, spans=merge_spans(spans), complete=True, partly_dropped=missing
        )

    def _enforce(self) -> None:
        if self._cost <= self._budget:
            return
        reads, frames, events = self._reads, self._frames, self._events
        while self._cost > self._budget:
            if len(reads) > 1:
                r = reads.popleft()
                self._cost -= len(r.data) + READ_OVERHEAD
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
        self._cost -= frame_cost(f.wire)
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
        cost = EVENT_OVERHEAD
        ev = e.event
        text = getattr(ev, "text", None)
        if isinstance(text, str):
            cost += text_cost(text)
        if isinstance(ev, ArgsDelta):
            doc = self._docs.get(ev.index)
            if doc is not None and len(doc.deltas) and doc.deltas.peek()[2] == e.index:
                doc.deltas.popleft()
                # values that ended before the first retained delta have no bytes left
                horizon = doc.deltas.peek()[0] if len(doc.deltas) else doc.index.length
                gone = doc.index.prune(horizon)
                self._index_entries -= gone
                cost += gone * INDEX_ENTRY_COST
                self._drop["pointers"] += gone
        else:
            pointer = record_pointer(ev)
            frames = self._record_pointers.get(pointer) if pointer is not None else None
            if frames is not None and e.frame is not None and e.frame in frames:
                cost += RECORD_POINTER_COST
                frames.remove(e.frame)
                if not frames:
                    del self._record_pointers[pointer]  # type: ignore[arg-type]
                    self._drop["pointers"] += 1
        self._cost -= cost
        self._drop["events"] += 1

