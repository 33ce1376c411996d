"""livefill/extraction/schema.py: one reading of a schema for the form, the run, the relay and the relay client."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ConfigDict, Field

from livefill.errors import ValidationFailed
from livefill.extraction.schema import (
    PROSE_MIN_LENGTH,
    FieldKind,
    FieldSpec,
    SchemaIndex,
    check,
    check_document,
    fields_for,
    is_prose,
)
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SCHEMAS


def _form_pointers(specs: tuple[FieldSpec, ...], base: str = "") -> dict[str, bool]:
    """Every concrete pointer the form has a field for (a table row / chip at index 0), -> prose."""
    out: dict[str, bool] = {}
    for spec in specs:
        pointer = base + spec.pointer if base else spec.pointer
        if spec.kind is FieldKind.OBJECT:
            out.update(_form_pointers(spec.children))
        elif spec.kind is FieldKind.TABLE:
            out.update(_form_pointers(spec.children, pointer + "/0"))
        elif spec.kind is FieldKind.CHIPS:
            out[pointer + "/0"] = spec.item_kind is FieldKind.PROSE
        else:
            out[pointer] = spec.kind is FieldKind.PROSE
    return out


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_form_and_relay_agree_on_prose_for_every_bundled_schema(name):
    model = SCHEMAS[name]
    index = SchemaIndex(model)
    pointers = _form_pointers(fields_for(model))
    assert pointers
    for pointer, form_prose in pointers.items():
        node = index.resolve(pointer).node
        assert node is not None, pointer
        assert node.prose == form_prose, pointer


def test_bundled_schemas_have_prose_fields():
    prose = {name for name, model in SCHEMAS.items() if any(_form_pointers(fields_for(model)).values())}
    assert {"invoice", "ticket"} <= prose


class Custom(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(max_length=80)
    body: str = Field(max_length=PROSE_MIN_LENGTH + 1)
    marked: str | None = Field(default=None, json_schema_extra={"x-prose": True})
    count: int = Field(ge=0, json_schema_extra={"x-prose": True})
    tags: list[str] = []


def test_one_prose_rule_x_prose_or_a_long_max_length_on_strings_only():
    assert is_prose({"type": "string", "x-prose": True})
    assert is_prose({"type": "string", "maxLength": PROSE_MIN_LENGTH + 1})
    assert not is_prose({"type": "string", "maxLength": PROSE_MIN_LENGTH})
    assert not is_prose({"type": "integer", "x-prose": True})
    index = SchemaIndex(Custom)
    got = {p: index.resolve(p).node.prose for p in ("/title", "/body", "/marked", "/count", "/tags/0")}
    assert got == {"/title": False, "/body": True, "/marked": True, "/count": False, "/tags/0": False}
    assert _form_pointers(fields_for(Custom)) == got


def test_check_names_the_failing_place_precisely():
    index = SchemaIndex(SCHEMAS["invoice"])
    check(index, "/amount", 1200)
    with pytest.raises(ValidationFailed) as info:
        check(index, "/amount", "twelve hundred")
    assert info.value.pointer == "/amount" and "twelve hundred" in info.value.message
    with pytest.raises(ValidationFailed) as info:
        check(index, "/line_items/0", {"sku": "A", "description": "d", "unit_price": 1.0})
    assert info.value.pointer == "/line_items/0/qty" and "required" in info.value.message.lower()


def test_check_document_is_the_whole_object_check():
    invoice = get_scenario("invoice")
    check_document(SCHEMAS["invoice"], json.loads(invoice.output_text))
    with pytest.raises(ValidationFailed) as info:
        check_document(SCHEMAS["invoice"], json.loads(invoice.invalid_output_text))
    assert info.value.pointer == "/amount"
    with pytest.raises(ValidationFailed, match="JSON-serialisable"):
        check_document(SCHEMAS["invoice"], {"x": object()})
