"""The metrics table tells its view once a refresh, whatever number of cells changed.

Each QTableWidgetItem.setText tells the view on its own (a header layout pass each: ~0.5 ms a
cell, a dozen cells a refresh while three lanes stream); a refresh now writes its cells quietly
and tells the view one change of the block. Counted in the model's dataChanged signals; the
picture is the one a table refreshed once at the end shows.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from livefill.session.metrics import LaneMetrics
from livefill.widgets.metrics_table import MetricsTable

FINAL = {"items": [{"sku": f"S-{i}", "qty": i} for i in range(40)]}


def _lanes() -> list[tuple[str, LaneMetrics]]:
    lanes = [(title, LaneMetrics(final=FINAL)) for title in ("naive", "partial", "settled")]
    for _, m in lanes:
        m.start(0.0)
    return lanes


def _stream(lanes, step: int) -> None:  # noqa: ANN001
    for k, (_, m) in enumerate(lanes):
        m.display(f"/items/{step}/sku", f"S-{step}"[: 2 + k], provisional=k == 1, t=0.1 * step)
        m.display(f"/items/{step}/qty", step, provisional=False, t=0.1 * step + 0.01)
        m.set_facts(deltas=step * 5 + k, bytes=step * 120)


def test_a_refresh_tells_the_view_once_however_many_cells_changed(qtbot):
    lanes = _lanes()
    table = MetricsTable(refresh_ms=10_000)  # refreshed by hand here
    qtbot.addWidget(table)
    table.set_lanes(lanes)
    signals = []
    table.model().dataChanged.connect(lambda *args: signals.append(args))
    for step in range(1, 6):
        before = [table.cell_text(key, lane) for key in ("displays", "wire", "first_value") for lane in range(3)]
        _stream(lanes, step)
        signals.clear()
        table.refresh()
        after = [table.cell_text(key, lane) for key in ("displays", "wire", "first_value") for lane in range(3)]
        assert sum(a != b for a, b in zip(before, after)) >= 6  # many cells changed...
        assert len(signals) == 1  # ...told once
    signals.clear()
    table.refresh()  # nothing changed: nothing told
    assert signals == []


def test_a_table_refreshed_at_every_step_shows_what_one_refreshed_once_does(qtbot):
    """The one change told covers every cell written: nothing on screen is left stale."""
    lanes = _lanes()
    tables = []
    for _ in range(2):
        table = MetricsTable(refresh_ms=10_000)
        qtbot.addWidget(table)
        table.set_lanes(lanes)
        table.resize(900, table.height())
        table.show()
        qtbot.waitExposed(table)
        tables.append(table)
    each, once = tables
    for step in range(1, 8):
        _stream(lanes, step)
        each.refresh()
        QApplication.processEvents()
    lanes[0][1].finish(1.0, "stopped")
    lanes[1][1].finish(1.1, "committed")
    each.refresh()
    once.refresh()
    QApplication.processEvents()
    assert each.cell_text("outcome", 0).startswith("stopped") and each.cell_text("displays", 2) == "14"
    assert [each.rowHeight(r) for r in range(each.rowCount())] == [once.rowHeight(r) for r in range(once.rowCount())]
    assert _on_screen(each) == _on_screen(once)


def _on_screen(table: MetricsTable):  # noqa: ANN202
    """What the window shows (its backing store), not a fresh rendering of it like `grab()`."""
    QApplication.processEvents()
    return QApplication.primaryScreen().grabWindow(table.winId()).toImage()
