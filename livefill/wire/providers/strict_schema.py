"""A JSON Schema made *strict* for OpenAI's structured outputs (`"strict": true`).

    strict_json_schema(request.json_schema())   # a new dict; the input is not changed

For a pydantic model the result equals the openai SDK's own helper; a hand-written schema's
optional properties become unions with null. `openai_subset(schema)` then drops the keywords
OpenAI's strict mode refuses. What is done and why: docs/notes/strict-schema.md.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from livefill.errors import UsageError

__all__ = ["OPENAI_FORMATS", "OPENAI_UNSUPPORTED", "openai_subset", "strict_json_schema"]

#: Validation keywords OpenAI's strict structured outputs do not support.
OPENAI_UNSUPPORTED: frozenset[str] = frozenset(
    {"minLength", "maxLength", "minProperties", "maxProperties", "uniqueItems", "contains", "minContains", "maxContains"}
)

#: String formats OpenAI's strict structured outputs accept; any other `format` is dropped (it is an
#: annotation in JSON Schema: livefill still checks the ones it knows when a value settles).
OPENAI_FORMATS: frozenset[str] = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

# Keywords whose value is a map of names to schemas, and those whose value is a schema or a list.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")

_HOISTED = ("title", "description", "default")


def strict_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A strict copy of `schema` (see the module comment); UsageError for a schema it cannot walk."""
    if not isinstance(schema, Mapping):
        raise UsageError("a JSON Schema must be an object")
    root = copy.deepcopy(dict(schema))
    return _strict(root, path=(), root=root)


def _where(path: tuple[str, ...]) -> str:
    return "/" + "/".join(path) if path else "the root"


def _strict(node: Any, *, path: tuple[str, ...], root: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise UsageError(f"the schema at {_where(path)} is not an object")
    for key in ("$defs", "definitions"):
        defs = node.get(key)
        if isinstance(defs, dict):
            for name, sub in defs.items():
                _strict(sub, path=(*path, key, name), root=root)

    kind = node.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    properties = node.get("properties")
    if (is_object or (kind is None and isinstance(properties, dict))) and "additionalProperties" not in node:
        node["additionalProperties"] = False

    if isinstance(properties, dict):
        was_required = node.get("required")
        required = set(was_required) if isinstance(was_required, list) else set()
        node["required"] = list(properties)
        strict_props: dict[str, Any] = {}
        for name, sub in properties.items():
            walked = _strict(sub, path=(*path, "properties", name), root=root)
            if name not in required and not _admits_null(walked, root):
                walked = _nullable(walked)
            strict_props[name] = walked
        node["properties"] = strict_props

    items = node.get("items")
    if isinstance(items, dict):
        node["items"] = _strict(items, path=(*path, "items"), root=root)

    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        node["anyOf"] = [_strict(v, path=(*path, "anyOf", str(i)), root=root) for i, v in enumerate(any_of)]

    all_of = node.get("allOf")
    if isinstance(all_of, list):
        if len(all_of) == 1:
            node.update(_strict(all_of[0], path=(*path, "allOf", "0"), root=root))
            node.pop("allOf")
        else:
            node["allOf"] = [_strict(e, path=(*path, "allOf", str(i)), root=root) for i, e in enumerate(all_of)]

    if "default" in node and node["default"] is None:
        node.pop("default")

    ref = node.get("$ref")
    if ref is not None and len(node) > 1:
        resolved = _resolve(root, ref, path)
        node.update({**resolved, **node})
        node.pop("$ref")
        return _strict(node, path=path, root=root)
    return node


def _resolve(root: dict[str, Any], ref: Any, path: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise UsageError(f"the schema at {_where(path)} has $ref {ref!r}; only local references (#/...) are supported")
    target: Any = root
    for token in ref[2:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or token not in target:
            raise UsageError(f"the schema at {_where(path)} has $ref {ref!r}, which names nothing in the schema")
        target = target[token]
    if not isinstance(target, dict):
        raise UsageError(f"$ref {ref!r} at {_where(path)} does not name a schema object")
    return target


def _admits_null(node: dict[str, Any], root: dict[str, Any], depth: int = 0) -> bool:
    if depth > 32:
        return False
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in node and node["const"] is None:
        return True
    enum = node.get("enum")
    if isinstance(enum, list) and None in enum:
        return True
    for key in ("anyOf", "oneOf"):
        variants = node.get(key)
        if isinstance(variants, list) and any(isinstance(v, dict) and _admits_null(v, root, depth + 1) for v in variants):
            return True
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        try:
            return _admits_null(_resolve(root, ref, ()), root, depth + 1)
        except UsageError:
            return False
    return False


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    inner = dict(node)
    outer: dict[str, Any] = {}
    for key in _HOISTED:
        if key in inner:
            outer[key] = inner.pop(key)
    return {"anyOf": [inner, {"type": "null"}], **outer}


def openai_subset(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `schema` without the OPENAI_UNSUPPORTED keywords and without a `format` outside
    OPENAI_FORMATS (property *names* are kept)."""
    return _drop(schema, OPENAI_UNSUPPORTED, OPENAI_FORMATS)


def _drop(node: Any, names: frozenset[str], formats: frozenset[str]) -> Any:
    if not isinstance(node, Mapping):
        return copy.deepcopy(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in names or (key == "format" and value not in formats):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: _drop(sub, names, formats) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES and isinstance(value, Mapping):
            out[key] = _drop(value, names, formats)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_drop(sub, names, formats) for sub in value]
        else:
            out[key] = copy.deepcopy(value)
    return out
