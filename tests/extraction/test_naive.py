"""The naive client is wrong on purpose: it shows prefixes as values. These tests pin how."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livefill.extraction.naive import NaiveReader, naive_parse, repair

DOC = '{"customer_name": "Martinez SA", "amount": 1200, "paid": false, "tags": ["a\\"b", "c\\\\"], "x": {"y": null}}'


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", None),
        ("{", {}),
        ('{"customer_', {}),
        ('{"customer_name"', {}),
        ('{"customer_name": ', {}),
        ('{"customer_name": "Mar', {"customer_name": "Mar"}),
        ('{"customer_name": "Martinez SA", "amount": 12', {"customer_name": "Martinez SA", "amount": 12}),
        ('{"amount": -', {}),
        ('{"amount": 12.', {"amount": 12}),
        ('{"paid": fa', {}),
        ('{"a": 1, "b"', {"a": 1}),
        ('{"a": 1,', {"a": 1}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": [{"b": "c', {"a": [{"b": "c"}]}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "x\\u00', {"a": "x"}),
        ('{"a": "x\\\\', {"a": "x\\"}),
        ('{"a": "x\\n', {"a": "x\n"}),
    ],
)
def test_naive_repair_shows_prefixes_as_values(prefix, expected):
    assert naive_parse(prefix) == expected


def test_the_naive_client_shows_12_for_1200_and_mar_for_martinez():
    reader = NaiveReader()
    seen = [reader.feed(piece) for piece in ['{"customer_name": "Mar', 'tinez SA", "amount": 12', "00}"]]
    assert seen[0] == {"customer_name": "Mar"}
    assert seen[1]["amount"] == 12
    assert seen[2] == {"customer_name": "Martinez SA", "amount": 1200}
    assert reader.text.endswith("00}")


def test_complete_document_repairs_to_itself():
    assert json.loads(repair(DOC)) == json.loads(DOC)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(DOC)))
def test_every_prefix_repairs_to_valid_json_or_nothing(cut):
    text = repair(DOC[:cut])
    if text is not None:
        json.loads(text)  # never raises


def test_scenario_outputs_repair_at_every_cut():
    from livefill.extraction.scenarios import get_scenario

    text = get_scenario("invoice").output_text
    for cut in range(0, len(text), 7):
        value = naive_parse(text[:cut])
        assert value is None or isinstance(value, dict)
    assert naive_parse(text) == json.loads(text)


# --- the incremental scan gives what a scan of the whole text gives --------------------------------

_REF_ESCAPE = __import__("re").compile(r"\\.", __import__("re").DOTALL)
_REF_CLOSED = __import__("re").compile(r'"[^"]*"')
_REF_NOT_BRACKET = __import__("re").compile(r"[^{}\[\]]+")


def _reference_scan(text: str) -> tuple[list[str], bool, int]:
    """The scan done with regular expressions over the whole text (escapes blanked, closed strings
    removed, bracket pairs reduced): what the incremental scanner must agree with."""
    blanked = _REF_ESCAPE.sub("__", text)
    in_string = blanked.count('"') % 2 == 1
    start = blanked.rfind('"') if in_string else -1
    outside = _REF_CLOSED.sub("", blanked[:start] if in_string else blanked)
    brackets = _REF_NOT_BRACKET.sub("", outside)
    while True:
        reduced = brackets.replace("{}", "").replace("[]", "")
        if reduced == brackets:
            break
        brackets = reduced
    return [b for b in brackets if b in "{["], in_string, start


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='{}[]",:\\ u0aE1-.tfn\n', max_size=40))
def test_scan_agrees_with_the_whole_text_reference(text):
    from livefill.extraction.naive import _scan

    assert _scan(text) == _reference_scan(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=400))
def test_the_reader_fed_in_pieces_shows_what_a_fresh_parse_of_the_prefix_shows(sizes):
    from livefill.extraction.scenarios import get_scenario

    text = get_scenario("catalog").output_text  # long enough to cross many scan checkpoints
    reader = NaiveReader()
    at = 0
    for size in sizes:
        if at >= len(text):
            break
        piece = text[at : at + size]
        at += len(piece)
        assert reader.feed(piece) == naive_parse(text[:at])


def test_scanner_resumes_from_a_checkpoint_before_the_position_asked():
    from livefill.extraction.naive import _CHECKPOINT_EVERY, _Scanner

    text = '{"a": [' + ", ".join(f'"v{i}\\"x"' for i in range(400)) + '], "b": "open'
    scanner = _Scanner(text)
    for k in (len(text), len(text) - 3, 5, len(text) // 2, len(text)):  # forwards, back, forwards
        assert scanner.scan(k) == _reference_scan(text[:k])
        assert scanner.scan(k, '"') == _reference_scan(text[:k] + '"')
    assert len(scanner._marks) >= len(text) // _CHECKPOINT_EVERY  # checkpoints were kept


def test_a_long_run_of_backslashes_at_the_end_is_judged_whole():
    body = '{"a": "x' + "\\" * 301  # odd: the last backslash escapes nothing yet
    assert repair(body) == '{"a": "x' + "\\" * 300 + '"}'
    assert repair(body + "\\") == '{"a": "x' + "\\" * 302 + '"}'
