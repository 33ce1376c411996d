"""No stale state after a change: a lane's status and figures describe what it shows now.

Issue 26, item 7: loading a recording emptied the compare lanes, but each still said "✓ committed —
server finished: 213 of 213 tokens" and the scoreboard kept the old figures; an old red "✗ failed
— …" status line stayed above newer messages across scenario switches and runs. Another document,
a recording, another mode, a clear or a run of the other view make the lanes "ready" with empty
figures; Undo of a clear puts the run back with the form.
"""

from __future__ import annotations

from livefill.session.run_status import Phase
from livefill.widgets.metrics_table import ROWS
from tests.gui.conftest import arun, wait_until
from tests.gui.test_scoreboard_truth import MENU_TEXT, recording_action

READY_LINE = "○ ready — press Start (Ctrl+Return)"


def run_to_the_end(window, qloop) -> None:
    async def scenario():
        window.start()
        await wait_until(lambda: not window.active and all(
            s is not None and s.phase.final for s in window.last_statuses()), timeout=30)

    arun(qloop, scenario())


def lane_looks_ready(lane) -> list[str]:
    """What on `lane` still tells of a run (empty: nothing)."""
    stale = []
    if lane.status_label.text() != "○ ready" or lane.status_label.property("phase") != "ready":
        stale.append(f"status {lane.status_label.text()!r}")
    if lane.last_status is not None:
        stale.append(f"last status {lane.last_status.phase}")
    if lane.header.outcome_label.text():
        stale.append(f"outcome {lane.header.outcome_label.text()!r}")
    if lane.header.property("neverTrue"):
        stale.append("red card")
    return stale


def table_column(view, col: int) -> dict[str, str]:
    view.metrics_table.refresh()
    return {key: view.metrics_table.cell_text(key, col)
            for key, _, _ in ROWS}


EMPTY_COLUMN = {key: "—" for key, _, _ in ROWS} | {"outcome": "— not run yet"}


def test_loading_a_recording_leaves_no_lane_saying_committed_and_no_old_figures(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"], provider="anthropic")
    view = window.compare_view
    run_to_the_end(window, qloop)
    assert all(lane.status_label.text().startswith("✓ committed") for lane in view.lanes)
    assert table_column(view, 0)["never_true"].startswith("⚠ ")

    recording_action(window, MENU_TEXT).trigger()  # File → Recordings → the real model's invoice
    assert window.session.replay is not None
    for lane in view.lanes:
        assert lane_looks_ready(lane) == [], lane.title
        assert lane.form.document == {}  # the lanes show the recording's document, empty
    assert [table_column(view, i) for i in range(3)] == [EMPTY_COLUMN] * 3
    line = window.status_line.text()
    assert line.startswith("compare · 3 lanes") and "committed" not in line and "naive: ready" in line, line
    assert window.status_line.property("phase") == "ready"


def test_a_failed_run_does_not_stay_on_the_status_line_after_a_scenario_switch(make_window, qloop):
    window = make_window(provider="anthropic", fault="disconnect@0.3")
    run_to_the_end(window, qloop)
    assert window.status_line.text().startswith("✗ failed") and window.status_line.property("phase") == "failed"

    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("weather"))
    assert window.session.settings.scenario == "weather"
    assert window.status_line.text() == READY_LINE and window.status_line.property("phase") == "ready"


def test_a_failed_single_run_does_not_stay_above_a_newer_compare_run(make_window, qloop):
    window = make_window(provider="anthropic", fault="disconnect@0.3")
    run_to_the_end(window, qloop)
    assert window.controller.last_status.phase is Phase.FAILED
    window.set_fault(None)
    window.compare_action.trigger()  # Compare (Ctrl+K)
    assert window.comparing
    run_to_the_end(window, qloop)
    window.compare_action.trigger()  # back to the single form
    assert not window.comparing
    assert window.status_line.text() == READY_LINE, window.status_line.text()
    assert "committed" in window.run_log.lines()[-1]  # the newest message is the compare run's


def test_clear_all_lanes_empties_the_scoreboard_and_undo_puts_the_run_back(make_window, qloop):
    window = make_window(compare=["naive", "partial"], provider="anthropic")
    view = window.compare_view
    run_to_the_end(window, qloop)

    async def noted():  # the server's own count comes a moment after the run ends
        await wait_until(lambda: all("server finished" in lane.status_label.text() for lane in view.lanes))

    arun(qloop, noted())
    before = [table_column(view, i) for i in range(2)]
    statuses = [lane.status_label.text() for lane in view.lanes]
    assert before[0]["outcome"].startswith("committed")

    window.clear_action.trigger()  # Edit → Clear all lanes
    for lane in view.lanes:
        assert lane_looks_ready(lane) == [], lane.title
    assert [table_column(view, i) for i in range(2)] == [EMPTY_COLUMN] * 2
    assert window.status_line.property("phase") == "ready"

    window.undo_action.trigger()  # the form as the run left it, and the run with it

    async def flushed():
        await wait_until(lambda: all(lane.status_label.text().startswith("✓ committed") for lane in view.lanes))

    arun(qloop, flushed())
    assert [lane.status_label.text() for lane in view.lanes] == statuses
    assert [table_column(view, i) for i in range(2)] == before
    assert "committed" in window.status_line.text()


def test_another_mode_for_a_lane_drops_that_lanes_figures(make_window, qloop):
    window = make_window(compare=["naive", "partial"], provider="anthropic")
    view = window.compare_view
    run_to_the_end(window, qloop)
    kept = table_column(view, 0)
    lane = view.lane(1)
    lane.mode_combo.setCurrentIndex(lane.mode_combo.findData("blocking"))
    lane = view.lane(1)  # (the view may make the lane anew)
    assert lane.mode.value == "blocking"
    assert lane_looks_ready(lane) == []
    assert table_column(view, 1) == EMPTY_COLUMN
    assert table_column(view, 0) == kept  # the naive lane's run still describes what it shows
