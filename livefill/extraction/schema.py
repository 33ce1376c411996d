"""One reading of a pydantic schema model, for the form, the run, the relay and the relay client.

How this works
--------------
Two views of the same model, both built from it once and cached per model:

- `fields_for(model)`: the form's `FieldSpec`s, walked from the model's JSON Schema (kind, label,
  choices, the columns of a table ...). The form is generated from these; no scenario has a
  hand-made form.
- `SchemaIndex(model)`: the model as a tree of `SchemaNode`s, looked up by JSON Pointer, each able
  to validate the value at its place with its own constraints:

      OBJECT  a pydantic model             children by JSON key (alias when one is set)
      ARRAY   list / set / tuple[X, ...]   one item node, integer indices
      MAP     dict[str, X]                 one value node, any key
      LEAF    anything else                validated whole, never looked into (str, int, date,
                                           Literal, unions, Any ...)

Both views ask the one prose rule, `is_prose` (a string marked `x-prose`, or one allowed more than
`PROSE_MIN_LENGTH` characters), on the JSON Schema of a field, so the form's PROSE widgets and the
relay's hybrid deltas always agree. `check` and `check_document` are the one place where a
pydantic `ValidationError` becomes a `livefill.errors.ValidationFailed` with a precise pointer.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from livefill.extraction import pointer as jp
from livefill.errors import UsageError, ValidationFailed, text_safe

__all__ = [
    "PROSE_MIN_LENGTH",
    "FieldKind",
    "FieldSpec",
    "NodeKind",
    "Resolved",
    "SchemaIndex",
    "SchemaNode",
    "check",
    "check_document",
    "fields_for",
    "is_prose",
]

PROSE_MIN_LENGTH = 200
"""A string whose schema allows more than this many characters is prose."""


def is_prose(node: Mapping[str, Any]) -> bool:
    """The prose rule, on a (resolved) JSON Schema node: a string marked x-prose or a long one."""
    if node.get("type") != "string":
        return False
    return bool(node.get("x-prose")) or int(node.get("maxLength", 0)) > PROSE_MIN_LENGTH


def _resolve(node: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """Follow `$ref`s and drop the `null` branch of an Optional (`anyOf [X, null]`)."""
    node = dict(node)
    for _ in range(32):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            merged = dict(defs[name])
            merged.update({k: v for k, v in node.items() if k != "$ref"})
            node = merged
            continue
        alternatives = node.get("anyOf") or node.get("oneOf")
        if alternatives:
            non_null = [a for a in alternatives if a.get("type") != "null"]
            if len(non_null) == 1:
                merged = dict(non_null[0])
                merged.update({k: v for k, v in node.items() if k not in ("anyOf", "oneOf")})
                node = merged
                continue
        return node
    raise UsageError("JSON Schema $ref chain too deep")


# ---------------------------------------------------------------------------------------------
# The form's view: FieldSpecs


class FieldKind(Enum):
    STRING = "string"  # one-line text
    PROSE = "prose"  # multi-line, growing text (see is_prose)
    NUMBER = "number"  # a float, right-aligned
    INTEGER = "integer"  # an int, right-aligned
    ENUM = "enum"  # one of a few strings, shown as a chip
    BOOLEAN = "boolean"  # a check
    DATE = "date"  # an ISO date string
    OBJECT = "object"  # a titled group of fields
    TABLE = "table"  # an array of objects: one row per item, one column per (flattened) field
    CHIPS = "chips"  # an array of scalars: one chip per element


@dataclass(frozen=True, kw_only=True, slots=True)
class FieldSpec:
    """One field of the form, derived from the JSON Schema.

    `pointer` is absolute for fields outside arrays (`/customer_name`, `/address/city`); for the
    columns of a TABLE it is relative to a row (`/qty`, `/dimensions/width_cm`).
    """

    pointer: str
    name: str
    label: str
    kind: FieldKind
    description: str = ""
    required: bool = True
    choices: tuple[str, ...] = ()
    children: tuple[FieldSpec, ...] = ()  # OBJECT: its fields; TABLE: its columns
    item_kind: FieldKind | None = None  # CHIPS: the kind of one element


def _label(name: str, node: Mapping[str, Any]) -> str:
    title = node.get("title")
    if title and title.replace(" ", "").lower() != name.replace("_", "").lower():
        return str(title)
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else name


def _kind(node: Mapping[str, Any], defs: Mapping[str, Any]) -> FieldKind:
    if "enum" in node or "const" in node:
        return FieldKind.ENUM
    typ = node.get("type")
    if typ == "string":
        if is_prose(node):
            return FieldKind.PROSE
        if node.get("format") == "date":
            return FieldKind.DATE
        return FieldKind.STRING
    if typ == "number":
        return FieldKind.NUMBER
    if typ == "integer":
        return FieldKind.INTEGER
    if typ == "boolean":
        return FieldKind.BOOLEAN
    if typ == "object" or "properties" in node:
        return FieldKind.OBJECT
    if typ == "array":
        items = _resolve(node.get("items", {}), defs)
        return FieldKind.TABLE if _kind(items, defs) is FieldKind.OBJECT else FieldKind.CHIPS
    return FieldKind.STRING


def _spec(name: str, pointer: str, node: Mapping[str, Any], defs: Mapping[str, Any], required: bool) -> FieldSpec:
    node = _resolve(node, defs)
    kind = _kind(node, defs)
    choices: tuple[str, ...] = ()
    children: tuple[FieldSpec, ...] = ()
    item_kind = None
    if kind is FieldKind.ENUM:
        choices = tuple(str(c) for c in node.get("enum", [node.get("const")]))
    elif kind is FieldKind.OBJECT:
        children = _object_specs(node, defs, pointer)
    elif kind is FieldKind.TABLE:
        children = _columns(_object_specs(_resolve(node["items"], defs), defs, ""))
    elif kind is FieldKind.CHIPS:
        items = _resolve(node.get("items", {}), defs)
        item_kind = _kind(items, defs)
        if item_kind is FieldKind.ENUM:
            choices = tuple(str(c) for c in items.get("enum", []))
    return FieldSpec(
        pointer=pointer,
        name=name,
        label=_label(name, node),
        kind=kind,
        description=str(node.get("description", "")),
        required=required,
        choices=choices,
        children=children,
        item_kind=item_kind,
    )


def _object_specs(node: Mapping[str, Any], defs: Mapping[str, Any], base: str) -> tuple[FieldSpec, ...]:
    required = set(node.get("required", ()))
    return tuple(
        _spec(name, jp.child(base, name), sub, defs, name in required)
        for name, sub in node.get("properties", {}).items()
    )


def _columns(specs: Iterable[FieldSpec]) -> tuple[FieldSpec, ...]:
    """Table columns: nested objects inside a row are flattened into their leaf fields."""
    out: list[FieldSpec] = []
    for spec in specs:
        if spec.kind is FieldKind.OBJECT:
            for child in _columns(spec.children):
                out.append(
                    FieldSpec(
                        pointer=child.pointer,
                        name=child.name,
                        label=f"{spec.label} · {child.label}",
                        kind=child.kind,
                        description=child.description,
                        required=child.required,
                        choices=child.choices,
                        children=child.children,
                        item_kind=child.item_kind,
                    )
                )
        else:
            out.append(spec)
    return tuple(out)


def fields_for(schema_model: type[BaseModel]) -> tuple[FieldSpec, ...]:
    """The top-level fields of the form for `schema_model`, derived from its JSON Schema."""
    schema = schema_model.model_json_schema()
    return _object_specs(schema, schema.get("$defs", {}), "")


# ---------------------------------------------------------------------------------------------
# The validators' view: the SchemaIndex


class NodeKind(Enum):
    OBJECT = "object"  # a pydantic model: known keys, each with its own node
    ARRAY = "array"  # a list / set / tuple[X, ...]: integer indices, one item node
    MAP = "map"  # a dict[str, X]: any key, one value node
    LEAF = "leaf"  # anything else: validated as a whole, its inside is never looked at


@dataclass(eq=False)
class SchemaNode:
    """One place in the schema: its annotation, its FieldInfo (constraints), and its shape."""

    annotation: Any
    field_info: FieldInfo | None = None

    @cached_property
    def _shape(self) -> tuple[NodeKind, Any]:
        return _shape_of(self.annotation)

    @property
    def kind(self) -> NodeKind:
        return self._shape[0]

    @cached_property
    def children(self) -> dict[str, SchemaNode]:
        """OBJECT: JSON key -> node."""
        if self.kind is not NodeKind.OBJECT:
            return {}
        model: type[BaseModel] = self._shape[1]
        out: dict[str, SchemaNode] = {}
        for name, info in model.model_fields.items():
            key = info.validation_alias if isinstance(info.validation_alias, str) else info.alias or name
            out[key] = SchemaNode(info.annotation, info)
        return out

    @cached_property
    def extra_forbidden(self) -> bool:
        """OBJECT: the model rejects keys it does not declare."""
        return self.kind is NodeKind.OBJECT and self._shape[1].model_config.get("extra") == "forbid"

    @cached_property
    def item(self) -> SchemaNode | None:
        """ARRAY: the element node; MAP: the value node."""
        if self.kind not in (NodeKind.ARRAY, NodeKind.MAP):
            return None
        return SchemaNode(self._shape[1], None)

    @cached_property
    def adapter(self) -> TypeAdapter[Any]:
        """Validates a value at this place, constraints included."""
        info = self.field_info
        if info is None or not (info.metadata or info.discriminator):
            return TypeAdapter(self.annotation)
        extra = [Field(discriminator=info.discriminator)] if info.discriminator else []
        return TypeAdapter(Annotated[(self.annotation, *info.metadata, *extra)])  # type: ignore[valid-type]

    @cached_property
    def prose(self) -> bool:
        """The value here is prose (`is_prose` on this place's JSON Schema)."""
        if self.kind is not NodeKind.LEAF:
            return False
        info = self.field_info
        if info is None:
            annotation = self.annotation
        else:  # its constraints and x- keywords, without its alias (meaningless outside a model)
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else None
            annotation = Annotated[(self.annotation, *info.metadata, Field(json_schema_extra=extra))]  # type: ignore[valid-type]
        schema = TypeAdapter(annotation).json_schema()
        return is_prose(_resolve(schema, schema.get("$defs", {})))

    def describe(self) -> str:
        return {NodeKind.OBJECT: "an object", NodeKind.ARRAY: "an array", NodeKind.MAP: "an object"}.get(
            self.kind, "a value"
        )


_ARRAY_ORIGINS = {list, set, frozenset, Sequence, typing.Sequence, typing.List, typing.Set, typing.FrozenSet}
_MAP_ORIGINS = {dict, Mapping, typing.Mapping, typing.Dict}


def _shape_of(annotation: Any) -> tuple[NodeKind, Any]:
    """The structural kind of an annotation, and the model / item type it is made of."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            arms = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(arms) == 1:  # Optional[X]: X's shape; null is a scalar and validates as such
                annotation = arms[0]
                continue
            return NodeKind.LEAF, None
        break
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return NodeKind.OBJECT, annotation
    origin = typing.get_origin(annotation) or annotation
    args = typing.get_args(annotation)
    if origin in _ARRAY_ORIGINS:
        return NodeKind.ARRAY, args[0] if args else Any
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return NodeKind.ARRAY, args[0]
    if origin in _MAP_ORIGINS and (not args or args[0] is str):
        return NodeKind.MAP, args[1] if args else Any
    return NodeKind.LEAF, None


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where a pointer lies in the schema.

    `node` is None for a pointer the schema does not have (`reason` says why), unless the pointer
    lies inside a LEAF value or under a model that ignores extra keys (`opaque`: nothing to report).
    """

    pointer: str
    node: SchemaNode | None
    depth: int = 0
    is_item: bool = False  # an array element, with no array element above it
    in_element: bool = False  # strictly inside an array element
    opaque: bool = False
    reason: str = ""

    @property
    def index(self) -> int:
        return int(self.pointer.rsplit("/", 1)[1])

    @property
    def parent(self) -> str:
        return jp.parent(self.pointer)


_ROOTS: dict[type[BaseModel], SchemaNode] = {}


class SchemaIndex:
    """A pydantic model as a tree of SchemaNodes, looked up by JSON Pointer."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        # The node tree (and the TypeAdapters it builds lazily, a millisecond or more each) is
        # shared by every index of the same model; only the pointer cache is per index.
        root = _ROOTS.get(model)
        if root is None:
            root = _ROOTS[model] = SchemaNode(model)
        self.root = root
        self._cache: dict[str, Resolved] = {}

    def resolve(self, pointer: str) -> Resolved:
        """Find `pointer` in the schema (cached; see `Resolved`)."""
        hit = self._cache.get(pointer)
        if hit is None:
            hit = self._cache[pointer] = self._resolve(pointer)
        return hit

    def known(self, pointer: str) -> bool:
        """The pointer names a place the schema has (not one inside an opaque value)."""
        res = self.resolve(pointer)
        return res.node is not None and not res.opaque

    def _resolve(self, pointer: str) -> Resolved:
        tokens = jp.parse_strict(pointer)
        if tokens is None:
            return Resolved(pointer, None, reason="is not a JSON Pointer")
        node = self.root
        in_element = False
        is_item = False
        for i, token in enumerate(tokens):
            kind = node.kind
            last = i == len(tokens) - 1
            if kind is NodeKind.LEAF:
                return Resolved(pointer, None, depth=len(tokens), opaque=True)
            if kind is NodeKind.OBJECT:
                child = node.children.get(token)
                if child is None:
                    if not node.extra_forbidden:
                        return Resolved(pointer, None, depth=len(tokens), opaque=True)
                    where = jp.join(tokens[:i]) or "the root"
                    reason = f"key {token!r} is not in the schema ({where})"
                    return Resolved(pointer, None, depth=len(tokens), reason=reason)
                node = child
            elif kind is NodeKind.ARRAY:
                if not jp.is_index(token):
                    return Resolved(pointer, None, depth=len(tokens), reason=f"{token!r} is not an array index")
                assert node.item is not None
                node = node.item
                if last and not in_element:
                    is_item = True
                elif not last:
                    in_element = True
            else:  # MAP
                assert node.item is not None
                node = node.item
        return Resolved(pointer, node, depth=len(tokens), is_item=is_item, in_element=in_element)


# ---------------------------------------------------------------------------------------------
# Checks: the one place a pydantic ValidationError becomes ValidationFailed


def check(index: SchemaIndex, pointer: str, value: Any) -> None:
    """Validate `value` (as JSON, the way it came) at `pointer`; ValidationFailed if it fails.

    The failure's pointer is made precise with pydantic's error location, as far as the schema
    knows the place. A pointer the schema does not have is not checked here.
    """
    node = index.resolve(pointer).node
    if node is not None:
        _validate(node.adapter, value, index, pointer)


def check_document(model: type[BaseModel], value: Any) -> None:
    """Validate the whole object against `model`; ValidationFailed at the first problem."""
    _validate(model, value, SchemaIndex(model), "")


def _validate(validator: Any, value: Any, index: SchemaIndex, base: str) -> None:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"not JSON-serialisable: {exc}", pointer=base or None) from None
    if not text.isascii() and text_safe(text) is not text:
        where, half = _lone_surrogate(value, base)
        raise ValidationFailed(
            f"holds half of a character (a lone surrogate, \\u{ord(half):04x}): not text", pointer=where or None
        )
    try:
        if isinstance(validator, TypeAdapter):
            validator.validate_json(text)
        else:
            validator.model_validate_json(text)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0] if errors else {}
        pointer = base
        for part in first.get("loc", ()):
            candidate = jp.child(pointer, str(part))
            if not index.known(candidate):
                break
            pointer = candidate
        got = _short(first.get("input", value))
        raise ValidationFailed(f"{first.get('msg', 'invalid')} (got {got})", pointer=pointer or None) from None


def _lone_surrogate(value: Any, base: str) -> tuple[str, str]:
    """Where in `value` (a pointer under `base`) a string or key holds a lone surrogate, and it."""
    todo = [(value, base)]
    while todo:
        item, pointer = todo.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in pairs:
            if isinstance(key, str) and text_safe(key) is not key:
                return pointer, next(c for c in key if "\ud800" <= c <= "\udfff")
            todo.append((child, jp.child(pointer, str(key))))
        if isinstance(item, str) and text_safe(item) is not item:
            return pointer, next(c for c in item if "\ud800" <= c <= "\udfff")
    return base, "\ud800"  # not reached: the caller found one


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
