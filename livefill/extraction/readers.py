"""Readers: one per mode, each turning a stream's events into form changes.

How this works
--------------
A reader takes every event of one run's source (`feed(event)`) and returns the changes
`(pointer, FieldState, value)` to apply to the form's draft; at the source's end `end()` says
whether its terminal arrived, and `value(draft)` is the extraction to validate and commit.
`READERS` picks the reader by `livefill.extraction.modes.Mode` (each made with the run's
`ReaderOptions` and the schema's model):

    partial   ArgsReader (livefill.extraction.prefix + a check of every value against its own place in the
              schema as it settles); provisional strings shown unless switched off, provisional
              numbers hidden by default (12 is never shown for 1200)
    blocking  collects the text, parses it once at BlockStop: everything settles at once
    naive     livefill.extraction.naive: repair-parse the whole buffer and trust it (no states); paced to at most
              once a frame once the buffer is large (`deferred` / `flush`)
    settled   relay records: field / item are settled values; complete is the terminal
    hybrid    the same, plus delta records: prose grows provisionally

`ArgsReader` is also the relay's extraction core: `livefill.relay.settler.Settler` feeds it and only encodes
what it reports as relay records. `stop_failure` is the one map from a provider's stop reason to
the failure it means (None: a normal end, the document decides).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from livefill.extraction import pointer as jp
from livefill.defaults import MAX_NESTING
from livefill.errors import ProtocolError, RunFailure, Truncated, UpstreamError, UsageError, ValidationFailed
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, Stop, StopReason, TextDelta
from livefill.extraction.form import FieldState
from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode
from livefill.extraction.naive import NaiveReader
from livefill.extraction.prefix import Change, JSONPrefixError, PrefixParser, ValueState
from livefill.extraction.schema import NodeKind, Resolved, SchemaIndex, SchemaNode, check

__all__ = ["READERS", "ArgsReader", "Changes", "Checked", "Reader", "ReaderFactory", "ReaderOptions", "stop_failure"]

Changes = list[tuple[str, FieldState, Any]]


@dataclass(frozen=True, kw_only=True, slots=True)
class ReaderOptions:
    """What a run's reader shows before a value settles (the partial mode's display options)."""

    show_provisional_strings: bool = True  # a string still growing ("Mar" on its way to "Martinez SA")
    show_provisional_numbers: bool = False  # a number still growing (12 on its way to 1200)


def stop_failure(stop: Stop) -> RunFailure | None:
    """What a provider's stop reason means: the failure it is, or None for a normal end."""
    raw = f" ({stop.raw})" if stop.raw else ""
    if stop.reason is StopReason.LENGTH:
        return Truncated(f"the model hit its output token limit{raw}; the JSON is cut off")
    if stop.reason is StopReason.REFUSAL:
        return UpstreamError(f"the model refused or was filtered{raw}")
    return None  # COMPLETE, OTHER: whether the document is whole decides


# ---------------------------------------------------------------------------------------------
# The extraction core: one JSON document in pieces, every value checked as it settles


Checked = tuple[Change, Resolved]
"""One parser change and where its pointer lies in the schema."""


class ArgsReader:
    """livefill.extraction.prefix over the tool arguments, each value checked against its schema place at once.

    `feed(delta)` / `close()` return the parser's changes with their `Resolved` place, in order.
    Raised: ProtocolError (bytes that can never be JSON, a second document, a settled value that
    comes again under a duplicate key), ValidationFailed (a key the schema does not have, a value
    of the wrong shape, a settled value or element that fails its own type; containers are judged
    after their children, deepest first), IncompleteJSON from `close()`.
    """

    def __init__(self, schema_model: type[BaseModel]) -> None:
        self.index = SchemaIndex(schema_model)
        self._parser = PrefixParser(max_depth=MAX_NESTING)
        self.block: int | None = None  # the ArgsDelta index the document comes in
        self._settled: set[str] = set()
        self._scalars: dict[SchemaNode, str | None] = {}  # a leaf's scalar types (None: it may hold a container)
        self.root_valid = False

    def feed(self, delta: ArgsDelta, out: list[Checked] | None = None) -> list[Checked]:
        """The changes `delta` made, each checked; on a failure, `out` keeps the ones before it."""
        out = [] if out is None else out
        if self.block is None:
            self.block = delta.index
        elif delta.index != self.block:
            raise ProtocolError(
                f"a second JSON document began (block {delta.index} after block {self.block}); one is extracted"
            )
        try:
            changes = self._parser.feed(delta.text)
        except JSONPrefixError as exc:
            raise ProtocolError(f"the model's JSON is malformed at offset {exc.offset}: {exc.reason}") from None
        self._check(changes, out)
        return out

    def close(self, out: list[Checked] | None = None) -> list[Checked]:
        """The changes the end of the text made (IncompleteJSON if the document never completed)."""
        out = [] if out is None else out
        self._check(self._parser.close(), out)
        return out

    @property
    def started(self) -> bool:
        """The first byte of the document arrived."""
        return self.block is not None

    def value(self) -> Any:
        return self._parser.value()

    def _check(self, changes: list[Change], out: list[Checked]) -> None:
        deferred: list[tuple[Resolved, Any]] = []
        for change in changes:
            res = self.index.resolve(change.pointer)
            if not res.opaque:
                if res.node is None:  # fails as soon as its key arrives
                    raise ValidationFailed(res.reason, pointer=change.pointer)
                if change.state is not ValueState.PENDING:
                    self._check_value(res, change, deferred)
            out.append((change, res))
        for res, value in sorted(deferred, key=lambda rv: -rv[0].depth):
            check(self.index, res.pointer, value)
            if res.pointer == "":
                self.root_valid = True

    def _check_value(self, res: Resolved, change: Change, deferred: list[tuple[Resolved, Any]]) -> None:
        """The checks a PROVISIONAL or SETTLED change gets at once; containers wait in `deferred`."""
        node, value = res.node, change.value
        assert node is not None
        if isinstance(value, (dict, list)):
            _check_shape(res, value)  # before its children: they would not resolve
            if node.kind is NodeKind.LEAF:  # as it opens: nothing under it is looked at again
                expected = self._scalars.get(node, MISSING)
                if expected is MISSING:
                    expected = self._scalars[node] = _scalar_types(node)
                if expected:
                    got = "an array" if isinstance(value, list) else "an object"
                    raise ValidationFailed(f"expected {expected}, got {got}", pointer=res.pointer)
        if change.state is not ValueState.SETTLED:
            return
        if change.pointer in self._settled:
            raise ProtocolError(f"{change.pointer or 'the root'} appeared twice (a duplicate key)")
        self._settled.add(change.pointer)
        container = isinstance(value, (dict, list)) and bool(value)
        if res.pointer == "":
            deferred.append((res, value))  # the root: judged after everything in it
        elif res.is_item or (res.in_element and not container):
            check(self.index, res.pointer, value)  # an element whole; a scalar inside one early
        elif res.in_element:
            pass  # a container inside an element: the element is checked whole when it settles
        elif not container or node.kind is NodeKind.LEAF:
            check(self.index, res.pointer, value)
        else:
            deferred.append((res, value))


_SCALARS = {"string": "a string", "number": "a number", "integer": "an integer", "boolean": "true or false", "null": "null"}


def _scalar_types(node: SchemaNode) -> str | None:
    """What a leaf takes when its JSON Schema admits no array and no object ("a string or null"),
    None when it may take one or its schema does not say."""
    try:
        schema = node.adapter.json_schema()
    except Exception:  # a type pydantic cannot describe: nothing to judge by
        return None
    names: list[str] = []
    for arm in schema.get("anyOf") or schema.get("oneOf") or [schema]:
        kinds = arm.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not kinds or not all(kind in _SCALARS for kind in kinds):
            return None
        names += [_SCALARS[kind] for kind in kinds if _SCALARS[kind] not in names]
    return " or ".join(names)


def _check_shape(res: Resolved, value: dict | list) -> None:
    node = res.node
    assert node is not None
    if node.kind is not NodeKind.LEAF and (node.kind is NodeKind.ARRAY) != isinstance(value, list):
        got = "an array" if isinstance(value, list) else "an object"
        raise ValidationFailed(f"expected {node.describe()}, got {got}", pointer=res.pointer)


# ---------------------------------------------------------------------------------------------
# The run's readers


class Reader:
    """Events of one run in, form changes out (see the module docstring)."""

    parent_state = FieldState.PROVISIONAL  # what a container with no state yet becomes
    terminal = False
    deferred: float | None = None  # work put off: call flush() within this many seconds

    def feed(self, event: Any) -> Changes:
        raise NotImplementedError

    def flush(self) -> Changes:
        """The changes of work `feed` put off (see `deferred`)."""
        return []

    def end(self) -> None:
        """The source ended: raise why, unless its terminal arrived."""
        if not self.terminal:
            raise Truncated("the stream ended before its terminal")

    def value(self, draft: Any) -> Any:
        """The extraction to commit (`draft`: the form's document now)."""
        return draft


class _StreamReader(Reader):
    """Provider events: the arguments' text, closed at BlockStop; the Stop decides the ending."""

    def __init__(self) -> None:
        self.done = False  # the arguments ended whole
        self._block_error: ProtocolError | None = None

    def feed(self, event: Any) -> Changes:
        if isinstance(event, ArgsDelta):
            return self._args(event)
        if isinstance(event, BlockStop):
            if self.done or self._block_error is not None:
                return []
            try:
                changes = self._close()
            except ProtocolError as exc:  # incomplete arguments: the stop reason says whose fault
                self._block_error = exc
                return []
            self.done = True
            return changes
        if isinstance(event, Stop):
            failure = stop_failure(event)
            if failure is not None:
                raise failure
            if self._block_error is not None:
                raise self._block_error
            if not self.done:
                raise Truncated("the stream stopped before the tool arguments ended")
            self.terminal = True
            return []
        if isinstance(event, (TextDelta, KeepAlive)):
            return []
        raise UsageError(f"not a stream event: {event!r}")

    def end(self) -> None:
        if not self.terminal and self._block_error is not None:
            raise self._block_error
        super().end()

    def _args(self, delta: ArgsDelta) -> Changes:
        raise NotImplementedError

    def _close(self) -> Changes:
        raise NotImplementedError


_STATES = {
    ValueState.PENDING: FieldState.PENDING,
    ValueState.PROVISIONAL: FieldState.PROVISIONAL,
    ValueState.SETTLED: FieldState.SETTLED,
}


class PartialReader(_StreamReader):
    """ArgsReader on the tool arguments; provisional values filtered by the settings."""

    def __init__(self, options: ReaderOptions, schema_model: type[BaseModel]) -> None:
        super().__init__()
        self._reader = ArgsReader(schema_model)
        self._strings = options.show_provisional_strings
        self._numbers = options.show_provisional_numbers

    def _convert(self, checked: list[Checked]) -> Changes:
        out: Changes = []
        for ch, _where in checked:
            state, value = _STATES[ch.state], ch.value
            if state is FieldState.PROVISIONAL:
                if isinstance(value, str) and not self._strings:
                    state, value = FieldState.PENDING, None
                elif isinstance(value, (int, float)) and not isinstance(value, bool) and not self._numbers:
                    state, value = FieldState.PENDING, None
            out.append((ch.pointer, state, value))
        return out

    def _args(self, delta: ArgsDelta) -> Changes:
        return self._convert(self._reader.feed(delta))

    def _close(self) -> Changes:
        try:
            return self._convert(self._reader.close())
        except JSONPrefixError as exc:
            raise ProtocolError(f"the tool arguments ended incomplete: {exc}") from None

    def value(self, draft: Any) -> Any:
        return self._reader.value()


class BlockingReader(_StreamReader):
    """Collect the arguments; parse once when the block ends."""

    def __init__(self, options: ReaderOptions, schema_model: type[BaseModel]) -> None:
        super().__init__()
        self._parts: list[str] = []
        self._value: Any = MISSING

    def _args(self, delta: ArgsDelta) -> Changes:
        self._parts.append(delta.text)
        return []

    def _close(self) -> Changes:
        parser = PrefixParser(max_depth=MAX_NESTING)  # json.loads, with the same depth limit as partial
        try:
            parser.feed("".join(self._parts))
            parser.close()
        except JSONPrefixError as exc:
            raise ProtocolError(f"the tool arguments are not JSON: {exc}") from None
        self._value = parser.value()
        return [("", FieldState.SETTLED, self._value)]

    def value(self, draft: Any) -> Any:
        return self._value


class NaiveBufferReader(_StreamReader):
    """Repair-parse the whole buffer and show what it gives as if it were final.

    The parse is quadratic on purpose, but it is not let starve the other lanes: once the buffer
    holds `MIN_CHARS` (below that every delta is parsed), after a parse that took `c` seconds the
    next one waits until `min(FRAME_S, COST_RATIO * c)` has passed (deltas in between only grow the
    buffer), so it takes at most 1/(1 + COST_RATIO) of the thread and is never more than a frame
    late. `deferred` says when a deferred parse is due; the run calls `flush()` then.
    """

    FRAME_S = 1 / 60
    COST_RATIO = 19
    MIN_CHARS = 4096

    def __init__(self, options: ReaderOptions, schema_model: type[BaseModel], *, clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__()
        self._reader = NaiveReader()
        self._value: Any = None
        self._clock = clock
        self._parsed_at = -math.inf
        self._cost = 0.0
        self._chars = 0

    def _args(self, delta: ArgsDelta) -> Changes:
        self._reader.append(delta.text)
        self._chars += len(delta.text)
        if self._chars < self.MIN_CHARS:
            return self._parse()
        wait = min(self.FRAME_S, self.COST_RATIO * self._cost) - (self._clock() - self._parsed_at)
        if wait > 0:
            self.deferred = wait
            return []
        return self._parse()

    def flush(self) -> Changes:
        return self._parse() if self.deferred is not None else []

    def _parse(self) -> Changes:
        self.deferred = None
        t0 = self._clock()
        value = self._reader.value()
        self._parsed_at = self._clock()
        self._cost = self._parsed_at - t0
        if value is None:
            return []
        changes: Changes = []
        _diff_tail(self._value, value, "", changes)
        self._value = value
        return changes

    def _close(self) -> Changes:
        changes = self.flush()
        parser = PrefixParser(max_depth=MAX_NESTING)  # json.loads, but never deeper than any run takes
        try:
            parser.feed(self._reader.text)
            parser.close()
            self._value = parser.value()
        except JSONPrefixError:
            pass  # the naive client does not care
        return changes

    def value(self, draft: Any) -> Any:
        return self._value


def _diff_tail(old: Any, new: Any, ptr: str, out: Changes) -> None:
    """Changes from `old` to `new` for a repaired growing buffer: only the last member of each
    container can differ (everything before it was followed by a comma), new members are added."""
    if isinstance(new, dict) and isinstance(old, dict):
        keys = list(new)
        for i, key in enumerate(keys):
            child = jp.child(ptr, key)
            if key not in old:
                out.extend((p, FieldState.SETTLED, v) for p, v in _flatten(new[key], child).items())
            elif i >= len(keys) - 1 or i >= len(old) - 1:
                _diff_tail(old[key], new[key], child, out)
    elif isinstance(new, list) and isinstance(old, list):
        for i, item in enumerate(new):
            child = jp.child(ptr, i)
            if i >= len(old):
                out.extend((p, FieldState.SETTLED, v) for p, v in _flatten(item, child).items())
            elif i >= len(old) - 1:
                _diff_tail(old[i], item, child, out)
    elif old != new or type(old) is not type(new):
        out.extend((p, FieldState.SETTLED, v) for p, v in _flatten(new, ptr).items())


def _flatten(value: Any, root: str = "") -> dict[str, Any]:
    """Scalars by pointer, containers as empty shells (so rows appear), parents before children."""
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [(root, value)]
    while stack:
        ptr, node = stack.pop()
        if isinstance(node, dict):
            out[ptr] = {}
            stack.extend((jp.child(ptr, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            out[ptr] = []
            stack.extend((jp.child(ptr, i), v) for i, v in reversed(list(enumerate(node))))
        else:
            out[ptr] = node
    return out


class RelayReader(Reader):
    """Relay v1 records -> settled values (and provisional prose in hybrid mode).

    An `error` record never arrives here: the relay client raises it as its RunFailure.
    """

    parent_state = FieldState.PENDING  # nothing provisional is shown but prose

    def __init__(self, options: ReaderOptions, schema_model: type[BaseModel]) -> None:
        self._prose: dict[str, str] = {}

    def feed(self, event: Any) -> Changes:
        kind = getattr(event, "type", None)
        if kind == "start":
            return []
        if kind == "field":
            self._prose.pop(event.pointer, None)
            return [(event.pointer, FieldState.SETTLED, event.value)]
        if kind == "item":
            return [(jp.child(event.pointer, event.index), FieldState.SETTLED, event.value)]
        if kind == "delta":
            text = self._prose.get(event.pointer, "") + event.text
            self._prose[event.pointer] = text
            return [(event.pointer, FieldState.PROVISIONAL, text)]
        if kind == "complete":
            self.terminal = True
            return []
        raise ProtocolError(f"unknown relay record {event!r}")


ReaderFactory = Callable[[ReaderOptions, type[BaseModel]], Reader]
"""Makes the reader of one run: its display options and the schema's pydantic model."""

READERS: dict[Mode, ReaderFactory] = {
    Mode.PARTIAL: PartialReader,
    Mode.BLOCKING: BlockingReader,
    Mode.NAIVE: NaiveBufferReader,
    Mode.SETTLED: RelayReader,
    Mode.HYBRID: RelayReader,
}
"""The reader of each mode (the table next to livefill.extraction.modes.MODES)."""
assert set(READERS) == set(Mode)
