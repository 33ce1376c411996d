"""widgets/timeline.py: bars per field per lane, painted with QPainter and exported as PNG."""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage

from livefill.session.timeline import TimelineModel
from livefill.widgets.timeline import STATE_COLORS, TimelineView

FIELDS = ["/customer_name", "/amount", "/notes"]


def _model() -> TimelineModel:
    tl = TimelineModel()
    for lane in ("naive", "partial", "settled"):
        tl.add_lane(lane)
    tl.set_fields(FIELDS)
    tl.start(50.0)
    tl.record("partial", "/customer_name", "pending", 50.2)
    tl.record("partial", "/customer_name", "provisional", 50.6)
    tl.record("partial", "/customer_name", "settled", 51.4)
    tl.record("settled", "/customer_name", "settled", 51.5)
    tl.record("naive", "/amount", "provisional", 51.0)
    tl.record("partial", "/notes", "provisional", 51.2)  # never settles: cut by Stop
    for lane in ("naive", "partial", "settled"):
        tl.stop(lane, 52.0, "stopped")
    return tl


def _close(c: QColor, want: QColor, tol: int = 40) -> bool:
    return abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) <= tol


def test_export_writes_a_png_of_the_right_size(qtbot, tmp_path):
    view = TimelineView(_model(), clock=lambda: 52.0)
    qtbot.addWidget(view)
    path = tmp_path / "timeline.png"
    size = view.export_png(str(path), 900, 360)
    img = QImage(str(path))
    assert not img.isNull() and (img.width(), img.height()) == (900, 360) == (size.width(), size.height())
    default = view.export_png(str(tmp_path / "whole.png"))
    assert default.height() == view.content_height()


def test_bars_are_painted_where_the_model_says(qtbot):
    view = TimelineView(_model(), clock=lambda: 52.0)
    qtbot.addWidget(view)
    width = 900
    img = view.render_image(width)
    lay = view.layout_for(width)
    # x-axis: seconds from Start (t0 = 50.0); stop at 2.0 s
    y_name = lay.rows[("/customer_name", "partial")] + 7
    provisional_mid = lay.x((0.6 + 1.4) / 2)
    assert _close(img.pixelColor(round(provisional_mid), round(y_name)), STATE_COLORS["provisional"])
    # the pending span is drawn differently: hatched grey, not amber
    pending = [img.pixelColor(round(lay.x(0.2)) + dx, round(y_name) + dy) for dx in range(3, 20) for dy in (-3, 0, 3)]
    assert not any(_close(c, STATE_COLORS["provisional"]) for c in pending)
    assert any(_close(c, STATE_COLORS["pending"], 60) for c in pending)
    tones = {(c.red() // 24, c.green() // 24, c.blue() // 24) for c in pending}
    assert len(tones) >= 2, "pending is hatched (two tones), not a flat fill"
    provisional = [img.pixelColor(round(provisional_mid) + dx, round(y_name)) for dx in range(-8, 8)]
    assert len({(c.red(), c.green(), c.blue()) for c in provisional}) == 1, "provisional is a flat fill"
    # nothing before the field's first byte
    bg = img.pixelColor(round(lay.x(0.1)), round(y_name))
    assert not _close(bg, STATE_COLORS["provisional"]) and not _close(bg, STATE_COLORS["pending"], 30)
    # settle mark at 1.4 s
    assert _close(img.pixelColor(round(lay.x(1.4)), round(y_name)), STATE_COLORS["settled"], 60)
    # /notes provisional up to Stop, the Stop marker red at 2.0 s in every lane's row
    y_notes = lay.rows[("/notes", "partial")] + 7
    assert _close(img.pixelColor(round(lay.x(1.6)), round(y_notes)), STATE_COLORS["provisional"])
    for lane in ("naive", "settled"):
        y = lay.rows[("/amount", lane)] + 4
        reds = [img.pixelColor(round(lay.x(2.0)) + dx, round(y) + dy) for dx in (-1, 0, 1) for dy in range(0, 8)]
        assert any(_close(c, STATE_COLORS["stop"], 60) for c in reds), lane
    # a lane with no bar for a field paints nothing there
    y_empty = lay.rows[("/amount", "partial")] + 7
    assert not _close(img.pixelColor(round(lay.x(1.5)), round(y_empty)), STATE_COLORS["provisional"])


def test_bar_rect_follows_the_model(qtbot):
    view = TimelineView(_model(), clock=lambda: 52.0)
    qtbot.addWidget(view)
    view.resize(800, view.content_height())
    lay = view.layout_for(800)
    r = view.bar_rect("/customer_name", "partial")
    assert abs(r.left() - lay.x(0.2)) < 0.5 and abs(r.right() - lay.x(1.4)) < 0.5
    assert view.bar_rect("/amount", "partial") is None


def test_rows_grow_with_fields_and_lanes_and_repaint_on_change(qtbot):
    tl = TimelineModel(["a"])
    view = TimelineView(tl)
    qtbot.addWidget(view)
    h0 = view.content_height()
    tl.record("a", "/x", "pending", 0.1)
    tl.record("a", "/y", "pending", 0.1)
    assert view.content_height() > h0
    assert view._timer.isActive()  # a running lane animates open bars
    tl.stop("a", 1.0)
    assert not view._timer.isActive()


def test_an_empty_timeline_still_paints(qtbot):
    view = TimelineView(None)
    qtbot.addWidget(view)
    img = view.render_image(400, 150)
    assert img.width() == 400


def _many_fields_model(n: int = 24) -> TimelineModel:
    tl = TimelineModel(["naive", "partial", "settled"])
    fields = [f"/items/{i}/sku" for i in range(n)]
    tl.set_fields(fields)
    tl.start(0.0)
    for i, f in enumerate(fields):
        for lane in tl.lanes:
            tl.record(lane, f, "provisional", 0.1 * i)
            tl.record(lane, f, "settled", 0.1 * i + 0.05)
    return tl


def test_a_clipped_paint_draws_only_the_rows_it_exposes_and_the_same_pixels(qtbot, monkeypatch):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPainter

    view = TimelineView(_many_fields_model(), clock=lambda: 3.0)
    qtbot.addWidget(view)
    w, h = 800, view.content_height()
    calls = []
    real = TimelineView._paint_segment
    monkeypatch.setattr(TimelineView, "_paint_segment", lambda self, *a: (calls.append(a), real(self, *a))[1])

    def paint(clip):
        img = QImage(w, h, QImage.Format.Format_ARGB32)
        img.fill(0)
        p = QPainter(img)
        if clip is not None:
            p.setClipRect(clip)
        view.paint(p, w, h, clip)
        p.end()
        return img

    full = paint(None)
    n_full = len(calls)
    calls.clear()
    strip = QRectF(0, h * 0.6, w, 120)
    part = paint(strip)
    assert 0 < len(calls) < n_full / 3  # only the rows in the strip (plus the legend's swatches: none)
    for y in range(int(strip.top()) + 1, int(strip.bottom()) - 1, 7):
        for x in range(0, w, 13):
            assert part.pixel(x, y) == full.pixel(x, y), (x, y)


def test_new_data_asks_for_a_new_size_only_when_rows_change(qtbot, monkeypatch):
    model = _many_fields_model(4)
    view = TimelineView(model, clock=lambda: 3.0)
    qtbot.addWidget(view)
    asked = []
    monkeypatch.setattr(view, "updateGeometry", lambda: asked.append(1))
    model.start(0.0)
    model.record("partial", "/items/0/sku", "provisional", 0.5)
    model.record("partial", "/items/0/sku", "settled", 0.7)
    assert asked == []
    model.record("partial", "/items/9/sku", "provisional", 0.8)  # a field not seen yet: a new row
    assert asked == [1]


def test_ticks_are_written_exactly_and_an_end_line_says_how_the_run_ended():
    # Quarter-second ticks read 0.0 / 0.2 / 0.5 / 0.8; a run that failed was marked "Stop".
    from livefill.widgets.timeline import _decimals, _end_word

    assert [f"{k * 0.25:.{_decimals(0.25)}f}" for k in range(4)] == ["0.00", "0.25", "0.50", "0.75"]
    assert (_decimals(1.0), _decimals(0.5), _decimals(0.2), _decimals(0.05)) == (0, 1, 1, 2)
    assert (_end_word("committed"), _end_word("stopped"), _end_word("failed: HTTP 400")) == ("end", "Stop", "failed")


def test_the_seconds_unit_never_covers_the_last_tick_label(qtbot, monkeypatch, tmp_path):
    # At 260 px the axis read "2s": the unit was drawn at a fixed place, over the last label.
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFontMetrics, QPainter

    drawn: list[tuple[QRectF, str]] = []
    real = QPainter.drawText

    def recording(self, *args):  # noqa: ANN001, ANN002, ANN202
        if len(args) == 3 and isinstance(args[0], QRectF) and isinstance(args[2], str):
            drawn.append((QRectF(args[0]), args[2], QFontMetrics(self.font()).horizontalAdvance(args[2])))
        return real(self, *args)

    monkeypatch.setattr(QPainter, "drawText", recording)
    view = TimelineView(_model(), clock=lambda: 52.0)
    qtbot.addWidget(view)
    for width in (260, 330, 900):
        drawn.clear()
        view.export_png(str(tmp_path / f"t{width}.png"), width, 200)
        unit = next(rect for rect, text, _w in drawn if text == "s")
        labels = [(rect, w) for rect, text, w in drawn if text.replace(".", "").isdigit() and rect.top() == unit.top()]
        assert labels
        last_right = max(rect.center().x() + w / 2 for rect, w in labels)
        assert unit.left() >= last_right + 2, (width, unit.left(), last_right)
