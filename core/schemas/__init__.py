"""Pydantic models of the bundled extractions, by schema name.

Fields whose value is free prose carry `json_schema_extra={"x-prose": True}`: hybrid mode streams
them as deltas and the form shows them as growing multi-line text.
"""

from __future__ import annotations

from pydantic import BaseModel

from core.schemas.catalog import Catalog
from core.schemas.invoice import Invoice
from core.schemas.multilingual import ContactCard
from core.schemas.ticket import Ticket
from core.schemas.weather import WeatherQuery

SCHEMAS: dict[str, type[BaseModel]] = {
    "invoice": Invoice,
    "weather": WeatherQuery,
    "ticket": Ticket,
    "multilingual": ContactCard,
    "catalog": Catalog,
}

PROSE = {"x-prose": True}


def schema_model(name: str) -> type[BaseModel]:
    """The model registered under `name`; KeyError names the known schemas."""
    try:
        return SCHEMAS[name]
    except KeyError:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMAS))}") from None
