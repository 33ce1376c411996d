"""livefill.wire.providers.strict_schema: schemas made strict the way the openai SDK's helper makes them,
compared with `openai.lib._pydantic.to_strict_json_schema` on pydantic models, and on tricky
hand-written schemas (optional properties, $defs, $ref with siblings, allOf, nested arrays)."""

from __future__ import annotations

import copy
import datetime
import json
from enum import Enum
from typing import Any, Literal, Optional

import pytest
from openai.lib._pydantic import _ensure_strict_json_schema, to_strict_json_schema
from pydantic import BaseModel, Field

from livefill.errors import UsageError
from livefill.wire.providers.strict_schema import OPENAI_UNSUPPORTED, openai_subset, strict_json_schema
from livefill.extraction.schemas import SCHEMAS


class Color(str, Enum):
    red = "red"
    blue = "blue"


class Address(BaseModel):
    street: str
    city: str = Field(description="the city")
    zip: Optional[str] = None


class Line(BaseModel):
    sku: str
    qty: int = Field(ge=1)
    tags: list[str]


class Tricky(BaseModel):
    name: str
    when: datetime.date
    color: Color
    kind: Literal["a", "b"]
    home: Address
    work: Optional[Address] = None
    billing: Address = Field(description="where invoices go")  # a $ref with a sibling: inlined
    lines: list[Line]
    matrix: list[list[int]]
    maybe_number: Optional[float] = None
    either: int | str


class WithMap(BaseModel):
    nested: dict[str, Address] | None = None  # a map: its additionalProperties is a schema, kept


class Tree(BaseModel):
    label: str
    children: list["Tree"]


@pytest.mark.parametrize("model", [Address, Line, Tricky, Tree, WithMap, *SCHEMAS.values()], ids=lambda m: m.__name__)
def test_equals_the_openai_sdk_helper_on_pydantic_models(model: type[BaseModel]) -> None:
    schema = model.model_json_schema()
    before = copy.deepcopy(schema)
    assert strict_json_schema(schema) == to_strict_json_schema(model)
    assert schema == before  # the input is not changed


def _objects(node: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            found.append(node)
        for value in node.values():
            found += _objects(value, root)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value, root)
    return found


@pytest.mark.parametrize("model", [Tricky, *SCHEMAS.values()], ids=lambda m: m.__name__)
def test_every_object_is_closed_and_requires_every_property(model: type[BaseModel]) -> None:
    strict = strict_json_schema(model.model_json_schema())
    objects = _objects(strict, strict)
    assert objects
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert obj.get("required", []) == list(obj.get("properties", {}))


def test_a_hand_written_optional_property_becomes_a_null_union() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "nickname": {"type": "string", "description": "if any", "maxLength": 20, "default": "x"},
            "age": {"type": ["integer", "null"]},  # already admits null: left as it is
            "grade": {"enum": ["a", "b", None]},
            "address": {"$ref": "#/$defs/Address"},
        },
        "required": ["name"],
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    strict = strict_json_schema(schema)
    props = strict["properties"]
    assert strict["required"] == ["name", "nickname", "age", "grade", "address"]
    assert props["name"] == {"type": "string", "title": "Name"}
    assert props["nickname"] == {
        "anyOf": [{"type": "string", "maxLength": 20}, {"type": "null"}],
        "description": "if any",
        "default": "x",
    }
    assert props["age"] == {"type": ["integer", "null"]}
    assert props["grade"] == {"enum": ["a", "b", None]}
    assert props["address"] == {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}
    address = strict["$defs"]["Address"]
    # `city` was optional inside the definition too
    assert address == {
        "type": "object",
        "properties": {"city": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "additionalProperties": False,
        "required": ["city"],
    }


def test_a_ref_to_a_nullable_definition_is_not_wrapped_again() -> None:
    schema = {
        "type": "object",
        "properties": {"note": {"$ref": "#/definitions/Note"}},
        "definitions": {"Note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    }
    strict = strict_json_schema(schema)
    assert strict["properties"]["note"] == {"$ref": "#/definitions/Note"}


def test_all_of_with_one_entry_is_merged_and_refs_with_siblings_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"allOf": [{"$ref": "#/$defs/P"}], "description": "merged"},
            "b": {"$ref": "#/$defs/P", "title": "B"},
        },
        "required": ["a", "b"],
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
    }
    strict = strict_json_schema(schema)
    assert strict["properties"]["b"] == {
        "type": "object", "title": "B", "properties": {"x": {"type": "integer"}},
        "required": ["x"], "additionalProperties": False,
    }
    # merged into {"$ref", "description"}: a $ref with a sibling, so inlined as well
    a = strict["properties"]["a"]
    assert "allOf" not in a and "$ref" not in a and a["description"] == "merged"
    assert a["properties"] == {"x": {"type": "integer"}} and a["additionalProperties"] is False
    # every property was required, so the SDK's own walk gives the same schema
    sdk = copy.deepcopy(schema)
    assert strict == _ensure_strict_json_schema(sdk, path=(), root=sdk)


def test_an_object_that_allows_extra_properties_keeps_its_choice() -> None:
    schema = {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}}
    strict = strict_json_schema(schema)
    assert strict["properties"]["m"]["anyOf"][0]["additionalProperties"] == {"type": "integer"}


def test_an_escaped_ref_resolves() -> None:
    schema = {
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/a~1b", "description": "d"}},
        "required": ["v"],
        "$defs": {"a/b": {"type": "string"}},
    }
    assert strict_json_schema(schema)["properties"]["v"] == {"type": "string", "description": "d"}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"v": {"$ref": "other.json#/x", "title": "t"}}},
        {"type": "object", "properties": {"v": {"$ref": "#/$defs/missing", "title": "t"}}},
        {"type": "object", "properties": {"v": "string"}},
    ],
    ids=["external-ref", "dangling-ref", "property-not-a-schema"],
)
def test_schemas_it_cannot_walk_are_usage_errors(schema: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        strict_json_schema(schema)


def test_openai_subset_drops_unsupported_keywords_but_keeps_property_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "minLength": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^[a-z]+$"},
            "tags": {"type": "array", "items": {"type": "string", "minLength": 2}, "uniqueItems": True, "maxItems": 3},
            "either": {"anyOf": [{"type": "string", "maxLength": 4}, {"type": "null"}]},
        },
        "required": ["minLength", "tags", "either"],
        "$defs": {"D": {"type": "object", "minProperties": 1, "properties": {}}},
    }
    before = copy.deepcopy(schema)
    subset = openai_subset(schema)
    assert schema == before
    assert subset["properties"]["minLength"] == {"type": "string", "pattern": "^[a-z]+$"}
    assert subset["properties"]["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 3}
    assert subset["properties"]["either"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert subset["$defs"]["D"] == {"type": "object", "properties": {}}
    assert subset["required"] == ["minLength", "tags", "either"]


@pytest.mark.parametrize("model", list(SCHEMAS.values()), ids=lambda m: m.__name__)
def test_the_bundled_schemas_sent_to_openai_have_no_unsupported_keyword(model: type[BaseModel]) -> None:
    text = json.dumps(openai_subset(strict_json_schema(model.model_json_schema())))
    assert not [k for k in OPENAI_UNSUPPORTED if f'"{k}":' in text]
