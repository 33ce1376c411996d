"""The bundled scenarios load, validate against their schemas, and keep the promised invariants."""

from __future__ import annotations

import json

import pydantic
import pytest

from livefill.resources import ASSETS
from livefill.extraction.scenarios import SCENARIO_NAMES, Scenario, get_scenario, load_scenarios, replace_value, value_spans
from livefill.extraction.schemas import SCHEMAS, schema_model

SCENARIOS = load_scenarios()


def test_order_and_names() -> None:
    assert list(SCENARIOS) == ["invoice", "weather", "ticket", "multilingual", "catalog"]
    assert SCENARIO_NAMES == tuple(SCENARIOS)
    assert all(isinstance(s, Scenario) for s in SCENARIOS.values())
    assert (ASSETS / "scenarios" / "invoice" / "document.txt").is_file()


def test_get_scenario() -> None:
    assert get_scenario("invoice") is SCENARIOS["invoice"]
    with pytest.raises(KeyError, match="invoice"):
        get_scenario("nope")


def test_scenarios_are_frozen() -> None:
    with pytest.raises(AttributeError):
        SCENARIOS["invoice"].name = "x"  # type: ignore[misc]


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_output_validates(name: str) -> None:
    s = SCENARIOS[name]
    assert s.schema_name in SCHEMAS
    assert s.tool_name == f"record_{s.schema_name}"
    model = schema_model(s.schema_name)
    # Both the JSON text the model writes and the parsed object validate.
    from_text = model.model_validate_json(s.output_text)
    from_obj = model.model_validate(s.output)
    assert from_text == from_obj
    assert json.loads(s.output_text) == s.output
    assert s.document.strip() and not s.output_text.endswith("\n")


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_invalid_value_is_rejected_and_local(name: str) -> None:
    s = SCENARIOS[name]
    spans = value_spans(s.output_text)
    assert s.invalid_pointer in spans
    bad = s.invalid_output_text
    model = schema_model(s.schema_name)
    with pytest.raises(pydantic.ValidationError) as info:
        model.model_validate_json(bad)
    # The only error is at the designated pointer.
    locs = {"/" + "/".join(str(p) for p in e["loc"]) for e in info.value.errors()}
    assert locs == {s.invalid_pointer}
    # Everything but the replaced value is byte-identical.
    start, end = spans[s.invalid_pointer]
    assert bad[:start] == s.output_text[:start]
    assert bad[len(bad) - (len(s.output_text) - end):] == s.output_text[end:]


def test_invoice_seed_case() -> None:
    s = SCENARIOS["invoice"]
    out = s.output
    assert out["customer_name"] == "Martinez SA"
    assert out["amount"] == 1200 and out["currency"] == "EUR"
    assert len(out["line_items"]) >= 2
    assert len(out["notes"].split()) >= 10
    assert (s.invalid_pointer, s.invalid_value) == ("/amount", "twelve hundred")
    assert "Martinez SA" in s.document
    assert schema_model("invoice").model_json_schema()["properties"]["notes"].get("x-prose") is True


def test_weather_is_smallest() -> None:
    s = SCENARIOS["weather"]
    assert list(s.output) == ["city"]
    assert len(s.output_text) == min(len(x.output_text) for x in SCENARIOS.values())


def test_ticket_summary_is_long() -> None:
    out = SCENARIOS["ticket"].output
    assert len(out["summary"].split()) >= 200
    assert isinstance(out["priority"], int) and isinstance(out["tags"], list)


def test_multilingual_escapes() -> None:
    s = SCENARIOS["multilingual"]
    text = s.output_text
    values = json.dumps(s.output, ensure_ascii=False)
    for needle in ("Müller & Søn", "東京"):
        assert needle in values
    assert any(ord(c) > 0xFFFF for c in values)  # an emoji outside the BMP
    assert '\\"' in text and "\\\\" in text  # escaped quote and backslash in the model's text
    assert "\u2028" in text  # a raw U+2028 inside a string
    assert any("\u2028" in v for v in s.output.values() if isinstance(v, str))


def test_catalog_is_long() -> None:
    s = SCENARIOS["catalog"]
    assert len(s.output["items"]) >= 50
    assert s.output["item_count"] == len(s.output["items"])
    assert len(s.output_text.encode()) >= 20_000


def test_documents_are_distinct() -> None:
    docs = [s.document for s in SCENARIOS.values()]
    assert len(set(docs)) == len(docs)


def test_value_spans_and_replace() -> None:
    text = '{"a": [1, {"b/c": "x"}], "d~": true}'
    spans = value_spans(text)
    assert text[slice(*spans["/a/1/b~1c"])] == '"x"'
    assert text[slice(*spans["/d~0"])] == "true"
    assert text[slice(*spans[""])] == text
    assert replace_value(text, "/a/0", "one") == '{"a": ["one", {"b/c": "x"}], "d~": true}'


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_value_spans_are_the_parsers_and_agree_with_an_independent_scan(name: str) -> None:
    from tests.extraction.json_spans import reference_spans

    text = SCENARIOS[name].output_text
    assert value_spans(text) == reference_spans(text)


def test_value_spans_refuses_what_is_not_one_json_document() -> None:
    with pytest.raises(ValueError):
        value_spans('{"a": 1} {')
