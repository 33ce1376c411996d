"""The worker process's side of a run: open the source, read it, and send the app one batch a frame.

`main(conn)` is the process's whole life (livefill.session.run_remote starts it with the 'spawn'
method): it warms what a first request needs, then serves one `StartRun` after another from
`conn` until the app closes its end. For each run it opens the source exactly as
livefill.session.run does (the provider stream, or the relay as the mode says), feeds every event
to the mode's reader and the reader's changes into a `FormModel` of its own (the mirror the final
value is read from; when asked, watched by a `FormProbe` for the lane's figures), runs the taps
the app asked it to stand in for (the lane's `WireRecorder`, the byte-to-pixel probe's
`SettleReads`, a `UsageTap`), and sends the parent (livefill.session.run_batches):
`Opened`, at most one `Batch` per frame, or at once when a value settled (the changes reduced to
the last write per pointer, the recorder's journal or the wire if asked, the counts and tokens,
what the probe reported), and one `Outcome`. A `StopRun` cancels the read: the connection is closed
(the server sees the disconnect) before the stopped `Outcome` is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import os
import time
from collections.abc import AsyncIterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, AsyncContextManager

from livefill import switches
from livefill.extraction.form import FormModel
from livefill.extraction.readers import READERS, Reader
from livefill.extraction.schema import check_document
from livefill.recording.settle_reads import SettleReads
from livefill.recording.wiretap import WireRecorder
from livefill.session.form_probe import FormProbe, ShownLog
from livefill.session.run_batches import (
    FRAME_SECONDS,
    Batch,
    Opened,
    Outcome,
    Ready,
    StartRun,
    StopRun,
    portable_failure,
    reduce_changes,
)
from livefill.session.run_request import (
    RelayRecording,
    demo_scenario,
    provider_request,
    provider_source,
    relay_request,
    relay_source,
    run_schema,
)
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, Stop, TextDelta
from livefill.wire.providers.http_failures import serve_in_process
from livefill.wire.taps import WireFrame, arriving
from livefill.wire.usage import UsageTap

__all__ = ["main"]

# Imported by name at start-up, as livefill.serving.connection.prewarm does: importing them (the
# SDKs, the HTTP stack) before the first Start is the point of a warm worker.
_WARM_MODULES = ("livefill.relay.client", "livefill.wire.providers.transport")


#: How much lower than the app's the worker's scheduling priority is (set by run_remote as the
#: worker starts, before it imports anything): on a machine with
#: fewer cores than runnable processes the GUI thread goes first and a worker reads when it is free,
#: never the other way round (three lanes' workers on two cores took the GUI thread's turns: the
#: compare view's lag p99 was about twice what it is with this; docs/notes/run-worker.md).
NICENESS = 10


def niceness() -> int:
    """How far below the app's a worker's priority is: LIVEFILL_WORKER_NICENESS (0-19), else
    `NICENESS`. At 10 a worker that the machine's other work keeps busy waits long for a core (its
    imports took over 20 s beside four busy processes on two cores); 0 lets it compete as the app does."""
    value = switches.number("LIVEFILL_WORKER_NICENESS", NICENESS, positive=False)
    return max(0, min(19, int(value)))


def main(conn: Connection) -> None:
    """The worker process (its priority lowered by the app's side as it starts): warm up, then
    serve runs from `conn` until it closes."""
    for name in _WARM_MODULES:
        with contextlib.suppress(Exception):  # a failure here is the request's to report
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        importlib.import_module("livefill.wire.providers.transport").prewarm()
    _settle_garbage()
    with contextlib.suppress(OSError, ValueError):
        conn.send(Ready())
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(conn))


def _settle_garbage() -> None:
    """Collect now and keep what survives out of every later collection: a full collection over
    the SDKs' objects took hundreds of ms and held a run's batches back (as on the GUI thread:
    livefill.gui.gui_thread_gc). Called at start-up and after each run, between runs."""
    gc.collect()
    gc.freeze()


async def _serve(conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Any] = asyncio.Queue()

    def readable() -> None:
        try:
            while conn.poll():
                inbox.put_nowait(conn.recv())
        except (EOFError, OSError):
            loop.remove_reader(conn.fileno())
            inbox.put_nowait(None)  # the app is gone

    loop.add_reader(conn.fileno(), readable)
    while True:
        message = await inbox.get()
        if message is None:
            return
        if isinstance(message, StartRun):
            if not await _serve_run(message, conn, inbox):
                return
            _settle_garbage()


async def _serve_run(start: StartRun, conn: Connection, inbox: asyncio.Queue[Any]) -> bool:
    """Run `start` until it ends or the app stops it; False when the app has gone."""
    if start.environ is not None and start.environ != os.environ:  # e.g. a provider's base URL, a switch
        os.environ.clear()
        os.environ.update(start.environ)
    outbox = _Outbox(conn, start)
    task = asyncio.ensure_future(_run(start, outbox))
    alive = True
    while not task.done():
        getter = asyncio.ensure_future(inbox.get())
        done, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter not in done:
            getter.cancel()
            continue
        message = getter.result()
        if message is None or isinstance(message, StopRun):
            alive = message is not None
            task.cancel()  # the source's connection closes as the cancel unwinds it
    outcome = task.result()
    if alive:
        try:
            conn.send(outcome)
        except (OSError, ValueError):
            return False
    return alive


async def _run(start: StartRun, outbox: _Outbox) -> Outcome:
    try:
        value = await _read(start, outbox)
    except asyncio.CancelledError:
        return Outcome("stopped", last=outbox.take())
    except Exception as exc:  # noqa: BLE001 - every failure is the parent's to say
        return Outcome("failed", last=outbox.take(), failure=portable_failure(exc))
    return Outcome("committed", last=outbox.take(), value=value)


def _open(start: StartRun, tap: _Outbox) -> AsyncContextManager[AsyncIterator[Any]]:
    """The run's source, as livefill.session.run.Run opens it (without the net thread)."""
    cfg = start.config
    schema = run_schema(cfg)
    scenario = demo_scenario(cfg, schema)
    if cfg.mode.spec.needs_relay:
        relay = relay_request(cfg, schema, scenario, start.run_id)
        record = RelayRecording(Path(start.relay_record)) if start.relay_record else None
        return relay_source(cfg, relay, record)(tap)
    return provider_source(provider_request(cfg, schema, scenario, start.run_id), cfg.idle_limit)(tap)


async def _read(start: StartRun, outbox: _Outbox) -> Any:
    cfg = start.config
    for url in start.own_servers:  # the app's embedded server is not named in a failure here either
        serve_in_process(url)
    model = run_schema(cfg).model
    reader = READERS[cfg.mode](cfg.reader_options, model)
    outbox.parent_state = reader.parent_state
    form = FormModel(model, marking=start.marking)
    form.begin_run()
    if any(start.shown):  # the lane's figures: what a probe on the app's form would report of each change
        shown = outbox.shown = ShownLog()
        FormProbe(form, shown if start.shown[0] else None, timeline=shown if start.shown[1] else None,
                  clock=time.monotonic)
    flush: asyncio.TimerHandle | None = None
    loop = asyncio.get_running_loop()

    def deferred(reader: Reader) -> None:
        nonlocal flush
        flush = None
        changes = reader.flush()
        if changes:
            form.apply_many(changes, parent_state=reader.parent_state)
            outbox.add_changes(changes)
        if reader.deferred is not None:
            flush = loop.call_later(reader.deferred, deferred, reader)

    async with _open(start, outbox) as events:
        outbox.opened(dict(getattr(events, "headers", {}) or {}))
        try:
            async for event in events:
                outbox.observe(event)
                changes = reader.feed(event)
                if changes:
                    form.apply_many(changes, parent_state=reader.parent_state)
                    outbox.add_changes(changes)
                if reader.deferred is not None and flush is None:
                    flush = loop.call_later(reader.deferred, deferred, reader)
        finally:
            if flush is not None:
                flush.cancel()
    reader.end()
    value = reader.value(form.document)
    check_document(form.schema_model, value)
    return value


class _Noting(dict):  # type: ignore[type-arg]
    """SettleReads.times that also lists each entry written, for the next batch."""

    def __init__(self, written: list[tuple[str, float]]) -> None:
        super().__init__()
        self._written = written

    def __setitem__(self, key: str, value: float) -> None:
        super().__setitem__(key, value)
        self._written.append((key, value))


class _Outbox:
    """The run's tap and its counts; sends what gathered at most once a frame."""

    def __init__(self, conn: Connection, start: StartRun) -> None:
        self._conn = conn
        self._settle: SettleReads | None = None
        self._settled: list[tuple[str, float]] = []
        if start.settle_reads:  # the byte-to-pixel probe's wire side, here rather than on the GUI thread
            self._settle = SettleReads()
            self._settle.times = _Noting(self._settled)
        self._loop = asyncio.get_running_loop()
        self._changes: list[tuple[Any, ...]] = []
        self._wire: list[tuple[Any, ...]] = []
        self._send_wire = start.wire
        self._recorder: WireRecorder | None = None
        if start.recorder is not None:  # the lane's recorder, here: the app's adopts its journal
            t0, max_bytes = start.recorder
            self._recorder = WireRecorder(t0=t0, max_bytes=max_bytes)
            self._recorder.journal = self._wire
        self._usage = UsageTap() if start.usage else None
        self._usage_sent: Any = None
        self.read_bytes = 0
        self.last_read: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last_sent = -1.0
        self._dirty = False
        self.parent_state: Any = None
        self.shown: ShownLog | None = None
        self.payload_bytes = 0
        self.deltas = 0
        self.records = 0
        self.content = False
        self.stop_reason: str | None = None

    # -- the tap ------------------------------------------------------------------------------

    def on_read(self, data: bytes) -> None:
        at = self.last_read = time.monotonic()
        self.read_bytes += len(data)
        with arriving(at):
            if self._recorder is not None:
                self._recorder.on_read(data)
            elif self._send_wire:
                self._wire.append(("r", data, at))
            if self._settle is not None:
                self._settle.on_read(data)
        self._due()

    def on_frame(self, frame: WireFrame) -> None:
        if self._recorder is not None:
            self._recorder.on_frame(frame)
        elif self._send_wire:
            self._wire.append(("f", frame))
        if self._settle is not None:
            self._settle.on_frame(frame)
        if self._usage is not None:
            self._usage.on_frame(frame)

    def on_event(self, event: Any) -> None:
        if self._recorder is not None:
            self._recorder.on_event(event)
        elif self._send_wire:
            self._wire.append(("e", event))
        if self._settle is not None:
            self._settle.on_event(event)

    # -- what the run saw ---------------------------------------------------------------------

    def opened(self, headers: dict[str, str]) -> None:
        self._send(Opened(headers))

    def observe(self, event: Any) -> None:
        """The counts an event adds to (as livefill.session.run.Run._observe keeps them)."""
        if isinstance(event, ArgsDelta):
            self.payload_bytes += len(event.text.encode("utf-8", "surrogatepass"))
            self.deltas += 1
            self.content = True
        elif isinstance(event, TextDelta):
            self.content = True
        elif isinstance(event, Stop):
            self.stop_reason = event.raw or event.reason.value
        elif not isinstance(event, (BlockStop, KeepAlive)):  # a relay record
            self.records += 1
            self.content = True
        self._due()

    def add_changes(self, changes: list[tuple[Any, ...]]) -> None:
        self._changes.extend(changes)
        self._due()

    # -- sending ------------------------------------------------------------------------------

    def _due(self) -> None:
        """Something to send: a frame after the last batch (at once, on this read's last event,
        when a frame has passed). A value that settled waits too: the GUI holds its repaints to a
        display frame anyway, and sending such batches at once cost its thread 2-3 points of CPU
        for no gain in byte-to-pixel p99 (docs/notes/run-worker.md)."""
        self._dirty = True
        if self._timer is not None:
            return
        wait = self._last_sent + FRAME_SECONDS - time.monotonic()
        # even when a frame has passed, wait for the rest of this read's events (call_soon)
        self._timer = self._loop.call_later(wait, self._flush) if wait > 0 else self._loop.call_soon(self._flush)  # type: ignore[assignment]

    def _batch(self) -> Batch | None:
        if not self._dirty:
            return None
        now = time.monotonic()
        batch = Batch(
            changes=reduce_changes(self._changes),
            parent_state=self.parent_state,
            wire=tuple(self._wire),
            payload_bytes=self.payload_bytes,
            deltas=self.deltas,
            records=self.records,
            content=self.content,
            stop_reason=self.stop_reason,
            sent_at=now,
            settle_times=tuple(self._settled),
            shown=self.shown.take() if self.shown is not None else (),
            read_bytes=self.read_bytes,
            last_read=self.last_read,
            usage=self._new_usage(),
        )
        self._settled.clear()
        self._changes.clear()
        self._wire.clear()
        self._dirty = False
        return batch

    def _new_usage(self) -> Any:
        """The token counts if they changed since the last batch, else None."""
        usage = self._usage.usage if self._usage is not None else None
        if usage == self._usage_sent:
            return None
        self._usage_sent = usage
        return usage

    def _flush(self) -> None:
        self._timer = None
        batch = self._batch()
        if batch is not None:
            self._last_sent = batch.sent_at
            self._send(batch)

    def _send(self, message: Any) -> None:
        with contextlib.suppress(OSError, ValueError):  # the app is gone: the run ends with it
            self._conn.send(message)

    def take(self) -> Batch | None:
        """What has not been sent yet, as the last batch (the Outcome carries it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return self._batch()
