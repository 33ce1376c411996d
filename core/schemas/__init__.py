"""Pydantic models of the bundled extractions, by schema name.

Fields whose value is free prose carry `json_schema_extra={"x-prose": True}`: hybrid mode streams
them as deltas and the form shows them as growing multi-line text.

A person's own JSON Schema file is read by `core.user_schema`; `schema_model` accepts its path too,
and `resolve_schema` (core.user_schema) is the one lookup of any schema spec.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from core.schemas.catalog import Catalog
from core.schemas.invoice import Invoice
from core.schemas.multilingual import ContactCard
from core.schemas.ticket import Ticket
from core.schemas.weather import WeatherQuery

if TYPE_CHECKING:
    from core.user_schema import SchemaSource

SCHEMAS: dict[str, type[BaseModel]] = {
    "invoice": Invoice,
    "weather": WeatherQuery,
    "ticket": Ticket,
    "multilingual": ContactCard,
    "catalog": Catalog,
}

PROSE = {"x-prose": True}


def schema_model(name: str | Path) -> type[BaseModel]:
    """The model registered under `name`, or read from the JSON Schema file `name` names (a path:
    core.user_schema.SchemaError / InputError if it cannot be used); KeyError names the known
    schemas for any other name."""
    if isinstance(name, str) and name in SCHEMAS:
        return SCHEMAS[name]
    from core.user_schema import is_schema_path, resolve_schema

    if isinstance(name, Path) or (isinstance(name, str) and is_schema_path(name)):
        return resolve_schema(name).model
    raise KeyError(f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMAS))}")


def resolve_schema(spec: str | Path | dict[str, Any]) -> SchemaSource:
    """core.user_schema.resolve_schema: a bundled name, a JSON Schema file or dict -> SchemaSource."""
    from core.user_schema import resolve_schema as resolve

    return resolve(spec)
