"""Feeds a lane's metrics and timeline from its form: every value a run shows, as it shows it.

`livefill.session.lane.SessionLane` keeps one `FormProbe` per form it shows; the probe reports
what the form displays to the lane's `LaneMetrics` (livefill.session.metrics) and the field state
transitions to its timeline (a `TimelineFeed` or a `TimelineModel`).

A run read in a worker process (livefill.session.run_remote) fills a mirror form there, watched
by a probe of its own that reports to a `ShownLog`; the app's probe replays that log (`replay`,
the worker's times kept) instead of reporting the batches the real form gets, once a frame:
the lane's figures count every value the reader showed, as when the run is read in this process.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from livefill.extraction.form import FormModel, FormUpdate
from livefill.extraction.json_doc import MISSING
from livefill.session.metrics import LaneMetrics
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed

__all__ = ["FormProbe", "ShownLog", "shown_elsewhere"]

# each form's probes (weakly both ways: a form and its probes go together, as when nothing listed them)
_PROBES: weakref.WeakKeyDictionary[FormModel, weakref.WeakSet[FormProbe]] = weakref.WeakKeyDictionary()


class FormProbe:
    """Feeds a lane's `LaneMetrics` (and optionally a `TimelineModel`) from its form model.

    `FormProbe(form, metrics, lane="partial", timeline=timeline)` subscribes to a
    `livefill.extraction.form.FormModel` and, for every leaf field a run changes while the run is active, reports
    what the form now shows: `metrics.display_many([(pointer, value, provisional, clock()), ...])`
    (one call an update) where
    provisional means "visibly marked": the form marks states (`form.marking`, False for the naive
    client) and the field is PROVISIONAL or INVALID; and `timeline.record(lane, pointer, state, t)`.
    A value a marking form shows SETTLED is also reported `metrics.settled(pointer, t)` (the
    byte-to-pixel clock of its widget's next paint). The update that ends a run (commit / restore / adopt) is not a display of the stream and is
    not reported; a reset outside a run (Clear, Undo, a run opened from the history) drops the values
    still waiting for their first paint (`LaneMetrics.forget_unpainted`) and calls `on_reset()` (the
    lane's last run no longer describes the form). `close()` unsubscribes.
    """

    def __init__(
        self,
        form: FormModel,
        metrics: LaneMetrics | None = None,
        *,
        lane: str = "",
        timeline: TimelineFeed | TimelineModel | None = None,
        clock: Callable[[], float] | None = None,
        on_reset: Callable[[], None] | None = None,
    ) -> None:
        self.form = form
        self.metrics = metrics
        self.timeline = timeline
        self.lane = lane
        self._clock = clock or time.monotonic
        self._on_reset = on_reset
        self._elsewhere = 0  # > 0: the run's changes are reported by `replay` (a worker's mirror form)
        self._unsubscribe = form.subscribe(self._on_update)
        _PROBES.setdefault(form, weakref.WeakSet()).add(self)

    def close(self) -> None:
        """Stop listening to the form."""
        self._unsubscribe()
        _PROBES.get(self.form, weakref.WeakSet()).discard(self)

    def replay(self, shown: tuple[tuple[Any, ...], ...]) -> None:
        """Report what a probe on a worker's mirror form reported (`ShownLog.take`), at the times
        it reported them (on another clock than time.monotonic: now)."""
        metrics, timeline, lane = self.metrics, self.timeline, self.lane
        now = None if self._clock is time.monotonic else self._clock()
        displays = []
        for item in shown:
            kind, pointer = item[0], item[1]
            t = item[-1] if now is None else now
            if kind == "d":
                displays.append((pointer, item[2], item[3], t))
            elif kind == "s":
                if metrics is not None:
                    metrics.settled(pointer, t)
            elif timeline is not None:
                timeline.record(lane, pointer, item[2], t)
        if displays and metrics is not None:
            metrics.display_many(displays)

    def _on_update(self, update: FormUpdate) -> None:
        form = self.form
        if update.reset and update.running is None and not form.running:  # a clear or an undo
            if self.metrics is not None:
                self.metrics.forget_unpainted()
            if self._on_reset is not None:
                self._on_reset()
            return
        if update.running is False or not form.running or self._elsewhere:
            return
        if update.reset:
            return  # begin_run: an empty draft, nothing shown yet
        t = self._clock()
        displays = []  # told to the metrics at once: one notify for the update, not one a field
        for pointer in sorted(update.pointers):
            value = form.value(pointer)
            if isinstance(value, (dict, list)) and value:
                # a container: the timeline shows when it settles (its closing byte); the metrics
                # count its leaves, which report themselves
                if self.timeline is not None:
                    self.timeline.record(self.lane, pointer, form.state(pointer), t)
                continue
            state = form.state(pointer)
            name = state.name.lower()
            if self.timeline is not None:
                self.timeline.record(self.lane, pointer, state, t)
            if self.metrics is not None:
                shown = None if value is MISSING else value
                marking = form.marking
                displays.append((pointer, shown, marking and name in ("provisional", "invalid"), t))
                if marking and name == "settled" and shown is not None:
                    self.metrics.settled(pointer, t)
        if displays and self.metrics is not None:
            self.metrics.display_many(displays)


class ShownLog:
    """A probe's `metrics` and `timeline` in a worker process: keeps what it reports, for the
    app's probe to `replay` (`take()` hands over what gathered). A report the lane's figures
    would not count (the same value shown again the same way, a second settle, the same state
    again on the timeline) is not kept."""

    def __init__(self) -> None:
        self._items: list[tuple[Any, ...]] = []
        self._shown: dict[str, tuple[Any, bool]] = {}
        self._settled: set[str] = set()
        self._states: dict[str, Any] = {}

    def display(self, pointer: str, value: Any, *, provisional: bool, t: float) -> None:
        last = self._shown.get(pointer)
        if last is not None and last[1] == provisional and type(last[0]) is type(value) and last[0] == value:
            return
        if isinstance(value, (dict, list)):
            value = type(value)(value)  # as it is now (empty: FormProbe shows no filled container)
        self._shown[pointer] = (value, provisional)
        self._items.append(("d", pointer, value, provisional, t))

    def display_many(self, displays: Any) -> None:
        for pointer, value, provisional, t in displays:
            self.display(pointer, value, provisional=provisional, t=t)

    def settled(self, pointer: str, t: float) -> None:
        if pointer not in self._settled:
            self._settled.add(pointer)
            self._items.append(("s", pointer, t))

    def forget_unpainted(self) -> None:
        """Nothing is painted in a worker."""

    def record(self, lane: str, pointer: str, state: Any, t: float) -> None:
        if self._states.get(pointer) is not state:
            self._states[pointer] = state
            self._items.append(("t", pointer, state, t))

    def take(self) -> tuple[tuple[Any, ...], ...]:
        """What was reported since the last `take`, in order."""
        items = tuple(self._items)
        self._items.clear()
        return items


@contextlib.contextmanager
def shown_elsewhere(form: FormModel) -> Iterator[list[FormProbe]]:
    """While the block runs, `form`'s probes leave the run's changes to `FormProbe.replay`;
    gives them (none: nothing watches the form)."""
    probes = list(_PROBES.get(form, ()))
    for probe in probes:
        probe._elsewhere += 1
    try:
        yield probes
    finally:
        for probe in probes:
            probe._elsewhere -= 1
