"""The compare view's lanes: 2 to 5 of them, left to right, each with its own run settings.

`CompareLanes` keeps the lanes of a session's compare view (livefill.session.session.Session
owns one and tells its subscribers what changed): it names new lanes, keeps each lane's
`LaneSettings` (overrides over the session's settings: provider, model, wire, knobs;
livefill.session.lane_settings) beside its mode, titles them by what differs between them
("partial", "partial 2"; "anthropic · fine-grained", "ollama"), keeps the timeline feed they
report to, and judges a lane that did not commit against the run's first committed result
(`judge`). `parse_modes` reads a `--compare` list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode, parse_mode
from livefill.session.lane import SessionLane
from livefill.session.lane_settings import LaneSettings, LaneSettingsError, lane_run_settings, lane_titles
from livefill.session.request_notes import request_notes
from livefill.session.run_status import Phase
from livefill.session.settings import RunSettings
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
    """The compare lanes, left to right, each lane's settings, and the timeline feed they report to."""

    def __init__(self, make_lane: LaneMaker) -> None:
        self.lanes: list[SessionLane] = []
        self.feed = TimelineFeed(TimelineModel())
        self._make_lane = make_lane
        self._counter = 0
        self._overrides: dict[str, LaneSettings] = {}  # by lane name; the mode is the lane's own

    @property
    def modes(self) -> list[Mode]:
        """The lanes' modes, left to right."""
        return [lane.mode for lane in self.lanes]

    def settings_of(self, lane: SessionLane) -> LaneSettings:
        """`lane`'s own settings (its overrides over the session's, and its mode)."""
        return self._overrides.get(lane.name, LaneSettings()).with_(mode=lane.mode)

    @property
    def lane_settings(self) -> list[LaneSettings]:
        """Every lane's own settings, left to right."""
        return [self.settings_of(lane) for lane in self.lanes]

    def set_overrides(self, lane: SessionLane, settings: LaneSettings) -> None:
        """Give `lane` these settings (its mode included)."""
        self._overrides[lane.name] = settings
        lane.set_mode(settings.mode)

    def set_modes(self, modes: Iterable[Mode | str]) -> None:
        """Replace the lanes with one per mode (2 to 5; ValueError otherwise), the session's settings each."""
        self.set_lanes([LaneSettings(mode=parse_mode(m)) for m in modes])

    def set_lanes(self, lanes: Iterable[LaneSettings]) -> None:
        """Replace the lanes with one per `LaneSettings` (2 to 5; ValueError otherwise)."""
        wanted = list(lanes)
        if not MIN_LANES <= len(wanted) <= MAX_LANES:
            raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} lanes, got {len(wanted)}")
        for lane in list(self.lanes):
            self.drop(lane)
        for settings in wanted:
            self.add(settings.mode, settings)

    def add(self, mode: Mode, settings: LaneSettings | None = None) -> SessionLane:
        """A new lane on the right (call `retitle` once the lanes are as wanted)."""
        self._counter += 1
        lane = self._make_lane(f"lane{self._counter}", mode, self.feed)
        self._overrides[lane.name] = (settings or LaneSettings()).with_(mode=mode)
        self.lanes.append(lane)
        return lane

    def drop(self, lane: SessionLane) -> None:
        """Remove `lane` and let go of its form."""
        self.lanes.remove(lane)
        self._overrides.pop(lane.name, None)
        lane.release()

    def run_settings(self, base: RunSettings) -> list[RunSettings]:
        """Each lane's RunSettings: `base` with its overrides (LaneSettingsError for one that cannot be)."""
        return [lane_run_settings(base, self.settings_of(lane)) for lane in self.lanes]

    def titles(self, base: RunSettings) -> list[str]:
        """What each lane would be called with `base` the session's settings (what differs between them)."""
        try:
            return lane_titles(self.run_settings(base))
        except LaneSettingsError:  # a lane the session's settings no longer allow: say its own keys
            return [self.settings_of(lane).text() for lane in self.lanes]

    def retitle(self, base: RunSettings | None = None) -> tuple[str, ...]:
        """Title every lane by what differs from the others ("partial", "partial 2", "ollama"; by
        its mode alone without `base`) and give the feed a timeline of these lanes; the lanes'
        names, left to right."""
        titles = self.titles(base) if base is not None else lane_titles([RunSettings(mode=m) for m in self.modes])
        for lane, title in zip(self.lanes, titles):
            lane.title = title
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
