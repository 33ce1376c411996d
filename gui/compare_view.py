"""The compare view: the same generation read side by side in 2 to 5 modes.

How this works
--------------
`CompareView` holds the lanes (`gui.lane.Lane`, left to right in a splitter), the metrics table
under them, and the timeline every lane reports to. `start(config)` takes one `RunConfig` from the
toolbar (scenario, provider, speed, seed, slicing, fault) and one `t0 = time.monotonic()`, and
starts every lane with them, so with the demo provider every lane's request carries the same
x-demo-* knobs and the tokens arrive with the same timing; each lane puts in its own mode. With a
live provider each lane makes its own request (its header says so). `stop()` stops every lane:
each run cancels its own task, which closes its own connection. Each lane then ends as its mode
dictates (naive keeps what it showed, the others restore); the headers and the table keep the
final figures.

The final values the never-true counter judges against: the scenario's output with the demo
provider (known in advance); with a live provider, the first committed result once every lane has
ended (a naive lane that no lane's commit can judge is judged against what it showed at the end).

After a run with the demo provider the view asks the request log (`/_demo/requests`) what the
server saw of each lane: every lane tags its request with its run id (`x-demo-tag` directly; a
relay lane through the relay body's `demo.tag`, which the relay forwards upstream). Untagged
entries of this run (an older relay) are matched to relay lanes in start order. Each lane shows
"server stopped after 37 of 120 tokens".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from core.form import MISSING
from core.metrics import leaves
from core.run import Mode, Phase, RunConfig, RunStatus, demo_requests, server_note
from core.scenarios import get_scenario
from core.timeline import TimelineModel
from core.wiretap import DEFAULT_MAX_BYTES
from gui.lane import Lane
from gui.timeline_feed import TimelineFeed
from widgets.metrics_table import MetricsTable

__all__ = ["CompareView", "DEFAULT_MODES", "MIN_LANES", "MAX_LANES", "parse_modes"]

TABLE_REFRESH_MS = 400
"""The metrics table under the lanes repeats the headers' figures: it refreshes less often while lanes run."""

DEFAULT_MODES: tuple[Mode, ...] = (Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED)
MIN_LANES = 2
MAX_LANES = 5


def parse_modes(text: str) -> list[Mode]:
    """"naive,partial,settled" -> [Mode.NAIVE, ...] (2 to 5 of them; ValueError otherwise)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    modes = [Mode(name) for name in names]
    if not MIN_LANES <= len(modes) <= MAX_LANES:
        raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} modes, got {len(modes)}")
    return modes


class CompareView(QWidget):
    """Lanes side by side, one Start and one Stop for all (see the module docstring).

    Signals: `activeChanged(bool)` (some lane runs / none does), `statusChanged(RunStatus)` (a
    lane's, at most once per frame per lane), `laneFinished(str lane, RunStatus)`,
    `allFinished()` (the last lane of a run ended), `lanesChanged()`, `timelineChanged(object)`
    (a new TimelineModel, when the set of lanes changed), `recorderChanged(str lane)` (a lane
    started a run with a new WireRecorder), `fieldPicked(str lane, str pointer)`, `error(str)`.
    """

    activeChanged = Signal(bool)  # noqa: N815 - Qt signal naming
    statusChanged = Signal(object)  # noqa: N815
    laneFinished = Signal(str, object)  # noqa: N815
    allFinished = Signal()  # noqa: N815
    lanesChanged = Signal()  # noqa: N815
    timelineChanged = Signal(object)  # noqa: N815
    recorderChanged = Signal(str)  # noqa: N815
    fieldPicked = Signal(str, str)  # noqa: N815
    notesReady = Signal()  # noqa: N815
    error = Signal(str)

    def __init__(
        self,
        *,
        scenario: str = "invoice",
        modes: Iterable[Mode | str] = DEFAULT_MODES,
        recorder_max_bytes: int = DEFAULT_MAX_BYTES,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self.scenario = scenario
        self.recorder_max_bytes = recorder_max_bytes
        self.lanes: list[Lane] = []
        self.feed = TimelineFeed(TimelineModel())
        self.t0 = 0.0
        self.t0_wall = 0.0  # time.time() at the last Start (request-log entries are stamped so)
        self.config: RunConfig | None = None
        self._counter = 0
        self._running = False
        self._notes_task: asyncio.Task[Any] | None = None
        self._refit_timer = QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.setInterval(0)
        self._refit_timer.timeout.connect(self.refit)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("laneSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.metrics_table = MetricsTable(self, refresh_ms=TABLE_REFRESH_MS)
        self.add_button = QPushButton("+ lane", self)
        self.add_button.setObjectName("addLaneButton")
        self.add_button.setToolTip(f"Add a lane (up to {MAX_LANES})")
        self.add_button.clicked.connect(lambda: self.add_lane())
        self.caption = QLabel(self)
        self.caption.setObjectName("compareCaption")
        self.caption.setWordWrap(True)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.metrics_table, 1)
        side = QVBoxLayout()
        side.addWidget(self.add_button)
        side.addStretch(1)
        bottom.addLayout(side)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)
        self.set_modes(modes)

    # -- reading ------------------------------------------------------------------------------

    @property
    def timeline(self) -> TimelineModel:
        """The timeline model every lane reports to (replaced when the lanes change)."""
        return self.feed.model

    @property
    def active(self) -> bool:
        """True while some lane's run is running."""
        return any(lane.active for lane in self.lanes)

    @property
    def modes(self) -> list[Mode]:
        """The lanes' modes, left to right."""
        return [lane.mode for lane in self.lanes]

    def lane(self, key: int | str) -> Lane:
        """A lane by position or by name."""
        if isinstance(key, int):
            return self.lanes[key]
        for lane in self.lanes:
            if lane.name == key:
                return lane
        raise KeyError(key)

    def statuses(self) -> list[RunStatus | None]:
        """Each lane's latest run status, left to right."""
        return [lane.last_status for lane in self.lanes]

    async def wait(self) -> list[RunStatus | None]:
        """Wait until no lane runs (and the server notes were fetched); every lane's status."""
        for lane in list(self.lanes):
            await lane.controller.wait()
        task = self._notes_task
        if task is not None and not task.done():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(task)
        return self.statuses()

    # -- lanes --------------------------------------------------------------------------------

    def set_modes(self, modes: Iterable[Mode | str]) -> None:
        """Replace the lanes with one per mode (2 to 5), left to right."""
        modes = [Mode(m) for m in modes]
        if not MIN_LANES <= len(modes) <= MAX_LANES:
            raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} lanes, got {len(modes)}")
        self._require_idle()
        for lane in list(self.lanes):
            self._drop_lane(lane)
        for mode in modes:
            self._add_lane(mode)
        self._lanes_changed()

    def add_lane(self, mode: Mode | str | None = None) -> Lane | None:
        """Add a lane on the right (default mode: partial); None if there are 5 already."""
        self._require_idle()
        if len(self.lanes) >= MAX_LANES:
            return None
        lane = self._add_lane(Mode(mode) if mode is not None else Mode.PARTIAL)
        self._lanes_changed()
        return lane

    def remove_lane(self, name: str) -> bool:
        """Remove lane `name` (False if only two are left)."""
        self._require_idle()
        if len(self.lanes) <= MIN_LANES:
            return False
        self._drop_lane(self.lane(name))
        self._lanes_changed()
        return True

    def set_scenario(self, scenario: str) -> None:
        """Show fresh forms for `scenario` in every lane."""
        self._require_idle()
        self.scenario = scenario
        for lane in self.lanes:
            lane.set_scenario(scenario)

    def _require_idle(self) -> None:
        if self.active:
            raise RuntimeError("the lanes cannot change while they run")

    def _add_lane(self, mode: Mode) -> Lane:
        self._counter += 1
        lane = Lane(
            f"lane{self._counter}",
            scenario=self.scenario,
            mode=mode,
            timeline=self.feed,
            recorder_max_bytes=self.recorder_max_bytes,
        )
        lane.statusChanged.connect(self.statusChanged)
        lane.finished.connect(lambda status, lane=lane: self._on_lane_finished(lane, status))
        lane.activeChanged.connect(self._on_lane_active)
        lane.fieldPicked.connect(self.fieldPicked)
        lane.modeChanged.connect(lambda _name: self._lanes_changed())
        lane.removeRequested.connect(self.remove_lane)
        lane.error.connect(self.error)
        self.lanes.append(lane)
        self.splitter.addWidget(lane)
        return lane

    def _drop_lane(self, lane: Lane) -> None:
        self.lanes.remove(lane)
        lane.release()
        lane.setParent(None)
        lane.deleteLater()

    def _lanes_changed(self) -> None:
        titles: dict[str, int] = {}
        for lane in self.lanes:
            base = lane.mode.value
            titles[base] = titles.get(base, 0) + 1
            lane.set_title(base if titles[base] == 1 else f"{base} {titles[base]}")
        model = TimelineModel()
        for lane in self.lanes:
            model.add_lane(lane.name, lane.title)
        self.feed.model = model
        for lane in self.lanes:
            lane.set_removable(len(self.lanes) > MIN_LANES)
        self.splitter.setSizes([1000] * len(self.lanes))
        self.metrics_table.set_lanes([(lane.title, lane.metrics) for lane in self.lanes])
        self.add_button.setEnabled(len(self.lanes) < MAX_LANES and not self.active)
        self.caption.setText(
            "One generation, read "
            + ", ".join(lane.title for lane in self.lanes)
            + ". Same request knobs for every lane (seed, speed, slicing, fault)."
        )
        self.timelineChanged.emit(model)
        self.lanesChanged.emit()

    def refit(self) -> None:
        """Re-measure what depends on the font and the width (the metrics table's height)."""
        self.metrics_table.set_lanes([(lane.title, lane.metrics) for lane in self.lanes])

    def showEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().showEvent(event)
        self._refit_timer.start()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        self._refit_timer.start()  # row heights depend on the width (wrapped row titles)

    # -- a run --------------------------------------------------------------------------------

    def start(self, config: RunConfig) -> float:
        """Start every lane with `config` at one shared t0 (returned); ignored while lanes run."""
        if self.active:
            return self.t0
        t0 = time.monotonic()
        self.t0 = t0
        self.t0_wall = time.time()
        self.config = config
        final: Any = MISSING
        fields: list[str] = []
        if config.demo is not None and config.demo.scenario:
            output = get_scenario(config.demo.scenario).output
            final = output
            fields = [p for p, _ in leaves(output)]
        else:
            lane0 = self.lanes[0]
            assert lane0.form is not None
            fields = _spec_leaves(lane0.form)
        self.feed.set_fields(fields)
        self.timeline.start(t0)
        self._running = True
        started = []
        try:
            for lane in self.lanes:
                lane.start(config, t0, final)
                started.append(lane)
                self.recorderChanged.emit(lane.name)
        except Exception:
            for lane in started:
                lane.stop()
            raise
        self.add_button.setEnabled(False)
        return t0

    def stop(self) -> bool:
        """Stop every lane's run (each closes its own connection); False if none was running."""
        stopped = False
        for lane in self.lanes:
            stopped = lane.stop() or stopped
        return stopped

    async def shutdown(self) -> None:
        """Cancel every lane's run and wait until every stream is closed."""
        task = self._notes_task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for lane in self.lanes:
            await lane.shutdown()

    def _on_lane_active(self, _active: bool) -> None:
        active = self.active
        self.add_button.setEnabled(not active and len(self.lanes) < MAX_LANES)
        if active:
            self.activeChanged.emit(True)

    def _on_lane_finished(self, lane: Lane, status: RunStatus) -> None:
        self.laneFinished.emit(lane.name, status)
        if self.active or not self._running:
            return
        self._running = False
        self._judge_live()
        self.add_button.setEnabled(len(self.lanes) < MAX_LANES)
        config = self.config
        if config is not None and config.demo is not None and config.base_url:
            self._notes_task = asyncio.ensure_future(self._fetch_notes(config.base_url))
        self.activeChanged.emit(False)
        self.allFinished.emit()

    def _judge_live(self) -> None:
        """With a live provider: judge every lane against the first committed result."""
        config = self.config
        if config is None or config.demo is not None:
            return
        result: Any = MISSING
        for lane in self.lanes:
            run = lane.run
            if run is not None and run.status.phase is Phase.COMMITTED and run.result is not MISSING:
                result = run.result
                break
        for lane in self.lanes:
            if result is not MISSING:
                lane.metrics.set_final(result)
            elif lane.mode is Mode.NAIVE and lane.form is not None:
                lane.metrics.set_final(lane.form.document)

    async def _fetch_notes(self, base_url: str) -> None:
        """Put what the demo provider saw of each lane's request under the lane's header."""
        deadline = time.monotonic() + 2.0
        since = self.t0_wall - 0.5
        while True:
            try:
                entries = [e for e in await demo_requests(base_url) if float(e.get("started_at") or 0) >= since]
            except Exception:  # noqa: BLE001 - a missing note must never break anything
                return
            matched = match_entries(self.lanes, entries)
            done = all(e is not None and (e.get("disconnected") or e.get("finished")) for e in matched.values())
            if done or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        for lane in self.lanes:
            entry = matched.get(lane.name)
            if entry is not None:
                lane.set_server_note(server_note(entry))
        self.notesReady.emit()


def match_entries(lanes: Sequence[Lane], entries: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Each lane's request-log entry: by its run id tag, else (relay lanes) untagged ones in order."""
    out: dict[str, dict[str, Any] | None] = {}
    run_ids = {lane.run.status.run_id: lane for lane in lanes if lane.run is not None}
    untagged = [e for e in entries if not e.get("tag") or e.get("tag") not in run_ids]
    untagged.sort(key=lambda e: float(e.get("started_at") or 0))
    for lane in lanes:
        run = lane.run
        if run is None:
            out[lane.name] = None
            continue
        tagged = [e for e in entries if e.get("tag") == run.status.run_id]
        if tagged:
            out[lane.name] = tagged[-1]
        elif lane.mode.needs_relay and untagged:
            out[lane.name] = untagged.pop(0)
        else:
            out[lane.name] = None
    return out


def _spec_leaves(form: Any) -> list[str]:
    """Top-level leaf pointers of a form (its tables and groups' own pointers), in schema order."""
    out: list[str] = []
    stack = list(reversed(form.fields))
    while stack:
        spec = stack.pop()
        if spec.children and spec.kind.value == "object":
            stack.extend(reversed(spec.children))
        else:
            out.append(spec.pointer)
    return out
