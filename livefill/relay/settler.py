"""The settler: unified stream events in, relay v1 records out (sans-IO). See docs/relay-v1.md.

How this works
--------------
The extraction itself is the partial reader's: `Settler` feeds the text of every `ArgsDelta` to a
`livefill.extraction.readers.ArgsReader` (the prefix parser, with every value checked against its own place in
the schema as it settles, see livefill/extraction/schema.py), and only encodes what it reports as records. A
SETTLED change comes out of the very `feed` that delivered the value's settling character, so a
record made from it is never earlier than that byte. A checked change becomes (first rule that
applies):

    pointer is an array element, no array element above it      -> `item` (the element, whole)
    pointer lies inside an array element                         -> no record (its item carries it)
    the root                                                     -> no record (checked whole)
    value is a scalar, an empty [] / {}, or the node is a LEAF   -> `field`
    a non-empty object or array                                  -> no record (its children
                                                                     carried it)

In hybrid mode a PROVISIONAL string at a prose node (`livefill.extraction.schema.is_prose`) also yields a `delta`
with the text appended since the last one. The first failure the reader raises ends the run with an
`error` record (`validation_failed` and the pointer, `protocol_error` ...); the failing value is
never sent.

The run's phases and what each input does in them are one table, `_TRANSITIONS`. Stream endings:
`Stop` is judged by `livefill.extraction.readers.stop_failure` (LENGTH -> `truncated`, REFUSAL ->
`upstream_error`); a normal Stop closes the parser and, if the whole object validated, sends
`complete`; EOF (`close()`) without a terminal -> `truncated`; `ProviderError` ->
`upstream_error`. After a terminal record every further event is ignored; the caller cancels
upstream.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel

from livefill.errors import ProtocolError, RunFailure, Truncated, UpstreamError, UsageError, ValidationFailed, code_of, text_safe
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StreamEvent, TextDelta
from livefill.extraction.modes import Mode, parse_mode
from livefill.extraction.prefix import IncompleteJSON, ValueState
from livefill.extraction.readers import ArgsReader, Checked, stop_failure
from livefill.relay.records import (
    MAX_LINE_BYTES,
    CompleteRecord,
    DeltaRecord,
    ErrorRecord,
    FieldRecord,
    ItemRecord,
    StartRecord,
    encode_record,
)
from livefill.extraction.schema import NodeKind
from livefill.extraction.schemas import SCHEMAS

__all__ = ["Settler"]

# A delta's text is cut so that its record stays well under the client's line limit.
_DELTA_CHARS = 2048


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
    `livefill.errors.RunFailure`, a `ProtocolError`, or a relay error code string). `done` turns true
    with the terminal record. Records are pydantic models from `livefill.relay.records`.
    """

    def __init__(
        self,
        schema_model: type[BaseModel],
        *,
        mode: Mode | str = Mode.SETTLED,
        run_id: str | None = None,
        provider: str = "",
        schema_name: str | None = None,
    ) -> None:
        try:
            parsed = parse_mode(mode)
        except ValueError:
            parsed = None
        if parsed is None or not parsed.spec.needs_relay:
            raise UsageError(f"mode must be a relay mode (settled or hybrid), not {mode!r}")
        self.schema_model = schema_model
        self.mode: Mode = parsed
        self.run_id = run_id or f"run_{secrets.token_hex(4)}"
        self.provider = provider
        self.schema_name = schema_name or _schema_name_of(schema_model)
        self._reader = ArgsReader(schema_model)
        self.index = self._reader.index
        self._phase = _Phase.READY
        self._n = _Counters()
        self._deltas = parsed.spec.prose_as_deltas
        self._prose_sent: dict[str, int] = {}  # prose pointer -> characters already sent as deltas
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
                except (RunFailure, ProtocolError) as exc:
                    code, text, pointer = _failure_fields(exc, None)
                    if isinstance(exc, ValidationFailed):
                        text = f"{pointer or 'the root'}: {text}"
                    out.append(self._error(code, text, pointer))
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
            checked: list[Checked] = []
            try:
                self._reader.feed(event, checked)
            finally:
                self._encode(checked, out)
        elif isinstance(event, Stop):
            self._finish(event, out)
        elif isinstance(event, ProviderError):
            raise UpstreamError(f"the provider reported an error: {event.kind}: {event.message}")
        elif isinstance(event, (TextDelta, BlockStop, KeepAlive)):
            return  # prose outside the JSON, the block's end (the Stop decides), a ping
        else:
            raise UsageError(f"not a stream event: {event!r}")

    def _finish(self, stop: Stop, out: list[Any]) -> None:
        failure = stop_failure(stop)
        if failure is not None:
            raise failure
        raw = f" ({stop.raw})" if stop.raw else ""
        if not self._reader.started:
            raise UpstreamError(f"the model stopped{raw} without writing the JSON document")
        checked: list[Checked] = []
        try:
            self._reader.close(checked)
        except IncompleteJSON as exc:
            raise Truncated(f"the model stopped{raw} before the JSON document was complete: {exc}") from None
        finally:
            self._encode(checked, out)
        if not self._reader.root_valid:  # pragma: no cover - the root settles before close() returns
            raise Truncated("the JSON document never completed")
        out.append(self._make(CompleteRecord, fields=self._n.units))
        self.terminal = out[-1]

    # -- records ------------------------------------------------------------------------------------

    def _encode(self, checked: list[Checked], out: list[Any]) -> None:
        """The records for the reader's checked changes."""
        hybrid = self._deltas
        for change, res in checked:
            node = res.node
            if res.opaque or node is None or change.state is ValueState.PENDING:
                continue
            value = change.value
            if change.state is ValueState.PROVISIONAL:
                if hybrid and isinstance(value, str) and node.prose:
                    self._delta(change.pointer, value, out)
                continue
            container = isinstance(value, (dict, list)) and bool(value)
            if res.pointer == "" or (res.in_element and not res.is_item):
                continue
            if res.is_item:
                out.append(self._make(ItemRecord, pointer=res.parent, index=res.index, value=value))
                self._n.units += 1
            elif not container or node.kind is NodeKind.LEAF:
                out.append(self._make(FieldRecord, pointer=res.pointer, value=value))
                self._n.units += 1

    def _delta(self, pointer: str, value: str, out: list[Any]) -> None:
        sent = self._prose_sent.get(pointer, 0)
        if len(value) <= sent:
            return
        for start in range(sent, len(value), _DELTA_CHARS):
            # a lone surrogate goes as its escape: a record must be text (the value fails when it settles)
            out.append(self._make(DeltaRecord, pointer=pointer, text=text_safe(value[start : start + _DELTA_CHARS])))
        self._prose_sent[pointer] = len(value)

    def _make(self, cls: type, **fields: Any) -> Any:
        record = cls(seq=self._n.seq, **fields)
        if cls in (FieldRecord, ItemRecord) and len(encode_record(record)) - 1 > MAX_LINE_BYTES:
            raise ValidationFailed(
                f"the value is too large for one relay v1 record (over {MAX_LINE_BYTES} bytes)",
                pointer=fields["pointer"],
            )
        self._n.seq += 1
        return record

    def _error(self, code: str, message: str, pointer: str | None = None) -> ErrorRecord:
        record = self._make(ErrorRecord, code=code, message=_clip(message), pointer=pointer)
        self.terminal = record
        self._phase = _Phase.DONE if self._phase is not _Phase.CLOSED else _Phase.CLOSED
        return record


def _failure_fields(failure: BaseException | str, message: str | None) -> tuple[str, str, str | None]:
    """An error record's code, message and pointer for a failure (or a code and its message)."""
    if isinstance(failure, str):
        return failure, message or failure, None
    pointer = getattr(failure, "pointer", None)
    text = message or getattr(failure, "message", None) or str(failure) or type(failure).__name__
    if not isinstance(failure, (RunFailure, ProtocolError)):
        text = message or f"{type(failure).__name__}: {failure}"
    elif type(failure) is UpstreamError and message is None:
        text = f"provider error: {text}"  # the stream's own error event, said as a direct run says it
    return code_of(failure), text, pointer


def _schema_name_of(model: type[BaseModel]) -> str:
    for name, candidate in SCHEMAS.items():
        if candidate is model:
            return name
    return model.__name__.lower()


def _clip(message: str, limit: int = 2000) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
