"""widgets/metrics_table.py: every lane's figures side by side."""

from __future__ import annotations

from livefill.session.metrics import LaneMetrics
from livefill.widgets.metrics_table import ROWS, MetricsTable

FINAL = {"customer_name": "Martinez SA", "amount": 1200}


def _lanes():
    naive, partial, settled = (LaneMetrics(final=FINAL) for _ in range(3))
    for m in (naive, partial, settled):
        m.start(0.0)
    naive.display("/customer_name", "Mar", provisional=False, t=0.1)
    naive.display("/amount", 12, provisional=False, t=0.2)
    partial.display("/customer_name", "Mar", provisional=True, t=0.1)
    partial.display("/customer_name", "Martinez SA", provisional=False, t=0.4)
    settled.display("/amount", 1200, provisional=False, t=0.5)
    return [("naive", naive), ("partial", partial), ("settled", settled)]


def test_the_table_lists_each_lanes_figures_side_by_side(qtbot):
    table = MetricsTable(refresh_ms=5)
    qtbot.addWidget(table)
    lanes = _lanes()
    table.set_lanes(lanes)
    assert table.columnCount() == 3 and table.rowCount() == len(ROWS)
    assert [table.horizontalHeaderItem(i).text() for i in range(3)] == ["naive", "partial", "settled"]
    assert [table.cell_text("never_true", i) for i in range(3)] == ["⚠ 2", "0", "0"]
    assert [table.cell_text("provisional_changed", i) for i in range(3)] == ["0", "1", "0"]
    assert [table.cell_text("first_value", i) for i in range(3)] == ["0.10 s", "0.10 s", "0.50 s"]
    assert table.cell_text("all_settled", 2) == "—" and table.cell_text("outcome", 0) == "running…"
    never_true = [key for key, _, _ in ROWS].index("never_true")
    assert table.item(never_true, 0).font().bold() and not table.item(never_true, 1).font().bold()


def test_the_table_follows_the_metrics(qtbot):
    table = MetricsTable(refresh_ms=5)
    qtbot.addWidget(table)
    lanes = _lanes()
    table.set_lanes(lanes)
    settled = lanes[2][1]
    settled.display("/customer_name", "Martinez SA", provisional=False, t=0.75)
    settled.finish(1.0, "committed")
    qtbot.waitUntil(lambda: table.cell_text("all_settled", 2) == "0.75 s", timeout=2000)
    assert table.cell_text("outcome", 2) == "committed (1.00 s)"


def test_a_lane_that_has_not_run_says_so_not_running(qtbot):
    table = MetricsTable(refresh_ms=5)
    qtbot.addWidget(table)
    fresh, started = LaneMetrics(final=FINAL), LaneMetrics(final=FINAL)
    table.set_lanes([("naive", fresh), ("partial", started)])
    assert [table.cell_text("outcome", i) for i in range(2)] == ["— not run yet", "— not run yet"]
    assert [table.cell_text(key, 0) for key in ("never_true", "provisional_changed", "displays")] == ["—"] * 3
    started.start(0.0)
    qtbot.waitUntil(lambda: table.cell_text("outcome", 1) == "running…", timeout=2000)
    assert table.cell_text("outcome", 0) == "— not run yet"
