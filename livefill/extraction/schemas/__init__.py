"""Pydantic models of the bundled extractions, by schema name.

Fields whose value is free prose carry `json_schema_extra={"x-prose": True}`: hybrid mode streams
them as deltas and the form shows them as growing multi-line text.

`resolve_schema` is the one lookup of any schema spec: a bundled name, a JSON Schema file (read by
`livefill.extraction.user_schema`) or a JSON Schema dict -> a `SchemaSource`; `schema_model` its model.

`SCHEMAS` is a read-only mapping that imports a model's module (and so builds its pydantic
validators, and imports pydantic itself) the first time that name is looked up: the app's first
window needs one schema, not five, and none at all before it is shown.
"""

from __future__ import annotations

import importlib
import json
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livefill.errors import InputError
from livefill.extraction.schema_keywords import SchemaError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["PROSE", "SCHEMAS", "SchemaSource", "is_schema_path", "resolve_schema", "schema_model"]

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
    SchemaError / InputError if it cannot be used); KeyError names the known schemas for any other name."""
    if isinstance(name, str) and name in SCHEMAS:
        return SCHEMAS[name]
    if isinstance(name, Path) or (isinstance(name, str) and is_schema_path(name)):
        return resolve_schema(name).model
    raise KeyError(f"unknown schema {name!r}; known: {', '.join(sorted(SCHEMAS))}")


@dataclass(frozen=True, slots=True)
class SchemaSource:
    """One schema, however it was named: `name` (a bundled name, or a user schema's name),
    `model` (the pydantic model everything validates with), `json_schema` (the model's JSON
    Schema: what providers and the relay receive), `path` (the user's file, or None)."""

    name: str
    model: type[BaseModel]
    json_schema: Mapping[str, Any]
    path: Path | None = None
    bundled: bool = False

    @property
    def schema_json(self) -> dict[str, Any] | None:
        """The JSON Schema to carry in a RunConfig / relay body: None for a bundled schema (its name
        says it all), else a copy of `json_schema`."""
        return None if self.bundled else json.loads(json.dumps(self.json_schema))


_CACHE: OrderedDict[Any, SchemaSource] = OrderedDict()
_CACHE_SIZE = 64


def _cached(key: Any, make: Callable[[], SchemaSource]) -> SchemaSource:
    hit = _CACHE.get(key)
    if hit is None:
        hit = make()
        _CACHE[key] = hit
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return hit


def _user_source(schema: Mapping[str, Any] | None, path: Path | None) -> SchemaSource:
    """A person's schema (`schema`, or the file at `path` when it is None) as a SchemaSource."""
    from livefill.extraction import user_schema  # lazy: pydantic stays unloaded until a user schema is read (430-520 ms)

    if schema is None:
        assert path is not None
        schema = user_schema.load_schema_file(path)
    name = user_schema.schema_name_for(schema, path)
    model = user_schema.model_from_json_schema(schema, source=path.name if path else "schema", name=name)
    return SchemaSource(name=name, model=model, json_schema=model.model_json_schema(), path=path)


def is_schema_path(spec: str | Path) -> bool:
    """`spec` names a file (a Path, a .json name, or anything with a directory separator)."""
    if isinstance(spec, Path):
        return True
    return spec.lower().endswith(".json") or "/" in spec or "\\" in spec


def resolve_schema(spec: str | Path | Mapping[str, Any]) -> SchemaSource:
    """The schema `spec` names: a bundled name ("invoice"), a path to a JSON Schema file, or a
    JSON Schema dict. InputError (SchemaError for a schema livefill cannot use) otherwise."""
    if isinstance(spec, Mapping):
        try:
            key = ("json", json.dumps(spec, sort_keys=True, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"is not JSON: {exc}") from None
        return _cached(key, lambda: _user_source(spec, None))
    if isinstance(spec, str) and spec in SCHEMAS:
        model = SCHEMAS[spec]
        return _cached(("bundled", spec, id(model)), lambda: SchemaSource(
            name=spec, model=model, json_schema=model.model_json_schema(), bundled=True
        ))
    if not isinstance(spec, (str, Path)):
        raise InputError(
            f"a schema is a bundled name, a path to a JSON Schema file or a JSON Schema object, not {type(spec).__name__}"
        )
    if isinstance(spec, str) and not is_schema_path(spec):
        raise InputError(
            f"unknown schema {spec!r}: give one of {', '.join(sorted(SCHEMAS))}, "
            "or a path to a JSON Schema file (.json)"
        )
    path = Path(spec).expanduser()
    try:
        stat = path.stat()
        key: Any = ("file", str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = None
    if key is None:  # no such file (or unreadable): the file's own error
        return _user_source(None, path)
    return _cached(key, lambda: _user_source(None, path))
