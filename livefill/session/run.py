"""One run: a stream read in one mode, written into the form's draft, ending committed or restored.

How this works
--------------
A `Run` is the thin async driver of one extraction attempt. `await run.run()` opens the source
(the provider stream through `livefill.wire.providers.open_stream`, or the relay through
`livefill.relay.client.open_relay`, as the mode's `ModeSpec.needs_relay` says), passes every event to
the mode's reader (`livefill.extraction.readers.READERS`), and applies the changes the reader returns to the
form's draft. The phases and what moves between them are the table `TRANSITIONS`
(livefill/session/run_status.py); nothing else sets `phase`.

A run commits only when the reader saw the stream's terminal and the whole object validates
against the pydantic model (`livefill.extraction.schema.check_document`); then the form's committed values are
replaced and the extraction is appended to the history. Every other ending restores the form
exactly and says why (`RunStatus.reason`) — unless the mode's `restores_on_failure` is off (the
naive mode keeps whatever it showed, on purpose).

Cancellation. `stop()` cancels the task running `run()`. The CancelledError unwinds through the
`async with` of the source, which closes the HTTP response (the server sees the disconnect); only
after that does the run move to STOPPED. A silent stream is the source's business: both sources
run the one idle watchdog (livefill/wire/idle.py) and raise StreamTimeout after `idle_timeout` seconds with
no content (keep-alives do not count). A cancel from anyone else (the app shutting down) restores
the form and propagates. `clock` (default `time.monotonic`) times the status's `elapsed`.

With the demo provider, after a stop the run asks the server's request log what it saw and adds it
to the status ("server stopped after 37 of 120 tokens").

Recording. With `record_path`, a provider-wire run tees a `livefill.recording.trace.TraceWriter` onto its tap:
the writer's clock starts as the request is made, the header (request, response status and
headers) is written once the response arrived, every read as it arrives, and the trailer when the
run ends (complete / stopped / failed / cancelled); a request refused with an HTTP status still
leaves a trace (its status, no reads); a run stopped before any response leaves none (there is
nothing to replay). A relay-mode run (settled / hybrid) reads the relay's records, so the
embedded relay records instead: the run asks it to (over loopback only) and the relay writes the
provider's wire it reads, an ordinary provider trace. A relay deployed on its own cannot record
(UsageError when the Run is made).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, AsyncContextManager

from livefill.wire import net_thread
from livefill.embedded.client import demo_request_entry, demo_requests, server_note
from livefill.demo.protocol import DemoKnobs
from livefill.errors import (
    Cancelled,
    CannotConnect,
    ConnectionLost,
    InputError,
    ProtocolError,
    ProviderHTTPError,
    RunFailure,
    StreamTimeout,
    Truncated,
    UpstreamError,
    UsageError,
    ValidationFailed,
)
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, Stop, TextDelta
from livefill.extraction.form import MISSING, FormModel
from livefill.recording.history import History, HistoryWriteError
from livefill.extraction.modes import Mode
from livefill.extraction.readers import READERS, Reader
from livefill.session.run_status import TRANSITIONS, Phase, RunStatus, Trigger
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schema import check_document
from livefill.wire.taps import ReadWatch, WireTap, tee
from livefill.extraction.user_schema import SchemaSource, resolve_schema


_NOT_SECRETS = frozenset({"", "demo", "ollama"})  # the placeholder keys of the keyless servers


RELAY_IDLE_GRACE = 3.0
"""Seconds (at most; 15 % of a shorter limit) the relay client waits beyond the idle limit, for
the relay's own verdict on its upstream, which says whether keep-alives or nothing came."""


def relay_backstop(idle: float) -> float:
    """How long the relay client waits for a byte when the run's idle limit is `idle`: the relay
    watches its upstream with the same limit (sent when shorter than its own) and says which
    silence it was, so its verdict must come first -- after the limit, counted from the silence,
    which may begin up to a keep-alive period after the relay's last keep-alive; and a grace."""
    from livefill.relay.records import KEEPALIVE_EVERY

    return idle + min(RELAY_IDLE_GRACE, 0.15 * idle) + min(KEEPALIVE_EVERY, idle / 4)


def relay_can_record(cfg: RunConfig) -> bool:
    """Whether the run's relay can record: the app's embedded one (for a demo run with no relay
    address, the demo provider's own server), over loopback."""
    from livefill.loopback import is_loopback_url

    relay_url = cfg.relay_url or cfg.base_url
    embedded = cfg.relay_embedded or (cfg.demo is not None and not cfg.relay_url)
    return embedded and bool(relay_url) and is_loopback_url(relay_url)


@dataclass(frozen=True)
class _RelayRecording:
    """A trace the embedded relay writes (the run holds no writer): `begun` once the file has its
    header line; `error` is None (the relay logs a file it could not write)."""

    path: Path
    error: str | None = None

    @property
    def begun(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except OSError:
            return False


def _secrets(cfg: RunConfig) -> list[str]:
    """What a trace of this run must never contain: its key and its relay token."""
    return [s for s in (cfg.api_key, cfg.relay_token) if s and s not in _NOT_SECRETS]


# ---------------------------------------------------------------------------------------------
# Configuration


@dataclass(frozen=True, kw_only=True, slots=True)
class RunConfig:
    """Everything one run needs to know besides the form."""

    mode: Mode
    provider: str = "anthropic"  # "anthropic" | "openai-chat" | "openai-responses" | "ollama" | "raw"
    base_url: str = ""
    schema_name: str = ""  # a bundled schema's name, or the path of a JSON Schema file
    schema_json: Mapping[str, Any] | None = None  # a person's JSON Schema itself (wins over schema_name)
    document: str = ""
    model: str | None = None
    api_key: str = field(default="demo", repr=False)  # never in a repr, a log line or a trace
    demo: DemoKnobs | None = None  # None: not the demo provider
    relay_token: str | None = None
    relay_url: str = ""  # where the relay is (settled / hybrid); "": at base_url, the demo provider's server
    relay_embedded: bool = False  # the relay is the app's own embedded one: the only relay handed api_key
    fine_grained: bool = False
    structured: str = "tools"  # how structure is forced: "tools" | "json_schema" | "json_object"
    idle_timeout: float = 20.0
    show_provisional_strings: bool = True
    show_provisional_numbers: bool = False
    label: str = ""  # what the history and the run log call this run (e.g. the scenario)
    record_path: str | None = None  # write a trace of the run's wire here (livefill/recording/trace.py)
    record_document: bool = True  # the trace keeps the document's text (False: only its SHA-256)
    replay_ending: str = ""  # a replay of a recording that did not complete: how it ends (see replay_config)


Source = Callable[[WireTap], AsyncContextManager[AsyncIterator[Any]]]
"""A stream source: given a tap, an async context manager yielding the events (or relay records)."""


def _off_thread(source: Source, tap: WireTap) -> AsyncContextManager[AsyncIterator[Any]]:
    """`source(tap)`, opened and read on the net thread (livefill/wire/net_thread.py) unless that is off."""
    if net_thread.enabled():
        return net_thread.threaded(source, tap)
    return source(tap)


# ---------------------------------------------------------------------------------------------
# Reasons


def describe_failure(exc: BaseException) -> tuple[str, str | None]:
    """A person's sentence for why a run ended without a result, and the relay code for it.

    One line, never a traceback. A request the provider refused (ProviderHTTPError) or that
    reached no one (CannotConnect) is said by its own message, which names the host ("the key
    was refused by api.anthropic.com (401 ...)"); so is the `upstream_error` record of a relay,
    which carries that same line."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    message = " ".join(str(message).split())
    if isinstance(exc, (ProviderHTTPError, CannotConnect)):
        return message, code
    if isinstance(exc, UpstreamError) and getattr(exc, "record", None) is not None:
        return message, code
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
    if isinstance(exc, InputError):
        return str(exc), None
    if isinstance(exc, RunFailure) and code == "protocol_error":  # a relay's: said as ours is
        return f"protocol error: {message}", code
    if isinstance(exc, RunFailure):
        return message, code
    return " ".join(f"internal error: {type(exc).__name__}: {exc}".split()), None


# ---------------------------------------------------------------------------------------------
# The run


StatusObserver = Callable[[RunStatus], None]


class Run:
    """One extraction attempt into `form` (see the module docstring).

    `source` replaces the network (tests, replays); by default the mode picks the provider stream
    or the relay from `config`. `history` receives the committed extraction (None: no history).
    `clock` gives the seconds `RunStatus.elapsed` is measured in; `t0` (on that clock) is the
    start elapsed counts from when it is shared with other runs (the lanes of one compare run).
    """

    def __init__(
        self,
        form: FormModel,
        config: RunConfig,
        *,
        history: History | None = None,
        source: Source | None = None,
        tap: WireTap | None = None,
        clock: Callable[[], float] = time.monotonic,
        t0: float | None = None,
    ) -> None:
        self.form = form
        self.config = config
        self.history = history
        self._source = source
        self._reads = ReadWatch(clock)  # counts the bytes received
        self._tap: WireTap = tee(self._reads, tap)  # type: ignore[assignment]
        self._clock = clock
        self._observers: list[StatusObserver] = []
        self._task: asyncio.Task[Any] | None = None
        self._stop_requested = False
        self._t0: float | None = None
        self._shared_t0 = t0  # the start of a compare run, shared by its lanes (on `clock`)
        self._payload_bytes = 0
        self.status = RunStatus(run_id="run_" + uuid.uuid4().hex[:8], mode=config.mode)
        self.result: Any = MISSING  # the committed extraction, once committed
        if config.record_path and source is not None:
            raise UsageError("a run with its own source cannot be recorded")
        if config.record_path and config.mode.spec.needs_relay and not relay_can_record(config):
            raise UsageError("a relay deployed on its own cannot record; record in partial mode")
        self._trace: Any = None  # the TraceWriter while recording
        self._request: Any = None  # the ExtractionRequest sent (recording)
        self._relay_record: Any = None  # the trace the embedded relay writes (settled / hybrid)
        self._flush_handle: asyncio.TimerHandle | None = None  # a reader's deferred work, due
        self._untold = False  # the status changed and its observers have not heard yet

    # -- observing --------------------------------------------------------------------------

    def subscribe(self, callback: StatusObserver) -> Callable[[], None]:
        """Call `callback(RunStatus)` on every status change; returns an unsubscribe function."""
        self._observers.append(callback)
        return lambda: self._observers.remove(callback) if callback in self._observers else None

    def _update(self, *, quiet: bool = False, **changes: Any) -> None:
        bytes_received = self._reads.bytes or self._payload_bytes
        elapsed = (self._clock() - self._t0) if self._t0 is not None else 0.0
        self.status = replace(self.status, bytes_received=bytes_received, elapsed=elapsed, **changes)
        self._untold = quiet
        if quiet:
            return
        for cb in list(self._observers):
            cb(self.status)

    def tick(self) -> None:
        """Bring `status.elapsed` up to now while the run is active (the clock runs during a
        stall too: the lane calls this on a timer, not only when bytes arrive)."""
        if self.status.phase.active:
            self._update()

    def _fire(self, trigger: Trigger, **changes: Any) -> None:
        key = (self.status.phase, trigger)
        if key not in TRANSITIONS:
            raise UsageError(f"run cannot {trigger.value} while {self.status.phase.value}")
        self._update(phase=TRANSITIONS[key], **changes)

    @property
    def recorder(self) -> Any:
        """The run's TraceWriter while or after recording (None: not recording, or not yet);
        its `error` says when the trace could not be written (the run itself goes on). A relay
        run's trace is written by the embedded relay: a `_RelayRecording` stands for it."""
        return self._trace if self._trace is not None else self._relay_record

    @property
    def phase(self) -> Phase:
        """The current phase."""
        return self.status.phase

    # -- control ----------------------------------------------------------------------------

    def stop(self) -> bool:
        """Ask the running `run()` to stop (cancels its task). False if nothing was running.

        A run whose task exists but whose `run()` has not begun yet is stopped too: `run()` then
        ends STOPPED at once, before any request is sent.
        """
        if self.status.phase is Phase.READY and not self._stop_requested:
            self._stop_requested = True
            return True
        if self._task is None or self._task.done() or not self.status.phase.active:
            return False
        self._stop_requested = True
        self._task.cancel()
        return True

    async def run(self) -> RunStatus:
        """Read the stream to its end; return the final status (COMMITTED / STOPPED / FAILED).

        A cancel that did not come from `stop()` restores the form and propagates.
        """
        if self.status.phase is not Phase.READY:
            raise UsageError("a Run can be run only once")
        if self._stop_requested:  # Stop came before the run began: nothing to open or restore
            self._fire(Trigger.STOP, reason="stopped by the user", error_code="cancelled")
            return self.status
        self._task = asyncio.current_task()
        self._t0 = self._shared_t0 if self._shared_t0 is not None else self._clock()
        reader = READERS[self.config.mode](self.config, self.form.schema_model)
        self.form.begin_run()
        self._fire(Trigger.START, reason="connecting", started_at=time.time())
        try:
            await self._consume(reader)
        except asyncio.CancelledError:
            if not self._stop_requested:
                self._end_failed(Cancelled("the app cancelled the run"))
                raise
            self._uncancel()
            self._end_stopped()
            await self._fetch_server_note()
        except Exception as exc:  # a LivefillError, or a bug below us: still restore, and say so
            self._end_failed(exc)
        return self.status

    def _uncancel(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            while task.cancelling():
                task.uncancel()

    # -- the stream -------------------------------------------------------------------------

    def _open(self) -> AsyncContextManager[AsyncIterator[Any]]:
        if self._source is not None:
            return self._source(self._tap)
        cfg = self.config
        idle = cfg.idle_timeout if cfg.idle_timeout and cfg.idle_timeout > 0 else None
        schema = self.schema_source()
        scenario = self._demo_scenario(schema)
        if cfg.mode.spec.needs_relay:
            from livefill.relay.client import is_loopback_url, open_relay
            from livefill.relay.records import DEFAULT_IDLE_TIMEOUT

            body: dict[str, Any] = {"provider": cfg.provider, "mode": cfg.mode.value}
            if scenario:
                body["scenario"] = scenario
            else:  # a person's schema travels inline: the relay may not see this machine's files
                body.update(schema=schema.name if schema.bundled else schema.schema_json, document=cfg.document)
            if cfg.demo is not None:
                body["upstream"] = "demo"
                body["demo"] = {**cfg.demo.relay_demo(), "tag": self.status.run_id}
            else:
                body["upstream"] = "live"
                if cfg.base_url:
                    body["base_url"] = cfg.base_url
            if cfg.model:
                body["model"] = cfg.model
            if cfg.structured != "tools":
                body["structured"] = cfg.structured
            if cfg.fine_grained:
                body["fine_grained"] = True
            if idle is not None and idle < DEFAULT_IDLE_TIMEOUT:
                # a limit shorter than a relay's default: the relay watches its upstream no longer
                # than this side. Sent only then (a relay older than the key refuses it; a longer
                # limit gains nothing: the relay keeps the shorter of the two).
                body["idle_timeout"] = idle
            if cfg.demo is None and not cfg.relay_url:
                # base_url is the live provider's: the relay (and its token) must not go there
                raise UsageError(f"{cfg.mode.value} mode with a live provider needs the relay's address (relay_url)")
            relay_url = cfg.relay_url or cfg.base_url
            # The key goes to the relay only when it is the app's own, over loopback; a relay
            # elsewhere uses the keys of its own environment.
            hand_key = cfg.demo is None and cfg.relay_embedded and bool(cfg.api_key) and is_loopback_url(relay_url)
            # A recording is made by the embedded relay, of the provider's wire it reads.
            record = cfg.record_path if cfg.record_path and relay_can_record(cfg) else None
            if record is not None:
                self._relay_record = _RelayRecording(Path(record).expanduser().absolute())
            return _off_thread(lambda tap: open_relay(
                relay_url,
                cfg.relay_token or "",
                body,
                tap=tap,
                idle_timeout=None if idle is None else relay_backstop(idle),
                upstream_key=cfg.api_key if hand_key else None,
                record_path=str(self._relay_record.path) if record is not None else None,
                record_document=cfg.record_document,
            ), self._tap)
        from livefill.wire.providers import ExtractionRequest, open_stream

        request = ExtractionRequest(
            provider=cfg.provider,
            base_url=cfg.base_url,
            schema_name=schema.name,
            schema_json=schema.schema_json,
            document=cfg.document,
            model=cfg.model,
            api_key=cfg.api_key,
            demo_headers=(
                {**replace(cfg.demo, scenario=scenario).headers(), "x-demo-tag": self.status.run_id}
                if cfg.demo is not None
                else {}
            ),
            fine_grained=cfg.fine_grained,
            structured=cfg.structured,
        )
        tap = self._tap
        if cfg.record_path:
            from livefill.recording.trace import TraceWriter

            self._request = request
            self._trace = TraceWriter(cfg.record_path, secrets=_secrets(cfg))
            tap = tee(tap, self._trace)  # type: ignore[assignment]
        return _off_thread(lambda t: open_stream(request, tap=t, idle_timeout=idle), tap)

    def schema_source(self) -> SchemaSource:
        """The schema the request asks for: `schema_json` if given, else `schema_name` (a bundled
        name or a file), else the demo scenario's; InputError (SchemaError) for one livefill
        cannot use."""
        cfg = self.config
        spec: Any = cfg.schema_json if cfg.schema_json is not None else cfg.schema_name
        if not spec and cfg.demo is not None and cfg.demo.scenario:
            spec = get_scenario(cfg.demo.scenario).schema_name
        return resolve_schema(spec)

    def _demo_scenario(self, schema: SchemaSource) -> str | None:
        """The demo scenario to name in the request: the config's, unless the run is about a
        document or a schema of one's own (then the demo provider is sent what the run is about,
        and says it only knows its scenarios)."""
        cfg = self.config
        if cfg.demo is None or not cfg.demo.scenario:
            return None
        try:
            scenario = get_scenario(cfg.demo.scenario)
        except KeyError:
            return cfg.demo.scenario  # the demo provider names the unknown scenario itself
        if not schema.bundled or schema.name != scenario.schema_name:
            return None
        if cfg.document and cfg.document.strip() != scenario.document.strip():
            return None
        return cfg.demo.scenario

    async def _consume(self, reader: Reader) -> None:
        form = self.form
        async with self._open() as events:
            self._begin_trace(status=200, headers=getattr(events, "headers", {}))
            try:
                async for event in events:
                    # counts of a batch of events that arrived together are told once, after its last
                    self._observe(event, quiet=getattr(events, "pending", False))
                    changes = reader.feed(event)
                    if changes:
                        form.apply_many(changes, parent_state=reader.parent_state)
                    if reader.deferred is not None and self._flush_handle is None:
                        self._flush_handle = asyncio.get_running_loop().call_later(reader.deferred, self._flush, reader)
            finally:
                if self._flush_handle is not None:
                    self._flush_handle.cancel()
                    self._flush_handle = None
        # the source is closed here
        reader.end()
        self._finish(reader.value(form.document))

    def _flush(self, reader: Reader) -> None:
        """Apply what the reader put off (its `deferred` time has come and no event came since)."""
        self._flush_handle = None
        if not self.form.running:
            return
        changes = reader.flush()
        if changes:
            self.form.apply_many(changes, parent_state=reader.parent_state)
        if reader.deferred is not None:
            self._flush_handle = asyncio.get_running_loop().call_later(reader.deferred, self._flush, reader)

    def _observe(self, event: Any, quiet: bool = False) -> None:
        """What an event tells the status: content (counted or not), the stop reason. `quiet`:
        more events of the same batch follow, the observers hear of this one with them."""
        if isinstance(event, ArgsDelta):
            self._payload_bytes += len(event.text.encode("utf-8", "surrogatepass"))
            self._content(quiet, deltas_received=self.status.deltas_received + 1)
        elif isinstance(event, TextDelta):
            self._content(quiet)
        elif isinstance(event, Stop):
            self._update(stop_reason=event.raw or event.reason.value)
        elif not isinstance(event, (BlockStop, KeepAlive)):  # a relay record
            self._content(quiet, records_received=self.status.records_received + 1)
        elif self._untold and not quiet:
            self._update()

    def _content(self, quiet: bool, **counts: int) -> None:
        if self.status.phase is Phase.CONNECTING:
            self._fire(Trigger.CONTENT, reason="streaming", **counts)
        else:
            self._update(quiet=quiet, **counts)

    def _finish(self, value: Any) -> None:
        check_document(self.form.schema_model, value)
        reason = "committed"
        if self.history is not None:  # written (and fsynced) before the form shows it committed
            try:
                self._append_history(value)
            except HistoryWriteError as exc:  # the valid result is kept; the status says so
                reason = f"committed, but {exc}"
            else:
                notes = self.history.new_problems()  # e.g. a torn last record, said once
                if notes:
                    reason = f"committed ({'; '.join(notes)})"
        self.form.commit(value)
        self.result = value
        self._fire(Trigger.COMMIT, reason=reason)
        self._end_trace("complete", None)

    def _append_history(self, value: Any) -> None:
        if self.history is not None:
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

    # -- endings ----------------------------------------------------------------------------

    def _end_form(self) -> None:
        """The form after a run without a result: exactly as before Start (the restoring modes;
        the reason and the failing pointer go to the status and the run log, not onto the user's
        restored field), or whatever the naive client showed."""
        if not self.form.running:
            return
        if self.config.mode.spec.restores_on_failure:
            self.form.restore()
        else:
            self.form.adopt_draft()  # keeps whatever it showed

    def _end_stopped(self) -> None:
        self._end_form()
        self._fire(Trigger.STOP, reason="stopped by the user", error_code="cancelled")
        self._end_trace("stopped", "stopped by the user")

    def _end_failed(self, exc: BaseException) -> None:
        reason, code = describe_failure(exc)
        if self.config.replay_ending and isinstance(exc, (Truncated, ConnectionLost)):
            reason = f"{reason} — {self.config.replay_ending}"  # the replay ended where its recording did
        pointer = getattr(exc, "pointer", None)
        self._end_form()
        self._fire(Trigger.FAIL, reason=reason, error_code=code, pointer=pointer)
        if self._trace is not None and not self._trace.begun:  # refused before any response
            retry = getattr(exc, "retry_after", None)
            self._begin_trace(
                status=getattr(exc, "status", None),
                headers={"retry-after": f"{retry:g}"} if isinstance(retry, (int, float)) else {},
            )
        self._end_trace(
            "cancelled" if isinstance(exc, Cancelled) else "failed", reason, code=code, error=type(exc).__name__
        )

    # -- recording --------------------------------------------------------------------------

    def _begin_trace(self, *, status: int | None, headers: Mapping[str, str]) -> None:
        if self._trace is None or self._trace.begun:
            return
        from livefill.recording.trace import trace_header

        cfg = self.config
        self._trace.begin(
            trace_header(
                self._request,
                status=status,
                headers=headers,
                include_document=cfg.record_document,
                started_at=self.status.started_at,
                mode=cfg.mode.value,
                label=cfg.label or None,
                run_id=self.status.run_id,
            )
        )

    def _end_trace(self, outcome: str, reason: str | None, **extra: Any) -> None:
        if self._trace is not None and self._trace.begun:
            self._trace.end(outcome, reason, **extra)

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
    "relay_can_record",
    "server_note",
]
