"""The settler (livefill/relay/settler.py), sans-IO: stream events in, relay v1 records out.

Every scenario is fed whole, one character at a time and in random cuts; the records must rebuild
the scenario's output exactly, be numbered 0, 1, 2 … with `start` first and one terminal last, and
each `field` / `item` must come out of the very feed that delivered its settling character (found
independently with `livefill.extraction.scenarios.value_spans`).
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from livefill.errors import ProtocolError, Truncated, UpstreamError, UsageError, ValidationFailed
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, TextDelta
from livefill.extraction import pointer as jp
from livefill.relay.settler import Settler
from livefill.extraction.schema import NodeKind, SchemaIndex
from livefill.relay.assembler import RecordAssembler
from livefill.relay.records import (
    MAX_LINE_BYTES,
    CompleteRecord,
    DeltaRecord,
    ErrorRecord,
    FieldRecord,
    ItemRecord,
    StartRecord,
    encode_record,
    parse_record,
)
from livefill.extraction.scenarios import load_scenarios, value_spans
from livefill.extraction.schemas import schema_model

SCENARIOS = load_scenarios()
NAMES = list(SCENARIOS)
COMPLETE = Stop(reason=StopReason.COMPLETE, raw="tool_use")


def settler_for(name: str, mode: str = "settled") -> Settler:
    sc = SCENARIOS[name]
    return Settler(schema_model(sc.schema_name), mode=mode, run_id="run_test", provider="anthropic")


def run_cuts(settler: Settler, text: str, cuts: list[int], *, end: bool = True) -> list[tuple[int, Any]]:
    """Feed `text` cut at `cuts`; return (end offset of the feed that produced it, record)."""
    out: list[tuple[int, Any]] = []
    bounds = sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]
    start = 0
    for stop in bounds:
        for record in settler.feed(ArgsDelta(text=text[start:stop])):
            out.append((stop, record))
        start = stop
    if end:
        for event in (BlockStop(), COMPLETE):
            out.extend((len(text), r) for r in settler.feed(event))
        out.extend((len(text), r) for r in settler.close())
    return out


def settle_index(text: str, span: tuple[int, int]) -> int:
    """Index of the character that settles the value spanning `span` (numbers: the delimiter)."""
    start, end = span
    return end if text[start] in "-0123456789" else end - 1


def unit_pointer(record: Any) -> str:
    return f"{record.pointer}/{record.index}" if isinstance(record, ItemRecord) else record.pointer


def check_stream(records: list[Any], *, run: str = "run_test") -> None:
    """The invariants every relay response keeps."""
    assert [r.seq for r in records] == list(range(len(records)))
    assert isinstance(records[0], StartRecord) and records[0].run == run and records[0].v == 1
    terminals = [r for r in records if isinstance(r, (CompleteRecord, ErrorRecord))]
    assert len(terminals) == 1 and terminals[0] is records[-1]
    for r in records:  # the wire form parses back to the same record
        line = encode_record(r)
        assert line.endswith(b"\n") and b"\n" not in line[:-1]
        assert parse_record(line[:-1]) == r


def rebuild(records: list[Any]) -> Any:
    assembler = RecordAssembler()
    for r in records:
        assembler.apply(r)
    return assembler.value


# --- every scenario, every cutting ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["settled", "hybrid"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("cutting", ["whole", "char_by_char"])
def test_scenario_rebuilds_exactly_and_each_record_leaves_with_its_settling_char(name, mode, cutting):
    sc = SCENARIOS[name]
    text = sc.output_text
    cuts = list(range(1, len(text))) if cutting == "char_by_char" else []
    produced = run_cuts(settler_for(name, mode), text, cuts)
    records = [r for _, r in produced]
    check_stream(records)
    assert isinstance(records[-1], CompleteRecord)
    units = [r for r in records if isinstance(r, (FieldRecord, ItemRecord))]
    assert records[-1].fields == len(units)
    assert rebuild(records) == sc.output
    spans = value_spans(text)
    for fed_to, record in produced:
        if isinstance(record, (FieldRecord, ItemRecord)):
            settles_at = settle_index(text, spans[unit_pointer(record)])
            if cutting == "char_by_char":
                # made by the feed of exactly the settling character: never earlier, never later
                assert fed_to == settles_at + 1, (unit_pointer(record), fed_to, settles_at)
            assert json.loads(text[slice(*spans[unit_pointer(record)])]) == record.value
    if mode == "settled":
        assert not any(isinstance(r, DeltaRecord) for r in records)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("name", NAMES)
def test_random_cuts_give_the_same_records_and_never_early(name, data):
    sc = SCENARIOS[name]
    text = sc.output_text
    mode = data.draw(st.sampled_from(["settled", "hybrid"]))
    cuts = data.draw(st.lists(st.integers(1, len(text) - 1), max_size=60))
    produced = run_cuts(settler_for(name, mode), text, cuts)
    records = [r for _, r in produced]
    check_stream(records)
    assert rebuild(records) == sc.output
    whole = [r for r in run_cuts(settler_for(name, mode), text, []) if not isinstance(r[1], DeltaRecord)]
    settled_units = [r for _, r in produced if not isinstance(r, DeltaRecord)]
    # the same settled units in the same order, whatever the cutting (seq differ by the deltas)
    strip = lambda r: r.model_dump(exclude={"seq"})  # noqa: E731
    assert [strip(r) for r in settled_units] == [strip(r) for _, r in whole]
    spans = value_spans(text)
    bounds = sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]
    for fed_to, record in produced:
        if isinstance(record, (FieldRecord, ItemRecord)):
            settles_at = settle_index(text, spans[unit_pointer(record)])
            # the feed that produced it is the one whose piece holds the settling character
            piece_start = max([0] + [b for b in bounds if b < fed_to])
            assert piece_start <= settles_at < fed_to


@pytest.mark.parametrize("name", ["invoice", "ticket", "multilingual"])
def test_hybrid_deltas_grow_prose_fields_only_and_precede_their_field(name):
    sc = SCENARIOS[name]
    model = schema_model(sc.schema_name)
    prose = {f"/{k}" for k, f in model.model_fields.items() if (f.json_schema_extra or {}).get("x-prose")}
    text = sc.output_text
    records = [r for _, r in run_cuts(settler_for(name, "hybrid"), text, list(range(1, len(text), 3)))]
    deltas = [r for r in records if isinstance(r, DeltaRecord)]
    assert deltas and {d.pointer for d in deltas} <= prose
    for pointer in {d.pointer for d in deltas}:
        grown = "".join(d.text for d in deltas if d.pointer == pointer)
        field = next(r for r in records if isinstance(r, FieldRecord) and r.pointer == pointer)
        assert field.value.startswith(grown) and grown
        assert all(d.seq < field.seq for d in deltas if d.pointer == pointer)
        assert all(d.text for d in deltas)


def test_hybrid_long_delta_is_cut_into_records_under_the_line_limit():
    class Note(BaseModel):
        text: str = Field(json_schema_extra={"x-prose": True})

    body = "é" * 20000
    settler = Settler(Note, mode="hybrid", run_id="r")
    records = settler.feed(ArgsDelta(text='{"text": "' + body))
    deltas = [r for r in records if isinstance(r, DeltaRecord)]
    assert len(deltas) > 1 and "".join(d.text for d in deltas) == body
    assert all(len(encode_record(d)) - 1 <= MAX_LINE_BYTES for d in deltas)


# --- faults -------------------------------------------------------------------------------------------


def _feed_all(settler: Settler, events: list[Any]) -> list[Any]:
    out = []
    for event in events:
        out += settler.feed(event)
    return out + settler.close()


@pytest.mark.parametrize("name", NAMES)
def test_invalid_value_is_never_sent_and_fails_with_its_pointer(name):
    sc = SCENARIOS[name]
    text = sc.invalid_output_text
    for cuts in ([], list(range(1, len(text)))):
        records = [r for _, r in run_cuts(settler_for(name), text, cuts)]
        check_stream(records)
        err = records[-1]
        assert isinstance(err, ErrorRecord) and err.code == "validation_failed"
        assert err.pointer == sc.invalid_pointer, err
        assert not any(isinstance(r, CompleteRecord) for r in records)
        # no record carries the bad value, nor anything after it
        sent = [unit_pointer(r) for r in records if isinstance(r, (FieldRecord, ItemRecord))]
        assert all(not sc.invalid_pointer.startswith(p + "/") and p != sc.invalid_pointer for p in sent)


@pytest.mark.parametrize(
    ("events", "code"),
    [
        ([ArgsDelta(text='{"city": "Par'), Stop(reason=StopReason.LENGTH, raw="max_tokens")], "truncated"),
        ([ArgsDelta(text='{"city": "Par'), ProviderError(kind="overloaded_error", message="Overloaded")], "upstream_error"),
        ([ArgsDelta(text='{"city": "Par')], "truncated"),  # EOF without terminal
        ([], "truncated"),
        ([ArgsDelta(text='{"city": "Paris",, ')], "protocol_error"),
        ([ArgsDelta(text='{"city": "Paris"} x')], "protocol_error"),
        ([ArgsDelta(text='{"city": "Par'), COMPLETE], "truncated"),  # the model stopped mid-JSON
        ([TextDelta(text="I cannot"), COMPLETE], "upstream_error"),  # no JSON at all
        ([ArgsDelta(text='{"city": "Paris"}'), Stop(reason=StopReason.REFUSAL, raw="refusal")], "upstream_error"),
        ([ArgsDelta(text='{"city": "Paris"}'), Stop(reason=StopReason.LENGTH, raw="length")], "truncated"),
        ([ArgsDelta(text='{"city": "Paris", "country": "FR"}'), COMPLETE], "validation_failed"),
        ([ArgsDelta(text='{"city": ""}'), COMPLETE], "validation_failed"),
        ([ArgsDelta(text='{"city": "Paris"'), ArgsDelta(text='{', index=1)], "protocol_error"),
        ([ArgsDelta(text='{"city": "Paris", '), ArgsDelta(text='"city": "Rome"}'), COMPLETE], "protocol_error"),
        ([ArgsDelta(text='["Paris"]'), COMPLETE], "validation_failed"),
        ([ArgsDelta(text='"Paris"'), COMPLETE], "validation_failed"),
    ],
    ids=[
        "length",
        "provider_error",
        "eof_mid_value",
        "eof_before_anything",
        "malformed",
        "trailing_garbage",
        "complete_but_cut",
        "text_only",
        "refusal",
        "length_after_whole_json",
        "extra_key",
        "constraint",
        "second_document",
        "duplicate_key",
        "root_is_array",
        "root_is_string",
    ],
)
def test_every_ending_but_a_valid_complete_one_is_a_terminal_error(events, code):
    settler = Settler(schema_model("weather"), run_id="run_test")
    records = _feed_all(settler, events)
    check_stream(records)
    assert isinstance(records[-1], ErrorRecord) and records[-1].code == code, records[-1]
    assert settler.done and settler.terminal is records[-1]
    assert not any(isinstance(r, CompleteRecord) for r in records)


def test_a_duplicate_key_after_its_first_value_was_sent_is_an_error_within_one_feed_the_last_wins():
    # Sent values are never contradicted: once "/city" went out, a second "city" key ends the run.
    # A duplicate the parser resolved inside one feed (json.loads semantics: the last wins) was
    # never sent twice, so the run goes on with the last value only.
    records = _feed_all(Settler(schema_model("weather"), run_id="run_test"), [ArgsDelta(text='{"city": "Paris", "city": "Rome"}'), COMPLETE])
    check_stream(records)
    assert [(r.type, getattr(r, "value", None)) for r in records] == [("start", None), ("field", "Rome"), ("complete", None)]


def test_extra_key_fails_as_soon_as_its_key_arrives():
    settler = Settler(schema_model("invoice"), run_id="r")
    records = settler.feed(ArgsDelta(text='{"customer_name": "A", "bogus":'))
    assert [type(r) for r in records] == [StartRecord, FieldRecord, ErrorRecord]
    assert records[-1].code == "validation_failed" and records[-1].pointer == "/bogus"


def test_invalid_element_fails_when_its_scalar_settles_not_at_the_end_of_the_element():
    settler = Settler(schema_model("catalog"), run_id="r")
    records = settler.feed(ArgsDelta(text='{"supplier": "S", "season": "x", "item_count": 1, "items": [{"sku": "a", "name": "n", "price": -1,'))
    assert records[-1].code == "validation_failed" and records[-1].pointer == "/items/0/price"
    assert not any(isinstance(r, ItemRecord) for r in records)


def test_whole_element_check_names_the_failing_member():
    settler = Settler(schema_model("invoice"), run_id="r")
    # qty missing: only the element as a whole can tell
    records = settler.feed(ArgsDelta(text='{"line_items": [{"sku": "A", "description": "d", "unit_price": 1.0}'))
    assert records[-1].code == "validation_failed" and records[-1].pointer == "/line_items/0/qty"
    assert "required" in records[-1].message.lower()
    assert not any(isinstance(r, ItemRecord) for r in records)


def test_events_after_the_terminal_are_ignored_and_feed_after_close_is_misuse():
    settler = Settler(schema_model("weather"), run_id="r")
    records = _feed_all(settler, [ArgsDelta(text='{"city": "Paris"}'), COMPLETE])
    assert isinstance(records[-1], CompleteRecord) and records[-1].fields == 1
    with pytest.raises(UsageError):
        settler.feed(KeepAlive())
    other = Settler(schema_model("weather"), run_id="r")
    other.feed(ProviderError(kind="x", message="y"))
    assert other.feed(ArgsDelta(text='{"city": "Paris"}')) == []
    assert other.feed(COMPLETE) == []
    assert other.close() == [] and other.close() == []


def test_begin_and_fail_for_failures_outside_the_event_stream():
    settler = Settler(schema_model("weather"), run_id="r", provider="ollama")
    (start,) = settler.begin()
    assert start.provider == "ollama" and start.schema_name == "weather" and settler.begin() == []
    (err,) = settler.fail(ValidationFailed("bad", pointer="/city"))
    assert (err.seq, err.code, err.pointer) == (1, "validation_failed", "/city")
    assert settler.fail(Truncated("again")) == []
    s2 = Settler(schema_model("weather"), run_id="r")
    records = s2.fail(UpstreamError("no key"))
    assert [r.type for r in records] == ["start", "error"] and records[1].code == "upstream_error"
    s3 = Settler(schema_model("weather"), run_id="r")
    assert s3.fail(ProtocolError("bad bytes"))[-1].code == "protocol_error"
    s4 = Settler(schema_model("weather"), run_id="r")
    assert s4.fail("timeout", "idle for 5 s")[-1].model_dump(exclude={"seq"}) == {
        "type": "error", "code": "timeout", "message": "idle for 5 s", "pointer": None
    }


def test_keepalives_text_and_block_stops_produce_nothing():
    settler = Settler(schema_model("weather"), run_id="r")
    assert len(settler.feed(KeepAlive())) == 1  # only start
    assert settler.feed(TextDelta(text="Sure, ")) == []
    assert settler.feed(BlockStop(index=0)) == []
    assert [r.type for r in settler.feed(ArgsDelta(text='{"city": "Oslo"}', index=1))] == ["field"]
    assert [r.type for r in settler.feed(BlockStop(index=1))] == []
    assert [r.type for r in settler.feed(Stop(reason=StopReason.OTHER, raw="end_turn"))] == ["complete"]


# --- the shapes the schema can take -------------------------------------------------------------------


class Dims(BaseModel):
    model_config = ConfigDict(extra="forbid")
    w: float = Field(strict=True, ge=0)
    h: float = Field(strict=True, ge=0)


class Shapes(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dims: Dims
    maybe: Dims | None = None
    tags: list[str] = Field(min_length=0)
    grid: list[list[int]] = []
    meta: dict[str, int] = {}
    anything: Any = None
    when: date | None = None
    label: str = Field(default="", alias="Label/x")


def shapes(text: str, cuts: list[int] | None = None) -> list[Any]:
    return [r for _, r in run_cuts(Settler(Shapes, run_id="run_test"), text, cuts or [])]


def test_nested_objects_come_as_fields_arrays_as_items_and_empties_as_fields():
    doc = {
        "dims": {"w": 1, "h": 2.5},
        "maybe": None,
        "tags": [],
        "grid": [[1, 2], []],
        "meta": {"a": 1, "b/c": 2},
        "anything": {"deep": [1, {"x": None}]},
        "when": "2024-01-02",
        "Label/x": "L",
    }
    text = json.dumps(doc)
    for cuts in ([], list(range(1, len(text)))):
        records = shapes(text, cuts)
        check_stream(records)
        assert isinstance(records[-1], CompleteRecord), records[-1]
        units = {(r.type, unit_pointer(r)): r.value for r in records if isinstance(r, (FieldRecord, ItemRecord))}
        assert units == {
            ("field", "/dims/w"): 1,
            ("field", "/dims/h"): 2.5,
            ("field", "/maybe"): None,
            ("field", "/tags"): [],
            ("item", "/grid/0"): [1, 2],
            ("item", "/grid/1"): [],
            ("field", "/meta/a"): 1,
            ("field", "/meta/b~1c"): 2,
            ("field", "/anything"): {"deep": [1, {"x": None}]},
            ("field", "/when"): "2024-01-02",
            ("field", "/Label~1x"): "L",
        }
        assert rebuild(records) == doc


@pytest.mark.parametrize(
    ("text", "pointer"),
    [
        ('{"dims": {"w": -1,', "/dims/w"),
        ('{"dims": {"w": 1}}', "/dims/h"),  # h missing: only the nested model can tell
        ('{"dims": [1]}', "/dims"),
        ('{"tags": {"a": "b"}}', "/tags"),
        ('{"grid": [["x"]]}', "/grid/0/0"),
        ('{"meta": {"a": "one"}}', "/meta/a"),
        ('{"when": "not a date"}', "/when"),
        ('{"dims": {"w": 1, "h": 1, "d": 1}}', "/dims/d"),
        ('{"tags": ["a", 3]}', "/tags/1"),
    ],
)
def test_each_unit_is_checked_against_its_own_type(text, pointer):
    records = shapes(text)
    assert isinstance(records[-1], ErrorRecord) and records[-1].code == "validation_failed", records[-1]
    assert records[-1].pointer == pointer


def test_a_value_too_big_for_one_line_is_refused_not_sent():
    class Big(BaseModel):
        blob: str

    settler = Settler(Big, run_id="r")
    records = settler.feed(ArgsDelta(text=json.dumps({"blob": "x" * (MAX_LINE_BYTES + 10)})))
    assert records[-1].code == "validation_failed" and records[-1].pointer == "/blob"
    assert not any(isinstance(r, FieldRecord) for r in records)


def test_schema_index_resolves_pointers():
    index = SchemaIndex(Shapes)
    assert index.resolve("").node.kind is NodeKind.OBJECT
    assert index.resolve("/grid/3").is_item and not index.resolve("/grid/3").in_element
    assert index.resolve("/grid/3/1").in_element and not index.resolve("/grid/3/1").is_item
    assert index.resolve("/grid/03").node is None and index.resolve("/grid/x").node is None
    assert index.resolve("/meta/anything").node.kind is NodeKind.LEAF
    assert index.resolve("/anything/deep/0").opaque
    assert index.resolve("/nope").node is None and "not in the schema" in index.resolve("/nope").reason
    assert index.resolve("/Label~1x").node is not None
    assert index.resolve("no-slash").node is None
    assert jp.parse_strict("/a~1b/c~0d") == ["a/b", "c~d"] and jp.parse_strict("/bad~2") is None


def test_models_that_ignore_extra_keys_ignore_them_here_too():
    class Loose(BaseModel):
        city: str

    records = _feed_all(Settler(Loose, run_id="run_test"), [ArgsDelta(text='{"city": "Rome", "x": {"y": 1}}'), COMPLETE])
    check_stream(records)
    assert [(r.type, getattr(r, "pointer", None)) for r in records] == [
        ("start", None), ("field", "/city"), ("complete", None)
    ]
