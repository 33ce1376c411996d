"""Each lane's run against the right answer, with its wire counts, tokens and cost: `Scoreboard`.

A `Session` has one (`session.scoreboard`). It follows every lane (the single form's and the
compare lanes) and puts into the lane's `LaneMetrics` (`set_facts`, livefill.session.run_facts)
what the scoreboard table shows beside the values: the deltas, relay records and bytes the run's
status counts, the model the run asked for (its RunConfig's, else the provider's default) and the
price the person gave for it (`RunSettings.prices`), and at commit the score of the committed
object against the expected answer (`expected`, livefill.session.expected_answer). The same score
marks the lane's form (`form_marks`) until the form changes. Choosing or clearing an expected
answer after a commit scores again the lanes whose form still shows what their run committed, and
a run shown again (Undo of a clear puts its form back exactly) is marked again.
The tokens come from the `usage` tap the lane puts on its wire (`LaneMetrics.usage`). While a
run streams, the counts follow its status at most `COUNTS_EVERY` (the status changes with each delta).
A run's end is scored on the event loop's next turn and its form marked on the turn after, not
inside the turn that commits: the commit, the scoring and the marks are each their own turn (one
turn doing them all held the GUI thread ~30 ms at the end of a catalog run); a lane that starts
again or is emptied before then is not scored or marked for the run it left.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from livefill.extraction.json_doc import MISSING
from livefill.session.expected_answer import ExpectedAnswer, form_marks
from livefill.session.lane import LaneEvent, LaneFinished, LaneReset, LaneStarted, LaneStatus, SessionLane
from livefill.session.prices import price_of
from livefill.session.run_status import Phase
from livefill.session.scoring import score
from livefill.session.session_events import DOCUMENT_FIELDS, LanesChanged, SessionEvent, SettingsChanged, ViewChanged
from livefill.wire.providers.request import DEFAULT_MODELS

__all__ = ["COUNTS_EVERY", "Scoreboard"]

#: s: while a run streams, its wire counts go into the lane's facts at most this often (a status
#: comes with every delta, hundreds a second; each change of the facts redraws the scoreboard's
#: figures); every status outside a run, and the run's last, at once
COUNTS_EVERY = 1 / 30


class Scoreboard:
    """The lanes of `session` scored and counted (see the module docstring). `session` is a
    livefill.session.session.Session (not imported: it imports this)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.expected = ExpectedAnswer(lambda: session.settings)
        self._watched: dict[int, tuple[SessionLane, Any]] = {}
        self._counted: dict[int, float] = {}  # id(lane) -> when its wire counts were last put in its facts
        session.subscribe(self._on_session_event)
        self.expected.subscribe(self._rescore)
        self.watch()

    def watch(self) -> None:
        """Follow every lane the session has now (and no longer the ones it dropped)."""
        lanes = {id(lane): lane for lane in (self.session.single, *self.session.compare_lanes)}
        for key in [k for k in self._watched if k not in lanes]:
            self._watched.pop(key)[1]()
            self._counted.pop(key, None)
        for key, lane in lanes.items():
            if key not in self._watched:
                self._watched[key] = (lane, lane.subscribe(lambda event, lane=lane: self._on_lane_event(lane, event)))

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, (LanesChanged, ViewChanged)):
            self.watch()
        elif isinstance(event, SettingsChanged):
            if event.changed & (DOCUMENT_FIELDS | {"document_path"}):
                self.expected.changed()
            if "prices" in event.changed:
                for lane, _ in self._watched.values():
                    if lane.metrics.started:
                        lane.metrics.set_facts(price=price_of(event.settings.prices, lane.metrics.facts.model))

    def _on_lane_event(self, lane: SessionLane, event: LaneEvent) -> None:
        if isinstance(event, LaneStarted):
            form_marks(lane.form).clear()
            config = event.run.config
            model = config.model or DEFAULT_MODELS.get(config.provider)
            lane.metrics.set_facts(model=model, price=price_of(self.session.settings.prices, model))
        elif isinstance(event, (LaneStatus, LaneFinished)):
            status = event.status
            now = time.monotonic()
            if lane.active and now - self._counted.get(id(lane), -COUNTS_EVERY) < COUNTS_EVERY:
                return  # a status a delta during a run: its counts shown a frame later (exact at the end)
            self._counted[id(lane)] = now
            lane.metrics.set_facts(deltas=status.deltas_received, records=status.records_received,
                                   bytes=status.bytes_received)
            if isinstance(event, LaneFinished):
                self._score_soon(lane)
            elif status.phase is Phase.COMMITTED and not lane.active and lane.has_form and not form_marks(lane.form).fresh:
                self._score(lane)  # the run shown again (Undo put its form back exactly): marked again
        elif isinstance(event, LaneReset) and lane.has_form:
            form_marks(lane.form).clear()

    def _score_soon(self, lane: SessionLane) -> None:
        """Score the run that just ended on the next turn of the running event loop, and mark its
        form on the turn after (each ~10-15 ms for the catalog's 900 fields), if the lane still
        shows that run then; at once without a running loop."""
        self._soon(lane, lambda: self._score(lane, mark=lambda marks: self._soon(lane, marks)))

    def _soon(self, lane: SessionLane, then: Callable[[], None]) -> None:
        """`then()` on the event loop's next turn if the lane still shows the run it shows now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            then()
            return
        run, status = lane.run, lane.status
        loop.call_soon(lambda: then() if lane.run is run and lane.status is status and not lane.active else None)

    def _score(self, lane: SessionLane, *, mark: Callable[[Callable[[], None]], None] | None = None) -> None:
        """Score the lane's committed object (its form shows it) against the expected answer;
        `mark`: how to mark the form (given the marking; default: at once)."""
        run, status = lane.run, lane.status
        committed = run is not None and status is not None and status.phase is Phase.COMMITTED and run.result is not MISSING
        answer = self.expected.current()
        if not committed or answer is None or run is None:
            lane.metrics.set_facts(fields_right=None, fields_total=None, wrong=(), answer_source=answer.source if answer else "")
            if lane.has_form:
                form_marks(lane.form).set(None) if committed else form_marks(lane.form).clear()
            return
        scored = score(answer.value, run.result)
        lane.metrics.set_facts(fields_right=scored.right, fields_total=scored.total, answer_source=answer.source,
                               wrong=scored.wrong)
        marks = form_marks(lane.form)
        (mark or (lambda now: now()))(lambda: marks.set(scored))

    def _rescore(self) -> None:
        """The expected answer changed: lanes whose form still shows their committed run are
        scored again (a form changed since has no marks to give)."""
        for lane, _ in self._watched.values():
            if lane.active or not lane.has_form or lane.status is None or lane.status.phase is not Phase.COMMITTED:
                continue
            if form_marks(lane.form).fresh:
                self._score(lane)
