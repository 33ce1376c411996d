"""Compare lanes line up: a field sits at the same height in every lane.

The naive lane's banner pushed its rows ~54 px below the other lanes' (always at 1,920 px wide;
at 1,280 once a recording was loaded, which re-made the forms with the banner shown), and with
five lanes hybrid's and naive's explanations wrapped onto a second line and pushed their rows
lower again. Every field widget's top is mapped to the compare view and compared across lanes.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from livefill.gui.recordings import bundled_traces
from tests.gui.conftest import arun
from tests.gui.test_layout import settle, sized

THREE = ["naive", "partial", "settled"]
FIVE = ["naive", "partial", "settled", "hybrid", "blocking"]


def misaligned(window) -> dict[str, dict[str, tuple[int, int]]]:
    """The fields whose (top, height) in the compare view differ between lanes."""
    view = window.compare_view
    rows: dict[str, dict[str, tuple[int, int]]] = {}
    for lane in view.lanes:
        for pointer, widget in lane.form_view.fields.items():
            if widget.isVisibleTo(lane.form_view.widget()):
                rows.setdefault(pointer, {})[lane.title] = (widget.mapTo(view, QPoint(0, 0)).y(), widget.height())
    assert rows and all(len(by_lane) == len(view.lanes) for by_lane in rows.values())
    return {pointer: by_lane for pointer, by_lane in rows.items() if len(set(by_lane.values())) > 1}


@pytest.mark.parametrize("modes", [THREE, FIVE], ids=["three", "five"])
@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_every_field_sits_at_the_same_height_in_every_lane(make_window, modes, size):
    window = make_window(compare=modes)
    sized(window, *size)
    settle()
    assert misaligned(window) == {}


def test_rows_stay_lined_up_after_a_recording_is_loaded(make_window):
    window = make_window(compare=THREE)
    for size in ((1280, 720), (1920, 1080)):
        sized(window, *size)
        name, trace = bundled_traces()[0]
        assert window.recordings.open_trace(trace), name  # the lanes' forms are made anew
        settle()
        assert misaligned(window) == {}, size
        window.recordings.leave()
        settle()
        assert misaligned(window) == {}, size


def test_rows_stay_lined_up_through_a_run_of_five_lanes(make_window, qloop):
    window = make_window(compare=FIVE, speed=0)
    sized(window, 1920, 1080)

    async def run():
        window.start()
        await window.wait_runs()

    arun(qloop, run())
    window.refresh_now()  # the lane headers' final figures
    settle(12)
    assert all(status.phase.value == "committed" for status in window.last_statuses())
    assert misaligned(window) == {}


def test_rows_stay_lined_up_when_one_lane_is_dragged_narrower(make_window):
    # A lane dragged narrower put its labels over its values while the wider lanes kept theirs
    # beside them (every row of its form lower), and its header wrapped onto more lines. (A table's
    # column titles may still wrap in the narrow lane alone: the rows after the table are not compared.)
    window = make_window(compare=FIVE)
    sized(window, 1920, 1080)
    splitter = window.compare_view.splitter
    sizes = splitter.sizes()
    splitter.setSizes([sizes[0] + 2 * sizes[3] // 3, *sizes[1:3], sizes[3] // 3, sizes[4]])
    settle(12)
    widths = [lane.form_view.viewport().width() for lane in window.compare_view.lanes]
    assert max(widths) > 1.8 * min(widths)
    above_the_table = ["/customer_name", "/invoice_number", "/amount", "/currency", "/issue_date", "/due_date", "/paid", "/line_items"]
    off = misaligned(window)
    assert {p: {lane: top for lane, (top, _height) in off[p].items()} for p in above_the_table if p in off
            and len({top for top, _ in off[p].values()}) > 1} == {}
    assert not any(p in off for p in above_the_table[:-1])  # heights too
