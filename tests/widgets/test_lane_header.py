"""widgets/lane_header.py: mode, live note and live metrics of a lane."""

from __future__ import annotations

from livefill.session.metrics import LaneMetrics
from livefill.widgets.lane_header import LIVE_NOTE, LaneHeader

FINAL = {"customer_name": "Martinez SA", "amount": 1200}


def test_naive_header_says_incorrect_on_purpose_and_counts_never_true(qtbot):
    m = LaneMetrics(final=FINAL)
    m.start(0.0)
    h = LaneHeader(m, mode="naive", refresh_ms=5)
    qtbot.addWidget(h)
    assert "incorrect on purpose" in h.about_label.text() and "⚠" in h.title_label.text()
    m.display("/customer_name", "Mar", provisional=False, t=0.25)
    m.display("/amount", 12, provisional=False, t=0.5)
    qtbot.waitUntil(lambda: "⚠ 2" in h.counts_label.text(), timeout=2000)
    assert "first value 0.25 s" in h.times_label.text() and "all settled —" in h.times_label.text()
    assert h.property("neverTrue") is True and h.property("mode") == "naive"


def test_header_keeps_the_final_figures_after_the_run(qtbot):
    m = LaneMetrics(final=FINAL)
    m.start(10.0)
    h = LaneHeader(m, mode="settled", refresh_ms=5)
    qtbot.addWidget(h)
    m.display("/amount", 1200, provisional=False, t=10.5)
    m.display("/customer_name", "Martinez SA", provisional=False, t=11.0)
    m.finish(11.25, "committed")
    qtbot.waitUntil(lambda: "committed" in h.outcome_label.text(), timeout=2000)
    assert "all settled 1.00 s" in h.times_label.text()
    assert "✓ 0" in h.counts_label.text() and "provisional, later changed: 0" in h.counts_label.text()
    assert h.outcome_label.text() == "committed after 1.25 s" and h.property("finished") is True


def test_live_note_only_for_a_live_provider(qtbot):
    h = LaneHeader(None, mode="partial", live=True)
    qtbot.addWidget(h)
    h.show()
    assert h.live_label.isVisible() and h.live_label.text() == LIVE_NOTE
    h.set_live(False)
    assert not h.live_label.isVisible()
    assert h.times_label.text() == "first value — · all settled —"


def test_switching_metrics_unsubscribes_the_old_ones(qtbot):
    a, b = LaneMetrics(), LaneMetrics()
    h = LaneHeader(a, mode="partial", refresh_ms=5)
    qtbot.addWidget(h)
    h.set_metrics(b)
    a.start(0.0)
    a.display("/x", "never shown here", provisional=False, t=1.0)
    b.start(0.0)
    qtbot.wait(30)
    assert "first value —" in h.times_label.text()
