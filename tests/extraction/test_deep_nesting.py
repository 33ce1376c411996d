"""Deeply nested answers (issue 27 item 1): one clear error, early, in every mode, at a cost that
does not grow with the depth the model sends."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from pydantic import BaseModel

from livefill.defaults import MAX_NESTING
from livefill.errors import ProtocolError, ValidationFailed
from livefill.extraction.modes import Mode
from livefill.extraction.prefix import JSONPrefixError, PrefixParser
from livefill.extraction.readers import READERS, ArgsReader, ReaderOptions
from livefill.relay.records import ErrorRecord
from livefill.relay.settler import Settler
from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason


class Place(BaseModel):
    city: str = ""
    zip: int | None = None
    notes: Any = None  # free-form: takes any JSON, so only the depth limit guards it


def _nested(key: str, depth: int) -> str:
    return '{"%s": ' % key + "[" * depth + "]" * depth + "}"


def _pieces(text: str, size: int = 7) -> list[ArgsDelta]:
    return [ArgsDelta(text=text[i : i + size]) for i in range(0, len(text), size)]


@pytest.mark.parametrize(("key", "expected"), [("city", "a string"), ("zip", "an integer or null")])
def test_a_scalar_field_whose_value_opens_a_bracket_fails_at_that_bracket(key, expected):
    reader = ArgsReader(Place)
    text = _nested(key, 5_000)
    fed = 0
    kept: list[Any] = []
    with pytest.raises(ValidationFailed) as info:
        for delta in _pieces(text, 1):
            fed += 1
            reader.feed(delta, kept)
    assert info.value.pointer == f"/{key}"
    assert str(info.value) == f"expected {expected}, got an array"
    assert fed == text.index("[") + 1  # the bracket itself, not the 5,000 under it
    # the root and the key's own PENDING; nothing under it reached anyone
    assert [change.pointer for change, _ in kept] in ([""], ["", f"/{key}"])


def test_a_free_form_field_may_nest_up_to_the_limit_and_reads_like_json_loads():
    text = _nested("notes", MAX_NESTING - 1)  # the root object is one of the MAX_NESTING
    reader = READERS[Mode.PARTIAL](ReaderOptions(), Place)
    for delta in _pieces(text):
        reader.feed(delta)
    reader.feed(BlockStop())
    reader.feed(Stop(reason=StopReason.COMPLETE))
    reader.end()
    assert reader.value(None) == json.loads(text)


@pytest.mark.parametrize("mode", [Mode.PARTIAL, Mode.BLOCKING])
@pytest.mark.parametrize("depth", [MAX_NESTING, 5_000, 100_000])
def test_one_level_past_the_limit_is_one_clear_error_in_every_parsing_mode(mode, depth):
    reader = READERS[mode](ReaderOptions(), Place)
    text = _nested("notes", depth)
    with pytest.raises(ProtocolError, match=f"nested deeper than {MAX_NESTING} levels") as info:
        for delta in _pieces(text, 64):
            reader.feed(delta)
        reader.feed(BlockStop())
        reader.feed(Stop(reason=StopReason.COMPLETE))  # blocking mode reports it here
    # the offset named is the bracket that opened one level too many
    assert f"offset {text.index('[') + MAX_NESTING - 1}" in str(info.value)


def test_the_naive_mode_shows_nothing_rather_than_crash_on_a_deep_answer():
    reader = READERS[Mode.NAIVE](ReaderOptions(), Place)
    shown = []
    for delta in _pieces(_nested("notes", 3_000), 64):
        shown += reader.feed(delta)
    shown += reader.feed(BlockStop())
    pointers = [pointer for pointer, _state, _value in shown]
    # what it repaired while the text was shallow, and nothing deeper than the limit
    assert all(pointer.count("/") <= MAX_NESTING for pointer in pointers)
    # it keeps the last value it could repair, as naive clients do; never one deeper than the limit
    value, depth = reader.value(None), 0
    while isinstance(value, (dict, list)) and value:
        value, depth = (next(iter(value.values())) if isinstance(value, dict) else value[0]), depth + 1
    assert 0 < depth <= MAX_NESTING


@pytest.mark.parametrize("key", ["city", "notes"])
def test_the_relay_ends_a_deep_answer_with_one_error_record(key):
    settler = Settler(Place)
    records: list[Any] = []
    for delta in _pieces(_nested(key, 20_000)):
        records += settler.feed(delta)
        if settler.done:
            break
    assert settler.done
    (error,) = [r for r in records if isinstance(r, ErrorRecord)]
    if key == "city":
        assert (error.code, error.pointer) == ("validation_failed", "/city")
    else:
        assert error.code == "protocol_error" and f"deeper than {MAX_NESTING}" in error.message


def test_the_parser_takes_any_depth_unless_told_and_keeps_its_limit_when_copied():
    deep = "[" * 100_000 + "]" * 100_000
    unlimited = PrefixParser()
    unlimited.feed(deep)
    unlimited.close()
    limited = PrefixParser(max_depth=3)
    limited.feed("[[[")
    for twin in (copy.deepcopy(limited), pickle.loads(pickle.dumps(limited))):
        with pytest.raises(JSONPrefixError) as info:
            twin.feed("[")
        assert info.value.offset == 3
    with pytest.raises(JSONPrefixError, match="nested deeper than 3 levels"):
        limited.feed("[")
