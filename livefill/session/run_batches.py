"""The messages between a run and its worker process (livefill.session.run_worker / run_remote).

The worker says `Ready` once warm. The parent (the app's side, livefill.session.run_remote) sends
`StartRun`, then maybe `StopRun`; the worker answers `Opened` once the source is open, at most one `Batch` per `FRAME_SECONDS`
(the form's changes already reduced to the last write per pointer, the recorder's journal the
app's recorder adopts or the wire the parent's taps replay, the run's counts and tokens so far,
what the lane's figures count), sooner when a value settled,
and finally one `Outcome`, which carries the last batch. A
failure crosses as its own exception when that survives pickling, else as a `WorkerFailure`
that says it the same way (`portable_failure`). Everything here is a frozen dataclass.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, replace
from typing import Any

from livefill.errors import RunFailure
from livefill.extraction.form import FieldState
from livefill.session.failure_reasons import describe_failure
from livefill.session.run_config import RunConfig

__all__ = [
    "FRAME_SECONDS",
    "Batch",
    "Opened",
    "Outcome",
    "Ready",
    "StartRun",
    "StopRun",
    "WorkerFailure",
    "merged",
    "portable_failure",
    "reduce_changes",
]

FRAME_SECONDS = 1 / 60
"""The shortest time between two batches a worker sends (one screen frame): the GUI applies at
most one batch a frame per lane."""

_WRITES = (FieldState.PROVISIONAL, FieldState.SETTLED, FieldState.INVALID)


@dataclass(frozen=True, slots=True)
class Ready:
    """The worker has warmed up (sent once, before it reads its first `StartRun`)."""


@dataclass(frozen=True, slots=True)
class StartRun:
    """Run `config` (tagged `run_id`); `relay_record`: the trace the embedded relay writes."""

    config: RunConfig
    run_id: str
    relay_record: str | None = None
    marking: bool = True
    settle_reads: bool = False  # note when each value's settling byte arrived (SettleReads) there
    own_servers: tuple[str, ...] = ()  # the app's own servers among the run's (never named in a failure)
    shown: tuple[bool, bool] = (False, False)  # watch the mirror form for the lane's (metrics, timeline)
    environ: dict[str, str] | None = None  # the app's environment now (a warm worker was started before)
    recorder: tuple[float, int] | None = None  # (t0, max_bytes) of the WireRecorder to run there
    usage: bool = False  # read the provider's token counts there (a UsageTap)
    wire: bool = False  # send every read, frame and event too (the app has taps that want them)


@dataclass(frozen=True, slots=True)
class StopRun:
    """Close the run's connection (a real cancel) and answer with a stopped `Outcome`."""


@dataclass(frozen=True, slots=True)
class Opened:
    """The source is open: the response's headers (for the trace's header line)."""

    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class Batch:
    """What happened since the last batch. `wire`: the taps' calls, in order: ("r", bytes,
    arrival on time.monotonic), ("f", WireFrame, ...), ("e", event, ...); when the worker runs
    the lane's recorder, its `journal` (what the app's recorder adopts), else only when asked
    (`StartRun.wire`). `changes`: form changes `(pointer, state, value[, reason])` for
    `FormModel.apply_many`. The counts are totals."""

    changes: tuple[tuple[Any, ...], ...]
    parent_state: FieldState
    wire: tuple[tuple[Any, ...], ...]
    payload_bytes: int
    deltas: int
    records: int
    content: bool  # content (a delta or a record) has arrived in this run
    stop_reason: str | None
    sent_at: float  # time.monotonic() in the worker when it was sent
    settle_times: tuple[tuple[str, float], ...] = ()  # SettleReads.times noted since the last batch
    shown: tuple[tuple[Any, ...], ...] = ()  # what the mirror form's probe reported (form_probe.ShownLog)
    read_bytes: int = 0  # bytes read so far
    last_read: float | None = None  # when the latest read arrived (time.monotonic), None: no read yet
    usage: Any = None  # the provider's token counts (a livefill.wire.usage.Usage) if new in this batch


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the run ended: "committed" (with `value`), "failed" (`failure`) or "stopped"."""

    kind: str
    last: Batch | None = None
    value: Any = None
    failure: BaseException | None = None


class WorkerFailure(RunFailure):
    """A failure in the worker whose own exception could not cross the pipe, said as it was said
    there (`message` is already the whole reason; `code` its relay code)."""

    def __init__(self, message: str, *, code: str | None = None, pointer: str | None = None) -> None:
        super().__init__(message, pointer=pointer)
        self.code = code  # type: ignore[assignment]


def portable_failure(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling and reads the same after, else a WorkerFailure saying it."""
    said = describe_failure(exc)
    try:
        clone = pickle.loads(pickle.dumps(exc))
        if type(clone) is type(exc) and describe_failure(clone) == said:
            return exc
    except Exception:  # noqa: BLE001 - any exception that cannot travel is said instead
        pass
    reason, code = said
    failure = WorkerFailure(reason, code=code, pointer=getattr(exc, "pointer", None))
    for name in ("host", "status", "retry_after", "provider_message"):
        value = getattr(exc, name, None)
        if isinstance(value, (str, int, float)):
            setattr(failure, name, value)
    return failure


def reduce_changes(changes: list[tuple[Any, ...]]) -> tuple[tuple[Any, ...], ...]:
    """`changes` without those a later change overwrites whole: an earlier scalar write or
    PENDING / EMPTY at a pointer that a later scalar write (PROVISIONAL, SETTLED, INVALID)
    rewrites. Applied in order, the rest leave the form exactly as all of them would: the later
    write sets the value and the state, and marks the parents as the earlier one did."""
    last: dict[str, int] = {}
    for i, change in enumerate(changes):
        if change[1] in _WRITES and not isinstance(change[2], (dict, list)):
            last[change[0]] = i
    return tuple(
        change
        for i, change in enumerate(changes)
        if isinstance(change[2], (dict, list)) and change[1] in _WRITES or last.get(change[0], i) <= i
    )


def merged(first: Batch, then: Batch) -> Batch:
    """One batch that leaves the form, the taps and the figures as `first` then `then` do (the
    app had not read `first` yet when `then` came: it applies them as one)."""
    return replace(then, changes=reduce_changes([*first.changes, *then.changes]), wire=first.wire + then.wire,
                   settle_times=first.settle_times + then.settle_times, shown=first.shown + then.shown,
                   last_read=first.last_read if then.last_read is None else then.last_read,
                   usage=first.usage if then.usage is None else then.usage)
