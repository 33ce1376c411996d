"""The timeline: per field, per lane, a bar from the field's first byte to the moment it settled.

`TimelineView` paints a `livefill.session.timeline.TimelineModel` with QPainter (it owns no business state):
one group of rows per field, one row per lane inside it; the pending span hatched, the
provisional span filled amber with a dashed outline, an invalid span red and cross-hatched, a
settle mark (a tick and a diamond) where the value settled, and a marker where each lane stopped
(red dashed line, "Stop" or "failed"; a lane that committed gets a thin "end" line; lines whose
words would overlap share one: `place_end_labels`). The x-axis is seconds
from Start. `export_png(path, title=...)` writes the whole timeline as a PNG under a title row.

How this works
--------------
All geometry comes from `layout(width)` (label column, plot area, time scale, one y per row), used
both by `paintEvent` and by `render_image`, so a picture of any size can be made without resizing
the widget, and tests can ask where a bar should be (`bar_rect`). While a lane runs, the widget
repaints only on its 30 Hz frame timer (open bars grow up to "now"), whatever the model did in
between: a batch of changes costs one paint, never one per change; idle, a change repaints at
once. A paint draws only the rows its rectangle exposes (in the dock's scroll area that is the
visible part), the label columns only where the rectangle reaches them (a frame tick repaints the
plot alone), and the label columns' widths are measured once per set of rows; the widget asks
its layout for a new size only when its number of rows changed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QImage, QPainter, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from livefill.session.timeline import TimelineModel

__all__ = ["TimelineView", "TimelineLayout", "STATE_COLORS"]

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


class TimelineView(QWidget):
    """Paints a `TimelineModel` (see the module docstring).

    `clock` must be the clock the model's times come from (default `time.monotonic`); it is used
    only to grow open bars up to "now" while a lane runs.
    """

    def __init__(
        self,
        model: TimelineModel | None = None,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self._clock = clock
        self._model: TimelineModel | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(33)
        self._timer.timeout.connect(self._tick)
        self._hinted_height = -1
        self._widths: tuple[tuple[object, ...], int, int] | None = None  # (what was measured, label_w, lane_w)
        self.set_model(model)

    # -- model ----------------------------------------------------------------------------------

    @property
    def model(self) -> TimelineModel | None:
        """The model painted."""
        return self._model

    def set_model(self, model: TimelineModel | None) -> None:
        """Paint `model` (None: nothing)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._model = model
        if model is not None:
            self._unsubscribe = model.subscribe(self._changed)
        self._changed()

    def _changed(self) -> None:
        m = self._model
        height = self.content_height()
        if height != self._hinted_height:  # rows came or went: the scroll area must resize it
            self._hinted_height = height
            self.updateGeometry()
            self.update()
        if m is not None and m.running:
            if not self._timer.isActive():  # from now on the frame timer repaints (_tick)
                self._timer.start()
                self.update()
            return
        self._timer.stop()
        self.update()

    def _tick(self) -> None:
        if self._model is None or not self._model.running:
            self._timer.stop()
            self.update()
            return
        # the plot only: the label columns change with the rows, which repaint everything (_changed)
        x0 = int(self.layout_for(self.width()).x0)
        self.update(x0 - 1, 0, self.width() - x0 + 1, self.height())

    def now(self) -> float:
        """Seconds since the model's start on the clock (the end of open bars while running)."""
        m = self._model
        if m is None:
            return 0.0
        if m.running:
            return max(m.last_time, self._clock() - m.t0)
        return m.last_time

    # -- geometry -------------------------------------------------------------------------------

    def _row_count(self) -> tuple[int, int]:
        m = self._model
        if m is None:
            return 0, 0
        return len(m.fields), len(m.lanes)

    def content_height(self) -> int:
        """The height that shows every row."""
        fields, lanes = self._row_count()
        per = max(1, lanes) * (_ROW_H + _ROW_GAP)
        return _TOP + fields * (per + _GROUP_GAP) + _BOTTOM

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(640, max(120, self.content_height()))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(320, max(120, self.content_height()))

    def layout_for(self, width: int, height: int | None = None) -> TimelineLayout:
        """The geometry for a picture `width` wide (see `TimelineLayout`)."""
        m = self._model
        fields = m.fields if m is not None else []
        lanes = m.lanes if m is not None else []
        label_w, lane_w = self._label_widths(fields, [m.title(ln) for ln in lanes] if m is not None else None)
        x0 = _PAD + label_w + lane_w
        x1 = max(x0 + 40, width - _PAD - 30)
        t_end = self.now()
        if m is not None:
            ends = [s.t for s in m.stops()]
            t_end = max([t_end] + ends)
        t_max = max(0.5, t_end * 1.04)
        rows: dict[tuple[str, str], float] = {}
        groups = []
        y = float(_TOP)
        per = _ROW_H + _ROW_GAP
        for pointer in fields:
            top = y
            for lane in lanes:
                rows[(pointer, lane)] = y
                y += per
            groups.append((pointer, top, y))
            y += _GROUP_GAP
        h = height if height is not None else max(self.content_height(), 120)
        return TimelineLayout(width, h, label_w, lane_w, float(x0), float(x1), t_max, rows, groups)

    def bar_rect(self, pointer: str, lane: str, width: int | None = None) -> QRectF | None:
        """Where the bar of `pointer` in `lane` is painted (None if it has none)."""
        m = self._model
        if m is None:
            return None
        bar = m.bar(lane, pointer)
        if bar is None:
            return None
        lay = self.layout_for(width or self.width())
        y = lay.rows[(pointer, lane)]
        end = bar.end if bar.end is not None else self.now()
        return QRectF(lay.x(bar.start), y, max(1.0, lay.x(end) - lay.x(bar.start)), _ROW_H)

    def _label_widths(self, fields: list[str], titles: list[str] | None) -> tuple[int, int]:
        """The label column's and the lane column's widths, measured once per set of rows."""
        font = self._font()
        key = (font.key(), tuple(fields), None if titles is None else tuple(titles))
        if self._widths is None or self._widths[0] != key:
            fm = QFontMetrics(font)
            label_w = min(260, max([fm.horizontalAdvance(p) for p in fields] + [60]) + _PAD)
            lane_w = min(110, max([fm.horizontalAdvance(t) for t in titles] + [0]) + _PAD) if titles is not None else 0
            self._widths = (key, label_w, lane_w)
        return self._widths[1], self._widths[2]

    # -- painting -------------------------------------------------------------------------------

    def _font(self) -> QFont:
        f = QFont(self.font())
        f.setPointSizeF(max(7.0, self.font().pointSizeF() * 0.9))
        return f

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        try:
            self.paint(p, self.width(), self.height(), QRectF(event.rect()))
        finally:
            p.end()

    def render_image(self, width: int | None = None, height: int | None = None) -> QImage:
        """The whole timeline as an image (default: the widget's width, every row's height)."""
        w = width or max(self.width(), 640)
        h = height or max(self.content_height(), 120)
        img = QImage(w, h, QImage.Format.Format_ARGB32)
        img.fill(self.palette().color(QPalette.ColorRole.Base))
        p = QPainter(img)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            self.paint(p, w, h)
        finally:
            p.end()
        return img

    def export_png(
        self, path: str, width: int | None = None, height: int | None = None, *, title: str = "", subtitle: str = ""
    ) -> QSize:
        """Write the timeline to `path` as a PNG, at least `EXPORT_MIN_WIDTH` wide (default: the
        widget's width if wider) under a title row (`title` in bold, `subtitle` below it, when
        given); returns the picture's size."""
        w = width or max(self.width(), EXPORT_MIN_WIDTH)
        body = self.render_image(w, height)
        fm = QFontMetrics(self._font())
        title_font = QFont(self._font())
        title_font.setBold(True)
        title_font.setPointSizeF(self._font().pointSizeF() * 1.4)
        tm = QFontMetrics(title_font)
        lines = [(t, f, m) for t, f, m in ((title, title_font, tm), (subtitle, self._font(), fm)) if t]
        head = (_PAD + sum(m.height() + 2 for _t, _f, m in lines) + _PAD // 2) if lines else 0
        img = QImage(w, body.height() + head, QImage.Format.Format_ARGB32)
        pal = self.palette()
        img.fill(pal.color(QPalette.ColorRole.Base))
        p = QPainter(img)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            y = _PAD
            for text, font, metrics in lines:
                p.setFont(font)
                p.setPen(pal.color(QPalette.ColorRole.Text if font is title_font else QPalette.ColorRole.PlaceholderText))
                shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, w - 2 * _PAD)
                p.drawText(QRectF(_PAD, y, w - 2 * _PAD, metrics.height()), Qt.AlignmentFlag.AlignVCenter, shown)
                y += metrics.height() + 2
            if head:
                rule = QColor(pal.color(QPalette.ColorRole.Text))
                rule.setAlpha(60)
                p.fillRect(QRectF(0, head - 1, w, 1), rule)
            p.drawImage(0, head, body)
        finally:
            p.end()
        if not img.save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
        return img.size()

    def paint(self, p: QPainter, width: int, height: int, clip: QRectF | None = None) -> None:
        """Paint everything into `p` for a `width` x `height` picture (only what meets `clip`)."""
        top, bottom = (clip.top() - _ROW_H, clip.bottom() + _ROW_H) if clip is not None else (-math.inf, math.inf)
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        text = pal.color(QPalette.ColorRole.Text)
        muted = pal.color(QPalette.ColorRole.PlaceholderText)
        grid = QColor(text)
        grid.setAlpha(40)
        p.fillRect(clip if clip is not None else QRectF(0, 0, width, height), base)
        p.setFont(self._font())
        fm = QFontMetrics(self._font())
        m = self._model
        lay = self.layout_for(width, height)
        head = top < _TOP + 2  # the legend and the axis labels are exposed
        if head:
            self._paint_legend(p, fm, text)
        if m is None or not m.fields:
            p.setPen(muted)
            p.drawText(QRectF(0, _TOP, width, 40), Qt.AlignmentFlag.AlignCenter, "No run yet")
            self._paint_axis(p, fm, lay, text, grid, height, top, bottom, head)
            return
        self._paint_axis(p, fm, lay, text, grid, height, top, bottom, head)
        now = self.now()
        # field groups
        titles = [(lane, m.title(lane)) for lane in m.lanes]
        labels = clip is None or clip.left() < lay.x0  # the label columns are exposed
        shade = QColor(text)
        shade.setAlpha(12)
        for i, (pointer, g_top, g_bottom) in enumerate(lay.groups):
            if g_bottom < top or g_top > bottom:
                continue
            if i % 2 == 1:
                p.fillRect(QRectF(0, g_top - 1, width, g_bottom - g_top + 1), shade)
            if not labels:
                continue
            p.setPen(text)
            label = fm.elidedText(pointer or "(whole object)", Qt.TextElideMode.ElideLeft, lay.label_w - 4)
            p.drawText(QRectF(_PAD, g_top, lay.label_w - 4, _ROW_H), Qt.AlignmentFlag.AlignVCenter, label)
            p.setPen(muted)
            for lane, title in titles:
                y = lay.rows[(pointer, lane)]
                p.drawText(
                    QRectF(_PAD + lay.label_w, y, lay.lane_w - 6, _ROW_H),
                    Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                    title,
                )
        for bar in m.bars():
            y = lay.rows[(bar.pointer, bar.lane)]
            if y + _ROW_H < top or y > bottom:
                continue
            for seg in bar.segments:
                end = seg.end if seg.end is not None else now
                self._paint_segment(p, seg.state, lay.x(seg.start), lay.x(end), y)
            if bar.settled is not None:
                self._paint_settle(p, lay.x(bar.settled), y)
        self._paint_stops(p, fm, lay, m, text, top, bottom, head)

    def _paint_segment(self, p: QPainter, state: str, xa: float, xb: float, y: float) -> None:
        rect = QRectF(xa, y + 2, max(2.0, xb - xa), _ROW_H - 4)
        color = STATE_COLORS.get(state, STATE_COLORS["pending"])
        if state == "pending":
            fill = QColor(color)
            fill.setAlpha(60)
            p.fillRect(rect, fill)
            p.fillRect(rect, QBrush(color, Qt.BrushStyle.BDiagPattern))
            p.setPen(QPen(color, 1))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect)
        elif state == "invalid":
            p.fillRect(rect, color)
            p.fillRect(rect, QBrush(QColor(255, 255, 255, 160), Qt.BrushStyle.DiagCrossPattern))
        else:  # provisional
            p.fillRect(rect, color)
            pen = QPen(color.darker(150), 1, Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect)

    def _paint_settle(self, p: QPainter, x: float, y: float) -> None:
        color = STATE_COLORS["settled"]
        p.setPen(QPen(color, 2))
        p.drawLine(QPointF(x, y + 1), QPointF(x, y + _ROW_H - 1))
        cy = y + _ROW_H / 2
        r = _ROW_H / 2 - 1
        p.setBrush(color)
        p.setPen(QPen(color.darker(140), 1))
        p.drawPolygon(QPolygonF([QPointF(x, cy - r), QPointF(x + r, cy), QPointF(x, cy + r), QPointF(x - r, cy)]))

    def _paint_stops(
        self, p: QPainter, fm: QFontMetrics, lay: TimelineLayout, m: TimelineModel, text: QColor,
        top: float = -math.inf, bottom: float = math.inf, head: bool = True,
    ) -> None:
        ends: list[tuple[float, str]] = []
        for stop in m.stops():
            x = lay.x(stop.t)
            stopped = not stop.outcome.startswith("committed")
            color = STATE_COLORS["stop"] if stopped else QColor(text)
            pen = QPen(color, 2 if stopped else 1, Qt.PenStyle.DashLine if stopped else Qt.PenStyle.DotLine)
            p.setPen(pen)
            for pointer, _, _ in lay.groups:
                y = lay.rows[(pointer, stop.lane)]
                if top <= y + _ROW_H and y <= bottom:
                    p.drawLine(QPointF(x, y), QPointF(x, y + _ROW_H))
            if head:
                p.drawLine(QPointF(x, _TOP - 3), QPointF(x, _TOP))
                ends.append((x, _end_word(stop.outcome)))
        for x, w, word in place_end_labels(ends, fm.horizontalAdvance, 0.0, float(lay.width)):
            p.setPen(STATE_COLORS["stop"] if word != "end" else QColor(text))
            p.drawText(QRectF(x, _TOP - 14, w, 12), Qt.AlignmentFlag.AlignCenter, word)

    def _paint_axis(
        self, p: QPainter, fm: QFontMetrics, lay: TimelineLayout, text: QColor, grid: QColor, height: int,
        top: float = -math.inf, bottom: float = math.inf, head: bool = True,
    ) -> None:
        step = _nice_step(lay.t_max, max(2, int((lay.x1 - lay.x0) / 80)))
        t = 0.0
        decimals = _decimals(step)
        y0, y1 = max(_TOP - 2, top), min(height - _BOTTOM, bottom)
        unit_x = lay.x1 + 2  # the unit goes after the last label, never over it (it did when narrow)
        while t <= lay.t_max + 1e-9:
            x = lay.x(t)
            if y0 < y1:
                p.setPen(grid)
                p.drawLine(QPointF(x, y0), QPointF(x, y1))
            if head:
                p.setPen(text)
                label = f"{t:.{decimals}f}"
                w = fm.horizontalAdvance(label)
                p.drawText(QRectF(x - w / 2 - 2, _TOP - 28, w + 4, 12), Qt.AlignmentFlag.AlignCenter, label)
                unit_x = max(unit_x, x + w / 2 + fm.horizontalAdvance(" "))
            t += step
        if head:
            p.setPen(text)
            p.drawText(QRectF(unit_x, _TOP - 28, 30, 12), Qt.AlignmentFlag.AlignLeft, "s")

    def _paint_legend(self, p: QPainter, fm: QFontMetrics, text: QColor) -> None:
        x = float(_PAD)
        y = 4.0
        items = [("pending", "pending (key seen)"), ("provisional", "provisional"), ("invalid", "invalid")]
        for state, label in items:
            self._paint_segment(p, state, x, x + 22, y - 2)
            p.setPen(text)
            w = fm.horizontalAdvance(label)
            p.drawText(QRectF(x + 26, y, w + 4, _ROW_H - 2), Qt.AlignmentFlag.AlignVCenter, label)
            x += 26 + w + 16
        self._paint_settle(p, x + 6, y - 2)
        p.setPen(text)
        label = "settled"
        p.drawText(QRectF(x + 16, y, fm.horizontalAdvance(label) + 4, _ROW_H - 2), Qt.AlignmentFlag.AlignVCenter, label)
        x += 16 + fm.horizontalAdvance(label) + 16
        pen = QPen(STATE_COLORS["stop"], 2, Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.drawLine(QPointF(x + 4, y), QPointF(x + 4, y + _ROW_H - 4))
        p.setPen(text)
        label = "Stop / failed"
        p.drawText(QRectF(x + 10, y, fm.horizontalAdvance(label) + 4, _ROW_H - 2), Qt.AlignmentFlag.AlignVCenter, label)
