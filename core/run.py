"""One run: a stream read in one mode, written into the form's draft, ending committed or restored.

How this works
--------------
A `Run` owns one extraction attempt. `await run.run()` opens the source (the provider stream
through `core.providers.open_stream`, or the relay through `core.relay_client.open_relay`),
passes every event to the mode's *reader*, and applies the changes the reader returns to the
form's draft. The phases and what moves between them are the table `TRANSITIONS` below; nothing
else sets `phase`.

Readers (one per mode) turn events into form changes `(pointer, FieldState, value)`:

    partial   core.prefix.PrefixParser over the ArgsDelta text; provisional strings shown unless
              switched off; provisional numbers hidden by default (12 is never shown for 1200);
              each settled value checked against its own field at once (an invalid one ends the run)
    blocking  collects the text, parses it once at BlockStop: everything settles at once
    naive     core.naive: repair-parse the whole buffer on every delta and trust it (no states)
    settled   relay records: field / item are settled values; complete is the terminal
    hybrid    the same, plus delta records: prose grows provisionally

A run commits only when the stream's terminal arrived (Stop(COMPLETE) after BlockStop, or the
relay's `complete`) and the whole object validates against the pydantic model; then the form's
committed values are replaced and the extraction is appended to the history. Every other ending
restores the form exactly and says why (`RunStatus.reason`). The naive reader is the exception on
purpose: it never restores, it keeps whatever it showed.

Cancellation. `stop()` cancels the task running `run()`. The CancelledError unwinds through the
`async with` of the source, which closes the HTTP response (the server sees the disconnect); only
after that does the run move to STOPPED. The idle watchdog is a timer handle that cancels the same
task when no content arrived for `idle_timeout` seconds (keep-alives do not count); the run then
fails with StreamTimeout. A cancel from anyone else (the app shutting down) restores the form and
propagates.

With the demo provider, after a stop the run asks the server's request log what it saw and adds it
to the status ("server stopped after 37 of 120 tokens").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, AsyncContextManager, Protocol

from core.demo_client import demo_request_entry, demo_requests, server_note
from core.demo_protocol import DemoKnobs
from core.errors import (
    Cancelled,
    ConnectionLost,
    LivefillError,
    ProtocolError,
    RunFailure,
    StreamTimeout,
    Truncated,
    UpstreamError,
    UsageError,
    ValidationFailed,
)
from core.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, TextDelta
from core.form import MISSING, FieldState, FormModel, escape_token
from core.history import History
from core.modes import MODES, Mode
from core.run_status import TRANSITIONS, Phase, RunStatus, Trigger
from core.wiretap import ForwardingTap

MODE_LABELS: dict[Mode, str] = {m: spec.label for m, spec in MODES.items()}

# ---------------------------------------------------------------------------------------------
# Configuration and status


@dataclass(frozen=True, kw_only=True, slots=True)
class RunConfig:
    """Everything one run needs to know besides the form."""

    mode: Mode
    provider: str = "anthropic"  # "anthropic" | "openai-chat" | "openai-responses" | "ollama" | "raw"
    base_url: str = ""
    schema_name: str = ""
    document: str = ""
    model: str | None = None
    api_key: str = "demo"
    demo: DemoKnobs | None = None  # None: not the demo provider
    relay_token: str | None = None
    fine_grained: bool = False
    idle_timeout: float = 20.0
    show_provisional_strings: bool = True
    show_provisional_numbers: bool = False
    label: str = ""  # what the history and the run log call this run (e.g. the scenario)


class WireTap(Protocol):
    """The optional observer of a stream's wire (see core.providers)."""

    def on_read(self, data: bytes) -> None: ...

    def on_frame(self, kind: str, text: str) -> None: ...

    def on_event(self, event: Any) -> None: ...


Source = Callable[[WireTap], AsyncContextManager[AsyncIterator[Any]]]
"""A stream source: given a tap, an async context manager yielding the events (or relay records)."""


# ---------------------------------------------------------------------------------------------
# Readers: events -> form changes


Changes = list[tuple[str, FieldState, Any]]


class _PartialReader:
    """core.prefix on the tool arguments; provisional values filtered by the settings."""

    def __init__(self, config: RunConfig) -> None:
        from core.prefix import PrefixParser, ValueState

        self._parser = PrefixParser()
        self._states = {
            ValueState.PENDING: FieldState.PENDING,
            ValueState.PROVISIONAL: FieldState.PROVISIONAL,
            ValueState.SETTLED: FieldState.SETTLED,
        }
        self._strings = config.show_provisional_strings
        self._numbers = config.show_provisional_numbers
        self._index = _schema_index(config.schema_name)
        self.done = False

    def _convert(self, changes: list[Any]) -> Changes:
        out: Changes = []
        for ch in changes:
            state = self._states[ch.state]
            value = ch.value
            if state is FieldState.SETTLED and self._index is not None and not isinstance(value, (dict, list)):
                _check_settled(self._index, ch.pointer, value)  # as the relay does: at once, not at the end
            elif state is FieldState.PROVISIONAL:
                if isinstance(value, str) and not self._strings:
                    state, value = FieldState.PENDING, None
                elif isinstance(value, (int, float)) and not isinstance(value, bool) and not self._numbers:
                    state, value = FieldState.PENDING, None
            out.append((ch.pointer, state, value))
        return out

    def args(self, text: str) -> Changes:
        from core.prefix import JSONPrefixError

        try:
            return self._convert(self._parser.feed(text))
        except JSONPrefixError as exc:
            raise ProtocolError(f"the tool arguments are not JSON: {exc}") from None

    def block_stop(self) -> Changes:
        from core.prefix import JSONPrefixError

        try:
            out = self._convert(self._parser.close())
        except JSONPrefixError as exc:
            raise ProtocolError(f"the tool arguments ended incomplete: {exc}") from None
        self.done = True
        return out

    def value(self) -> Any:
        return self._parser.value()


class _BlockingReader:
    """Collect the arguments; parse once when the block ends."""

    def __init__(self, config: RunConfig) -> None:
        self._parts: list[str] = []
        self._value: Any = MISSING
        self.done = False

    def args(self, text: str) -> Changes:
        self._parts.append(text)
        return []

    def block_stop(self) -> Changes:
        try:
            self._value = json.loads("".join(self._parts))
        except ValueError as exc:
            raise ProtocolError(f"the tool arguments are not JSON: {exc}") from None
        self.done = True
        return [("", FieldState.SETTLED, self._value)]

    def value(self) -> Any:
        return self._value


class _NaiveReader:
    """Repair-parse the whole buffer on every delta and show what it gives as if it were final."""

    def __init__(self, config: RunConfig) -> None:
        from core.naive import NaiveReader

        self._reader = NaiveReader()
        self._value: Any = None
        self.done = False

    def args(self, text: str) -> Changes:
        value = self._reader.feed(text)
        if value is None:
            return []
        changes: Changes = []
        _diff_tail(self._value, value, "", changes)
        self._value = value
        return changes

    def block_stop(self) -> Changes:
        self.done = True
        try:
            self._value = json.loads(self._reader.text)
        except ValueError:
            pass  # the naive client does not care
        return []

    def value(self) -> Any:
        return self._value


def _diff_tail(old: Any, new: Any, ptr: str, out: Changes) -> None:
    """Changes from `old` to `new` for a repaired growing buffer: only the last member of each
    container can differ (everything before it was followed by a comma), new members are added."""
    if isinstance(new, dict) and isinstance(old, dict):
        keys = list(new)
        for i, key in enumerate(keys):
            child = ptr + "/" + escape_token(key)
            if key not in old:
                out.extend((p, FieldState.SETTLED, v) for p, v in _flatten(new[key], child).items())
            elif i >= len(keys) - 1 or i >= len(old) - 1:
                _diff_tail(old[key], new[key], child, out)
    elif isinstance(new, list) and isinstance(old, list):
        for i, item in enumerate(new):
            child = f"{ptr}/{i}"
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
            stack.extend((ptr + "/" + escape_token(k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            out[ptr] = []
            stack.extend((f"{ptr}/{i}", v) for i, v in reversed(list(enumerate(node))))
        else:
            out[ptr] = node
    return out


class _RelayReader:
    """Relay v1 records -> settled values (and provisional prose in hybrid mode)."""

    def __init__(self, config: RunConfig) -> None:
        self._prose: dict[str, str] = {}
        self._doc: dict[str, Any] = {}
        self.done = False
        self.started = False

    def record(self, rec: Any) -> Changes:
        kind = getattr(rec, "type", None)
        if kind == "start":
            self.started = True
            return []
        if kind == "field":
            self._prose.pop(rec.pointer, None)
            return [(rec.pointer, FieldState.SETTLED, rec.value)]
        if kind == "item":
            return [(f"{rec.pointer}/{rec.index}", FieldState.SETTLED, rec.value)]
        if kind == "delta":
            text = self._prose.get(rec.pointer, "") + rec.text
            self._prose[rec.pointer] = text
            return [(rec.pointer, FieldState.PROVISIONAL, text)]
        if kind == "complete":
            self.done = True
            return []
        if kind == "error":
            raise _relay_error(rec)
        raise ProtocolError(f"unknown relay record {rec!r}")


_RELAY_ERRORS: dict[str, type[RunFailure]] = {
    "upstream_error": UpstreamError,
    "truncated": Truncated,
    "validation_failed": ValidationFailed,
    "timeout": StreamTimeout,
    "cancelled": Cancelled,
}


def _relay_error(rec: Any) -> LivefillError:
    cls = _RELAY_ERRORS.get(rec.code)
    if cls is None:
        return ProtocolError(f"relay: {rec.message}")
    if cls is UpstreamError:
        return UpstreamError(rec.message)
    return cls(rec.message, pointer=getattr(rec, "pointer", None))


# ---------------------------------------------------------------------------------------------
# Reasons


def describe_failure(exc: BaseException) -> tuple[str, str | None]:
    """A person's sentence for why a run ended without a result, and the relay code for it."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, Cancelled):
        return "stopped by the user", "cancelled"
    if isinstance(exc, ValidationFailed):
        where = f" at {exc.pointer}" if exc.pointer else ""
        return f"validation failed{where}: {message}", code
    if isinstance(exc, Truncated):
        return f"truncated: {message}", code
    if isinstance(exc, UpstreamError):
        return f"provider error: {message}", code
    if isinstance(exc, StreamTimeout):
        return f"idle timeout: {message}", code
    if isinstance(exc, ConnectionLost):
        return f"connection lost: {message}", code
    if isinstance(exc, ProtocolError):
        return f"protocol error: {message}", "protocol_error"
    if isinstance(exc, RunFailure):
        return message, code
    return f"internal error: {type(exc).__name__}: {exc}", None


def _schema_index(schema_name: str) -> Any:
    """The relay's view of the schema (a field's own type by pointer), or None for an unknown one."""
    from core.relay import SchemaIndex
    from core.schemas import SCHEMAS

    model = SCHEMAS.get(schema_name)
    return SchemaIndex(model) if model is not None else None


def _check_settled(index: Any, pointer: str, value: Any) -> None:
    """Raise ValidationFailed if the settled scalar at `pointer` fails its own field's type."""
    from pydantic import ValidationError

    from core.relay import NodeKind

    node = index.resolve(pointer).node
    if node is None or node.kind is not NodeKind.LEAF:
        return  # a key the schema lacks, or a container: the whole-object check at the end says so
    try:
        node.adapter.validate_json(json.dumps(value, ensure_ascii=False))
    except ValidationError as exc:  # pydantic's exception, translated here
        first = exc.errors(include_url=False)[0]
        raise ValidationFailed(f"{first.get('msg', 'invalid')} (got {value!r})", pointer=pointer) from None


def _validation_failure(model: Any, value: Any) -> ValidationFailed | None:
    """Validate `value` (as JSON, the way it came) against the model; the first problem, or None."""
    from pydantic import ValidationError

    try:
        model.model_validate_json(json.dumps(value, ensure_ascii=False))
    except ValidationError as exc:  # pydantic's exception, translated here
        first = exc.errors()[0]
        pointer = "".join("/" + escape_token(str(p)) for p in first.get("loc", ()))
        return ValidationFailed(f"{first.get('msg', 'invalid')} (got {first.get('input')!r})", pointer=pointer or None)
    except ValueError as exc:
        return ValidationFailed(f"not JSON-serialisable: {exc}")
    return None


# ---------------------------------------------------------------------------------------------
# The run


class _CountingTap(ForwardingTap):
    """Counts bytes read, then forwards to the caller's tap."""

    __slots__ = ("bytes",)

    def __init__(self, inner: WireTap | None) -> None:
        super().__init__(inner)
        self.bytes = 0

    def on_read(self, data: bytes) -> None:
        self.bytes += len(data)
        super().on_read(data)


StatusObserver = Callable[[RunStatus], None]


class Run:
    """One extraction attempt into `form` (see the module docstring).

    `source` replaces the network (tests, replays); by default the mode picks the provider stream
    or the relay from `config`. `history` receives the committed extraction (None: no history).
    """

    def __init__(
        self,
        form: FormModel,
        config: RunConfig,
        *,
        history: History | None = None,
        source: Source | None = None,
        tap: WireTap | None = None,
    ) -> None:
        self.form = form
        self.config = config
        self.history = history
        self._source = source
        self._tap = _CountingTap(tap)
        self._observers: list[StatusObserver] = []
        self._task: asyncio.Task[Any] | None = None
        self._stop_requested = False
        self._idle_fired = False
        self._idle_handle: asyncio.TimerHandle | None = None
        self._last_content = 0.0
        self._t0 = 0.0
        self._payload_bytes = 0
        self.status = RunStatus(run_id="run_" + uuid.uuid4().hex[:8], mode=config.mode)
        self.result: Any = MISSING  # the committed extraction, once committed

    # -- observing --------------------------------------------------------------------------

    def subscribe(self, callback: StatusObserver) -> Callable[[], None]:
        """Call `callback(RunStatus)` on every status change; returns an unsubscribe function."""
        self._observers.append(callback)
        return lambda: self._observers.remove(callback) if callback in self._observers else None

    def _update(self, **changes: Any) -> None:
        bytes_received = self._tap.bytes or self._payload_bytes
        elapsed = (time.monotonic() - self._t0) if self._t0 else 0.0
        self.status = replace(self.status, bytes_received=bytes_received, elapsed=elapsed, **changes)
        for cb in list(self._observers):
            cb(self.status)

    def _fire(self, trigger: Trigger, **changes: Any) -> None:
        key = (self.status.phase, trigger)
        if key not in TRANSITIONS:
            raise UsageError(f"run cannot {trigger.value} while {self.status.phase.value}")
        self._update(phase=TRANSITIONS[key], **changes)

    @property
    def phase(self) -> Phase:
        """The current phase."""
        return self.status.phase

    # -- control ----------------------------------------------------------------------------

    def stop(self) -> bool:
        """Ask the running `run()` to stop (cancels its task). False if nothing was running."""
        if self._task is None or self._task.done() or not self.status.phase.active:
            return False
        self._stop_requested = True
        self._task.cancel()
        return True

    async def run(self) -> RunStatus:
        """Read the stream to its end; return the final status (COMMITTED / STOPPED / FAILED).

        A cancel that did not come from `stop()` or the idle watchdog restores the form and
        propagates.
        """
        if self.status.phase is not Phase.READY:
            raise UsageError("a Run can be run only once")
        self._task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        self._t0 = time.monotonic()
        self._last_content = loop.time()
        try:
            reader = self._reader()
        except LivefillError as exc:
            reason, code = describe_failure(exc)
            self._fire(Trigger.FAIL, reason=reason, error_code=code, started_at=time.time())
            raise
        self.form.begin_run()
        self._fire(Trigger.START, reason="connecting", started_at=time.time())
        self._arm_idle(loop)
        try:
            await self._consume(reader)
        except asyncio.CancelledError:
            self._disarm_idle()
            if self._idle_fired:
                self._uncancel()
                self._end_failed(StreamTimeout(f"no content for {self.config.idle_timeout:g} s"))
            elif self._stop_requested:
                self._uncancel()
                self._end_stopped()
                await self._fetch_server_note()
            else:
                self._end_failed(Cancelled("the app cancelled the run"))
                raise
        except LivefillError as exc:
            self._disarm_idle()
            self._end_failed(exc)
        except Exception as exc:  # a bug below us: still restore, and say so
            self._disarm_idle()
            self._end_failed(exc)
        else:
            self._disarm_idle()
        return self.status

    def _uncancel(self) -> None:
        task = asyncio.current_task()
        if task is not None and hasattr(task, "uncancel"):
            while task.cancelling():
                task.uncancel()

    # -- idle watchdog ----------------------------------------------------------------------

    def _arm_idle(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.config.idle_timeout and self.config.idle_timeout > 0:
            self._idle_handle = loop.call_at(self._last_content + self.config.idle_timeout, self._idle_check)

    def _idle_check(self) -> None:
        loop = asyncio.get_event_loop()
        deadline = self._last_content + self.config.idle_timeout
        if loop.time() < deadline:
            self._idle_handle = loop.call_at(deadline, self._idle_check)
            return
        self._idle_handle = None
        if self._task is not None and not self._task.done() and self.status.phase.active:
            self._idle_fired = True
            self._task.cancel()

    def _disarm_idle(self) -> None:
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None

    # -- the stream -------------------------------------------------------------------------

    def _reader(self) -> Any:
        mode = self.config.mode
        if mode is Mode.PARTIAL:
            return _PartialReader(self.config)
        if mode is Mode.BLOCKING:
            return _BlockingReader(self.config)
        if mode is Mode.NAIVE:
            return _NaiveReader(self.config)
        if self._source is None:
            try:
                import core.relay_client  # noqa: F401
            except ImportError:
                raise UsageError(f"{mode.value} mode needs the relay (issue 4), which is not installed yet") from None
        return _RelayReader(self.config)

    def _open(self) -> AsyncContextManager[AsyncIterator[Any]]:
        if self._source is not None:
            return self._source(self._tap)
        cfg = self.config
        if cfg.mode.needs_relay:
            from core.relay_client import open_relay

            body: dict[str, Any] = {"provider": cfg.provider, "mode": cfg.mode.value}
            if cfg.demo is not None and cfg.demo.scenario:
                body["scenario"] = cfg.demo.scenario
            else:
                body.update(schema=cfg.schema_name, document=cfg.document)
            if cfg.demo is not None:
                body["upstream"] = "demo"
                body["demo"] = {**cfg.demo.relay_demo(), "tag": self.status.run_id}
            if cfg.model:
                body["model"] = cfg.model
            return open_relay(cfg.base_url, cfg.relay_token or "", body, tap=self._tap)
        from core.providers import ExtractionRequest, open_stream

        request = ExtractionRequest(
            provider=cfg.provider,
            base_url=cfg.base_url,
            schema_name=cfg.schema_name,
            document=cfg.document,
            model=cfg.model,
            api_key=cfg.api_key,
            demo_headers={**cfg.demo.headers(), "x-demo-tag": self.status.run_id} if cfg.demo is not None else {},
            fine_grained=cfg.fine_grained,
        )
        return open_stream(request, tap=self._tap, idle_timeout=cfg.idle_timeout or None)

    async def _consume(self, reader: Any) -> None:
        loop = asyncio.get_running_loop()
        form = self.form
        relay = isinstance(reader, _RelayReader)
        terminal = False
        block_error: ProtocolError | None = None
        async with self._open() as events:
            async for event in events:
                if relay:
                    changes = reader.record(event)
                    self._content(loop)
                    if changes:
                        form.apply_many(changes, parent_state=FieldState.PENDING)
                    if reader.done:
                        terminal = True
                    continue
                if isinstance(event, ArgsDelta):
                    self._payload_bytes += len(event.text.encode("utf-8", "surrogatepass"))
                    changes = reader.args(event.text)
                    self._content(loop)
                    if changes:
                        form.apply_many(changes)
                elif isinstance(event, BlockStop):
                    if not reader.done and block_error is None:
                        try:
                            changes = reader.block_stop()
                        except ProtocolError as exc:
                            # incomplete arguments: the stop reason (max_tokens?) says whose fault
                            block_error = exc
                        else:
                            if changes:
                                form.apply_many(changes)
                elif isinstance(event, Stop):
                    self._update(stop_reason=event.raw or event.reason.value)
                    if event.reason is StopReason.COMPLETE:
                        if block_error is not None:
                            raise block_error
                        if not reader.done:
                            raise Truncated("the stream stopped before the tool arguments ended")
                        terminal = True
                    elif event.reason is StopReason.LENGTH:
                        raise Truncated(f"the model hit its token limit ({event.raw or 'length'})")
                    elif event.reason is StopReason.REFUSAL:
                        raise UpstreamError(f"the model refused ({event.raw or 'refusal'})")
                    else:
                        raise Truncated(f"the model stopped without finishing ({event.raw or 'other'})")
                elif isinstance(event, ProviderError):
                    raise UpstreamError(f"{event.kind}: {event.message}", kind=event.kind)
                elif isinstance(event, TextDelta):
                    self._content(loop, count=False)
                elif isinstance(event, KeepAlive):
                    pass
        # the source is closed here
        if not terminal and block_error is not None:
            raise block_error
        if not terminal:
            raise Truncated("the stream ended before its terminal")
        self._finish(reader)

    def _content(self, loop: asyncio.AbstractEventLoop, count: bool = True) -> None:
        self._last_content = loop.time()
        tokens = self.status.tokens_received + (1 if count else 0)
        if self.status.phase is Phase.CONNECTING:
            self._fire(Trigger.CONTENT, reason="streaming", tokens_received=tokens)
        else:
            self._update(tokens_received=tokens)

    def _finish(self, reader: Any) -> None:
        value = self.form.document if isinstance(reader, _RelayReader) else reader.value()
        problem = _validation_failure(self.form.schema_model, value)
        if problem is not None:
            raise problem
        if self.history is not None:  # written (and fsynced) before the form shows it committed
            self.history.append(
                {
                    "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "run": self.status.run_id,
                    "label": self.config.label,
                    "schema": self.config.schema_name or self.form.schema_model.__name__,
                    "provider": self.config.provider,
                    "mode": self.config.mode.value,
                    "extraction": value,
                }
            )
        self.form.commit(value)
        self.result = value
        self._fire(Trigger.COMMIT, reason="committed")

    # -- endings ----------------------------------------------------------------------------

    def _end_form(self, invalid: Mapping[str, str] | None = None) -> None:
        if not self.form.running:
            return
        if self.config.mode is Mode.NAIVE:
            self.form.adopt_draft()  # the naive client keeps whatever it showed
        else:
            self.form.restore(invalid=invalid)

    def _end_stopped(self) -> None:
        self._end_form()
        self._fire(Trigger.STOP, reason="stopped by the user", error_code="cancelled")

    def _end_failed(self, exc: BaseException) -> None:
        reason, code = describe_failure(exc)
        pointer = getattr(exc, "pointer", None)
        invalid = {pointer: reason} if isinstance(exc, ValidationFailed) and pointer else None
        self._end_form(invalid)
        self._fire(Trigger.FAIL, reason=reason, error_code=code, pointer=pointer)

    async def _fetch_server_note(self) -> None:
        if self.config.demo is None or not self.config.base_url or self._source is not None:
            return
        started = self.status.started_at or 0.0
        with contextlib.suppress(Exception):  # a missing note must never break a stop
            entry = await demo_request_entry(self.config.base_url, since=started - 0.5, run_id=self.status.run_id)
            if entry is not None:
                note = server_note(entry)
                if note:
                    self._update(server_note=note, reason=f"stopped by the user — {note}")


__all__ = [
    "DemoKnobs",
    "MODE_LABELS",
    "Mode",
    "Phase",
    "Run",
    "RunConfig",
    "RunStatus",
    "Source",
    "TRANSITIONS",
    "Trigger",
    "demo_request_entry",
    "demo_requests",
    "describe_failure",
    "server_note",
]
