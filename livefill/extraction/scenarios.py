"""The bundled demo scenarios: a source document, the schema to extract, the model's output and
the right answer.

Each scenario lives in `assets/scenarios/<name>/`:

- `document.txt`  the text a person would extract from (the request's user text),
- `output.json`   the exact JSON text the "model" writes (one trailing newline is not part of it),
- `expected.json` the right answer: the fields of the document that have one right value (checked
                  by hand against `document.txt`; catalog rows mechanically). Prose (`x-prose`
                  fields) and judgement calls (a ticket's title and tags, a card's city and address
                  split, a catalog row's tags) are left out: they are not scored
                  (livefill.session.scoring),
- `scenario.json` `{"title", "schema", "tool_name", "invalid_value": {"pointer", "value"}}`; the
                  invalid value is what the demo provider's `invalid_value` fault writes at that
                  pointer instead of the real value (a value the schema rejects).

How the value replacement works: `replace_value` runs a small JSON scanner over the output text
that records the character span of every value by its JSON Pointer, then splices the new value's
JSON into that span. Everything else (spacing, escapes, key order) stays byte-identical, so an
invalid stream differs from the valid one only where the fault is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from livefill.resources import SCENARIOS_DIR
from livefill.extraction.prefix import PrefixParser, ValueState
from livefill.extraction.schemas import schema_model

#: The bundled scenarios, in the order they are listed everywhere.
SCENARIO_NAMES: tuple[str, ...] = ("invoice", "weather", "ticket", "multilingual", "catalog")


@dataclass(frozen=True, kw_only=True, slots=True)
class Scenario:
    """One bundled demo scenario (see the module docstring for the files behind it)."""

    name: str
    title: str
    document: str
    schema_name: str
    tool_name: str
    output_text: str
    output: Any
    invalid_pointer: str
    invalid_value: Any
    expected: Any = None  # the right answer (expected.json): the fields scored against it

    @property
    def invalid_output_text(self) -> str:
        """`output_text` with the value at `invalid_pointer` replaced by `invalid_value`."""
        return replace_value(self.output_text, self.invalid_pointer, self.invalid_value)

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of this scenario's pydantic model."""
        return schema_model(self.schema_name).model_json_schema()


def _strip_one_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def _read(name: str) -> Scenario:
    folder = SCENARIOS_DIR / name
    meta = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
    output_text = _strip_one_newline((folder / "output.json").read_text(encoding="utf-8"))
    invalid = meta["invalid_value"]
    return Scenario(
        name=name,
        title=meta["title"],
        document=_strip_one_newline((folder / "document.txt").read_text(encoding="utf-8")),
        schema_name=meta["schema"],
        tool_name=meta["tool_name"],
        output_text=output_text,
        output=json.loads(output_text),
        invalid_pointer=invalid["pointer"],
        invalid_value=invalid["value"],
        expected=json.loads((folder / "expected.json").read_text(encoding="utf-8")),
    )


@cache
def _load_all() -> tuple[Scenario, ...]:
    return tuple(_read(name) for name in SCENARIO_NAMES)


def load_scenarios() -> dict[str, Scenario]:
    """Every bundled scenario by name, in the order invoice, weather, ticket, multilingual, catalog.

    Files are read once per process; each call returns a fresh dict of the same frozen objects.
    """
    return {s.name: s for s in _load_all()}


def get_scenario(name: str) -> Scenario:
    """The bundled scenario `name`; KeyError names the known scenarios."""
    for scenario in _load_all():
        if scenario.name == name:
            return scenario
    raise KeyError(f"unknown scenario {name!r}; known: {', '.join(SCENARIO_NAMES)}")


# --- value spans -------------------------------------------------------------------------------


def value_spans(text: str) -> dict[str, tuple[int, int]]:
    """Map every JSON Pointer in `text` (one JSON document) to the [start, end) span of its value
    (the prefix parser's own spans). Raises `livefill.extraction.prefix.JSONPrefixError` (a ValueError) if
    `text` is not one JSON document."""
    parser = PrefixParser()
    spans: dict[str, tuple[int, int]] = {}
    for change in [*parser.feed(text), *parser.close()]:
        if change.state is ValueState.SETTLED:
            spans[change.pointer] = change.span  # type: ignore[assignment]
    return spans


def replace_value(text: str, pointer: str, new_value: Any) -> str:
    """`text` with the value at `pointer` replaced by `new_value` as compact JSON (UTF-8 kept)."""
    start, end = value_spans(text)[pointer]
    return text[:start] + json.dumps(new_value, ensure_ascii=False) + text[end:]
