"""The timeline's paint costs the rows it shows: never the bars or rows outside its rectangle.

A paint of a clipped rectangle (the dock's scroll area shows a part of the rows; a frame tick
repaints the plot) visits only the field groups that rectangle reaches, found by arithmetic, and
the row geometry is made again only when the rows change, never per paint. Counted in bar
snapshots and reads of the model's field list, not timed; and the clipped pictures are the same
pixels as the whole picture's.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF
from PySide6.QtGui import QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication

from livefill.session import timeline as timeline_module
from livefill.session.timeline import TimelineModel
from livefill.widgets.timeline import TimelineView

LANES = ("naive", "partial", "settled")


def _model(fields: int, *, stopped: bool = True) -> TimelineModel:
    """Every kind of bar: pending, provisional, invalid, settled, open, cut by a stop."""
    tl = TimelineModel(LANES)
    tl.set_fields([f"/items/{i}/sku" for i in range(fields)])
    tl.start(10.0)
    for i in range(fields):
        pointer = f"/items/{i}/sku"
        t = 10.0 + 0.02 * i
        tl.record("naive", pointer, "provisional", t)
        tl.record("partial", pointer, "pending", t)
        tl.record("partial", pointer, "provisional", t + 0.05)
        if i % 3:
            tl.record("partial", pointer, "settled", t + 0.3)
        if i % 4 == 0:
            tl.record("settled", pointer, "invalid", t + 0.1)
        elif i % 4 != 3:
            tl.record("settled", pointer, "settled", t + 0.4)
    if stopped:
        tl.stop("naive", 10.0 + 0.02 * fields + 0.5, "committed")
        tl.stop("partial", 10.0 + 0.02 * fields + 0.6, "stopped")
        tl.stop("settled", 10.0 + 0.02 * fields + 0.7, "failed: boom")
    return tl


def _add_fields(tl: TimelineModel, first: int, count: int) -> None:
    for i in range(first, first + count):
        for lane in LANES:
            tl.record(lane, f"/more/{i}", "provisional", 10.5)


def _paint(view: TimelineView, width: int, height: int, clip: QRectF | None) -> QImage:
    img = QImage(width, height, QImage.Format.Format_ARGB32)
    img.fill(view.palette().color(QPalette.ColorRole.Base))
    p = QPainter(img)
    try:
        if clip is not None:
            p.setClipRect(clip)  # as a widget's paint event is clipped to its rectangle
        view.paint(p, width, height, clip)
    finally:
        p.end()
    return img


def _inside(band: QRect, height: int) -> QRect:
    """`band` less a row's height along a cut edge: Qt itself draws a few pixels differently where a
    clip cuts a glyph or a dashed outline (it restarts the dashes at the clip), whatever paints."""
    cut_top = 14 if band.top() > 0 else 0
    cut_bottom = 14 if band.bottom() < height - 1 else 0
    return band.adjusted(0, cut_top, 0, -cut_bottom)


def _count_snapshots(monkeypatch) -> list[int]:
    counter = [0]
    real = timeline_module._Track.snapshot

    def snapshot(self, lane, pointer):  # noqa: ANN001, ANN202
        counter[0] += 1
        return real(self, lane, pointer)

    monkeypatch.setattr(timeline_module._Track, "snapshot", snapshot)
    return counter


def test_a_clipped_paint_visits_the_same_bars_however_many_rows_lie_outside_it(qtbot, monkeypatch):
    model = _model(20)
    view = TimelineView(model, clock=lambda: 20.0)
    qtbot.addWidget(view)
    snapshots = _count_snapshots(monkeypatch)
    band = QRectF(0, 300, 900, 200)  # a few groups in the middle, as a scrolled dock shows them
    _paint(view, 900, view.content_height(), band)
    visited = snapshots[0]
    assert 0 < visited < 20 * len(LANES)  # only the groups the band reaches
    _add_fields(model, 0, 500)  # the run goes on: many more rows, all below the band
    snapshots[0] = 0
    _paint(view, 900, view.content_height(), band)
    assert snapshots[0] == visited


def test_a_paint_reads_the_rows_only_when_they_changed(qtbot, monkeypatch):
    model = _model(40, stopped=False)
    view = TimelineView(model, clock=lambda: 20.0)
    qtbot.addWidget(view)
    _paint(view, 900, 400, QRectF(200, 0, 700, 400))
    reads = [0]
    real = TimelineModel.fields

    def fields(self):  # noqa: ANN001, ANN202
        reads[0] += 1
        return real.fget(self)

    monkeypatch.setattr(TimelineModel, "fields", property(fields))
    for i in range(5):  # frame ticks while bars grow and change state on rows already there
        model.record("naive", f"/items/{i}/sku", "pending", 11.0 + i)
        _paint(view, 900, 400, QRectF(200, 0, 700, 400))
    assert reads[0] == 0  # no copy of the field list per paint (nor per change)
    _add_fields(model, 0, 1)  # a new row: the geometry is made again, once
    _paint(view, 900, 400, QRectF(200, 0, 700, 400))
    _paint(view, 900, 400, QRectF(200, 0, 700, 400))
    assert reads[0] == 1


def test_clipped_paints_are_the_whole_pictures_pixels(qtbot):
    for stopped in (True, False):
        view = TimelineView(_model(30, stopped=stopped), clock=lambda: 20.0)
        qtbot.addWidget(view)
        width, height = 900, view.content_height()
        whole = _paint(view, width, height, None)
        x0 = int(view.layout_for(width, height).x0)
        bands = [QRect(0, 0, width, 120), QRect(x0 - 1, 137, width - x0 + 1, 251), QRect(x0 - 1, 0, width - x0 + 1, height),
                 QRect(x0 - 1, 503, width - x0 + 1, 170), QRect(0, height - 90, width, 90), QRect(50, 61, 300, 7),
                 QRect(0, 252, width, 300)]
        for band in bands:
            part = _paint(view, width, height, QRectF(band))
            inside = _inside(band, height)
            assert part.copy(inside) == whole.copy(inside), (stopped, band)


def test_a_scrolled_widget_paints_what_its_whole_picture_shows_there(qtbot):
    view = TimelineView(_model(40), clock=lambda: 20.0)
    qtbot.addWidget(view)
    view.resize(800, view.content_height())
    view.show()
    qtbot.waitExposed(view)
    QApplication.processEvents()
    whole = view.grab().toImage()
    for band in (QRect(0, 400, 800, 180), QRect(0, 896, 800, 264), QRect(0, 0, 800, 60)):  # (a grab's brush
        # patterns start at its own left edge: bands as wide as the widget)
        inside = _inside(band, view.height())
        assert view.grab(band).toImage().copy(inside.translated(0, -band.top())) == whole.copy(inside), band


def _shown_running(qtbot, clock: list[float]) -> tuple[TimelineModel, TimelineView]:
    """A shown view of twelve fields' running lanes, its clock `clock[0]`."""
    model = _model(12, stopped=False)
    view = TimelineView(model, clock=lambda: clock[0])
    qtbot.addWidget(view)
    view.resize(900, view.content_height())
    view.show()
    qtbot.waitExposed(view)
    QApplication.processEvents()
    return model, view


def test_frame_ticks_spare_the_legend_and_the_window_shows_the_whole_picture(qtbot, monkeypatch):
    """A frame tick repaints the plot (bars grow, the axis rescales) but not the legend, which no
    frame changes; what the window shows after the ticks is the picture painted whole."""
    clock = [12.0]
    model, view = _shown_running(qtbot, clock)
    legends = [0]
    real = TimelineView._paint_legend
    monkeypatch.setattr(TimelineView, "_paint_legend", lambda self, *a: (legends.__setitem__(0, legends[0] + 1), real(self, *a))[1])
    paints = [0]
    real_paint = view.paint
    view.paint = lambda *a: (paints.__setitem__(0, paints[0] + 1), real_paint(*a))[1]
    for i in range(8):  # frames while the lanes run: open bars grow, the axis' seconds change
        clock[0] += 0.7
        model.record("naive", f"/items/{i}/sku", "pending", clock[0] - 0.1)
        view._tick()
        QApplication.processEvents()
    assert paints[0] >= 8 and legends[0] == 0
    shown = QApplication.primaryScreen().grabWindow(view.winId()).toImage()
    whole = view.grab().toImage().convertToFormat(shown.format())
    legend = view._legend_box()
    assert legend is not None and legend.height() >= 16
    # the legend, and the plot right of its first axis label (which straddles the ticks' left
    # edge: Qt draws a clipped glyph's edge a little differently there, before this change too)
    x0 = int(view.layout_for(view.width()).x0)
    for part in (legend, QRect(x0 + 12, 0, view.width() - x0 - 12, view.height()), QRect(0, legend.height(), x0 - 12, view.height())):
        assert shown.copy(part) == whole.copy(part), part


class _CountingPainter(QPainter):
    """Notes the rectangle of every text drawn."""

    def __init__(self, device) -> None:  # noqa: ANN001
        super().__init__(device)
        self.texts: list[QRectF] = []

    def drawText(self, *args) -> None:  # noqa: ANN002, N802 - Qt override
        if isinstance(args[0], (QRectF, QRect)):
            self.texts.append(QRectF(args[0]))
        super().drawText(*args)


def test_a_frame_ticks_rectangle_draws_no_label_left_of_the_plot(qtbot):
    """A tick repaints from x0 - 1: the field and lane labels (which end before x0) are not drawn."""
    view = TimelineView(_model(30, stopped=False), clock=lambda: 20.0)
    qtbot.addWidget(view)
    width, height = 900, 500
    x0 = view.layout_for(width, height).x0
    img = QImage(width, height, QImage.Format.Format_ARGB32)
    p = _CountingPainter(img)
    try:
        clip = QRectF(x0 - 1, 0, width - x0 + 1, height)  # the rectangle `_tick` updates
        p.setClipRect(clip)
        view.paint(p, width, height, clip)
    finally:
        p.end()
    left_of_plot = [r for r in p.texts if r.right() < x0 - 1 and r.top() >= 46]  # (below the legend and axis)
    assert p.texts and left_of_plot == []


def test_the_axis_holds_its_span_while_a_run_goes_on_and_shows_the_whole_run_once_it_ended():
    from livefill.widgets.timeline_geometry import running_span

    assert [round(running_span(t), 9) for t in (0.1, 0.5, 0.55, 1.0, 1.1, 2.6, 7.3, 9.0, 13.0)] == [0.5, 0.5, 0.6, 1.0, 1.25, 3.0, 8.0, 10.0, 15.0]
    tl = _model(3, stopped=False)
    view = TimelineView(tl, clock=lambda: 16.9)  # 6.9 s into the run
    assert view.layout_for(900).t_max == 8.0  # 6.9 × 1.04 = 7.18: the span stays 8 s until 7.69 s
    for lane in LANES:
        tl.stop(lane, 16.9, "committed")
    assert abs(view.layout_for(900).t_max - 6.9 * 1.04) < 1e-9  # ended: the whole run, as before


def test_a_frame_repaints_only_where_bars_changed_while_the_span_holds(qtbot):
    """While the axis' span holds a frame tick repaints the columns from the last frame's time (or
    an earlier change's: a value replayed from a worker process is recorded at the time it was
    read) to now, not the plot; what the window shows is still the picture painted whole."""
    clock = [16.0]
    model, view = _shown_running(qtbot, clock)
    clips: list[QRectF] = []
    real_paint = view.paint
    view.paint = lambda p, w, h, clip=None: (clips.append(clip), real_paint(p, w, h, clip))[1]
    view._tick()  # noqa: SLF001 - the first frame: the plot
    QApplication.processEvents()
    lay = view.layout_for(view.width())
    assert lay.t_max == 8.0
    plot_width = view.width() - lay.x0
    clips.clear()
    for i in range(6):  # 6.0 s .. 6.9 s into the run: the span stays 8 s
        clock[0] += 0.15
        model.record("naive", f"/items/{i}/sku", "settled", clock[0] - 0.05)
        if i == 3:  # replayed late: recorded at 0.6 s before the last frame
            model.record("settled", "/items/3/sku", "provisional", clock[0] - 0.75)
        view._tick()  # noqa: SLF001
        QApplication.processEvents()
    assert view.layout_for(view.width()).t_max == 8.0 and len(clips) >= 6
    widths = sorted(c.width() for c in clips)
    assert widths[0] < plot_width / 10  # a frame is a strip of the plot ...
    assert widths[-1] > (lay.x(0.75) - lay.x0) * 0.9  # ... from the replayed change, when there was one
    shown = QApplication.primaryScreen().grabWindow(view.winId()).toImage()
    whole = view.grab().toImage().convertToFormat(shown.format())
    x0 = int(lay.x0)
    part = QRect(x0 + 12, 0, view.width() - x0 - 12, view.height())
    differ = [(x, y) for y in range(part.top(), part.bottom() + 1) for x in range(part.left(), part.right() + 1)
              if shown.pixel(x, y) != whole.pixel(x, y)]
    assert not differ, f"{len(differ)} pixels differ, from {differ[:5]}"  # (a rectangle's dashes: 1,146 px)
