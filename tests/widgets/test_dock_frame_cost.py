"""The docks during a run: a frame's work is what arrived since the last frame, never the whole run.

The wire inspector polls its recorder once a tick; what one tick costs must not grow with the
reads, frames and fields the run has already shown (the field list of a long document holds
thousands of pointers). The timeline repaints on its frame timer while a lane runs, whatever the
model did in between. Work is counted in calls and items, not timed.
"""

from __future__ import annotations

import random

from PySide6.QtWidgets import QApplication

from livefill.extraction.scenarios import get_scenario
from livefill.recording.wiretap import WireRecorder
from livefill.session.timeline import TimelineModel
from livefill.widgets.timeline import TimelineView
from livefill.widgets.wire_inspector import WireInspector
from tests.recording.test_wiretap import anthropic_wire, split_text


def _catalog_wire():
    sc = get_scenario("catalog")
    return anthropic_wire(split_text(sc.output_text, random.Random(5), most=6))


def _counting(monkeypatch, rec: WireRecorder, inspector: WireInspector) -> dict[str, int]:
    """Count, per refresh, the pointers asked of the recorder and the reads rendered."""
    counts = {"pointers": 0, "reads": 0}
    real_pointers, real_append = rec.pointers, inspector.byte_view.append_reads

    def pointers(*args, **kwargs):
        out = real_pointers(*args, **kwargs)
        counts["pointers"] += len(out)
        return out

    def append_reads(reads):
        batch = list(reads)
        counts["reads"] += len(batch)
        return real_append(batch)

    monkeypatch.setattr(rec, "pointers", pointers)
    monkeypatch.setattr(inspector.byte_view, "append_reads", append_reads)
    return counts


class _Player:
    """Feeds a wire to a recorder as a transport does, one read at a time (frames once their bytes are in)."""

    def __init__(self, rec: WireRecorder, wire, step: int) -> None:  # noqa: ANN001
        self.rec, self.wire, self.step = rec, wire, step
        self.pos = self.frame = 0

    def read(self) -> bool:
        data, frames = self.wire.data, self.wire.frames
        if self.pos >= len(data):
            return False
        self.rec.on_read(data[self.pos : self.pos + self.step])
        self.pos = min(len(data), self.pos + self.step)
        while self.frame < len(frames) and frames[self.frame][0] <= self.pos:
            _, frame, events = frames[self.frame]
            self.rec.on_frame(frame)
            for event in events:
                self.rec.on_event(event)
            self.frame += 1
        return True


def test_an_inspector_tick_costs_what_arrived_not_the_fields_already_shown(qtbot, monkeypatch):
    wire = _catalog_wire()
    rec = WireRecorder()
    inspector = WireInspector(recorder=rec)
    qtbot.addWidget(inspector)
    player = _Player(rec, wire, 64)
    while player.pos < len(wire.data) * 9 // 10:  # most of a long run, shown tick by tick
        player.read()
        if player.frame % 20 == 0:
            inspector.refresh()
    inspector.refresh()
    assert len(rec.pointers()) > 300  # the run has shown many fields already
    counts = _counting(monkeypatch, rec, inspector)
    per_tick = []
    for _ in range(10):  # ten more ticks, one read each
        counts.update(pointers=0, reads=0)
        player.read()
        inspector.refresh()
        per_tick.append(dict(counts))
    assert all(t == {"pointers": 0, "reads": 1} for t in per_tick), per_tick


def test_the_field_list_is_whole_once_opened_and_follows_while_open(qtbot):
    from tests.recording.test_wiretap import play, random_cuts

    rng = random.Random(3)
    sc = get_scenario("invoice")
    wire = anthropic_wire(split_text(sc.output_text, rng, most=5))
    rec = WireRecorder()
    play(rec, wire, random_cuts(len(wire.data), rng, most=70))
    inspector = WireInspector(recorder=rec)
    qtbot.addWidget(inspector)
    inspector.show()
    combo = inspector.field_combo
    combo.showPopup()  # as a user opens it
    items = [combo.itemData(i) for i in range(combo.count())]
    assert items == ["", *rec.pointers()]
    combo.hidePopup()


def _running_model(fields: int = 8) -> TimelineModel:
    tl = TimelineModel(["naive", "partial", "settled"])
    pointers = [f"/items/{i}/sku" for i in range(fields)]
    tl.set_fields(pointers)
    tl.start(0.0)
    for lane in tl.lanes:
        for pointer in pointers:
            tl.record(lane, pointer, "pending", 0.01)
    return tl


def test_the_timeline_paints_once_a_frame_while_a_lane_runs_whatever_the_model_did(qtbot):
    model = _running_model()
    view = TimelineView(model, clock=lambda: 1.0)
    qtbot.addWidget(view)
    view.resize(700, view.content_height())
    view.show()
    qtbot.waitExposed(view)
    paints = []
    real = view.paint
    view.paint = lambda *args: (paints.append(1), real(*args))[1]  # the instance's paint, as paintEvent calls it
    QApplication.processEvents()
    painted = len(paints)
    states = ("provisional", "pending")
    for i in range(300):  # a burst of transitions between two frames, on rows already there
        model.record(model.lanes[i % 3], f"/items/{i % 8}/sku", states[i % 2], 0.02 + i * 0.001)
    QApplication.processEvents()
    assert len(paints) == painted  # nothing painted for the changes themselves
    qtbot.waitUntil(lambda: len(paints) > painted, timeout=2000)  # the frame timer paints them


def test_a_timeline_frame_repaints_the_plot_only(qtbot):
    model = _running_model()
    view = TimelineView(model, clock=lambda: 1.0)
    qtbot.addWidget(view)
    view.resize(700, view.content_height())
    view.show()
    qtbot.waitExposed(view)
    rects = []
    real = view.paint

    def paint(p, width, height, clip=None):
        rects.append(clip)
        return real(p, width, height, clip)

    view.paint = paint  # the instance's paint, as paintEvent calls it
    QApplication.processEvents()
    rects.clear()
    qtbot.waitUntil(lambda: bool(rects), timeout=2000)
    x0 = view.layout_for(view.width()).x0
    assert all(r is not None and r.left() >= x0 - 2 for r in rects), (rects, x0)


def test_a_field_stays_highlighted_exactly_while_the_view_trims_its_oldest_reads(qtbot):
    """A selected field is highlighted on every tick; the view's index of its reads follows the
    appends and the trims (it is no longer rebuilt from every read on each tick)."""
    from tests.widgets.test_wire_inspector import _highlighted_bytes

    wire = _catalog_wire()
    rec = WireRecorder()
    inspector = WireInspector(recorder=rec, view_limit=4096)
    qtbot.addWidget(inspector)
    player = _Player(rec, wire, 48)
    pointer = None
    checked = 0
    while player.read():
        inspector.refresh()
        shown_from = inspector.byte_view.first_offset or 0
        pointers = rec.pointers()
        if pointer is None and len(pointers) > 40:
            pointer = pointers[-1]  # a field of the middle of the run; the view trims past it later
            inspector.select_pointer(pointer)
        if pointer is None:
            continue
        loc = rec.locate(pointer)
        if loc is not None and loc.spans and loc.spans[0].start >= shown_from:
            carried = b"".join(wire.data[s.start : s.end] for s in loc.spans)
            assert _highlighted_bytes(inspector) == carried, pointer
            checked += 1
    assert inspector.byte_view.skipped_bytes > 0 and checked > 10
