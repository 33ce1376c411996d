"""The timeline's geometry: sizes, colours, where rows and time go, and the end labels' places.

Split from widgets/timeline.py (which paints with them): `TimelineLayout` is one picture's
geometry (the plot's x range, the seconds shown, the y of every row); `_Rows` the row geometry a
view keeps until the model's rows change; `place_end_labels` spreads the words over the lanes'
end lines so that none overlap; `_nice_step` and `_decimals` choose and write the time axis' ticks;
`running_span` the seconds the axis shows while a run goes on, and `grown_strip` the columns a
frame repaints while that span holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QColor

__all__ = ["STATE_COLORS", "EXPORT_MIN_WIDTH", "TimelineLayout", "grown_strip", "place_end_labels", "running_span"]

#: Fill colours of the segment states (the pattern differs too: never colour alone).
STATE_COLORS = {
    "pending": QColor(140, 140, 150),
    "provisional": QColor(245, 166, 35),
    "invalid": QColor(220, 50, 47),
    "settled": QColor(46, 160, 67),
    "stop": QColor(214, 40, 40),
}

_ROW_H = 14
_ROW_GAP = 2
_GROUP_GAP = 8
_TOP = 46  # legend + axis labels
_BOTTOM = 10
_PAD = 10

EXPORT_MIN_WIDTH = 1200
"""The narrowest exported PNG (the dock may be narrow or never shown: the picture stays readable)."""

_SPANS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
"""While a run goes on, the seconds the axis shows are one of these times a power of ten: the scale
holds until the run outgrows it (a step about a quarter up), so a frame repaints only where bars
grew, not every bar of the plot moved to a new scale (`grown_strip`)."""


def running_span(t: float) -> float:
    """The seconds the axis shows while a run goes on and has reached `t` s (0.5 at least)."""
    if t <= 0.5:
        return 0.5
    power = 10.0 ** math.floor(math.log10(t))
    return next((s * power for s in _SPANS if s * power >= t), 10 * power)


def grown_strip(lay: TimelineLayout, since: float, now: float) -> tuple[int, int]:
    """The x range (left, right) a frame repaints when the scale held and the bars changed from
    `since` s to `now` s: every open bar's end, every segment begun or ended and every settle mark
    placed in that time, with a settle diamond's half width and a pen's pixel on either side."""
    reach = _ROW_H / 2 + 2
    return math.floor(lay.x(since) - reach), math.ceil(lay.x(now) + reach)


@dataclass(frozen=True, slots=True)
class TimelineLayout:
    """Where things go for one width: plot x range, seconds shown, the y of every row."""

    width: int
    height: int
    label_w: int
    lane_w: int
    x0: float
    x1: float
    t_max: float
    rows: dict[tuple[str, str], float]  # (pointer, lane) -> top y of the row
    groups: list[tuple[str, float, float]]  # (pointer, top, bottom)

    def x(self, t: float) -> float:
        """The x of time `t` (seconds from Start)."""
        return self.x0 + (self.x1 - self.x0) * max(0.0, t) / self.t_max


def _decimals(step: float) -> int:
    """Decimals that write every multiple of `step` exactly (0.25 s ticks: "0.25", not "0.2")."""
    return next((d for d in range(4) if abs(round(step, d) - step) < 1e-9), 3)


def _end_word(outcome: str) -> str:
    """The word over a lane's end line: how its run ended."""
    if outcome.startswith("committed"):
        return "end"
    return "Stop" if outcome.startswith("stopped") else "failed"


def place_end_labels(marks: list[tuple[float, str]], advance: Callable[[str], float], left: float, right: float,
                     gap: float = 4.0) -> list[tuple[float, float, str]]:
    """The words over the lanes' end lines (`marks`: x, word) as (left, width, text), none
    overlapping: lines whose words would touch share one label over them ("end", "end / Stop")."""
    clusters = [[mark] for mark in sorted(marks)]

    def label(cluster: list[tuple[float, str]]) -> tuple[float, float, str]:
        text = " / ".join(dict.fromkeys(word for _, word in cluster))
        width = advance(text) + 4
        centre = (cluster[0][0] + cluster[-1][0]) / 2
        return max(left, min(centre - width / 2, right - width)), width, text

    merged = True
    while merged:  # a shared label is wider: it may touch the next one in turn
        merged, out = False, []
        for cluster in clusters:
            if out and label(cluster)[0] < sum(label(out[-1])[:2]) + gap:
                out[-1], merged = out[-1] + cluster, True
            else:
                out.append(cluster)
        clusters = out
    return [label(cluster) for cluster in clusters]


def _nice_step(span: float, target: int) -> float:
    raw = span / max(1, target)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for k in (1, 2, 2.5, 5, 10):
        if raw <= k * mag:
            return k * mag
    return 10 * mag


@dataclass(frozen=True, slots=True)
class _Rows:
    """The row geometry of one set of rows (see `TimelineView._row_geometry`)."""

    label_w: int
    lane_w: int
    lanes: list[str]
    rows: dict[tuple[str, str], float]
    groups: list[tuple[str, float, float]]
