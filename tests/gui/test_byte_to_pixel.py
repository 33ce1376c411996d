"""Byte-to-pixel latency in the compare view, against the real demo provider over loopback."""

from __future__ import annotations

import time

from tests.gui.conftest import arun, wait_until


def all_done(window):
    return lambda: not window.active and all(s is not None and s.phase.final for s in window.last_statuses())


def test_compare_lanes_measure_byte_to_pixel_and_the_table_shows_it(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"], provider="anthropic", speed=300)
    window.resize(1600, 1000)
    view = window.compare_view

    async def scenario():
        window.start()
        await wait_until(all_done(window), timeout=30)
        await wait_until(lambda: view.lanes[1].metrics.summary().painted > 0, timeout=5)

    arun(qloop, scenario())
    naive, partial, settled = (lane.metrics.summary() for lane in view.lanes)
    assert naive.byte_to_pixel is None and naive.painted == 0  # it shows no states
    for s in (partial, settled):
        assert s.byte_to_pixel is not None and s.painted > 0
        p50, p99, worst = s.byte_to_pixel
        assert 0 <= p50 <= p99 <= worst < 5.0
    # every measured latency is a paint after the read that carried the byte
    lane = view.lanes[1]
    assert all(x >= 0 for x in lane.metrics.latencies)
    view.metrics_table.refresh()
    assert view.metrics_table.cell_text("byte_to_pixel", 0) == "—"
    assert " ms / " in view.metrics_table.cell_text("byte_to_pixel", 1)


def test_a_stalled_gui_thread_shows_in_the_latency(make_window, qloop):
    """The GUI thread blocked for 120 ms after the bytes of the first values arrived: the values
    whose paint that delayed measure at least the part of the stall after their read."""
    window = make_window(compare=["partial", "settled"], provider="anthropic", speed=300)
    window.resize(1600, 1000)
    view = window.compare_view
    lane = view.lanes[0]
    stalled: list[float] = []

    def stall_once(event) -> None:  # noqa: ANN001 - a form update: block right after the first settled value
        if not stalled and any(lane.form.state(p).value == "settled" for p in event.pointers):
            stalled.append(time.monotonic())
            time.sleep(0.12)

    unsubscribe = lane.form.subscribe(stall_once)

    async def scenario():
        window.start()
        await wait_until(all_done(window), timeout=30)
        await wait_until(lambda: lane.metrics.summary().painted > 0, timeout=5)

    try:
        arun(qloop, scenario())
    finally:
        unsubscribe()
    assert stalled
    assert max(lane.metrics.latencies) >= 0.12
