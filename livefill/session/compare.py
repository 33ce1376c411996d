"""The compare view's lanes: 2 to 5 of them, left to right, each read in its own mode.

`CompareLanes` keeps the lanes of a session's compare view (livefill.session.session.Session
owns one and tells its subscribers what changed): it names new lanes, titles them by their mode
("partial", "partial 2"), keeps the timeline feed they report to, and judges a lane that did not
commit against the run's first committed result (`judge`). `parse_modes` reads a `--compare` list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode, parse_mode
from livefill.session.lane import SessionLane
from livefill.session.request_notes import request_notes
from livefill.session.run_status import Phase
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed

__all__ = ["DEFAULT_MODES", "MAX_LANES", "MIN_LANES", "CompareLanes", "parse_modes"]

DEFAULT_MODES: tuple[Mode, ...] = (Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED)
"""The lanes compare starts with: the naive client, the partial reader and the relay's settled values."""
MIN_LANES = 2
MAX_LANES = 5


def parse_modes(text: str) -> list[Mode]:
    """"naive,partial,settled" -> [Mode.NAIVE, ...] (2 to 5 of them; ValueError otherwise)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    modes = [parse_mode(name) for name in names]
    if not MIN_LANES <= len(modes) <= MAX_LANES:
        raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} modes, got {len(modes)}")
    return modes


LaneMaker = Callable[[str, Mode, TimelineFeed], SessionLane]
"""Makes a compare lane: its name, its mode, the feed it reports to."""


class CompareLanes:
    """The compare lanes, left to right, and the timeline feed they report to."""

    def __init__(self, make_lane: LaneMaker) -> None:
        self.lanes: list[SessionLane] = []
        self.feed = TimelineFeed(TimelineModel())
        self._make_lane = make_lane
        self._counter = 0

    @property
    def modes(self) -> list[Mode]:
        """The lanes' modes, left to right."""
        return [lane.mode for lane in self.lanes]

    def set_modes(self, modes: Iterable[Mode | str]) -> None:
        """Replace the lanes with one per mode (2 to 5; ValueError otherwise)."""
        wanted = [parse_mode(m) for m in modes]
        if not MIN_LANES <= len(wanted) <= MAX_LANES:
            raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} lanes, got {len(wanted)}")
        for lane in list(self.lanes):
            self.drop(lane)
        for mode in wanted:
            self.add(mode)

    def add(self, mode: Mode) -> SessionLane:
        """A new lane on the right (call `retitle` once the lanes are as wanted)."""
        self._counter += 1
        lane = self._make_lane(f"lane{self._counter}", mode, self.feed)
        self.lanes.append(lane)
        return lane

    def drop(self, lane: SessionLane) -> None:
        """Remove `lane` and let go of its form."""
        self.lanes.remove(lane)
        lane.release()

    def retitle(self) -> tuple[str, ...]:
        """Title every lane by its mode ("partial", "partial 2", ...) and give the feed a timeline
        of these lanes; the lanes' names, left to right."""
        counts: dict[str, int] = {}
        for lane in self.lanes:
            base = lane.mode.value
            counts[base] = counts.get(base, 0) + 1
            lane.title = base if counts[base] == 1 else f"{base} {counts[base]}"
        model = TimelineModel()
        for lane in self.lanes:
            model.add_lane(lane.name, lane.title)
        self.feed.model = model
        return tuple(lane.name for lane in self.lanes)

    async def fetch_notes(self, base_url: str, *, since: float) -> tuple[str, ...]:
        """Note under each lane what the demo provider at `base_url` saw of its request (its
        request log since `since`, wall clock); the names of the lanes asked about."""
        lanes = list(self.lanes)
        notes = await request_notes(lanes, base_url, since=since)
        for lane in lanes:
            if lane.name in notes:
                lane.set_server_note(notes[lane.name])
        return tuple(lane.name for lane in lanes)

    def judge(self, *, shared: bool) -> None:
        """Judge, once a run has ended, every lane whose final values were not known before it (a
        replay, a live run, a document of one's own) by the run's own: a committed lane has its own
        result already; a lane that did not commit gets the first committed lane's result when
        every lane read one generation (`shared`: a demo or replay run). A lane of a live run
        (its own request, its own generation) that did not commit, or of a run where none
        committed, has no final values: its counts stay "so far", never judged by another run."""
        if not shared:
            return
        result: Any = MISSING
        for lane in self.lanes:
            run = lane.run
            if run is not None and run.status.phase is Phase.COMMITTED and run.result is not MISSING:
                result = run.result
                break
        if result is MISSING:
            return
        for lane in self.lanes:
            run = lane.run
            committed = run is not None and run.status.phase is Phase.COMMITTED
            if lane.final is MISSING and not committed and lane.metrics.started:
                lane.metrics.set_final(result)
