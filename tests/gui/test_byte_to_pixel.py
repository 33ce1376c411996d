"""Byte-to-pixel latency in the compare view, against the real demo provider over loopback."""

from __future__ import annotations

import pytest

import asyncio
import time

from PySide6.QtWidgets import QApplication

from tests.gui.conftest import arun, wait_until


def _settle(rounds: int = 10) -> None:
    for _ in range(rounds):
        QApplication.instance().processEvents()


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


@pytest.mark.slow  # real seconds of streaming; CI runs it
def test_clear_then_undo_after_a_run_leaves_the_byte_to_pixel_figures_as_they_were(make_window, qloop):
    """Values that settled off screen are never measured; putting the form back later paints them,
    and that paint is not a latency of the run (it measured seconds)."""
    window = make_window(compare=["naive", "partial", "settled"], speed=300)
    window.resize(1280, 720)
    _settle()

    async def run() -> None:
        window.start()
        await wait_until(lambda: not window.active, timeout=30)
        await window.wait_runs()

    async def pause() -> None:
        await asyncio.sleep(0.3)

    arun(qloop, run())
    _settle()
    before = [lane.model.metrics.byte_to_pixel() for lane in window.compare_view.lanes]
    assert any(lane.model.metrics.summary().unpainted for lane in window.compare_view.lanes)  # some settled off screen
    window.clear_action.trigger()
    _settle()
    arun(qloop, pause())
    window.undo_action.trigger()
    _settle()
    arun(qloop, pause())
    _settle()
    assert [lane.model.metrics.byte_to_pixel() for lane in window.compare_view.lanes] == before
