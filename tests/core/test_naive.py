"""The naive client is wrong on purpose: it shows prefixes as values. These tests pin how."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.naive import NaiveReader, naive_parse, repair

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
    from core.scenarios import get_scenario

    text = get_scenario("invoice").output_text
    for cut in range(0, len(text), 7):
        value = naive_parse(text[:cut])
        assert value is None or isinstance(value, dict)
    assert naive_parse(text) == json.loads(text)
