"""A WireRecorder that adopts another's journal ends up as the other: a run read in a worker process
runs the lane's recorder there and the app's recorder adopts what it recorded, without parsing.

Every answer the wire inspector asks for (reads, frames, events with their times, locate(), the
drop report, the cost) is compared on streams that overflow small ceilings, break, repeat keys,
outgrow the indexed document and carry relay records.
"""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass
from typing import Any

import pytest

from livefill.recording.wire_positions import DocumentSpans
from livefill.recording.wiretap import WireRecorder
from livefill.wire.events import ArgsDelta
from tests.recording.test_wiretap import (
    TRICKY,
    _clock,
    anthropic_wire,
    ndjson_wire,
    play,
    random_cuts,
    raw_chunks,
    split_text,
    text_frame,
)


def recorder_facts(rec: WireRecorder, pointers: list[str] = (), *, times: bool = True) -> dict[str, Any]:
    """Everything the wire inspector reads of a recorder (`times`: with the frames' and events'
    times, which a worker notes when it cut them)."""
    t = (lambda x: x.t) if times else (lambda x: None)
    asked = list(dict.fromkeys([*rec.pointers(), *pointers, "/nope"]))
    return {
        "reads": [(r.index, r.offset, r.t, r.data) for r in rec.reads()],
        "frames": [(f.index, f.kind, f.text, f.start, f.end, t(f), f.wire) for f in rec.frames()],
        "events": [(e.index, e.event, e.frame, t(e), e.offset, e.doc_start, e.carried, e.carrier) for e in rec.events()],
        "firsts": (rec.first_read, rec.first_frame, rec.first_event, rec.first_offset, rec.total_bytes),
        "nexts": (rec.next_read, rec.next_frame, rec.next_event),
        "dropped": rec.dropped,
        "cost": rec.cost,
        "version": rec.version,
        "documents": [rec.document(i) for i in range(3)],
        "pointers": rec.pointers(),
        "located": {p: rec.locate(p) for p in asked},
        "spans": [rec.event_span(e) for e in rec.events()],
    }


def adopted(original: WireRecorder, journal: list[tuple[Any, ...]], cuts: int = 3) -> WireRecorder:
    """A copy of `original` told its journal in `cuts` batches, each through pickle (as the pipe)."""
    copy = WireRecorder(t0=original.t0, max_bytes=original.max_bytes)
    size = max(1, len(journal) // cuts)
    for at in range(0, len(journal), size):
        copy.adopt(pickle.loads(pickle.dumps(tuple(journal[at:at + size]))))
    return copy


DOCUMENTS = {
    "tricky": TRICKY,
    "broken": '{"a": "x", "b": [1, 2}, "c": "never"}',
    "duplicate keys": '{"a": "first value", "b": 1, "a": {"deep": "second"}, "a": "third"}',
    "two documents": '{"a": "one"}{"b": "two"}',
    "long": '{"items": [' + ", ".join(f'{{"n": {i}, "s": "item {i} é"}}' for i in range(300)) + "]}",
}


@pytest.mark.parametrize("name", list(DOCUMENTS))
@pytest.mark.parametrize("wire_of", [anthropic_wire, ndjson_wire, raw_chunks], ids=["sse", "ndjson", "raw"])
@pytest.mark.parametrize("max_bytes", [4 * 1024 * 1024, 40_000, 6_000])
def test_a_recorder_that_adopts_the_journal_answers_as_the_original(name, wire_of, max_bytes):
    rng = random.Random(f"{name}{max_bytes}")
    text = DOCUMENTS[name]
    wire = wire_of(split_text(text, rng))
    original = WireRecorder(max_bytes=max_bytes, clock=_clock(), t0=0.0)
    journal: list[tuple[Any, ...]] = []
    original.journal = journal
    play(original, wire, random_cuts(len(wire.data), rng))
    copy = adopted(original, journal)
    assert recorder_facts(copy, ["/items/3/s", "/a"]) == recorder_facts(original, ["/items/3/s", "/a"])
    assert len(journal) == original.next_read + original.next_frame + original.next_event
    if name == "long" and max_bytes < 10_000:
        assert original.dropped.any and original.document()[0] == len(text)
        assert not original._docs[0].index.parsing  # the document outgrew its share: no new pointers


def test_a_recorder_that_adopts_does_not_parse_its_documents(monkeypatch):
    wire = anthropic_wire(split_text(TRICKY, random.Random(1)))
    original = WireRecorder(clock=_clock(), t0=0.0)
    journal: list[tuple[Any, ...]] = []
    original.journal = journal
    play(original, wire, random_cuts(len(wire.data), random.Random(2)))
    fed = []
    feed = DocumentSpans.feed
    monkeypatch.setattr(DocumentSpans, "feed", lambda self, text: (fed.append(text), feed(self, text))[1])
    copy = adopted(original, journal)
    assert fed == [] and copy.pointers() == original.pointers() and len(copy.pointers()) > 10
    assert copy.locate("/name") == original.locate("/name") and original.locate("/name").spans


def test_relay_records_are_adopted_with_their_pointers():
    @dataclass(frozen=True)
    class Field:
        pointer: str
        value: Any
        type: str = "field"

    @dataclass(frozen=True)
    class Item:
        pointer: str
        index: int
        value: Any
        type: str = "item"

    original = WireRecorder(max_bytes=8_000, clock=_clock(), t0=0.0)
    journal: list[tuple[Any, ...]] = []
    original.journal = journal
    at = 0
    for i in range(60):
        text, event = (f'{{"seq":{i},"type":"field","pointer":"/f{i % 7}","value":{i}}}', Field(f"/f{i % 7}", i))
        if i % 3 == 0:
            text, event = f'{{"seq":{i},"type":"item","pointer":"/items","index":{i}}}', Item("/items", i, {"n": i})
        original.on_read(text.encode() + b"\n")
        original.on_frame(text_frame("ndjson", text, at))
        original.on_event(event)
        at += len(text) + 1
    copy = WireRecorder(t0=0.0, max_bytes=8_000)
    copy.adopt(journal)
    pointers = ["/f1", "/items", "/items/57", "/items/0"]
    assert recorder_facts(copy, pointers) == recorder_facts(original, pointers)
    assert original.dropped.any and "/items/57" in original.pointers()


def test_the_journal_of_a_delta_says_only_what_changed_its_spans():
    """Most deltas only lengthen a value: their journal entry carries no span change."""
    original = WireRecorder(clock=_clock(), t0=0.0)
    journal: list[tuple[Any, ...]] = []
    original.journal = journal
    text = '{"name": "' + "x" * 200 + '", "n": 1}'
    original.on_frame(text_frame("raw", text, 0, (None,) * len(text)))
    for ch in text:
        original.on_event(ArgsDelta(text=ch))
    effects = [item[3] for item in journal if item[0] == "e"]
    assert len(effects) == len(text) and sum(e is not None for e in effects) < 10
