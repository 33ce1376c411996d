"""A person's own JSON Schema as a pydantic model: `model_from_json_schema`, `load_schema_file`.

The form, the checks, the relay and the commit check use a user schema exactly as they use a
bundled model; anything livefill cannot use raises `SchemaError` naming the keyword and where it
is. `livefill.extraction.schemas.resolve_schema` is the one lookup of any schema spec. What is
understood, and why: docs/notes/user-schemas.md.
"""

from __future__ import annotations

import json
import keyword
import re
import types
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn, Optional, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from livefill.extraction import pointer as jp
from livefill.errors import InputError
from livefill.extraction.schema_keywords import (
    ALL_TYPED,
    ANNOTATIONS,
    BY_TYPE,
    FORMAT_CHECKS,
    KNOWN,
    NUMBER_BOUNDS,
    ROOT_ONLY,
    SCALARS,
    SUPPORTED,
    BadType,
    SchemaError,
    is_type,
    json_type,
    node_type,
)

__all__ = [
    "load_schema_file",
    "model_from_json_schema",
    "schema_name_for",
]

# ---------------------------------------------------------------------------------------------
# JSON Schema -> pydantic model


def _identifier(text: str, fallback: str) -> str:
    name = re.sub(r"\W+", "_", text).strip("_")
    if not name:
        name = fallback
    if name[0].isdigit():
        name = "_" + name
    return name


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[\W_]+", text) if part) or "Object"


class _Builder:
    def __init__(self, root: Mapping[str, Any], source: str, name: str) -> None:
        self.root = root
        self.source = source
        self.name = name
        self.models: dict[str, Any] = {}  # a $ref -> the annotation its definition became
        self.resolving: list[str] = []
        self.used_names: set[str] = set()

    def fail(self, pointer: str, message: str, keyword: str | None = None) -> NoReturn:
        raise SchemaError(message, source=self.source, pointer=pointer or "/", keyword=keyword)

    def unsupported(self, pointer: str, key: str) -> NoReturn:
        self.fail(jp.child(pointer, key), f"{key} is not supported ({SUPPORTED})", key)

    def model_name(self, hint: str) -> str:
        base = _identifier(hint, "Object")
        name, n = base, 2
        while name in self.used_names:
            name, n = f"{base}{n}", n + 1
        self.used_names.add(name)
        return name

    # -- the root ---------------------------------------------------------------------------

    def build(self) -> type[BaseModel]:
        root = self.root
        if not isinstance(root, Mapping):
            self.fail("", f"the schema must be a JSON object, not {json_type(root)}")
        for defs_key in ("$defs", "definitions"):
            defs = root.get(defs_key)
            if defs is not None and not isinstance(defs, Mapping):
                self.fail(f"/{defs_key}", f"{defs_key} must be an object of named schemas")
        if "$ref" in root:
            self.fail("/$ref", "the root must be an object schema itself, not a $ref", "$ref")
        typ = root.get("type", "object" if "properties" in root else None)
        if typ != "object":
            got = f"type {json.dumps(typ)}" if typ is not None else "no type"
            self.fail("", f'the root must be an object ("type": "object" with "properties"), not {got}')
        props = root.get("properties")
        if not isinstance(props, Mapping) or not props:
            self.fail("/properties" if "properties" in root else "", "the root object needs at least one property")
        return self.object_model("", root, self.name, root=True)

    # -- objects ----------------------------------------------------------------------------

    def object_model(self, pointer: str, node: Mapping[str, Any], hint: str, *, root: bool = False) -> type[BaseModel]:
        self.check_keywords(pointer, node, "object", root=root)
        props = node.get("properties", {})
        if not isinstance(props, Mapping):
            self.fail(jp.child(pointer, "properties"), "properties must be an object")
        if not props:
            self.fail(pointer, "an object needs properties (free-form objects are not supported)")
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            self.fail(jp.child(pointer, "required"), "required must be a list of property names")
        for i, req in enumerate(required):
            if req not in props:
                where = jp.child(jp.child(pointer, "required"), i)
                self.fail(where, f"required names {req!r}, which is not in properties")
        extra = node.get("additionalProperties", True)
        if isinstance(extra, Mapping):
            where = jp.child(pointer, "additionalProperties")
            self.fail(where, "additionalProperties with a schema is not supported (only false)", "additionalProperties")
        if not isinstance(extra, bool):
            self.fail(jp.child(pointer, "additionalProperties"), "additionalProperties must be true or false")
        fields: dict[str, Any] = {}
        for i, (key, sub) in enumerate(props.items()):
            where = jp.child(jp.child(pointer, "properties"), key)
            field_name = self.field_name(key, i, fields)
            # the JSON key is the alias of a Python name it cannot be itself ("unit-price", "from")
            fields[field_name] = self.field(where, sub, None if field_name == key else key, key in required)
        config = ConfigDict(extra="forbid" if extra is False else "ignore", regex_engine="python-re")
        title = node.get("title")
        if isinstance(title, str) and title:
            config["title"] = title
        name = self.model_name(hint if root else _camel(hint))
        description = node.get("description")
        try:
            model = create_model(  # type: ignore[call-overload]
                name,
                __config__=config,
                __doc__=description if isinstance(description, str) else None,
                __module__=__name__,
                **fields,
            )
        except Exception as exc:  # pydantic refused a combination we let through
            self.fail(pointer, f"cannot be built: {exc}")
        return model

    def field_name(self, key: str, index: int, taken: Mapping[str, Any]) -> str:
        ok = key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_")
        ok = ok and not key.startswith("model_") and not hasattr(BaseModel, key) and key not in taken
        return key if ok else f"field_{index}"

    def field(self, pointer: str, node: Any, alias: str | None, required: bool) -> tuple[Any, FieldInfo]:
        if not isinstance(node, Mapping):
            self.fail(pointer, f"a property's schema must be an object, not {json_type(node)}")
        annotation = self.annotation(pointer, node, jp.parse(pointer)[-1])
        kwargs: dict[str, Any] = {} if alias is None else {"alias": alias}
        title = node.get("title")
        if isinstance(title, str) and title:
            kwargs["title"] = title
        description = node.get("description")
        if description is not None:
            if not isinstance(description, str):
                self.fail(jp.child(pointer, "description"), "description must be a string")
            kwargs["description"] = description
        extra = self.extensions(pointer, node)
        if extra:
            kwargs["json_schema_extra"] = extra
        if not required:
            if not _allows_null(annotation):
                annotation = Optional[annotation]  # noqa: UP007 - a runtime type, built here
            kwargs["default"] = node.get("default")
        return annotation, Field(**kwargs)

    def extensions(self, pointer: str, node: Mapping[str, Any]) -> dict[str, Any]:
        extra = {k: v for k, v in node.items() if k.startswith("x-")}
        if "x-prose" in extra:
            if not isinstance(extra["x-prose"], bool):
                self.fail(jp.child(pointer, "x-prose"), "x-prose must be true or false")
            if self.effective_type(node) != "string":
                self.fail(jp.child(pointer, "x-prose"), "x-prose applies to strings only", "x-prose")
        return extra

    def effective_type(self, node: Mapping[str, Any]) -> str | None:
        """The type of `node` once a nullable idiom and local $refs are looked through."""
        for _ in range(32):
            ref = node.get("$ref")
            if isinstance(ref, str) and (m := re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)):
                target = (self.root.get(m.group(1)) or {}).get(jp.unescape(m.group(2)))
                if not isinstance(target, Mapping):
                    return None
                node = target
                continue
            arms = node.get("anyOf")
            if isinstance(arms, list):
                others = [a for a in arms if isinstance(a, Mapping) and dict(a) != {"type": "null"}]
                if len(others) == 1:
                    node = others[0]
                    continue
            try:
                return node_type(node)
            except BadType:
                return None
        return None

    # -- any schema -------------------------------------------------------------------------

    def annotation(self, pointer: str, node: Mapping[str, Any], hint: str) -> Any:
        """The Python type (constraints in Annotated) the schema `node` at `pointer` stands for."""
        if "$ref" in node:
            for key in node:
                if key != "$ref" and key not in ANNOTATIONS and not key.startswith("x-"):
                    message = f"{key} beside $ref is not supported (only title, description, default)"
                    self.fail(jp.child(pointer, key), message, key)
            return self.ref(jp.child(pointer, "$ref"), node["$ref"])
        nullable = self.nullable_arm(pointer, node)
        if nullable is not None:
            arm_pointer, arm = nullable
            inner = self.annotation(arm_pointer, arm, hint)
            return inner if _allows_null(inner) else Optional[inner]  # noqa: UP007
        for key in node:  # a keyword livefill does not know at all is named first, wherever it is
            if key not in KNOWN and not key.startswith("x-"):
                self.unsupported(pointer, key)
        for key in ("enum", "const"):
            if key in node:
                return self.literal(pointer, node, key)
        typ = node_type(node)
        if typ is None:
            self.fail(pointer, 'a schema needs a "type" (or enum, const, $ref)')
        if typ == "object":
            return self.object_model(pointer, node, hint)
        self.check_keywords(pointer, node, typ)
        if typ == "array":
            return self.array(pointer, node, hint)
        return self.scalar(pointer, node, typ)

    def nullable_arm(self, pointer: str, node: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
        """For `"type": [T, "null"]` or `"anyOf": [X, {"type": "null"}]`: the non-null schema."""
        typ = node.get("type")
        if isinstance(typ, list):
            kinds = [t for t in typ if t != "null"]
            if len(typ) != 2 or len(kinds) != 1 or not isinstance(kinds[0], str):
                message = f'a list of types is supported only as [T, "null"], got {json.dumps(typ)}'
                self.fail(jp.child(pointer, "type"), message, "type")
            return pointer, {**node, "type": kinds[0]}
        arms = node.get("anyOf")
        if isinstance(arms, list) and len(arms) == 2:
            nulls = [i for i, a in enumerate(arms) if isinstance(a, Mapping) and dict(a) == {"type": "null"}]
            if len(nulls) == 1:
                other = 1 - nulls[0]
                for key in node:
                    if key != "anyOf" and key not in ANNOTATIONS and not key.startswith("x-"):
                        self.fail(jp.child(pointer, key), f"{key} beside anyOf is not supported", key)
                arm = arms[other]
                if not isinstance(arm, Mapping):
                    self.fail(jp.child(jp.child(pointer, "anyOf"), other), "must be a schema object")
                return jp.child(jp.child(pointer, "anyOf"), other), arm
        return None

    def check_keywords(self, pointer: str, node: Mapping[str, Any], typ: str, *, root: bool = False) -> None:
        allowed = BY_TYPE[typ] | ANNOTATIONS | {"type"} | (ROOT_ONLY if root else frozenset())
        for key in node:
            if key in allowed or key.startswith("x-"):
                continue
            if key in ALL_TYPED:
                self.fail(jp.child(pointer, key), f"{key} does not apply to type {typ}", key)
            if key in ROOT_ONLY:
                self.fail(jp.child(pointer, key), f"{key} is supported only at the root of the schema", key)
            self.unsupported(pointer, key)

    def literal(self, pointer: str, node: Mapping[str, Any], key: str) -> Any:
        where = jp.child(pointer, key)
        values = node[key] if key == "enum" else [node[key]]
        if not isinstance(values, list) or not values:
            self.fail(where, "enum must be a non-empty list")
        for i, v in enumerate(values):
            if not (v is None or isinstance(v, (str, int, float, bool))):
                message = f"{key} values must be strings, numbers, booleans or null, not {json_type(v)}"
                self.fail(jp.child(where, i) if key == "enum" else where, message)
        typ = node_type(node)
        for other in node:
            if other not in (key, "type") and other not in ANNOTATIONS and not other.startswith("x-"):
                self.fail(jp.child(pointer, other), f"{other} beside {key} is not supported", other)
        if typ is not None:
            if typ not in SCALARS:
                message = f"{key} needs a string, number, integer or boolean type, not {typ}"
                self.fail(jp.child(pointer, "type"), message)
            for i, v in enumerate(values):
                if v is not None and not is_type(v, typ):
                    self.fail(jp.child(where, i) if key == "enum" else where, f"{json.dumps(v)} is not of type {typ}")
        return Literal[tuple(values)]  # type: ignore[valid-type]

    def ref(self, pointer: str, ref: Any) -> Any:
        if not isinstance(ref, str):
            self.fail(pointer, "$ref must be a string")
        match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)
        if match is None:
            self.fail(pointer, f"$ref {ref!r} is not supported (only local references like \"#/$defs/NAME\")", "$ref")
        section, token = match.group(1), jp.unescape(match.group(2))
        defs = self.root.get(section)
        if not isinstance(defs, Mapping) or token not in defs:
            self.fail(pointer, f"$ref {ref!r} names no definition in {section}")
        if ref in self.models:
            return self.models[ref]
        if ref in self.resolving:
            chain = " -> ".join([*self.resolving[self.resolving.index(ref):], ref])
            self.fail(pointer, f"recursive $ref is not supported ({chain})", "$ref")
        target = defs[token]
        if not isinstance(target, Mapping):
            self.fail(f"/{section}/{jp.escape(token)}", "a definition must be a schema object")
        self.resolving.append(ref)
        try:
            annotation = self.annotation(f"/{section}/{jp.escape(token)}", target, token)
        finally:
            self.resolving.pop()
        self.models[ref] = annotation
        return annotation

    def array(self, pointer: str, node: Mapping[str, Any], hint: str) -> Any:
        items = node.get("items")
        where = jp.child(pointer, "items")
        if items is None:
            self.fail(pointer, "an array needs items (the schema of its elements)")
        if not isinstance(items, Mapping):
            self.fail(where, "items must be one schema object (tuple arrays are not supported)", "items")
        item = self.annotation(where, items, hint[:-1] if hint.endswith("s") and len(hint) > 1 else f"{hint}_item")
        constraints = {}
        for key, arg in (("minItems", "min_length"), ("maxItems", "max_length")):
            if key in node:
                constraints[arg] = self.count(jp.child(pointer, key), node[key])
        if "minItems" in node and "maxItems" in node and node["minItems"] > node["maxItems"]:
            self.fail(jp.child(pointer, "maxItems"), "maxItems is less than minItems")
        return Annotated[list[item], Field(**constraints)] if constraints else list[item]  # type: ignore[valid-type]

    def scalar(self, pointer: str, node: Mapping[str, Any], typ: str) -> Any:
        base: Any = SCALARS[typ]
        constraints: dict[str, Any] = {}
        if typ == "string":
            fmt = node.get("format")
            if fmt is not None and not isinstance(fmt, str):
                self.fail(jp.child(pointer, "format"), f"format must be a string, not {json_type(fmt)}", "format")
            if fmt == "date":
                base = date
                constraints["strict"] = True
            elif fmt is not None:  # checked if livefill knows it, else an annotation; sent upstream as is
                constraints["json_schema_extra"] = {"format": fmt}
            for key, arg in (("minLength", "min_length"), ("maxLength", "max_length")):
                if key in node:
                    constraints[arg] = self.count(jp.child(pointer, key), node[key])
            if "minLength" in node and "maxLength" in node and node["minLength"] > node["maxLength"]:
                self.fail(jp.child(pointer, "maxLength"), "maxLength is less than minLength")
            if "pattern" in node:
                pattern = node["pattern"]
                if not isinstance(pattern, str):
                    self.fail(jp.child(pointer, "pattern"), "pattern must be a string")
                try:
                    re.compile(pattern)
                except re.error as exc:
                    self.fail(jp.child(pointer, "pattern"), f"pattern is not a valid regular expression: {exc}")
                constraints["pattern"] = pattern
            if base is date and set(constraints) - {"strict"}:
                extra = sorted(k for k in ("minLength", "maxLength", "pattern") if k in node)
                self.fail(jp.child(pointer, extra[0]), f"{extra[0]} does not apply to format: date", extra[0])
            if fmt in FORMAT_CHECKS:
                conforms, called = FORMAT_CHECKS[fmt]
                return Annotated[base, AfterValidator(_format_check(conforms, called)), Field(**constraints)]
        else:
            constraints["strict"] = True
            fmt = node.get("format")
            if fmt is not None:  # an annotation for a number: sent upstream as is, not checked
                if not isinstance(fmt, str):
                    self.fail(jp.child(pointer, "format"), f"format must be a string, not {json_type(fmt)}", "format")
                constraints["json_schema_extra"] = {"format": fmt}
            for key, arg in NUMBER_BOUNDS.items():
                if key in node:
                    value = node[key]
                    if isinstance(value, bool) or not isinstance(value, (int, float)):
                        self.fail(jp.child(pointer, key), f"{key} must be a number, not {json_type(value)}")
                    if key == "multipleOf" and value <= 0:
                        self.fail(jp.child(pointer, key), "multipleOf must be greater than 0")
                    constraints[arg] = value
        return Annotated[base, Field(**constraints)] if constraints else base

    def count(self, pointer: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(pointer, f"must be a non-negative integer, not {json.dumps(value)}")
        return value


def _format_check(conforms: Callable[[str], bool], called: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        if not conforms(text):
            raise PydanticCustomError("format", "Input should be {called}", {"called": called})
        return text

    return check


def _allows_null(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return type(None) in get_args(annotation)
    if origin is Literal:
        return None in get_args(annotation)
    return annotation is type(None)


def model_from_json_schema(schema: Any, *, source: str = "schema", name: str | None = None) -> type[BaseModel]:
    """A pydantic model for the JSON Schema `schema` (see the module docstring); SchemaError if
    it uses anything livefill does not support. `source` names the schema in messages; `name` is
    the root model's name (default: from the schema's title)."""
    builder = _Builder(schema, source, name or schema_name_for(schema if isinstance(schema, Mapping) else {}))
    try:
        return builder.build()
    except BadType as exc:
        # a "type" that is not one of JSON Schema's: find where, for the message
        pointer = _find_bad_type(schema, exc.typ, "") or "/"
        raise SchemaError(
            f"type {json.dumps(exc.typ)} is not supported ({SUPPORTED})", source=source, pointer=pointer, keyword="type"
        ) from None
    except RecursionError:
        raise SchemaError("the schema is nested too deeply", source=source) from None


def _find_bad_type(node: Any, typ: Any, pointer: str) -> str | None:
    if isinstance(node, Mapping):
        if "type" in node and node["type"] == typ and not isinstance(typ, list):
            return jp.child(pointer, "type")
        children = node.items()
    elif isinstance(node, list):
        children = enumerate(node)
    else:
        return None
    for key, sub in children:
        found = _find_bad_type(sub, typ, jp.child(pointer, key))
        if found:
            return found
    return None


# ---------------------------------------------------------------------------------------------
# Files and names


def schema_name_for(schema: Mapping[str, Any], path: Path | None = None) -> str:
    """The name a user schema goes by (tool name `record_<name>`, history, relay `start`): its
    title, else the file's name without `.schema.json` / `.json`, as lowercase [a-z0-9_]."""
    title = schema.get("title") if isinstance(schema, Mapping) else None
    if isinstance(title, str) and title.strip():
        text = title
    elif path is not None:
        text = path.name.removesuffix(".json").removesuffix(".schema")
    else:
        text = "custom"
    slug = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")[:48]
    return slug or "custom"


def load_schema_file(path: str | Path) -> dict[str, Any]:
    """The JSON document in `path`; InputError naming the file (and the line and column of bad JSON)."""
    path = Path(path)
    label = path.name
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{label}: no such schema file ({path})") from None
    except IsADirectoryError:
        raise InputError(f"{label}: is a directory, not a JSON Schema file") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{label}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}") from None
    return data
