"""Feeds a lane's metrics and timeline from its form: every value a run shows, as it shows it.

`livefill.session.lane.SessionLane` keeps one `FormProbe` per form it shows; the probe reports
what the form displays to the lane's `LaneMetrics` (livefill.session.metrics) and the field state
transitions to its timeline (a `TimelineFeed` or a `TimelineModel`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from livefill.extraction.form import FormModel, FormUpdate
from livefill.extraction.json_doc import MISSING
from livefill.session.metrics import LaneMetrics
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed

__all__ = ["FormProbe"]


class FormProbe:
    """Feeds a lane's `LaneMetrics` (and optionally a `TimelineModel`) from its form model.

    `FormProbe(form, metrics, lane="partial", timeline=timeline)` subscribes to a
    `livefill.extraction.form.FormModel` and, for every leaf field a run changes while the run is active, reports
    what the form now shows: `metrics.display(pointer, value, provisional=..., t=clock())` where
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
        self._unsubscribe = form.subscribe(self._on_update)

    def close(self) -> None:
        """Stop listening to the form."""
        self._unsubscribe()

    def _on_update(self, update: FormUpdate) -> None:
        form = self.form
        if update.reset and update.running is None and not form.running:  # a clear or an undo
            if self.metrics is not None:
                self.metrics.forget_unpainted()
            if self._on_reset is not None:
                self._on_reset()
            return
        if update.running is False or not form.running:
            return
        if update.reset:
            return  # begin_run: an empty draft, nothing shown yet
        t = self._clock()
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
                marked = marking and name in ("provisional", "invalid")
                self.metrics.display(pointer, shown, provisional=marked, t=t)
                if marking and name == "settled" and shown is not None:
                    self.metrics.settled(pointer, t)
