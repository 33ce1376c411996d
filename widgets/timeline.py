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
once. While a run goes on the axis keeps its span until the run outgrows it (`running_span`, a
step about a quarter up), so a frame repaints only the columns where bars changed since the last
one (`grown_strip`; a provisional outline is dashed edge by edge, so that its dashes stay put as it
grows); the run ended, the axis spans the whole run. A paint visits only the field groups its rectangle reaches (in the dock's scroll area the
visible part; found by arithmetic, every group being as tall, then each bar looked up by row:
no walk over every bar, so a paint costs the rows shown, not the run), the label columns only
where the rectangle reaches them (a frame tick repaints the plot alone, less the legend, which
no frame changes, when no axis label can reach it: `_legend_box`). The rows' y and the
label columns' widths are made once per set of rows (the model's `rows_version`), not per paint;
the widget asks its layout for a new size only when its number of rows changed. The geometry's
pieces live in widgets/timeline_geometry.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QImage, QPainter, QPalette, QPen, QPolygonF, QRegion
from PySide6.QtWidgets import QSizePolicy, QWidget

from livefill.session.timeline import Bar, TimelineModel
from livefill.widgets.timeline_export import save_titled
from livefill.widgets.timeline_geometry import (
    grown_strip,
    running_span,
    _BOTTOM,
    _GROUP_GAP,
    _PAD,
    _ROW_GAP,
    _ROW_H,
    _TOP,
    EXPORT_MIN_WIDTH,
    STATE_COLORS,
    TimelineLayout,
    _decimals,
    _end_word,
    _nice_step,
    _Rows,
    place_end_labels,
)

__all__ = ["TimelineView", "TimelineLayout", "STATE_COLORS", "EXPORT_MIN_WIDTH", "place_end_labels"]


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
        self._rows: tuple[tuple[object, ...], _Rows] | None = None  # (the model's rows version, their geometry)
        self._exposed: QRegion | None = None  # what the paint event being handled exposes
        self._framed: tuple[float, float, int, int] | None = None  # the last frame: (span, now, stops, width)
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
        self._rows = None
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
                self._framed = None
                self.update()
            return
        self._timer.stop()
        self._framed = None
        self.update()

    def _tick(self) -> None:
        if self._model is None or not self._model.running:
            self._timer.stop()
            self.update()
            return
        # the plot only: the label columns change with the rows, which repaint everything (_changed);
        # and not the legend, which a frame never changes (when no axis label can reach into it).
        # While the axis' span holds, only the columns where bars changed since the last frame.
        lay = self.layout_for(self.width())
        x0 = int(lay.x0)
        now, changed, stops = self.now(), self._model.take_changed_from(), len(self._model.stops())
        last, self._framed = self._framed, (lay.t_max, now, stops, self.width())
        plot = QRect(x0 - 1, 0, self.width() - x0 + 1, self.height())
        if last is not None and last[0] == lay.t_max and last[2:] == (stops, self.width()):
            left, right = grown_strip(lay, min(last[1], changed) if changed is not None else last[1], now)
            plot = plot.intersected(QRect(left, 0, right - left, self.height()))
            if plot.isEmpty():
                return
        legend = self._legend_box()
        if legend is None:
            self.update(plot)
        else:
            self.update(QRegion(plot).subtracted(QRegion(legend)))

    def _legend_box(self) -> QRect | None:
        """Every pixel the legend paints (its swatches, its words' ink, a pixel of margin), or None
        when an axis label's ink could come that close (a tall font): then it is not spared."""
        fm = QFontMetrics(self._font())
        line_top = (_ROW_H - 2 - fm.height()) / 2 + fm.ascent()  # a word's baseline below its row's top
        words = fm.tightBoundingRect("pending (key seen) provisional invalid settled Stop / failed")
        bottom = max(16.0, 4 + line_top + words.top() + words.height()) + 1  # swatches end at 16; words: a row at y 4
        digits = fm.tightBoundingRect("0123456789.s")
        axis_top = _TOP - 28 + line_top + digits.top()  # the axis labels' row is at _TOP - 28
        if math.ceil(bottom) > math.floor(axis_top) - 1:
            return None
        return QRect(0, 0, math.ceil(self._legend_right(fm)) + 2, math.ceil(bottom))

    def _legend_right(self, fm: QFontMetrics) -> float:
        x = float(_PAD)
        for label in ("pending (key seen)", "provisional", "invalid"):
            x += 26 + fm.horizontalAdvance(label) + 16
        x += 16 + fm.horizontalAdvance("settled") + 16
        return x + 10 + fm.horizontalAdvance("Stop / failed") + 4

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
        return m.field_count, len(m.lanes)

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
        rows = self._row_geometry()
        label_w, lane_w = rows.label_w, rows.lane_w
        x0 = _PAD + label_w + lane_w
        x1 = max(x0 + 40, width - _PAD - 30)
        t_end = self.now()
        if m is not None:
            ends = [s.t for s in m.stops()]
            t_end = max([t_end] + ends)
        t_max = running_span(t_end * 1.04) if m is not None and m.running else max(0.5, t_end * 1.04)
        h = height if height is not None else max(self.content_height(), 120)
        return TimelineLayout(width, h, label_w, lane_w, float(x0), float(x1), t_max, rows.rows, rows.groups)

    def _row_geometry(self) -> _Rows:
        """Every row's y and the label columns' widths, made again only when the rows changed
        (the model's `rows_version`), never per paint."""
        m = self._model
        key = (id(m), m.rows_version if m is not None else -1, self._font().key())
        if self._rows is None or self._rows[0] != key:
            fields = m.fields if m is not None else []
            lanes = m.lanes if m is not None else []
            label_w, lane_w = self._label_widths(fields, [m.title(ln) for ln in lanes] if m is not None else None)
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
            self._rows = (key, _Rows(label_w, lane_w, lanes, rows, groups))
        return self._rows[1]

    def visible_groups(self, top: float, bottom: float) -> range:
        """The indices of the field groups that reach into the band `top`..`bottom` (found by
        arithmetic: every group is as tall as the next; no walk over the rows)."""
        rows = self._row_geometry()
        n = len(rows.groups)
        if n == 0:
            return range(0)
        height = len(rows.lanes) * (_ROW_H + _ROW_GAP)
        stride = height + _GROUP_GAP
        first = 0 if top == -math.inf else max(0, math.floor((top - _TOP - height) / stride) - 1)
        last = n - 1 if bottom == math.inf else min(n - 1, math.ceil((bottom - _TOP) / stride) + 1)
        return range(first, last + 1)

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
        self._exposed = event.region()  # (a frame tick's region leaves the legend out: `paint` skips it)
        try:
            self.paint(p, self.width(), self.height(), QRectF(event.rect()))
        finally:
            self._exposed = None
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
        return save_titled(self.render_image(w, height), path, self._font(), self.palette(), title, subtitle)

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
        if head and (self._exposed is None or self._exposed.intersects(self._legend_box() or QRect(0, 0, width, _TOP))):
            self._paint_legend(p, fm, text)
        if m is None or not m.field_count:
            p.setPen(muted)
            p.drawText(QRectF(0, _TOP, width, 40), Qt.AlignmentFlag.AlignCenter, "No run yet")
            self._paint_axis(p, fm, lay, text, grid, height, top, bottom, head)
            return
        self._paint_axis(p, fm, lay, text, grid, height, top, bottom, head)
        now = self.now()
        # field groups
        titles = [(lane, m.title(lane)) for lane in m.lanes]
        # the label columns are exposed (a frame tick's rectangle starts at x0 - 1: the lane titles
        # end 6 px before x0, their ink can overhang a pixel; it is not theirs to paint)
        labels = clip is None or clip.left() < lay.x0 - 3
        shade = QColor(text)
        shade.setAlpha(12)
        shown = self.visible_groups(top, bottom)  # the rows this paint reaches, found without a walk
        for i in shown:
            pointer, g_top, g_bottom = lay.groups[i]
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
        lanes = m.lanes
        columns = (clip.left() - 1, clip.right() + 1) if clip is not None else (-math.inf, math.inf)
        for i in shown:  # by field order then lane order, as `m.bars()` lists them
            pointer = lay.groups[i][0]
            for lane in lanes:
                bar = m.bar(lane, pointer)
                if bar is None:
                    continue
                y = lay.rows[(pointer, lane)]
                if y + _ROW_H < top or y > bottom:
                    continue
                self._paint_bar(p, lay, bar, y, now, columns)
        self._paint_stops(p, fm, lay, m, text, top, bottom, head, shown)

    def _paint_bar(self, p: QPainter, lay: TimelineLayout, bar: Bar, y: float, now: float,
                   columns: tuple[float, float] = (-math.inf, math.inf)) -> None:
        """One bar's segments and settle mark, those that reach into `columns` (x from, to)."""
        left, right = columns
        for seg in bar.segments:
            xa, xb = lay.x(seg.start), lay.x(seg.end if seg.end is not None else now)
            if xa <= right and max(xb, xa + 2.0) >= left:
                self._paint_segment(p, seg.state, xa, xb, y)
        if bar.settled is not None and left - _ROW_H <= lay.x(bar.settled) <= right + _ROW_H:
            self._paint_settle(p, lay.x(bar.settled), y)

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
            p.setPen(QPen(color.darker(150), 1, Qt.PenStyle.DashLine))
            # each edge dashed from its left or top end: a rectangle's outline is one path, whose
            # bottom edge's dashes would shift as the segment grows (a frame repaints only its end)
            left, top, right, bottom = rect.left(), rect.top(), rect.right(), rect.bottom()
            p.drawLines([QLineF(left, top, right, top), QLineF(left, bottom, right, bottom),
                         QLineF(left, top, left, bottom), QLineF(right, top, right, bottom)])

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
        top: float = -math.inf, bottom: float = math.inf, head: bool = True, shown: range | None = None,
    ) -> None:
        ends: list[tuple[float, str]] = []
        groups = lay.groups if shown is None else [lay.groups[i] for i in shown]
        for stop in m.stops():
            x = lay.x(stop.t)
            stopped = not stop.outcome.startswith("committed")
            color = STATE_COLORS["stop"] if stopped else QColor(text)
            pen = QPen(color, 2 if stopped else 1, Qt.PenStyle.DashLine if stopped else Qt.PenStyle.DotLine)
            p.setPen(pen)
            for pointer, _, _ in groups:
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
