"""A run read in a worker process: the app's side (the app's default on POSIX; LIVEFILL_RUN_WORKER).

How this works
--------------
`consume(run, tap)` stands in for the reading half of `Run._consume`: it takes a warm worker
(livefill.session.run_worker, started with the 'spawn' method: the app has Qt threads, so never
a plain fork), sends it `StartRun`, and applies what comes back (livefill.session.run_batches):
each `Batch` is what the worker did for the run's taps (`_Taps`: the lane's WireRecorder runs
there and the app's adopts its journal, no parse here; a SettleReads' times, the token counts,
the byte count come as figures), the wire replayed only to taps that want every event (a trace
writer, an observer's tap; each read keeps the time it arrived in the worker), one status
update with the counts, and one `FormModel.apply_many` of the changes, already
reduced to the last write per pointer, at most one a frame. The `Outcome` ends it as the run
would have ended in this process: a committed value goes through `Run._finish` (history, commit),
a failure is raised for `Run.run` to say and restore. A cancel (Stop) sends `StopRun` and waits
until the worker has closed its connection before the run's own stop path restores the form
and asks the demo provider for its note, so the server counts the same stop as before.

`WorkerPool` keeps warm workers: `prewarm()` (each lane asks for one when it is made) starts them
ahead of the first Start; a worker goes back to the pool after its run. Where runs read is
`enabled()`: LIVEFILL_RUN_WORKER=process or =inprocess says; unset, the process's default, off
(the command line, the library, tests) until the app calls `use_by_default()` once its window
shows (livefill.gui.launch), which starts the workers its lanes asked for. A worker that dies, or
does not answer a stop within `STOP_WAIT` seconds, is killed and replaced after the run.
This module is Run's other half and uses its private steps (`_finish`, `_begin_trace`, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import sys
import time
import types
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

from livefill import switches
from livefill.errors import ConnectionLost
from livefill.recording.settle_reads import SettleReads
from livefill.recording.wiretap import WireRecorder
from livefill.session import run_worker
from livefill.session.form_probe import FormProbe, shown_elsewhere
from livefill.session.run_batches import Batch, Opened, Outcome, Ready, StartRun, StopRun, merged
from livefill.wire.providers.http_failures import in_process
from livefill.wire.taps import ReadWatch, Tee, WireTap, arriving, tee
from livefill.wire.usage import UsageTap

Run = Any  # livefill.session.run.Run, which imports this module (no circle: not imported here)

__all__ = ["STOP_WAIT", "WorkerPool", "consume", "enabled", "pool", "prewarm", "supported", "usable", "use_by_default"]

STOP_WAIT = 10.0  # seconds a stopped run waits for its worker to close the connection
MAX_WARM = 6  # warm workers kept at most: the single form and five compare lanes (compare.MAX_LANES)


_DEFAULT = False  # where runs read when LIVEFILL_RUN_WORKER is unset (use_by_default)


def supported() -> bool:
    """Whether this platform can read runs in workers: the app's side waits on the worker's pipe
    with the event loop's `add_reader`, which a pipe supports on POSIX only."""
    return os.name == "posix"


def _switch() -> str:
    return (switches.text("LIVEFILL_RUN_WORKER") or "").lower()


def enabled() -> bool:
    """Whether runs read in a worker process: LIVEFILL_RUN_WORKER=process (yes) or any other
    value, inprocess say (no); unset, this process's default (`use_by_default`)."""
    value = _switch()
    if value:
        return value == "process" and supported()
    return _DEFAULT


def worker_cores() -> int:
    """How many runs read in workers at once by default: a core each, one left for the GUI thread
    (the machine's cores, at least one). Measured on 2 cores (docs/notes/run-worker.md): three
    compare lanes each in a worker, beside the GUI thread and the demo server's process, waited
    for a core (byte to pixel p99 28-64 ms, against 20-32 ms read on the GUI thread)."""
    return max(1, (os.cpu_count() or 1) - 1)


def use_by_default(on: bool = True) -> None:
    """Make worker reads this process's default (the app, once its window shows), where
    `supported()`; then start the warm workers the lanes made so far asked for."""
    global _DEFAULT
    _DEFAULT = on and supported()
    if enabled() and pool().wanted:
        pool().top_up()


def usable(run: Run) -> bool:
    """Whether `run` reads in a worker: runs do (`enabled`), it reads the network (not a source of
    its own), its form's schema is the one the worker will resolve from the config, and, by
    default, a warm worker waits: a Start before the workers have warmed up (the app's first,
    seconds after launch) reads in this process at once rather than wait for one. Only
    LIVEFILL_RUN_WORKER=process waits (tests and benchmarks that must read in a worker)."""
    if not enabled() or run._source is not None:
        return False
    if _switch() != "process" and (not pool().any_warm() or pool().busy >= worker_cores()):
        return False
    try:
        return run.schema_source().model is run.form.schema_model
    except Exception:  # noqa: BLE001 - the in-process run says what is wrong with the schema
        return False


@contextlib.contextmanager
def _no_main_module() -> Iterator[None]:
    """'spawn' re-imports the parent's __main__ in the child (the app's window, a benchmark's
    server): the worker needs none of it, so the child is told of no main module."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


class _Worker:
    """One worker process and the app's end of its pipe."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=run_worker.main, args=(child,), name="livefill-run-worker", daemon=True)
        with _no_main_module():
            self.process.start()
        _lower_priority(self.process.pid)
        child.close()
        self.broken = False
        self._ready = False

    def ready(self) -> bool:
        """Whether the worker has said it is warm (only asked while it is idle)."""
        if not self._ready and self.alive:
            try:
                while self.conn.poll():
                    self._ready = isinstance(self.conn.recv(), Ready) or self._ready
            except (EOFError, OSError):
                self.broken = True
        return self._ready

    @property
    def alive(self) -> bool:
        return not self.broken and self.process.is_alive()

    def send(self, message: Any) -> None:
        try:
            self.conn.send(message)
        except (OSError, ValueError) as exc:
            self.broken = True
            raise ConnectionLost("the run's worker process is gone") from exc

    def close(self) -> None:
        """End the worker without waiting for it: a killed process's exit (its memory given back,
        at its lowered priority) took 200-260 ms on a busy machine, and this runs on the GUI thread
        at a run's end. It is reaped later (`_reap`)."""
        self.broken = True
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        _ENDING.append(self.process)
        _reap()


def _lower_priority(pid: int | None) -> None:
    """Run the worker `run_worker.niceness()` below this process, from its first instruction: set
    by the worker itself, after its imports, three workers' ~0.25 s of imports each ran at the
    app's priority while its window was first shown."""
    lower = run_worker.niceness()
    if not lower:
        return
    with contextlib.suppress(OSError, AttributeError, TypeError):  # AttributeError: no setpriority (Windows)
        own = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(19, own + lower))


_ENDING: list[Any] = []
"""Worker processes killed and not yet reaped (multiprocessing's BaseProcess)."""


def _reap(wait: float = 0.0) -> None:
    """Forget the ended workers that have exited (`is_alive` reaps one that has, without waiting);
    with `wait`, first give each up to that many seconds (the app's exit)."""
    for process in _ENDING:
        if wait:
            process.join(timeout=wait)
    _ENDING[:] = [process for process in _ENDING if process.is_alive()]


class WorkerPool:
    """Warm workers, waiting for runs (see the module docstring)."""

    def __init__(self) -> None:
        self.idle: list[_Worker] = []
        self.wanted = 0  # how many warm workers to keep (one per lane that asked)
        self.runs = 0  # how many runs have read in a worker (LIVEFILL_REPORT says it at the app's close)
        self.started = 0  # how many workers this pool has started (the same)
        self.busy = 0  # how many workers a run has now

    def _start(self) -> _Worker:
        self.started += 1
        return _Worker()

    def keep(self) -> int:
        """How many warm workers to keep: one per lane that asked, at most MAX_WARM, and by
        default (no LIVEFILL_RUN_WORKER=process) no more than can read at once (`worker_cores`)."""
        most = MAX_WARM if _switch() == "process" else min(MAX_WARM, worker_cores())
        return max(1, min(self.wanted, most))

    def want(self, count: int = 1) -> None:
        """Keep `count` more warm workers (fewer, for a negative count: the spare ones end now),
        at most `keep()`; start missing ones now."""
        self.wanted = max(0, self.wanted + count)
        while len(self.idle) > self.keep():
            self.idle.pop().close()
        self.top_up()

    def top_up(self) -> None:
        self.idle = [w for w in self.idle if w.alive or w.close()]
        while len(self.idle) < self.keep():
            self.idle.append(self._start())

    def warm(self) -> bool:
        """Whether every waiting worker is warm (benchmarks wait for it before measuring)."""
        return all([w.ready() for w in self.idle])

    def any_warm(self) -> bool:
        """Whether a warm worker waits (`usable`)."""
        return any(w.ready() for w in self.idle)

    def take(self) -> _Worker:
        """A warm worker if one waits, else one still warming up, else a new one (that Start
        waits for it to start)."""
        self.runs += 1
        self.busy += 1
        for worker in self.idle:
            if worker.ready():
                self.idle.remove(worker)
                return worker
        while self.idle:
            worker = self.idle.pop()
            if worker.alive:
                return worker
            worker.close()
        return self._start()

    def give_back(self, worker: _Worker) -> None:
        """After a run: keep `worker` if it is well and wanted, and top the pool up."""
        self.busy = max(0, self.busy - 1)
        worker._ready = worker._ready or worker.alive  # it said Ready before its run (the run's inbox took it)
        if worker.alive and len(self.idle) < self.keep():
            self.idle.append(worker)
        else:
            worker.close()
        self.top_up()

    def close(self) -> None:
        """End every waiting worker (the app's exit: waits up to a second for each to go)."""
        while self.idle:
            self.idle.pop().close()
        _reap(wait=1.0)


_POOL: WorkerPool | None = None


def pool() -> WorkerPool:
    """The process's one pool."""
    global _POOL
    if _POOL is None:
        _POOL = WorkerPool()
    return _POOL


def prewarm(count: int = 1) -> None:
    """Want `count` more warm workers (a lane, when it is made; -1 when it is released): started
    now when runs read in workers, else counted, for `use_by_default` to start."""
    workers = pool()
    if enabled():
        workers.want(count)
    else:
        workers.wanted = max(0, workers.wanted + count)


# ---------------------------------------------------------------------------------------------
# One run


class _Inbox:
    """The worker's messages, as they arrive on this loop (a reader on the pipe, no thread)."""

    def __init__(self, worker: _Worker) -> None:
        self._worker = worker
        self._loop = asyncio.get_running_loop()
        self._items: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None
        self._fd = worker.conn.fileno()
        self._loop.add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        conn: Connection = self._worker.conn
        try:
            while conn.poll():
                self._items.append(conn.recv())
        except (EOFError, OSError):
            self._worker.broken = True
            self._items.append(None)
            self._loop.remove_reader(self._fd)
        if self._items and self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> list[Any]:
        """Every message waiting (at least one); None stands for a worker that is gone."""
        while not self._items:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        items, self._items = self._items, []
        return items

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._fd)


class _Taps:
    """The run's taps, sorted: those the worker stands in for (it sends what they would have:
    a SettleReads' times, the lane's recorder's journal, the token counts, the byte count) and
    the rest (`wire`: a trace writer, an observer's tap), told every read, frame and event."""

    def __init__(self, tap: WireTap | None) -> None:
        self.settle: list[SettleReads] = []  # on the monotonic clock: the same arrival times there
        self.recorder: WireRecorder | None = None  # a fresh one on the monotonic clock: it adopts
        self.usage: list[UsageTap] = []
        self.watches: list[ReadWatch] = []
        self.wire = self._sort(tap)

    def _sort(self, tap: WireTap | None) -> WireTap | None:
        if isinstance(tap, Tee):
            return tee(*(self._sort(t) for t in tap.taps))
        if isinstance(tap, SettleReads) and getattr(tap, "_clock", None) is time.monotonic:
            self.settle.append(tap)
        elif (type(tap) is WireRecorder and self.recorder is None and tap.version == 0
              and getattr(tap, "_clock", None) is time.monotonic):
            self.recorder = tap
        elif type(tap) is UsageTap:
            self.usage.append(tap)
        elif type(tap) is ReadWatch:
            self.watches.append(tap)
        else:
            return tap
        return None

    def start(self, **fields: Any) -> StartRun:
        """The StartRun that asks the worker for what these taps need."""
        recorder = self.recorder
        return StartRun(**fields, settle_reads=bool(self.settle), usage=bool(self.usage), wire=self.wire is not None,
                        recorder=(recorder.t0, recorder.max_bytes) if recorder is not None else None)


def _own_servers(cfg: Any) -> tuple[str, ...]:
    """The run's addresses that this process serves (the embedded demo provider and relay)."""
    return tuple(url for url in dict.fromkeys((cfg.base_url, cfg.relay_url)) if url and in_process(url))


def apply_batch(run: Run, taps: _Taps, batch: Batch, probes: list[FormProbe] | None = None) -> None:
    """One batch into the run: what the worker did for the taps (the recorder's journal adopted,
    the times, counts and tokens), the wire to the other taps if any, one status update, one
    form update, and to the form's `probes` what the mirror form's probe reported (the figures)."""
    for reads in taps.settle:
        reads.times.update(batch.settle_times)
    if taps.recorder is not None:
        taps.recorder.adopt(batch.wire)
    for watch in taps.watches:
        watch.bytes = batch.read_bytes
        if batch.last_read is not None:
            watch.last_read = batch.last_read if watch._clock is time.monotonic else watch._clock()
    if batch.usage is not None:
        for usage in taps.usage:
            usage.usage = batch.usage
    tap = taps.wire
    if tap is not None:
        for item in batch.wire:
            kind = item[0]
            if kind == "r":
                with arriving(item[2]):
                    tap.on_read(item[1])
            elif kind == "f":
                tap.on_frame(item[1])
            else:
                tap.on_event(item[1])
    run._payload_bytes = batch.payload_bytes
    status = run.status
    changes: dict[str, Any] = {}
    if batch.stop_reason != status.stop_reason:
        changes["stop_reason"] = batch.stop_reason
    if batch.deltas != status.deltas_received:
        changes["deltas_received"] = batch.deltas
    if batch.records != status.records_received:
        changes["records_received"] = batch.records
    if batch.content:
        run._content(False, **changes)
    else:
        run._update(**changes)
    if batch.changes:
        run.form.apply_many(batch.changes, parent_state=batch.parent_state)
    if batch.shown:
        for probe in probes or ():
            probe.replay(batch.shown)


def _handle(run: Run, taps: _Taps, message: Any, probes: list[FormProbe]) -> Outcome | None:
    if message is None:
        raise ConnectionLost("the run's worker process ended before the run did")
    if isinstance(message, Batch):
        apply_batch(run, taps, message, probes)
    elif isinstance(message, Opened):
        run._begin_trace(status=200, headers=message.headers)
    elif isinstance(message, Outcome):
        if message.last is not None:
            apply_batch(run, taps, message.last, probes)
        return message
    return None


def _together(messages: list[Any]) -> list[Any]:
    """`messages` with batches that came one after the other merged: one update of the form and
    the status for all that waited (a busy GUI thread catches up in one step)."""
    out: list[Any] = []
    for message in messages:
        if isinstance(message, Batch) and out and isinstance(out[-1], Batch):
            out[-1] = merged(out[-1], message)
        else:
            out.append(message)
    return out


async def _outcome(run: Run, taps: _Taps, inbox: _Inbox, probes: list[FormProbe]) -> Outcome:
    while True:
        for message in _together(await inbox.get()):
            outcome = _handle(run, taps, message, probes)
            if outcome is not None:
                return outcome


async def consume(run: Run, tap: WireTap | None) -> None:
    """Read `run` in a worker (see the module docstring); returns once it committed, raises why
    it did not (a stop: CancelledError, once the worker's connection is closed)."""
    workers = pool()
    worker = workers.take()
    inbox = _Inbox(worker)
    relay_record = run._relay_record
    taps = _Taps(tap)
    try:
        with shown_elsewhere(run.form) as probes:  # they report what the worker's probe reported
            shown = (any(p.metrics is not None for p in probes), any(p.timeline is not None for p in probes))
            worker.send(taps.start(config=run.config, run_id=run.status.run_id, own_servers=_own_servers(run.config),
                                   relay_record=str(relay_record.path) if relay_record else None,
                                   marking=run.form.marking, shown=shown, environ=dict(os.environ)))
            try:
                outcome = await _outcome(run, taps, inbox, probes)
            except asyncio.CancelledError:
                await _stop(run, taps, worker, inbox, probes)
                raise
        if outcome.kind == "committed":
            run._finish(outcome.value)
        elif outcome.failure is not None:
            raise outcome.failure
        else:  # the worker stopped without being asked: it was told to end
            raise ConnectionLost("the run's worker process stopped the run")
    finally:
        inbox.close()
        workers.give_back(worker)


async def _stop(run: Run, taps: _Taps, worker: _Worker, inbox: _Inbox, probes: list[FormProbe]) -> None:
    """Tell the worker to close its connection; return once it has (or it was killed)."""
    try:
        worker.send(StopRun())
        await asyncio.wait_for(_outcome(run, taps, inbox, probes), STOP_WAIT)
    except (Exception, asyncio.CancelledError):  # noqa: BLE001 - no answer: the process ends instead
        worker.close()
