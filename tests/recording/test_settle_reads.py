"""SettleReads: the read that carried each value's settling byte, under any cutting of the wire."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livefill.extraction.scenarios import get_scenario
from livefill.recording.settle_reads import SettleReads
from tests.extraction.json_spans import reference_spans
from tests.recording.test_wiretap import TRICKY, anthropic_wire, ndjson_wire, play, raw_chunks, split_text, text_frame


class Clock:
    """Each read is stamped with its own index: the time says which read it was."""

    def __init__(self) -> None:
        self.t = -1.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def _settling_chars(text: str) -> dict[str, str]:
    """pointer -> the character that settles its value (oracle independent of livefill.extraction.prefix)."""
    out = {}
    for pointer, (a, b) in reference_spans(text).items():
        value = json.loads(text[a:b])
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and b >= len(text):
            continue  # a number at the very end settles only when the text closes
        out[pointer] = text[b] if number else text[b - 1]
    return out


def _byte_per_read(wire) -> dict[str, float]:  # noqa: ANN001
    tap = SettleReads(clock=Clock())
    play(tap, wire, list(range(1, len(wire.data))))  # every byte its own read
    return tap.times


@pytest.mark.parametrize("make", [anthropic_wire, ndjson_wire, raw_chunks])
@pytest.mark.parametrize("size", [1, 3, 7])
def test_with_one_byte_per_read_each_value_is_timed_by_its_settling_byte(make, size):
    text = TRICKY
    wire = make([text[i : i + size] for i in range(0, len(text), size)])
    times = _byte_per_read(wire)
    expected = _settling_chars(text)
    assert set(expected) <= set(times)
    for pointer, char in expected.items():
        byte = wire.data[int(times[pointer])]  # read i is byte i
        last = json.dumps(char, ensure_ascii=False).encode()[-2]  # the char's last byte as escaped in a string
        assert byte in (last, char.encode()[-1]), (pointer, char, chr(byte))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["anthropic", "ndjson", "raw"]))
def test_under_any_cutting_the_time_is_that_of_the_read_holding_the_settling_byte(seed, kind):
    rng = random.Random(seed)
    text = get_scenario("invoice").output_text
    make = {"anthropic": anthropic_wire, "ndjson": ndjson_wire, "raw": raw_chunks}[kind]
    wire = make(split_text(text, rng))
    byte_of = {p: int(t) for p, t in _byte_per_read(wire).items()}
    cuts = sorted({rng.randint(1, len(wire.data) - 1) for _ in range(rng.randint(1, 60))})
    tap = SettleReads(clock=Clock())
    play(tap, wire, cuts)
    bounds = [0, *cuts]
    for pointer, byte in byte_of.items():
        read = max(i for i, start in enumerate(bounds) if start <= byte)
        assert tap.time_of(pointer) == read, pointer


def test_relay_records_are_timed_by_the_read_that_ended_their_line():
    @dataclass(frozen=True)
    class Record:
        type: str
        pointer: str
        value: Any
        index: int | None = None

    lines = [
        ('{"seq":0,"type":"start"}', None),
        ('{"seq":1,"type":"field","pointer":"/amount","value":1200}', Record("field", "/amount", 1200)),
        ('{"seq":2,"type":"delta","pointer":"/notes","value":"ab"}', Record("delta", "/notes", "ab")),
        ('{"seq":3,"type":"item","pointer":"/line_items","index":0,"value":{"sku":"A"}}',
         Record("item", "/line_items", {"sku": "A"}, 0)),
    ]
    body = b"".join(t.encode() + b"\n" for t, _ in lines)
    first_newline = len(lines[0][0])  # reads: up to the first record's last brace, then the rest
    cut = first_newline + 1 + len(lines[1][0])
    tap = SettleReads(clock=Clock())
    tap.on_read(body[:cut])  # read 0 ends just before /amount's newline
    tap.on_read(body[cut:])  # read 1
    at = 0
    for text, record in lines:
        tap.on_frame(text_frame("ndjson", text, at))
        at += len(text) + 1
        if record is not None:
            tap.on_event(record)
    assert tap.time_of("/amount") == 1.0  # its line ended in the second read
    assert tap.time_of("/notes") is None  # a delta record settles nothing
    assert tap.time_of("/line_items/0/sku") == 1.0  # inside an item: the item's record
    assert tap.time_of("/nothing") is None


def test_a_document_that_is_not_json_stops_the_noting_without_raising():
    wire = raw_chunks(['{"a": "x", ', "}}}", '"b": 1}'])
    tap = SettleReads(clock=Clock())
    play(tap, wire, [3, 9])
    assert tap.time_of("/a") is not None
    assert tap.time_of("/b") is None
