"""One run: a stream read in one mode, written into the form's draft, ending committed or restored.

`await run.run()` opens the source (livefill.session.run_request: the provider stream, or the
relay as the mode's `ModeSpec.needs_relay` says), passes every event to the mode's reader
(`livefill.extraction.readers.READERS`) and applies the changes it returns to the form's draft.
The phases and what moves between them are the table `TRANSITIONS` (run_status.py); nothing else
sets `phase`. A run commits only when the reader saw the stream's terminal and the whole object
validates; every other ending restores the form (unless the mode keeps what it showed) and says
why. `stop()` is a real cancel: the connection is closed before the run is STOPPED. With
`record_path`, the run (or, for a relay run, the embedded relay) writes a trace of the wire.

How a run ends, is stopped, times out and is recorded: docs/notes/run-lifecycle.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncContextManager

from livefill.embedded.client import demo_request_entry, server_note
from livefill.errors import Cancelled, ConnectionLost, Truncated, UsageError
from livefill.extraction.form import FormModel
from livefill.extraction.json_doc import MISSING
from livefill.extraction.readers import READERS, Reader
from livefill.extraction.schema import check_document
from livefill.extraction.schemas import SchemaSource
from livefill.observers import Observers
from livefill.recording.history import History, HistoryWriteError, TaggedHistory
from livefill.recording.trace_writer import TraceWriter, trace_header
from livefill.session import run_remote
from livefill.session.failure_reasons import describe_failure
from livefill.session.run_config import RunConfig, Source, relay_can_record, run_secrets
from livefill.session.run_request import (
    RelayRecording,
    demo_scenario,
    off_thread,
    provider_request,
    provider_source,
    relay_request,
    relay_source,
    run_schema,
)
from livefill.session.run_status import TRANSITIONS, Phase, RunStatus, Trigger
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, Stop, TextDelta
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.taps import ReadWatch, WireTap, tee

__all__ = ["Run", "StatusObserver"]


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
        history: History | TaggedHistory | None = None,
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
        self._observers: Observers[RunStatus] = Observers()
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
        self._trace: TraceWriter | None = None  # the TraceWriter while recording
        self._request: ExtractionRequest | None = None  # the request sent (recording)
        self._relay_record: RelayRecording | None = None  # the trace the embedded relay writes (settled / hybrid)
        self._flush_handle: asyncio.TimerHandle | None = None  # a reader's deferred work, due
        self._untold = False  # the status changed and its observers have not heard yet

    # -- observing --------------------------------------------------------------------------

    def subscribe(self, callback: StatusObserver) -> Callable[[], None]:
        """Call `callback(RunStatus)` on every status change; returns an unsubscribe function."""
        return self._observers.subscribe(callback)

    def _update(self, *, quiet: bool = False, **changes: Any) -> None:
        bytes_received = self._reads.bytes or self._payload_bytes
        elapsed = (self._clock() - self._t0) if self._t0 is not None else 0.0
        self.status = replace(self.status, bytes_received=bytes_received, elapsed=elapsed, **changes)
        self._untold = quiet
        if quiet:
            return
        self._observers.notify(self.status)

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
    def recorder(self) -> TraceWriter | RelayRecording | None:
        """The run's TraceWriter while or after recording (None: not recording, or not yet);
        its `error` says when the trace could not be written (the run itself goes on). A relay
        run's trace is written by the embedded relay: a `RelayRecording` stands for it."""
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
        reader = READERS[self.config.mode](self.config.reader_options, self.form.schema_model)
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
        tap, source = self._prepare()
        return off_thread(source(), tap)

    def _prepare(self) -> tuple[WireTap, Callable[[], Source]]:
        """The tap the run's wire goes to (with the trace writer, when recording) and how to make
        its source; the request is built (and a relay request checked) here, before anything opens."""
        cfg = self.config
        schema = self.schema_source()
        scenario = demo_scenario(cfg, schema)
        if cfg.mode.spec.needs_relay:
            relay = relay_request(cfg, schema, scenario, self.status.run_id)
            if cfg.record_path and relay_can_record(cfg):  # the embedded relay records the provider's wire
                self._relay_record = RelayRecording(Path(cfg.record_path).expanduser().absolute())
            return self._tap, lambda: relay_source(cfg, relay, self._relay_record)
        request = provider_request(cfg, schema, scenario, self.status.run_id)
        tap = self._tap
        if cfg.record_path:
            self._request = request
            self._trace = TraceWriter(cfg.record_path, secrets=run_secrets(cfg))
            tap = tee(tap, self._trace)  # type: ignore[assignment]
        return tap, lambda: provider_source(request, cfg.idle_limit)

    def schema_source(self) -> SchemaSource:
        """The schema the request asks for (livefill.session.run_request.run_schema)."""
        return run_schema(self.config)

    async def _consume(self, reader: Reader) -> None:
        if run_remote.usable(self):  # read in a worker process (LIVEFILL_RUN_WORKER)
            await run_remote.consume(self, self._prepare()[0])
            return
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
        if self._trace is None or self._trace.begun or self._request is None:
            return
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
