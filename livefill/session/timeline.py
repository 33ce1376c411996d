"""The timeline model: when each field of each lane went pending, provisional, settled.

Lanes report field state transitions (`TimelineModel.record(lane, pointer, state, t)`) and how
their run ended (`stop(lane, t, outcome)`); `bars()` turns that into one bar per (field, lane):
segments from the field's first transition (its key, i.e. its first byte, arrived) to the moment it
settled, each segment in the state it was in. The timeline widget draws exactly this.

How this works
--------------
States are taken from any Enum (by member name: `FieldState.PROVISIONAL`, `ValueState.SETTLED`)
or string, lower-cased: "pending", "provisional", "settled", "invalid", "empty". A bar opens at the
first "pending"/"provisional"/"settled"/"invalid" of its field; each later transition closes the
current segment and opens the next. "settled" closes the bar (it ends with a settle mark);
"invalid" is drawn as a segment that stays open until the lane stops; "empty" (the form restored
the field) closes the bar without settling it. A lane's stop closes every open segment of that
lane at the stop time. Times are seconds after `start(t0)`, on the caller's clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from livefill.observers import Observers

__all__ = ["Bar", "Segment", "StopMark", "TimelineModel", "normalise_state"]

#: States that put a field on the timeline (every other state name is ignored).
BAR_STATES = ("pending", "provisional", "settled", "invalid")


def normalise_state(state: Any) -> str:
    """`FieldState.PROVISIONAL` / `"Provisional"` -> `"provisional"`."""
    if isinstance(state, Enum):
        return state.name.lower()
    return str(state).lower()


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """A span of a bar spent in one state: "pending", "provisional" or "invalid".

    `end` is None while the segment is still open (draw it up to "now").
    """

    state: str
    start: float
    end: float | None


@dataclass(frozen=True, kw_only=True, slots=True)
class Bar:
    """One field in one lane: its segments, and when it settled (None: it did not)."""

    lane: str
    pointer: str
    segments: tuple[Segment, ...]
    settled: float | None

    @property
    def start(self) -> float:
        """When the field's first byte arrived."""
        return self.segments[0].start if self.segments else (self.settled or 0.0)

    @property
    def end(self) -> float | None:
        """When the bar ends (settled, or the lane stopped); None while it is open."""
        if self.settled is not None:
            return self.settled
        return self.segments[-1].end if self.segments else None


@dataclass(frozen=True, kw_only=True, slots=True)
class StopMark:
    """Lane `lane` ended at `t` with `outcome` ("stopped", "committed", "failed: ...")."""

    lane: str
    t: float
    outcome: str


class _Track:
    __slots__ = ("segments", "open_state", "open_start", "settled", "closed")

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.open_state: str | None = None
        self.open_start = 0.0
        self.settled: float | None = None
        self.closed = False

    def close(self, t: float) -> None:
        if self.open_state is not None:
            self.segments.append(Segment(state=self.open_state, start=self.open_start, end=t))
            self.open_state = None

    def snapshot(self, lane: str, pointer: str) -> Bar:
        segments = list(self.segments)
        if self.open_state is not None:
            segments.append(Segment(state=self.open_state, start=self.open_start, end=None))
        return Bar(lane=lane, pointer=pointer, segments=tuple(segments), settled=self.settled)


class TimelineModel:
    """Per lane, per field state transitions over one run (see the module docstring).

    Plain-Python observers: `subscribe(callback)` returns an unsubscribe function; callbacks get
    no arguments and run after every change.
    """

    def __init__(self, lanes: Iterable[str] = ()) -> None:
        self._observers: Observers[None] = Observers()
        self._lanes: list[str] = []
        self._titles: dict[str, str] = {}
        self._fields: list[str] = []
        self._field_set: set[str] = set()
        self._rows_version = 0  # bumped whenever the rows (fields, lanes, titles) change
        self.t0 = 0.0
        self._tracks: dict[tuple[str, str], _Track] = {}
        self._track_lanes: set[str] = set()  # lanes that have a bar
        self._stops: dict[str, StopMark] = {}
        self._last_t = 0.0
        self._changed_from: float | None = None  # the earliest time a bar or stop mark changed at, since taken
        for lane in lanes:
            self.add_lane(lane)

    # -- set-up ---------------------------------------------------------------------------------

    def add_lane(self, lane: str, title: str | None = None) -> None:
        """Declare a lane (rows appear in the order lanes were added); `title` labels it."""
        if lane not in self._lanes:
            self._lanes.append(lane)
        self._titles[lane] = title or lane
        self._rows_version += 1
        self._notify()

    def set_fields(self, pointers: Iterable[str]) -> None:
        """Row order: these fields first, in this order; fields seen later are appended."""
        fixed = list(dict.fromkeys(pointers))
        wanted = set(fixed)
        rest = [p for p in self._fields if p not in wanted]
        self._fields = fixed + rest
        self._field_set = set(self._fields)
        self._rows_version += 1
        self._notify()

    def start(self, t0: float) -> None:
        """A run starts at `t0`: clear every bar and stop mark (lanes and field order stay)."""
        self.t0 = t0
        self._tracks.clear()
        self._track_lanes.clear()
        self._stops.clear()
        self._last_t = 0.0
        self._notify()

    # -- feeding --------------------------------------------------------------------------------

    def record(self, lane: str, pointer: str, state: Any, t: float) -> None:
        """Field `pointer` of `lane` entered `state` at `t` (same clock as `start`)."""
        name = normalise_state(state)
        rel = t - self.t0
        self._last_t = max(self._last_t, rel)
        if lane not in self._lanes:
            self._lanes.append(lane)
            self._titles.setdefault(lane, lane)
            self._rows_version += 1
        track = self._tracks.get((lane, pointer))
        if track is None:
            if name not in BAR_STATES:
                return
            track = self._tracks[(lane, pointer)] = _Track()
            self._track_lanes.add(lane)
            if pointer not in self._field_set:
                self._fields.append(pointer)
                self._field_set.add(pointer)
                self._rows_version += 1
        if track.closed:
            if name not in BAR_STATES or name == "settled":
                return
            # the field started over (e.g. a new value after a restore): a fresh stretch
            track.closed = False
            track.settled = None
        if name == track.open_state:
            return
        track.close(rel)
        if name == "settled":
            track.settled = rel
            track.closed = True
        elif name in BAR_STATES:
            track.open_state = name
            track.open_start = rel
        else:  # "empty" or anything else: the field left the timeline
            track.closed = True
        self._changed_at(rel)
        self._notify()

    def stop(self, lane: str, t: float, outcome: str = "stopped") -> None:
        """`lane`'s run ended at `t`: close its open segments and put a stop mark there."""
        rel = t - self.t0
        self._last_t = max(self._last_t, rel)
        for (ln, _), track in self._tracks.items():
            if ln == lane:
                track.close(rel)
                track.closed = True
        self._stops[lane] = StopMark(lane=lane, t=rel, outcome=outcome)
        self._changed_at(rel)
        self._notify()

    def _changed_at(self, rel: float) -> None:
        self._changed_from = rel if self._changed_from is None else min(self._changed_from, rel)

    def take_changed_from(self) -> float | None:
        """The earliest time (seconds after start) at which a bar or a stop mark changed since the
        last call (None: none did); a view repaints from there on (a value replayed from a worker
        process is recorded at the time it was read, which can be before the view's last paint)."""
        changed, self._changed_from = self._changed_from, None
        return changed

    # -- reading --------------------------------------------------------------------------------

    @property
    def lanes(self) -> list[str]:
        """Lane names in display order."""
        return list(self._lanes)

    def title(self, lane: str) -> str:
        """The label of `lane`."""
        return self._titles.get(lane, lane)

    @property
    def fields(self) -> list[str]:
        """Field pointers in display order."""
        return list(self._fields)

    @property
    def field_count(self) -> int:
        """How many fields have rows (`len(fields)` without copying them)."""
        return len(self._fields)

    def field_at(self, index: int) -> str:
        """The pointer of the `index`-th field in display order."""
        return self._fields[index]

    @property
    def rows_version(self) -> int:
        """A number that changes whenever the rows change (fields, lanes, their order or titles):
        a view may keep its row geometry until it does."""
        return self._rows_version

    @property
    def last_time(self) -> float:
        """The latest time recorded (seconds after start)."""
        return self._last_t

    @property
    def running(self) -> bool:
        """True while some lane that has bars has not stopped."""
        return any(lane not in self._stops for lane in self._track_lanes)

    def bar(self, lane: str, pointer: str) -> Bar | None:
        """The bar of one field in one lane, or None if it never left "empty"."""
        track = self._tracks.get((lane, pointer))
        return None if track is None else track.snapshot(lane, pointer)

    def bars(self) -> list[Bar]:
        """Every bar, by field order then lane order."""
        out = []
        for pointer in self._fields:
            for lane in self._lanes:
                b = self.bar(lane, pointer)
                if b is not None:
                    out.append(b)
        return out

    def stops(self) -> list[StopMark]:
        """The stop marks, in lane order."""
        return [self._stops[lane] for lane in self._lanes if lane in self._stops]

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` after every change; returns a function that unsubscribes it."""
        return self._observers.subscribe(lambda _event: callback())

    def _notify(self) -> None:
        self._observers.notify(None)
