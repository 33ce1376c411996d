"""The settler: unified stream events in, relay v1 records out (sans-IO). See RELAY.md.

How this works
--------------
`Settler` feeds the text of every `ArgsDelta` to a `core.prefix.PrefixParser`, which reports, per
JSON Pointer, when a value is PENDING, PROVISIONAL or SETTLED — a SETTLED change comes out of the
very `feed` that delivered the value's settling character, so a record made from it is never
earlier than that byte. Every pointer is looked up in a `SchemaIndex`, a tree of the pydantic
model built lazily from the field annotations:

    OBJECT  a pydantic model        children by JSON key (alias when one is set)
    ARRAY   list / set / tuple[X, ...]   one item node, integer indices
    MAP     dict[str, X]            one value node, any key
    LEAF    anything else           validated whole, never looked into (str, int, date, Literal,
                                    unions, Any ...)

A SETTLED change becomes (first rule that applies):

    pointer is an array element, no array element above it      -> `item` (the element, whole)
    pointer lies inside an array element                         -> no record (its item carries
                                                                     it); a scalar is checked early
    the root                                                     -> whole-model check, no record
    value is a scalar, an empty [] / {}, or the node is a LEAF   -> `field`
    a non-empty object or array                                  -> its own check, no record
                                                                     (its children carried it)

Before a record is made its value is validated in JSON mode against its own node's type: a
`TypeAdapter` of `Annotated[annotation, *field_info.metadata]` (the field's constraints, so
`Field(strict=True, gt=0)` applies), the
item type for array elements, the nested model for objects. Containers are checked after the
changes of the same feed, deepest first, so a nested model is judged after its children. The first
failure ends the run with `error` `validation_failed` and the pointer (made precise with the
pydantic error location); the failing value is never sent. A pointer the schema does not have (an
extra key in a model that forbids extras) fails the same way as soon as its key arrives. In hybrid
mode a PROVISIONAL string at a prose node (`json_schema_extra={"x-prose": True}`) also yields a
`delta` with the text appended since the last one.

The run's phases and what each input does in them are one table, `_TRANSITIONS`. Stream endings:
`Stop(COMPLETE|OTHER)` closes the parser and, if the whole object validated, sends `complete`;
`Stop(LENGTH)` / EOF (`close()`) without a terminal -> `truncated`; `ProviderError` and
`Stop(REFUSAL)` -> `upstream_error`; bytes that can never be JSON -> `protocol_error`. After a
terminal record every further event is ignored; the caller cancels upstream.
"""

from __future__ import annotations

import json
import secrets
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from core.errors import ProtocolError, RunFailure, UsageError
from core.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, StreamEvent, TextDelta
from core.prefix import IncompleteJSON, JSONPrefixError, PrefixParser, ValueState
from core.relay_records import (
    MAX_LINE_BYTES,
    CompleteRecord,
    DeltaRecord,
    ErrorRecord,
    FieldRecord,
    ItemRecord,
    StartRecord,
    encode_record,
)
from core.schemas import SCHEMAS

__all__ = [
    "Mode",
    "NodeKind",
    "Resolved",
    "SchemaIndex",
    "SchemaNode",
    "Settler",
    "escape_token",
    "split_pointer",
]

Mode = Literal["settled", "hybrid"]

# A delta's text is cut so that its record stays well under the client's line limit.
_DELTA_CHARS = 2048


# --- JSON Pointers ------------------------------------------------------------------------------


def escape_token(token: str) -> str:
    """One reference token escaped for a JSON Pointer (RFC 6901: ~ -> ~0, / -> ~1)."""
    return token.replace("~", "~0").replace("/", "~1")


def split_pointer(pointer: str) -> list[str] | None:
    """The unescaped tokens of `pointer` ("" -> []), or None if it is not a JSON Pointer."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    tokens = pointer[1:].split("/")
    out = []
    for token in tokens:
        if "~" in token:
            if any(token[i + 1 : i + 2] not in ("0", "1") for i, ch in enumerate(token) if ch == "~"):
                return None
            token = token.replace("~1", "/").replace("~0", "~")
        out.append(token)
    return out


def _is_index(token: str) -> bool:
    return token.isdigit() and token.isascii() and (token == "0" or token[0] != "0")


# --- the schema tree -------------------------------------------------------------------------------


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
    prose: bool = False

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
            out[key] = SchemaNode(info.annotation, info, _is_prose(info))
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
        annotation = self._shape[1]
        return SchemaNode(annotation, None, _is_prose_annotation(annotation))

    @cached_property
    def adapter(self) -> TypeAdapter[Any]:
        """Validates a value at this place, constraints included."""
        info = self.field_info
        if info is None or not (info.metadata or info.discriminator):
            return TypeAdapter(self.annotation)
        extra = [Field(discriminator=info.discriminator)] if info.discriminator else []
        return TypeAdapter(Annotated[(self.annotation, *info.metadata, *extra)])  # type: ignore[valid-type]

    def describe(self) -> str:
        return {NodeKind.OBJECT: "an object", NodeKind.ARRAY: "an array", NodeKind.MAP: "an object"}.get(
            self.kind, "a value"
        )


def _is_prose(info: FieldInfo) -> bool:
    extra = info.json_schema_extra
    return isinstance(extra, Mapping) and extra.get("x-prose") is True


def _is_prose_annotation(annotation: Any) -> bool:
    if typing.get_origin(annotation) is Annotated:
        return any(isinstance(m, FieldInfo) and _is_prose(m) for m in typing.get_args(annotation)[1:])
    return False


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
        return self.pointer.rsplit("/", 1)[0]


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
        tokens = split_pointer(pointer)
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
                    where = "/".join(escape_token(t) for t in tokens[:i]) or "the root"
                    return Resolved(pointer, None, depth=len(tokens), reason=f"key {token!r} is not in the schema ({'/' + where if tokens[:i] else where})")
                node = child
            elif kind is NodeKind.ARRAY:
                if not _is_index(token):
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


# --- the settler -----------------------------------------------------------------------------------


class _Phase(Enum):
    READY = "ready"  # nothing sent yet
    OPEN = "open"  # `start` sent, values are being settled
    DONE = "done"  # a terminal record was sent; everything after it is ignored
    CLOSED = "closed"  # close() was called


# (phase, input) -> (next phase, what to do). Inputs: begin, event, fail, close.
# "start" = send `start` first; "handle" = settle the event; "error"/"truncated" = terminal error.
_TRANSITIONS: dict[tuple[_Phase, str], tuple[_Phase, tuple[str, ...]]] = {
    (_Phase.READY, "begin"): (_Phase.OPEN, ("start",)),
    (_Phase.OPEN, "begin"): (_Phase.OPEN, ()),
    (_Phase.DONE, "begin"): (_Phase.DONE, ()),
    (_Phase.READY, "event"): (_Phase.OPEN, ("start", "handle")),
    (_Phase.OPEN, "event"): (_Phase.OPEN, ("handle",)),
    (_Phase.DONE, "event"): (_Phase.DONE, ()),
    (_Phase.READY, "fail"): (_Phase.DONE, ("start", "error")),
    (_Phase.OPEN, "fail"): (_Phase.DONE, ("error",)),
    (_Phase.DONE, "fail"): (_Phase.DONE, ()),
    (_Phase.READY, "close"): (_Phase.CLOSED, ("start", "truncated")),
    (_Phase.OPEN, "close"): (_Phase.CLOSED, ("truncated",)),
    (_Phase.DONE, "close"): (_Phase.CLOSED, ()),
    (_Phase.CLOSED, "close"): (_Phase.CLOSED, ()),
    # (_Phase.CLOSED, begin | event | fail): misuse, UsageError
}


class _Stop(Exception):
    """Internal: the run ends here with this error record's code / message / pointer."""

    def __init__(self, code: str, message: str, pointer: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.pointer = code, message, pointer


@dataclass
class _Counters:
    seq: int = 0
    units: int = 0  # field + item records sent


class Settler:
    """Turn one run's stream events into relay v1 records.

    `feed(event)` returns the records the event produced (the first call also returns `start`);
    `close()` marks upstream EOF (a run that has not ended gets `error` `truncated`). `begin()`
    returns `start` on its own, for a server that wants it on the wire before upstream answers;
    `fail(exc)` ends the run with the error record for a failure met outside the events (a
    `core.errors.RunFailure`, a `ProtocolError`, or a relay error code string). `done` turns true
    with the terminal record. Records are pydantic models from `core.relay_records`.
    """

    def __init__(
        self,
        schema_model: type[BaseModel],
        *,
        mode: Mode = "settled",
        run_id: str | None = None,
        provider: str = "",
        schema_name: str | None = None,
    ) -> None:
        if mode not in ("settled", "hybrid"):
            raise UsageError(f"mode must be 'settled' or 'hybrid', not {mode!r}")
        self.schema_model = schema_model
        self.mode: Mode = mode
        self.run_id = run_id or f"run_{secrets.token_hex(4)}"
        self.provider = provider
        self.schema_name = schema_name or _schema_name_of(schema_model)
        self.index = SchemaIndex(schema_model)
        self._parser = PrefixParser()
        self._phase = _Phase.READY
        self._n = _Counters()
        self._json_block: int | None = None  # the ArgsDelta index the document comes in
        self._prose_sent: dict[str, int] = {}  # prose pointer -> characters already sent as deltas
        self._settled: set[str] = set()
        self._root_valid = False
        self.terminal: CompleteRecord | ErrorRecord | None = None

    # -- public -------------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """A terminal record (`complete` or `error`) has been produced."""
        return self.terminal is not None

    @property
    def units(self) -> int:
        """Field and item records produced so far."""
        return self._n.units

    def begin(self) -> list[Any]:
        """`[start]` if it has not been produced yet, else `[]`."""
        return self._step("begin", None)

    def feed(self, event: StreamEvent) -> list[Any]:
        """The records `event` produced (in order, seq numbered)."""
        return self._step("event", event)

    def fail(self, failure: BaseException | str, message: str | None = None) -> list[Any]:
        """End the run with an error record for `failure` (ignored once the run has ended).

        `failure` is a RunFailure (its `code`, message and pointer are used), a ProtocolError
        (`protocol_error`), or an error code string with `message`.
        """
        return self._step("fail", (failure, message))

    def close(self) -> list[Any]:
        """Upstream EOF: `error` `truncated` if the run has not ended, else nothing."""
        return self._step("close", None)

    # -- the table ----------------------------------------------------------------------------------

    def _step(self, what: str, arg: Any) -> list[Any]:
        try:
            nxt, actions = _TRANSITIONS[(self._phase, what)]
        except KeyError:
            raise UsageError(f"Settler.{'feed' if what == 'event' else what}() after close()") from None
        self._phase = nxt
        out: list[Any] = []
        for action in actions:
            if action == "start":
                out.append(self._make(StartRecord, run=self.run_id, schema=self.schema_name, provider=self.provider))
            elif action == "handle":
                try:
                    self._handle(arg, out)
                except _Stop as stop:
                    out.append(self._error(stop.code, stop.message, stop.pointer))
            elif action == "error":
                out.append(self._error(*_failure_fields(*arg)))
            elif action == "truncated":
                out.append(self._error("truncated", "the upstream stream ended before its terminal"))
        if self.terminal is not None and self._phase is _Phase.OPEN:
            self._phase = _Phase.DONE
        return out

    # -- events -------------------------------------------------------------------------------------

    def _handle(self, event: StreamEvent, out: list[Any]) -> None:
        if isinstance(event, ArgsDelta):
            if self._json_block is None:
                self._json_block = event.index
            elif event.index != self._json_block:
                raise _Stop(
                    "protocol_error",
                    f"a second JSON document began (block {event.index} after block {self._json_block}); "
                    "the relay extracts one",
                )
            try:
                changes = self._parser.feed(event.text)
            except JSONPrefixError as exc:
                raise _Stop("protocol_error", f"the model's JSON is malformed at offset {exc.offset}: {exc}") from None
            self._settle(changes, out)
        elif isinstance(event, Stop):
            self._finish(event, out)
        elif isinstance(event, ProviderError):
            raise _Stop("upstream_error", f"the provider reported an error: {event.kind}: {event.message}")
        elif isinstance(event, (TextDelta, BlockStop, KeepAlive)):
            return  # prose outside the JSON, the block's end (the Stop decides), a ping
        else:
            raise UsageError(f"not a stream event: {event!r}")

    def _finish(self, stop: Stop, out: list[Any]) -> None:
        raw = f" ({stop.raw})" if stop.raw else ""
        if stop.reason is StopReason.LENGTH:
            raise _Stop("truncated", f"the model hit its output token limit{raw}; the JSON is cut off")
        if stop.reason is StopReason.REFUSAL:
            raise _Stop("upstream_error", f"the model refused or was filtered{raw}")
        if self._json_block is None:
            raise _Stop("upstream_error", f"the model stopped{raw} without writing the JSON document")
        try:
            changes = self._parser.close()
        except IncompleteJSON as exc:
            raise _Stop("truncated", f"the model stopped{raw} before the JSON document was complete: {exc}") from None
        except JSONPrefixError as exc:  # pragma: no cover - close() raises only IncompleteJSON
            raise _Stop("protocol_error", str(exc)) from None
        self._settle(changes, out)
        if not self._root_valid:  # pragma: no cover - the root settles before close() returns
            raise _Stop("truncated", "the JSON document never completed")
        out.append(self._make(CompleteRecord, fields=self._n.units))
        self.terminal = out[-1]

    # -- values -------------------------------------------------------------------------------------

    def _settle(self, changes: list[Any], out: list[Any]) -> None:
        deferred: list[tuple[Resolved, Any]] = []
        for change in changes:
            res = self.index.resolve(change.pointer)
            if res.opaque:
                continue
            node = res.node
            if node is None:
                raise _Stop("validation_failed", f"{change.pointer}: {res.reason}", change.pointer)
            state = change.state
            if state is ValueState.PENDING:
                continue
            value = change.value
            if isinstance(value, (dict, list)):
                self._check_shape(res, value)  # before its children: they would not resolve
            if state is ValueState.PROVISIONAL:
                if self.mode == "hybrid" and node.prose and isinstance(value, str):
                    self._delta(change.pointer, value, out)
                continue
            # SETTLED
            if change.pointer in self._settled:
                raise _Stop("protocol_error", f"{change.pointer or 'the root'} appeared twice (a duplicate key)", change.pointer)
            self._settled.add(change.pointer)
            container = isinstance(value, (dict, list)) and bool(value)
            if res.pointer == "":
                deferred.append((res, value))
            elif res.is_item:
                self._check(res, node, value)
                out.append(self._make(ItemRecord, pointer=res.parent, index=res.index, value=value))
                self._n.units += 1
            elif res.in_element:
                if not container:
                    self._check(res, node, value)  # early: the element is checked whole when it settles
            elif not container or node.kind is NodeKind.LEAF:
                self._check(res, node, value)
                out.append(self._make(FieldRecord, pointer=res.pointer, value=value))
                self._n.units += 1
            else:
                deferred.append((res, value))
        for res, value in sorted(deferred, key=lambda rv: -rv[0].depth):
            assert res.node is not None
            self._check(res, res.node, value)
            if res.pointer == "":
                self._root_valid = True

    def _check_shape(self, res: Resolved, value: dict | list) -> None:
        node = res.node
        assert node is not None
        want_list = node.kind is NodeKind.ARRAY
        if node.kind is not NodeKind.LEAF and want_list != isinstance(value, list):
            got = "an array" if isinstance(value, list) else "an object"
            raise _Stop("validation_failed", f"{res.pointer or 'the root'}: expected {node.describe()}, got {got}", res.pointer)

    def _check(self, res: Resolved, node: SchemaNode, value: Any) -> None:
        try:
            node.adapter.validate_json(json.dumps(value))
        except ValidationError as exc:
            pointer = self._error_pointer(res.pointer, exc)
            first = exc.errors(include_url=False)[0]
            raise _Stop("validation_failed", f"{pointer or 'the root'}: {first['msg']} (got {_short(value)})", pointer) from None

    def _error_pointer(self, base: str, exc: ValidationError) -> str:
        errors = exc.errors(include_url=False)
        pointer = base
        for part in errors[0]["loc"] if errors else ():
            candidate = f"{pointer}/{escape_token(str(part))}"
            if not self.index.known(candidate):
                break
            pointer = candidate
        return pointer

    def _delta(self, pointer: str, value: str, out: list[Any]) -> None:
        sent = self._prose_sent.get(pointer, 0)
        if len(value) <= sent:
            return
        for start in range(sent, len(value), _DELTA_CHARS):
            out.append(self._make(DeltaRecord, pointer=pointer, text=value[start : start + _DELTA_CHARS]))
        self._prose_sent[pointer] = len(value)

    # -- records ------------------------------------------------------------------------------------

    def _make(self, cls: type, **fields: Any) -> Any:
        record = cls(seq=self._n.seq, **fields)
        if cls in (FieldRecord, ItemRecord) and len(encode_record(record)) - 1 > MAX_LINE_BYTES:
            raise _Stop(
                "validation_failed",
                f"{fields['pointer']}: the value is too large for one relay v1 record (over {MAX_LINE_BYTES} bytes)",
                fields["pointer"],
            )
        self._n.seq += 1
        return record

    def _error(self, code: str, message: str, pointer: str | None = None) -> ErrorRecord:
        record = self._make(ErrorRecord, code=code, message=_clip(message), pointer=pointer)
        self.terminal = record
        self._phase = _Phase.DONE if self._phase is not _Phase.CLOSED else _Phase.CLOSED
        return record


def _failure_fields(failure: BaseException | str, message: str | None) -> tuple[str, str, str | None]:
    if isinstance(failure, str):
        return failure, message or failure, None
    if isinstance(failure, RunFailure):
        return failure.code, message or failure.message or type(failure).__name__, failure.pointer
    if isinstance(failure, ProtocolError):
        return "protocol_error", message or str(failure) or "protocol error", None
    return "upstream_error", message or f"{type(failure).__name__}: {failure}", None


def _schema_name_of(model: type[BaseModel]) -> str:
    for name, candidate in SCHEMAS.items():
        if candidate is model:
            return name
    return model.__name__.lower()


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clip(message: str, limit: int = 2000) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
