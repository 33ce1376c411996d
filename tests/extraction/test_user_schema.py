"""A person's own JSON Schema: loaded into a pydantic model the form, the checks, the run and the
relay use exactly as a bundled one; anything unsupported named with its pointer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from livefill.demo.protocol import DemoKnobs
from livefill.errors import InputError, UpstreamError, ValidationFailed
from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason
from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.modes import Mode
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.anthropic import message_params
from livefill.relay.client import open_relay
from livefill.relay.records import CompleteRecord, StartRecord
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.schema import FieldKind, SchemaIndex, check, check_document, fields_for
from livefill.extraction.schemas import SCHEMAS, SchemaSource, resolve_schema, schema_model
from livefill.relay.app import create_relay_app
from livefill.demo.wires import StopKind
from livefill.demo.wires.anthropic import AnthropicWire
from livefill.session.settings import RunSettings
from livefill.extraction.schema_keywords import SchemaError
from livefill.extraction.user_schema import load_schema_file, model_from_json_schema
from tests.conftest import REPO
from tests.relay.test_relay_support import LoopbackServer

EXAMPLES = REPO / "docs" / "examples"
RECEIPT = EXAMPLES / "receipt.schema.json"

RECEIPT_VALUE = {
    "merchant": "BÄCKEREI KORNFELD",
    "purchase_date": "2026-03-14",
    "currency": "EUR",
    "total": 15.9,
    "vat_rate": 7,
    "paid_by_card": True,
    "card_last4": "4417",
    "items": [
        {"description": "Laugenbrezel", "quantity": 2, "unit_price": 1.2},
        {"description": "Roggenbrot 750 g", "quantity": 1, "unit_price": 4.8},
        {"description": "Kaffee to go", "quantity": 3, "unit_price": 2.9},
    ],
    "categories": ["food"],
    "remarks": "Thank you for your visit! Bread baked fresh every morning.",
}


def model_of(properties: dict[str, Any], required: list[str] | None = None, **root: Any) -> Any:
    schema = {"type": "object", "properties": properties, **root}
    schema["required"] = list(properties) if required is None else required
    return model_from_json_schema(schema)


def fails_at(model: Any, value: Any) -> str | None:
    with pytest.raises(ValidationFailed) as info:
        check_document(model, value)
    return info.value.pointer


# --- every supported keyword -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        ({"type": "string"}, ["", "x"], [1, None, True]),
        ({"type": "string", "minLength": 2}, ["ab"], ["a"]),
        ({"type": "string", "maxLength": 3}, ["abc"], ["abcd"]),
        ({"type": "string", "pattern": "^[A-Z]{3}$"}, ["EUR"], ["eur", "EURO"]),
        ({"type": "string", "pattern": "(?<=a)b"}, ["ab"], ["cb"]),  # look-behind: Python's re
        ({"type": "string", "format": "date"}, ["2026-03-14"], ["14.03.2026", "2026-02-30", 1700000000]),
        (
            {"type": "string", "format": "date-time"},
            ["2026-03-14T09:30:00Z", "2026-03-14t09:30:00.25+01:00"],
            ["2026-03-14", "2026-03-14 09:30:00Z", "2026-02-30T09:30:00Z", "2026-03-14T09:30:00", 1],
        ),
        ({"type": "string", "format": "email"}, ["ana@example.com", "a+b@host"], ["ana", "ana@", "@example.com", "a b@c.d"]),
        ({"type": "string", "format": "uri"}, ["https://example.com/x?y=1", "urn:isbn:0451450523"], ["example.com", "/x", "a b:c"]),
        ({"type": "string", "format": "email", "maxLength": 8}, ["a@b.com"], ["ana@example.com", "abcdefgh"]),
        ({"type": "string", "format": "phone"}, ["", "not a phone"], [1, None]),  # unknown: an annotation
        ({"type": "integer", "format": "int32", "minimum": 0}, [0, 7], [-1, 1.5, "7"]),  # OpenAPI's: an annotation
        ({"type": "string", "enum": ["a", "b"]}, ["a", "b"], ["c", 1]),
        ({"enum": [1, 2, "three"]}, [1, 2, "three"], [3, "1"]),
        ({"const": "fixed"}, ["fixed"], ["other"]),
        ({"type": "number", "minimum": 0, "maximum": 10}, [0, 10, 2.5], [-0.1, 10.5, "5", True]),
        ({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, [0.5], [0, 1]),
        ({"type": "integer", "minimum": 1}, [1, 7], [0, 1.5, "2", False]),
        ({"type": "integer", "multipleOf": 5}, [10], [7]),
        ({"type": "boolean"}, [True, False], [1, "true", None]),
        ({"type": ["integer", "null"]}, [3, None], ["3"]),
        ({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]}, ["ab", None], ["abc"]),
        ({"type": "array", "items": {"type": "string"}}, [[], ["a", "b"]], [["a", 1], "a"]),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, [[1], [1, 2]], [[], [1, 2, 3]]),
        ({"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}, [["x", "y"]], [["z"]]),
        (
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False},
            [{"a": 1}],
            [{}, {"a": "1"}, {"a": 1, "b": 2}],
        ),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}, {"b": 2}], [{"a": "x"}]),
    ],
)
def test_every_supported_keyword_validates_good_and_rejects_bad_values(prop, good, bad):
    model = model_of({"v": prop})
    for value in good:
        check_document(model, {"v": value})
    for value in bad:
        pointer = fails_at(model, {"v": value})
        assert pointer is not None and pointer.startswith("/v"), (value, pointer)


def test_failures_name_the_precise_pointer_inside_arrays_and_refs():
    src = resolve_schema(RECEIPT)
    bad = json.loads(json.dumps(RECEIPT_VALUE))
    bad["items"][1]["quantity"] = 0
    assert fails_at(src.model, bad) == "/items/1/quantity"
    bad = {**RECEIPT_VALUE, "card_last4": "44"}
    assert fails_at(src.model, bad) == "/card_last4"
    bad = {**RECEIPT_VALUE, "categories": ["food", "fuel"]}
    assert fails_at(src.model, bad) == "/categories/1"
    missing = {k: v for k, v in RECEIPT_VALUE.items() if k != "merchant"}
    with pytest.raises(ValidationFailed, match="Field required"):
        check_document(src.model, missing)
    # a per-field check as the partial reader makes them, at the field's own place
    index = SchemaIndex(src.model)
    check(index, "/total", 15.9)
    with pytest.raises(ValidationFailed) as info:
        check(index, "/total", 0)
    assert info.value.pointer == "/total"
    with pytest.raises(ValidationFailed) as info:
        check(index, "/items/0/unit_price", -1)
    assert info.value.pointer == "/items/0/unit_price"
    assert index.resolve("/remarks").node.prose and not index.resolve("/merchant").node.prose


def test_optional_properties_may_be_missing_or_null_and_required_ones_may_not():
    model = model_of({"a": {"type": "string"}, "b": {"type": "string"}}, required=["a"])
    check_document(model, {"a": "x"})
    check_document(model, {"a": "x", "b": None})
    assert fails_at(model, {"a": None}) == "/a"
    assert fails_at(model, {"b": "y"}) == "/a"  # missing: the place it is missing from


def test_keys_that_are_not_python_names_keep_their_json_spelling():
    model = model_of({"unit-price": {"type": "number"}, "model_config": {"type": "string"}, "json": {"type": "boolean"},
                      "a b": {"type": "integer"}, "_x": {"type": "string"}})
    value = {"unit-price": 1.5, "model_config": "m", "json": True, "a b": 1, "_x": "y"}
    check_document(model, value)
    assert list(model.model_json_schema()["properties"]) == list(value)
    assert fails_at(model, {**value, "a b": "one"}) == "/a b"
    assert [f.pointer for f in fields_for(model)] == ["/unit-price", "/model_config", "/json", "/a b", "/_x"]


def test_a_shared_definition_becomes_one_model():
    src = resolve_schema({
        "title": "Trip", "type": "object", "required": ["from", "to"],
        "properties": {"from": {"$ref": "#/$defs/place"}, "to": {"$ref": "#/$defs/place", "description": "Where to"}},
        "$defs": {"place": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    })
    schema = src.json_schema
    assert list(schema["$defs"]) == ["Place"]
    assert schema["properties"]["to"] == {"$ref": "#/$defs/Place", "description": "Where to"}
    check_document(src.model, {"from": {"city": "Basel"}, "to": {"city": "Bern"}})
    assert fails_at(src.model, {"from": {"city": "Basel"}, "to": {}}) == "/to/city"


# --- the JSON Schema providers receive ---------------------------------------------------------


def test_the_model_json_schema_keeps_descriptions_enums_bounds_and_prose():
    src = resolve_schema(RECEIPT)
    props = src.json_schema["properties"]
    assert src.json_schema["title"] == "Receipt" and src.json_schema["additionalProperties"] is False
    assert src.json_schema["description"] == "A shop receipt, as an expense report needs it."
    assert props["merchant"]["description"] == "The shop's name as printed at the top"
    assert props["merchant"]["minLength"] == 1
    assert props["purchase_date"]["format"] == "date"
    assert props["currency"]["enum"] == ["EUR", "USD", "GBP", "CHF"]
    assert props["total"]["exclusiveMinimum"] == 0
    assert props["vat_rate"]["anyOf"][0] == {"type": "number", "minimum": 0, "maximum": 30}
    assert props["card_last4"]["anyOf"][0] == {"type": "string", "pattern": "^[0-9]{4}$"}
    assert props["items"]["minItems"] == 1 and props["items"]["items"] == {"$ref": "#/$defs/Line"}
    assert props["remarks"]["x-prose"] is True
    assert src.json_schema["required"] == ["merchant", "purchase_date", "currency", "total", "paid_by_card", "items"]
    line = src.json_schema["$defs"]["Line"]
    assert line["properties"]["quantity"] == {"type": "integer", "minimum": 1, "title": "Quantity"}


@pytest.mark.parametrize("spec", [*SCHEMAS, RECEIPT, EXAMPLES / "job_posting.schema.json"])
def test_a_models_own_json_schema_loads_back_into_the_same_schema(spec):
    src = resolve_schema(spec)
    again = resolve_schema(src.json_schema)
    assert again.json_schema == src.json_schema
    assert fields_for(again.model) == fields_for(src.model)


def test_the_request_sends_the_model_json_schema_as_the_tool_input_schema():
    src = resolve_schema(RECEIPT)
    raw = load_schema_file(RECEIPT)
    request = ExtractionRequest(provider="anthropic", base_url="http://x", schema=resolve_schema(raw), document="d")
    params = message_params(request)
    assert params["tools"][0]["name"] == "record_receipt"
    assert params["tools"][0]["input_schema"] == src.json_schema
    with pytest.raises(SchemaError, match="anyOf"):  # resolved (and refused) before any request is built
        resolve_schema({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}})


# --- the form -------------------------------------------------------------------------------------


def test_form_fields_of_a_user_schema_have_kinds_labels_hints_and_prose():
    fields = {f.pointer: f for f in fields_for(resolve_schema(RECEIPT).model)}
    kinds = {p: f.kind for p, f in fields.items()}
    assert kinds == {
        "/merchant": FieldKind.STRING, "/purchase_date": FieldKind.DATE, "/currency": FieldKind.ENUM,
        "/total": FieldKind.NUMBER, "/vat_rate": FieldKind.NUMBER, "/paid_by_card": FieldKind.BOOLEAN,
        "/card_last4": FieldKind.STRING, "/items": FieldKind.TABLE, "/categories": FieldKind.CHIPS,
        "/remarks": FieldKind.PROSE,
    }
    assert fields["/purchase_date"].label == "Purchase date"
    assert fields["/merchant"].description == "The shop's name as printed at the top"
    assert fields["/vat_rate"].description == "VAT in percent" and not fields["/vat_rate"].required
    assert fields["/merchant"].required
    assert fields["/currency"].choices == ("EUR", "USD", "GBP", "CHF")
    assert fields["/categories"].item_kind is FieldKind.ENUM and "travel" in fields["/categories"].choices
    assert [(c.pointer, c.kind) for c in fields["/items"].children] == [
        ("/description", FieldKind.STRING), ("/quantity", FieldKind.INTEGER), ("/unit_price", FieldKind.NUMBER)
    ]
    job = {f.pointer: f for f in fields_for(resolve_schema(EXAMPLES / "job_posting.schema.json").model)}
    assert job["/company"].kind is FieldKind.OBJECT
    assert [c.pointer for c in job["/company"].children] == ["/company/name", "/company/city", "/company/employees"]
    assert job["/salary"].description.startswith("The yearly salary") and not job["/salary"].required
    assert job["/summary"].kind is FieldKind.PROSE and job["/skills"].item_kind is FieldKind.STRING
    form = FormModel(resolve_schema(EXAMPLES / "job_posting.schema.json").model)
    assert form.spec_for("/company/city").label == "City"


def test_a_format_is_accepted_checked_when_known_and_sent_upstream_as_written():
    # JSON Schema: an unknown format is an annotation, never a reason to refuse the schema
    schema = {
        "type": "object",
        "properties": {
            "mail": {"type": "string", "format": "email", "description": "Contact address"},
            "home": {"type": ["string", "null"], "format": "uri"},
            "phone": {"type": "string", "format": "phone", "minLength": 3},
            "count": {"type": "integer", "format": "int64"},
        },
        "required": ["mail", "phone"],
    }
    src = resolve_schema(schema)
    props = src.json_schema["properties"]
    assert props["mail"]["format"] == "email" and props["phone"]["format"] == "phone"
    assert props["home"]["anyOf"][0]["format"] == "uri" and props["count"]["anyOf"][0]["format"] == "int64"
    check_document(src.model, {"mail": "ana@example.com", "home": None, "phone": "+34 600"})
    with pytest.raises(ValidationFailed) as info:
        check_document(src.model, {"mail": "ana at example.com", "phone": "+34 600"})
    assert info.value.pointer == "/mail"
    assert str(info.value).startswith("Input should be an email address (got ")
    assert fields_for(src.model)[0].kind is FieldKind.STRING


def test_a_title_names_a_field_and_a_long_string_is_prose():
    model = model_of({"n": {"type": "string", "title": "Customer number"}, "body": {"type": "string", "maxLength": 5000}})
    fields = {f.pointer: f for f in fields_for(model)}
    assert fields["/n"].label == "Customer number" and fields["/body"].kind is FieldKind.PROSE


# --- what is refused, and where -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "pointer", "keyword"),
    [
        ({"properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}, "/properties/a/anyOf", "anyOf"),
        ({"properties": {"a": {"oneOf": [{"type": "string"}]}}}, "/properties/a/oneOf", "oneOf"),
        ({"properties": {"a": {"allOf": [{"type": "string"}]}}}, "/properties/a/allOf", "allOf"),
        ({"properties": {"a": {"type": "string", "not": {"const": "x"}}}}, "/properties/a/not", "not"),
        ({"properties": {"a": {"type": "string"}}, "if": {}, "then": {}}, "/if", "if"),
        ({"properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                               "patternProperties": {"^x": {"type": "string"}}}}}, "/properties/a/patternProperties", "patternProperties"),
        ({"properties": {"a": {"type": ["string", "integer"]}}}, "/properties/a/type", "type"),
        ({"properties": {"a": {"type": "string", "format": 5}}}, "/properties/a/format", "format"),
        ({"properties": {"a": {"type": "string", "maxLenght": 3}}}, "/properties/a/maxLenght", "maxLenght"),
        ({"properties": {"a": {"type": "integer", "maxLength": 3}}}, "/properties/a/maxLength", "maxLength"),
        ({"properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}, "/properties/a/uniqueItems", "uniqueItems"),
        ({"properties": {"a": {"type": "array", "items": [{"type": "string"}]}}}, "/properties/a/items", "items"),
        ({"properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                               "additionalProperties": {"type": "string"}}}}, "/properties/a/additionalProperties", "additionalProperties"),
        ({"properties": {"a": {"$ref": "http://example.com/x.json"}}}, "/properties/a/$ref", "$ref"),
        ({"properties": {"a": {"$ref": "#/$defs/node"}},
          "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}},
         "/$defs/node/properties/next/$ref", "$ref"),
        ({"properties": {"a": {"type": "tuple"}}}, "/properties/a/type", "type"),
        ({"properties": {"a": {"type": "integer", "x-prose": True}}}, "/properties/a/x-prose", "x-prose"),
        ({"properties": {"a": {"type": "string", "$defs": {}}}}, "/properties/a/$defs", "$defs"),
    ],
)
def test_each_unsupported_keyword_names_itself_and_its_pointer(schema, pointer, keyword):
    schema = {"type": "object", **schema}
    with pytest.raises(SchemaError) as info:
        model_from_json_schema(schema, source="mine.schema.json")
    err = info.value
    assert isinstance(err, InputError)
    assert err.pointer == pointer and err.keyword == keyword
    assert str(err).startswith(f"mine.schema.json: {pointer}: ")
    assert keyword in err.message and "\n" not in str(err)


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        ([1, 2], "/", "must be a JSON object"),
        ({"type": "array", "items": {"type": "string"}}, "/", "root must be an object"),
        ({"type": "object", "properties": {}}, "/properties", "at least one property"),
        ({"type": "object"}, "/", "at least one property"),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "/required/0", "'b'"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "/properties/a/$ref", "no definition"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}, "/properties/a/pattern", "regular expression"),
        ({"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}, "/properties/a/minLength", "non-negative"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": []}}}, "/properties/a/enum", "non-empty"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": ["x", 1]}}}, "/properties/a/enum/1", "not of type string"),
        ({"type": "object", "properties": {"a": {}}}, "/properties/a", "needs a \"type\""),
        ({"type": "object", "properties": {"a": {"type": "array"}}}, "/properties/a", "needs items"),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "/properties/a", "needs properties"),
        ({"type": "object", "properties": {"a": "string"}}, "/properties/a", "must be an object"),
        ({"type": "object", "properties": {"a": {"type": "number", "minimum": "0"}}}, "/properties/a/minimum", "must be a number"),
    ],
)
def test_a_malformed_schema_is_refused_with_its_place(schema, pointer, words):
    with pytest.raises(SchemaError) as info:
        model_from_json_schema(schema, source="mine.schema.json")
    assert info.value.pointer == pointer
    assert words in str(info.value)


def test_files_invalid_json_and_unknown_names(tmp_path):
    bad = tmp_path / "broken.schema.json"
    bad.write_text('{\n  "type": "object",\n  "properties": {\n    "a": {"type": "string"},\n  }\n}\n')
    with pytest.raises(InputError, match=r"^broken\.schema\.json: line 5, column 3: invalid JSON"):
        resolve_schema(bad)
    with pytest.raises(InputError, match="no such schema file"):
        resolve_schema(tmp_path / "nowhere.json")
    with pytest.raises(InputError, match="unknown schema 'receipts'.*invoice.*path to a JSON Schema file"):
        resolve_schema("receipts")
    with pytest.raises(KeyError, match="unknown schema"):
        schema_model("receipts")  # the registry's own error for a name stays a KeyError
    unsupported = tmp_path / "x.schema.json"
    unsupported.write_text(json.dumps({"type": "object", "properties": {"items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}))
    with pytest.raises(SchemaError, match=r"^x\.schema\.json: /properties/items/anyOf: anyOf is not supported \(livefill supports"):
        resolve_schema(str(unsupported))


def test_resolve_schema_gives_one_source_per_schema_and_reloads_an_edited_file(tmp_path):
    bundled = resolve_schema("invoice")
    assert isinstance(bundled, SchemaSource) and bundled.bundled and bundled.model is SCHEMAS["invoice"]
    assert bundled.path is None and bundled.schema_json is None and bundled.name == "invoice"
    path = tmp_path / "thing.schema.json"
    path.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}))
    first = resolve_schema(path)
    assert first.name == "thing" and first.path == path and not first.bundled
    assert resolve_schema(str(path)) is first and schema_model(str(path)) is first.model
    assert first.json_schema["title"] == "thing"
    assert resolve_schema(first.json_schema).name == "thing"  # inline, it keeps its name
    path.write_text(json.dumps({"title": "Thing two", "type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}))
    second = resolve_schema(path)
    assert second is not first and second.name == "thing_two" and list(second.json_schema["properties"]) == ["b"]
    with pytest.raises(AttributeError):
        second.name = "x"  # type: ignore[misc]


def test_run_settings_take_a_schema_file_and_refuse_an_unusable_one(tmp_path):
    settings = RunSettings(schema_name=str(RECEIPT))
    assert settings.schema_name == str(RECEIPT)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"type": "object", "properties": {"a": {"oneOf": []}}}))
    with pytest.raises(ValueError, match=r"bad\.json: /properties/a/oneOf"):
        settings.with_(schema_name=str(bad))


# --- a user schema through real runs -------------------------------------------------------------------


def tool_frames(body: dict[str, Any], headers: Any, value: Any, size: int = 7) -> list[bytes]:
    """An Anthropic SSE stream (the demo provider's own frames) whose tool input is `value`."""
    wire = AnthropicWire()
    parsed = wire.parse(body, headers)
    stream = wire.open_stream(parsed, tool_name=parsed.tool_name or "record", input_tokens=10, seed=1)
    text = json.dumps(value, ensure_ascii=False)
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return [*stream.preamble(), *(t.data for t in stream.token_frames(pieces)), *stream.finish(StopKind.COMPLETE, text, len(pieces))]


class FakeUpstream:
    """An Anthropic-shaped provider that answers every request with `value` as the tool input."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.bodies: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        async def messages(request: Request) -> StreamingResponse:
            body = await request.json()
            self.bodies.append(body)
            frames = tool_frames(body, request.headers, self.value)

            async def gen():
                for frame in frames:
                    yield frame
                    await asyncio.sleep(0)

            return StreamingResponse(gen(), media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])


@pytest.fixture(scope="module")
def upstream():
    fake = FakeUpstream(RECEIPT_VALUE)
    with LoopbackServer(fake.app()) as srv:
        srv.fake = fake
        yield srv


async def test_partial_run_with_a_user_schema_over_a_provider_stream_commits(upstream):
    src = resolve_schema(RECEIPT)
    form = FormModel(src.model)
    seen: dict[str, set[FieldState]] = {}
    form.subscribe(lambda update: [seen.setdefault(p, set()).add(form.state(p)) for p in ("/remarks", "/items/0/description")])
    config = RunConfig(mode=Mode.PARTIAL, provider="anthropic", base_url=upstream.url, api_key="k",
                       schema_name=str(RECEIPT), document=(EXAMPLES / "receipt.txt").read_text())
    run = Run(form, config)
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == RECEIPT_VALUE
    assert FieldState.PROVISIONAL in seen["/remarks"] and FieldState.SETTLED in seen["/remarks"]
    body = upstream.fake.bodies[-1]
    assert body["tools"][0]["name"] == "record_receipt"
    assert body["tools"][0]["input_schema"] == src.json_schema
    assert "BÄCKEREI KORNFELD" in body["messages"][0]["content"]


async def test_partial_run_with_a_fake_source_fails_at_the_first_bad_value():
    src = resolve_schema(RECEIPT)
    bad = {**RECEIPT_VALUE, "total": 0}
    text = json.dumps(bad)
    events = [*(ArgsDelta(text=text[i : i + 5]) for i in range(0, len(text), 5)), BlockStop(), Stop(reason=StopReason.COMPLETE)]

    def source(tap):
        class Ctx:
            async def __aenter__(self):
                async def gen():
                    for e in events:
                        yield e
                return gen()

            async def __aexit__(self, *exc):
                return False

        return Ctx()

    form = FormModel(src.model)
    run = Run(form, RunConfig(mode=Mode.PARTIAL, schema_json=load_schema_file(RECEIPT)), source=source)
    status = await run.run()
    assert status.phase is Phase.FAILED and status.pointer == "/total"
    assert "greater than 0" in status.reason and form.committed == {}


async def test_a_run_with_an_unusable_schema_fails_with_one_line_before_any_request(upstream):
    before = len(upstream.fake.bodies)
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": 5}}}
    form = FormModel(resolve_schema(RECEIPT).model)
    run = Run(form, RunConfig(mode=Mode.PARTIAL, provider="anthropic", base_url=upstream.url, schema_json=schema, document="x"))
    status = await run.run()
    assert status.phase is Phase.FAILED
    assert status.reason == "schema: /properties/a/format: format must be a string, not a number"
    assert len(upstream.fake.bodies) == before


@pytest.fixture(scope="module")
def relay_to_fake(upstream):
    app = create_relay_app(token="tok", demo_base_url=upstream.url, idle_timeout=5.0)
    with LoopbackServer(app) as srv:
        yield srv


@pytest.mark.parametrize("mode", [Mode.SETTLED, Mode.HYBRID])
async def test_settled_run_through_the_relay_with_an_inline_schema_commits(upstream, relay_to_fake, mode):
    src = resolve_schema(RECEIPT)
    form = FormModel(src.model)
    states: list[FieldState] = []
    form.subscribe(lambda update: states.append(form.state("/remarks")))
    # the relay's upstream is the provider it was started with (here the fake), as for the demo
    config = RunConfig(mode=mode, provider="anthropic", base_url=relay_to_fake.url, relay_token="tok",
                       demo=DemoKnobs(), schema_json=load_schema_file(RECEIPT),
                       document=(EXAMPLES / "receipt.txt").read_text())
    status = await Run(form, config).run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == RECEIPT_VALUE
    assert upstream.fake.bodies[-1]["tools"][0]["input_schema"] == src.json_schema
    # hybrid: the x-prose field grows provisionally from delta records before it settles
    assert (FieldState.PROVISIONAL in states) is (mode is Mode.HYBRID)


async def test_the_relay_checks_records_with_the_inline_model(upstream, relay_to_fake):
    schema = {"title": "Receipt", "type": "object", "properties": {"total": {"type": "number", "maximum": 10}}}
    records = []
    async with open_relay(relay_to_fake.url, "tok", {"schema": schema, "document": "d", "mode": "settled"}) as stream:
        with pytest.raises(ValidationFailed) as info:
            async for record in stream:
                records.append(record)
    assert isinstance(records[0], StartRecord) and records[0].schema_name == "receipt"
    assert info.value.pointer == "/total" and not any(isinstance(r, CompleteRecord) for r in records)


async def test_the_relay_refuses_an_unsupported_inline_schema_with_400(relay_to_fake):
    body = {"schema": {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}}, "document": "d"}
    async with httpx.AsyncClient() as client:
        response = await client.post(relay_to_fake.url + "/relay/v1/extract", json=body, headers={"authorization": "Bearer tok"})
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("schema: /properties/a/oneOf: oneOf is not supported")
    with pytest.raises(SchemaError, match="oneOf"):  # the client refuses it before sending
        async with open_relay(relay_to_fake.url, "tok", body):
            pass


# --- the demo provider knows only its scenarios ------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "ollama"])
async def test_the_demo_provider_refuses_a_document_of_ones_own(demo_server, provider):
    form = FormModel(resolve_schema(RECEIPT).model)
    config = RunConfig(mode=Mode.PARTIAL, provider=provider, base_url=demo_server.url, schema_name=str(RECEIPT),
                       document=(EXAMPLES / "receipt.txt").read_text())
    status = await Run(form, config).run()
    assert status.phase is Phase.FAILED and status.error_code == "upstream_error"
    assert "\n" not in status.reason
    assert "400" in status.reason and "knows only its bundled scenarios" in status.reason, status.reason


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "ollama"])
async def test_the_demo_provider_refuses_its_own_document_with_another_schema(demo_server, provider):
    from livefill.extraction.scenarios import get_scenario

    form = FormModel(resolve_schema(RECEIPT).model)
    config = RunConfig(mode=Mode.PARTIAL, provider=provider, base_url=demo_server.url, schema_name=str(RECEIPT),
                       document=get_scenario("invoice").document)
    status = await Run(form, config).run()
    assert status.phase is Phase.FAILED and "\n" not in status.reason
    assert "knows only its bundled scenarios" in status.reason and "the schema asked for" in status.reason, status.reason
    assert "merchant" in status.reason and "not the invoice scenario's" in status.reason


async def test_the_relay_passes_the_demo_refusal_on_as_one_line(demo_server):
    body = {"schema": load_schema_file(RECEIPT), "document": "my own text", "provider": "openai-chat"}
    with pytest.raises(UpstreamError) as info:
        async with open_relay(demo_server.url, demo_server.relay_token, body) as stream:
            async for _ in stream:
                pass
    assert "knows only its bundled scenarios" in str(info.value) and "\n" not in str(info.value)


def test_example_documents_sit_beside_their_schemas():
    for schema in EXAMPLES.glob("*.schema.json"):
        document = schema.with_name(schema.name.removesuffix(".schema.json") + ".txt")
        assert document.is_file(), document
        assert fields_for(resolve_schema(schema).model)


def test_repository_paths_are_what_the_tests_think():
    assert Path(RECEIPT).is_file()


@pytest.mark.parametrize("mode", [Mode.PARTIAL, Mode.SETTLED])
async def test_a_run_about_ones_own_document_does_not_ask_for_the_scenario_by_name(demo_server, mode):
    """The app's demo knobs name the scenario; a document of one's own must still reach the demo
    provider as what it is, so it says it only knows its scenarios instead of playing the invoice."""
    from livefill.demo.protocol import DemoKnobs

    form = FormModel(schema_model("invoice"))
    config = RunConfig(mode=mode, provider="anthropic", base_url=demo_server.url, relay_token=demo_server.relay_token,
                       schema_name="invoice", document="Invoice no. 9 from me to you", demo=DemoKnobs(scenario="invoice"))
    status = await Run(form, config).run()
    assert status.phase is Phase.FAILED and "knows only its bundled scenarios" in status.reason, status.reason
    assert "\n" not in status.reason
    # the scenario's own document with its own schema is still asked for by name
    from livefill.extraction.scenarios import get_scenario

    config = RunConfig(mode=mode, provider="anthropic", base_url=demo_server.url, relay_token=demo_server.relay_token,
                       schema_name="invoice", document=get_scenario("invoice").document, demo=DemoKnobs(scenario="invoice"))
    status = await Run(FormModel(schema_model("invoice")), config).run()
    assert status.phase is Phase.COMMITTED, status.reason


def test_the_session_shows_and_configures_a_schema_file():
    from livefill.session.session import Session

    document = (EXAMPLES / "receipt.txt").read_text()
    session = Session(RunSettings(schema_name=str(RECEIPT), document=document))
    assert session.form.schema_model is resolve_schema(RECEIPT).model
    assert session.form.spec_for("/items/0/unit_price").kind is FieldKind.NUMBER
    config = session.run_config()
    assert config.schema_name == str(RECEIPT) and config.document == document
    assert Run(FormModel(session.form.schema_model), config).schema_source() is resolve_schema(RECEIPT)
