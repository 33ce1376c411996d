"""Pydantic models of the bundled extractions, by schema name.

Fields whose value is free prose carry `json_schema_extra={"x-prose": True}`: hybrid mode streams
them as deltas and the form shows them as growing multi-line text.

A person's own JSON Schema file is read by `livefill.extraction.user_schema`; `schema_model` accepts its path too,
and `resolve_schema` (livefill.extraction.user_schema) is the one lookup of any schema spec.

`SCHEMAS` is a read-only mapping that imports a model's module (and so builds its pydantic
validators, and imports pydantic itself) the first time that name is looked up: the app's first
window needs one schema, not five, and none at all before it is shown.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from livefill.extraction.user_schema import SchemaSource

_WHERE: dict[str, tuple[str, str]] = {  # name -> (module, class), in the order they are offered
    "invoice": ("livefill.extraction.schemas.invoice", "Invoice"),
    "weather": ("livefill.extraction.schemas.weather", "WeatherQuery"),
    "ticket": ("livefill.extraction.schemas.ticket", "Ticket"),
    "multilingual": ("livefill.extraction.schemas.multilingual", "ContactCard"),
    "catalog": ("livefill.extraction.schemas.catalog", "Catalog"),
}


class _Registry(Mapping[str, "type[BaseModel]"]):
    """The bundled models by name; each one imported when it is first looked up (module docstring)."""

    def __init__(self, where: dict[str, tuple[str, str]]) -> None:
        self._where = where
        self._models: dict[str, type[BaseModel]] = {}

    def __getitem__(self, name: str) -> type[BaseModel]:
        model = self._models.get(name)
        if model is None:
            module, attr = self._where[name]  # KeyError for an unknown name, as a dict gives
            model = self._models[name] = getattr(importlib.import_module(module), attr)
        return model

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __repr__(self) -> str:
        return f"SCHEMAS({', '.join(self._where)})"


SCHEMAS: Mapping[str, type[BaseModel]] = _Registry(_WHERE)

PROSE = {"x-prose": True}


def schema_model(name: str | Path) -> type[BaseModel]:
    """The model registered under `name`, or read from the JSON Schema file `name` names (a path:
    livefill.extraction.user_schema.SchemaError / InputError if it cannot be used); KeyError names the known
    schemas for any other name."""
    if isinstance(name, str) and name in SCHEMAS:
        return SCHEMAS[name]
    from livefill.extraction.user_schema import is_schema_path, resolve_schema

    if isinstance(name, Path) or (isinstance(name, str) and is_schema_path(name)):
        return resolve_schema(name).model
    raise KeyError(f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMAS))}")


def resolve_schema(spec: str | Path | dict[str, Any]) -> SchemaSource:
    """livefill.extraction.user_schema.resolve_schema: a bundled name, a JSON Schema file or dict -> SchemaSource."""
    from livefill.extraction.user_schema import resolve_schema as resolve

    return resolve(spec)
