"""The JSON Schema keywords livefill understands, by type, and `SchemaError` for the rest.

`livefill.extraction.user_schema` builds a pydantic model from these; docs/notes/user-schemas.md
says what each keyword becomes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from livefill.errors import InputError

__all__ = [
    "ALL_TYPED",
    "ANNOTATIONS",
    "BY_TYPE",
    "FORMATS",
    "FORMAT_CHECKS",
    "KNOWN",
    "NUMBER_BOUNDS",
    "ROOT_ONLY",
    "SCALARS",
    "SUPPORTED",
    "BadType",
    "SchemaError",
    "is_type",
    "json_type",
    "node_type",
]

SUPPORTED = (
    "livefill supports type object/string/number/integer/boolean/array, properties, required, "
    "additionalProperties: false, items, minItems, maxItems, enum, const, format, pattern, "
    "minLength, maxLength, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, "
    "$ref to $defs/definitions, nullable [T, \"null\"], title, description, default, x-prose"
)

ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment", "deprecated"})
ROOT_ONLY = frozenset({"$schema", "$id", "$defs", "definitions"})
BY_TYPE: dict[str, frozenset[str]] = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    # a number's format ("int32", "double", as OpenAPI writes them) is an annotation, kept upstream
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}),
    "boolean": frozenset(),
    "array": frozenset({"items", "minItems", "maxItems"}),
}
ALL_TYPED = frozenset().union(*BY_TYPE.values())
KNOWN = ALL_TYPED | ANNOTATIONS | ROOT_ONLY | {"type", "enum", "const", "$ref"}
SCALARS = {"string": str, "number": float, "integer": int, "boolean": bool}
NUMBER_BOUNDS = {
    "minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt", "exclusiveMaximum": "lt", "multipleOf": "multiple_of"
}
#: The string formats livefill checks ("date" also makes the value a date). Any other format is
#: an annotation, as JSON Schema says: kept in the schema sent upstream, not checked here.
FORMATS = ("date", "date-time", "email", "uri")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
_EMAIL = re.compile(r"[^@\s]+@[^@\s.][^@\s]*")  # RFC 5321 mailbox, loosely: local@domain
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*")  # RFC 3986: an absolute URI (scheme:...)


def _is_date_time(text: str) -> bool:
    if _DATE_TIME.fullmatch(text) is None:
        return False
    try:
        datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:  # 2026-02-30T..., 25:00:00 ...
        return False
    return True


#: format -> (does `text` conform?, what a value that does not is called in the message)
FORMAT_CHECKS: dict[str, tuple[Callable[[str], bool], str]] = {
    "date-time": (_is_date_time, "an RFC 3339 date-time such as 2026-03-14T09:30:00Z"),
    "email": (lambda text: _EMAIL.fullmatch(text) is not None, "an email address"),
    "uri": (lambda text: _URI.fullmatch(text) is not None, "an absolute URI such as https://example.com/"),
}


class SchemaError(InputError):
    """A JSON Schema livefill cannot use. `source` names the schema (a file name, or "schema"),
    `pointer` the place in it, `keyword` the keyword at fault (when one is)."""

    def __init__(self, message: str, *, source: str = "schema", pointer: str = "", keyword: str | None = None) -> None:
        where = f"{pointer}: " if pointer else ""
        super().__init__(f"{source}: {where}{message}")
        self.message = message
        self.source = source
        self.pointer = pointer
        self.keyword = keyword


def node_type(node: Mapping[str, Any]) -> str | None:
    """The one JSON type `node` declares (nullable lists looked through); None when it has none;
    BadType for a type that is not JSON Schema's."""
    typ = node.get("type")
    if typ is None:
        return "object" if "properties" in node else None
    if isinstance(typ, list):
        kinds = [t for t in typ if t != "null"]
        return kinds[0] if len(kinds) == 1 and isinstance(kinds[0], str) else None
    if typ not in BY_TYPE:
        raise BadType(typ)
    return typ


class BadType(Exception):
    """A "type" that is not one of JSON Schema's (`typ`); turned into a SchemaError with its place."""

    def __init__(self, typ: Any) -> None:
        super().__init__(typ)
        self.typ = typ


def is_type(value: Any, typ: str) -> bool:
    """`value` is of the scalar JSON type `typ` (a boolean is not a number)."""
    if typ == "string":
        return isinstance(value, str)
    if typ == "boolean":
        return isinstance(value, bool)
    if typ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    """What JSON type `value` is, for a message ("a string", "an object")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, Mapping) else type(value).__name__
