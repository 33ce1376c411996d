"""One lane of a session: a form read in one mode, with its own run, wire recorder and metrics.

How this works
--------------
A `SessionLane` is what the single form and every compare lane are made of. It holds the form
model of the document shown (`show(key, schema_name)`; the single form keeps one form per
document so what a person typed survives a look at another one, a compare lane starts fresh),
its `LaneMetrics` (fed from the form by a `FormProbe`, which also reports to the lane's timeline
feed), and, per run, a fresh `WireRecorder` and the `Run` itself, driven as an asyncio task.

The mode decides whether the form marks field states (`mode.spec.marks_states`), and this is the
one place that says so. `start(config, t0, ...)` puts the lane's mode and label into the session's
`RunConfig` and starts the run, its elapsed time counted from that shared `t0` (one compare run
has one start) and refreshed every `TICK_SECONDS` while it runs, so the clock moves during a stall
too; `stop()` is the real cancel. Everything the lane does is told to
its subscribers as small frozen events (`LaneStatus`, `LaneFinished`, ...) by plain callbacks, so
a window can render a lane without the lane knowing about Qt.

A run's ending and figures describe what its form showed: once the lane shows another document,
reads in another mode, or its form is emptied or filled outside a run (Clear, a past run opened),
`forget_run()` puts them aside and tells `LaneReset`: the lane is "ready" again. A form put back
exactly as the run left it (Undo) brings them back (a `LaneStatus` with the run's last status).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from livefill.errors import LivefillError
from livefill.extraction.form import FormModel
from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode, parse_mode
from livefill.extraction.schemas import schema_model
from livefill.observers import Observers
from livefill.recording.history import History, TaggedHistory
from livefill.recording.settle_reads import SettleReads
from livefill.recording.wiretap import DEFAULT_MAX_BYTES, WireRecorder
from livefill.session import run_remote
from livefill.session.form_probe import FormProbe
from livefill.session.metrics import LaneMetrics
from livefill.session.run import Run
from livefill.session.run_config import RunConfig, Source
from livefill.session.run_status import Phase, RunStatus
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed
from livefill.wire.taps import WireTap, tee

__all__ = [
    "SessionLane",
    "LaneEvent",
    "LaneStatus",
    "LaneStarted",
    "LaneFinished",
    "LaneError",
    "LaneFormReplaced",
    "LaneModeChanged",
    "LaneReset",
    "outcome_of",
]


TICK_SECONDS = 0.1
"""How often a running lane refreshes its run's elapsed time (10 Hz: the clock never freezes)."""


@dataclass(frozen=True, slots=True)
class LaneStatus:
    lane: str
    status: RunStatus  # the run's newest status (one per change: coalesce before painting)


@dataclass(frozen=True, slots=True)
class LaneStarted:
    lane: str
    run: Run


@dataclass(frozen=True, slots=True)
class LaneFinished:
    lane: str
    status: RunStatus  # the final status (COMMITTED / STOPPED / FAILED, or READY if it never began)


@dataclass(frozen=True, slots=True)
class LaneError:
    lane: str
    message: str  # the run could not start, or broke: a sentence for the user


@dataclass(frozen=True, slots=True)
class LaneFormReplaced:
    lane: str
    form: FormModel  # the form now shown (another document, or the first one)


@dataclass(frozen=True, slots=True)
class LaneModeChanged:
    lane: str
    mode: Mode


@dataclass(frozen=True, slots=True)
class LaneReset:
    lane: str  # the lane's last run no longer describes what it shows: no status, no figures


LaneEvent = LaneStatus | LaneStarted | LaneFinished | LaneError | LaneFormReplaced | LaneModeChanged | LaneReset


def outcome_of(status: RunStatus) -> str:
    """How a run ended, for the metrics and the timeline ("committed", "stopped", "failed: ...")."""
    if status.phase is Phase.FAILED:
        return f"failed: {status.reason}" if status.reason else "failed"
    return status.phase.value


class SessionLane:
    """A form, a mode, and the lane's runs (see the module docstring).

    `keep_forms`: keep one form per document (the single form) instead of a fresh one each time.
    `measure`: feed the lane's `metrics` from its form (the single form shows none: False spares
    the GUI thread that work on every change).
    `extra_tap`: another wire tap that sees every run's wire with the recorder (observers, tests).
    """

    def __init__(
        self,
        name: str,
        *,
        mode: Mode | str = Mode.PARTIAL,
        keep_forms: bool = False,
        measure: bool = True,
        recorder_max_bytes: int = DEFAULT_MAX_BYTES,
        source: Source | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.mode = parse_mode(mode)
        self.title = self.mode.value
        self.keep_forms = keep_forms
        self.measure = measure
        self.recorder_max_bytes = recorder_max_bytes
        self.source = source
        self.clock = clock
        self.metrics = LaneMetrics()
        self.recorder: WireRecorder | None = None
        self.extra_tap: WireTap | None = None
        self.timeline: TimelineFeed | TimelineModel | None = None  # what the probe reports to
        self.server_note = ""
        self.run: Run | None = None
        self.status: RunStatus | None = None
        self.final: Any = MISSING
        self.key: Hashable = None  # what names the document shown (Session.document_key)
        self._forms: dict[Hashable, FormModel] = {}
        self._form: FormModel | None = None
        self._probe: FormProbe | None = None
        self._task: asyncio.Task[Any] | None = None
        self._ticker: asyncio.Task[Any] | None = None
        self._observers: Observers[LaneEvent] = Observers()
        self._left: tuple[FormModel, Any, Mode] | None = None  # the form as the last run left it
        self._shelf: tuple[Any, ...] | None = None  # a forgotten run, while its form may come back
        self._warm = True  # a warm worker wanted for this lane's runs, when they read in one
        run_remote.prewarm()

    # -- observing ------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[LaneEvent], None]) -> Callable[[], None]:
        """Call `callback(event)` for every lane event; returns an unsubscribe function."""
        return self._observers.subscribe(callback)

    def _emit(self, event: LaneEvent) -> None:
        self._observers.notify(event)

    # -- reading --------------------------------------------------------------------------------

    @property
    def form(self) -> FormModel:
        """The form model shown now."""
        assert self._form is not None, "the lane shows no document yet"
        return self._form

    @property
    def has_form(self) -> bool:
        """True once the lane shows a document."""
        return self._form is not None

    @property
    def active(self) -> bool:
        """True while the lane's run is running."""
        return self._task is not None and not self._task.done()

    # -- set-up ---------------------------------------------------------------------------------

    def show(self, key: Hashable, schema_name: str) -> FormModel:
        """Show the document `key` (read with schema `schema_name`): its kept form or a fresh one."""
        if self.active:
            raise RuntimeError(f"lane {self.name}: cannot change the document while a run is active")
        if key == self.key and self._form is not None:
            return self._form
        form = self._forms.get(key) if self.keep_forms else None
        if form is None:
            form = FormModel(schema_model(schema_name))
            if self.keep_forms:
                self._forms[key] = form
        self.key = key
        self._set_form(form)
        return form

    def set_mode(self, mode: Mode | str) -> None:
        """Read the next run in `mode` (not while a run is active)."""
        mode = parse_mode(mode)
        if self.active:
            raise RuntimeError(f"lane {self.name}: cannot change the mode while a run is active")
        if mode is self.mode:
            return
        self.mode = mode
        self.forget_run()  # figures of a run read in another mode
        if self._form is not None:
            self._mark(self._form)
            self._emit(LaneFormReplaced(self.name, self._form))
        self._emit(LaneModeChanged(self.name, mode))

    def set_timeline(self, timeline: TimelineFeed | TimelineModel | None) -> None:
        """Report field transitions to `timeline` (a feed or a TimelineModel) from now on."""
        self.timeline = timeline
        if self._probe is not None:
            self._probe.timeline = timeline

    def _mark(self, form: FormModel) -> None:
        form.marking = self.mode.spec.marks_states

    def _set_form(self, form: FormModel) -> None:
        if self._probe is not None:
            self._probe.close()
        self._mark(form)
        self._form = form
        self._probe = FormProbe(form, self.metrics if self.measure else None, lane=self.name, timeline=self.timeline,
                                clock=self.clock, on_reset=self._form_reset)
        self.forget_run()
        self._emit(LaneFormReplaced(self.name, form))

    def forget_run(self) -> None:
        """The last run no longer describes what the lane shows (another document or mode, a form
        emptied or filled outside a run, a run of the other view): no status, no figures, no server
        note (not while a run is active; its recorder stays, for what was recorded)."""
        self._forget(shelve=False)

    def _forget(self, *, shelve: bool) -> None:
        """`forget_run`; `shelve`: keep the run aside while its form may be put back (a clear)."""
        if self.active or (self.status is None and not self.metrics.started):
            if not shelve:
                self._shelf = None
            return
        self._shelf = (self._left, self.status, self.final, self.server_note, self.metrics.shelve()) if shelve else None
        self.status = None
        self.server_note = ""
        self.final = MISSING
        self.metrics.clear()
        self._emit(LaneReset(self.name))

    def _form_reset(self) -> None:
        """The form was emptied or filled outside a run: forget the run, or, put back exactly as
        the run left it (Undo), show that run again."""
        shelf, form = self._shelf, self._form
        left = shelf[0] if shelf is not None else None
        if left is None or self.status is not None or left[0] is not form or left[2] is not self.mode:
            self._forget(shelve=True)
        elif form is not None and not form.running and form.snapshot() == left[1]:
            self._shelf = None
            _, self.status, self.final, self.server_note, shelved = shelf
            self.metrics.unshelve(shelved)
            if self.status is not None:
                self._emit(LaneStatus(self.name, self.status))

    # -- a run ----------------------------------------------------------------------------------

    def start(
        self,
        config: RunConfig,
        t0: float,
        *,
        label: str | None = None,
        final: Any = MISSING,
        history: History | TaggedHistory | None = None,
    ) -> Run:
        """Start this lane's run of `config` (its own mode and `label` put in) at the shared `t0`."""
        if self.active:
            raise RuntimeError(f"lane {self.name}: a run is already active")
        form = self.form
        self._left = self._shelf = None
        self.recorder = WireRecorder(t0=t0, max_bytes=self.recorder_max_bytes)
        self.server_note = ""
        self.metrics.start(t0)
        self.final = final
        if final is not MISSING:
            self.metrics.set_final(final)
        self._mark(form)
        cfg = replace(config, mode=self.mode, label=config.label if label is None else label)
        settle_reads = SettleReads(self.clock) if self.measure else None  # byte-to-pixel: the wire side
        self.metrics.read_time = settle_reads.time_of if settle_reads is not None else None
        tap = tee(self.recorder, settle_reads, self.extra_tap, self.metrics.usage)  # usage: the tokens reported
        run = Run(form, cfg, history=history, source=self.source, tap=tap, clock=self.clock, t0=t0)
        self.run = run
        self.status = run.status
        run.subscribe(self._on_status)
        self._task = asyncio.ensure_future(self._drive(run))
        self._ticker = asyncio.ensure_future(self._tick(run, t0))
        self._emit(LaneStarted(self.name, run))
        return run

    def stop(self) -> bool:
        """Stop the active run (a real cancel: its connection closes). False if none is active."""
        return self.run.stop() if self.run is not None and self.active else False

    async def wait(self) -> RunStatus | None:
        """Wait for the active run (if any) to end; the latest status."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.shield(task)
        return self.status

    async def shutdown(self) -> None:
        """Cancel the active run and wait until its stream is closed."""
        task = self._task
        if task is not None and not task.done():
            if not self.stop():
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    def release(self) -> None:
        """Stop following the form (before the lane is thrown away); its warm worker is not wanted."""
        if self._warm:
            self._warm = False
            run_remote.prewarm(-1)
        if self._probe is not None:
            self._probe.close()
            self._probe = None
        self._observers.clear()

    def set_server_note(self, note: str) -> None:
        """What the demo provider saw of this lane's request."""
        self.server_note = note

    def _on_status(self, status: RunStatus) -> None:
        self.status = status
        self._emit(LaneStatus(self.name, status))

    async def _tick(self, run: Run, t0: float) -> None:
        """Refresh the run's elapsed time every TICK_SECONDS while it runs, bytes or not, on a grid
        counted from the shared `t0`: the lanes of one compare run tick at the same moments."""
        while True:
            delay = TICK_SECONDS - (self.clock() - t0) % TICK_SECONDS
            await asyncio.sleep(delay if delay >= TICK_SECONDS / 2 else delay + TICK_SECONDS)
            run.tick()

    async def _drive(self, run: Run) -> None:
        try:
            await run.run()
        except LivefillError as exc:  # the run could not start (e.g. a mode whose part is missing)
            self._emit(LaneError(self.name, str(exc)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: the user must hear of it
            self._emit(LaneError(self.name, f"{type(exc).__name__}: {exc}"))
        finally:
            if self._ticker is not None:
                self._ticker.cancel()
                self._ticker = None
            self._task = None
            self.status = run.status
            self._finish(run)

    def _finish(self, run: Run) -> None:
        status = run.status
        now = self.clock()
        outcome = outcome_of(status)
        self.metrics.finish(now, outcome)
        timeline = self.timeline
        model = timeline.model if isinstance(timeline, TimelineFeed) else timeline
        if model is not None and status.phase is not Phase.READY:
            model.stop(self.name, now, outcome)
        if status.phase is Phase.COMMITTED and run.result is not MISSING and run.result != self.final:
            self.metrics.set_final(run.result)  # (re-judging every display: only when it tells something new)
        form = self._form
        if form is not None and not form.running:
            self._left = (form, form.snapshot(), self.mode)
        self._emit(LaneFinished(self.name, status))
