"""gui/warmup.py: steps in one background thread, in order; a Start pressed meanwhile waits for it."""

from __future__ import annotations

import asyncio
import gc
import threading

from livefill.gui import warmup
from livefill.gui.gui_thread_gc import GuiThreadCollector
from tests.gui.conftest import arun, wait_until


def test_steps_run_in_order_in_one_thread_that_is_not_the_callers(qloop):
    seen: list[tuple[str, str]] = []
    w = warmup.Warmup(lambda: seen.append(("a", threading.current_thread().name)),
                      lambda: seen.append(("b", threading.current_thread().name)))
    assert w.ready  # not started: nothing to wait for

    async def scenario() -> None:
        w.start(asyncio.get_running_loop())
        await w.wait()

    arun(qloop, scenario())
    assert [s for s, _ in seen] == ["a", "b"]
    assert {t for _, t in seen} == {"livefill-warmup"}
    assert w.ready


def test_a_deferred_call_runs_on_the_loop_thread_once_ready_and_stop_cancels_it(qloop):
    gate = threading.Event()
    calls: list[str] = []
    w = warmup.Warmup(gate.wait)

    async def scenario() -> None:
        w.start(asyncio.get_running_loop())
        assert w.defer(lambda: calls.append(threading.current_thread().name)) is True
        assert w.defer(lambda: calls.append("second")) is True  # one intent: the latest wins
        await asyncio.sleep(0.05)
        assert calls == []  # the loop stays free meanwhile
        gate.set()
        await w.wait()
        await wait_until(lambda: bool(calls))

    arun(qloop, scenario())
    assert calls == ["second"]
    assert w.defer(lambda: calls.append("now")) is False  # ready: the caller goes ahead itself

    gate2 = threading.Event()
    w2 = warmup.Warmup(gate2.wait)

    async def cancelled() -> None:
        w2.start(asyncio.get_running_loop())
        w2.defer(lambda: calls.append("cancelled"))
        assert w2.cancel_deferred() is True
        assert w2.cancel_deferred() is False
        gate2.set()
        await w2.wait()
        await asyncio.sleep(0.02)

    arun(qloop, cancelled())
    assert "cancelled" not in calls


def test_a_failing_step_is_reported_on_the_loop_thread_and_the_rest_still_run(qloop):
    reported: list[tuple[str, str]] = []
    ran: list[str] = []

    def broken() -> None:
        raise OSError("address in use")

    w = warmup.Warmup(broken, lambda: ran.append("after"),
                      on_error=lambda exc: reported.append((str(exc), threading.current_thread().name)))

    async def scenario() -> None:
        w.start(asyncio.get_running_loop())
        await w.wait()

    arun(qloop, scenario())
    assert ran == ["after"]
    assert reported == [("address in use", threading.main_thread().name)]


def test_a_warmup_never_started_defers_nothing_and_the_window_starts_with_one(make_window):
    idle = warmup.Warmup(lambda: None)
    assert idle.ready
    assert idle.defer(lambda: None) is False
    assert idle.cancel_deferred() is False
    window = make_window(scenario="weather")
    assert window.warmup.ready and window.warmup.defer(lambda: None) is False  # tests and tools start none


def test_start_pressed_during_the_warmup_starts_the_run_once_it_is_done(make_window, qloop):
    window = make_window(scenario="weather")
    gate = threading.Event()

    async def scenario() -> None:
        w = window.warmup = warmup.Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start_button.click()
        await asyncio.sleep(0.05)
        assert not window.active and window.controller.last_status is None
        assert "as soon as" in window.statusBar().currentMessage()
        gate.set()
        await w.wait()
        await wait_until(lambda: window.active or window.controller.last_status is not None)
        await window.wait_runs()

    arun(qloop, scenario())
    assert window.controller.last_status.phase.value == "committed"
    assert "as soon as" not in window.statusBar().currentMessage()  # it started: no longer waiting


def test_esc_drops_a_start_still_waiting_for_the_warmup(make_window, qloop):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    window = make_window(scenario="weather")
    gate = threading.Event()

    async def scenario() -> None:
        w = window.warmup = warmup.Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start()
        QTest.keyClick(window, Qt.Key.Key_Escape)
        gate.set()
        await w.wait()
        await asyncio.sleep(0.1)

    arun(qloop, scenario())
    assert not window.active and window.controller.last_status is None


def test_the_collector_holds_off_during_the_warmup_and_then_freezes_what_it_loaded(qapp):
    collector = GuiThreadCollector()
    collector.start()
    try:
        collector.hold()
        alive = [[] for _ in range(gc.get_threshold()[0] * 3)]
        assert collector.check() == -1  # held: no collection on the GUI thread
        collector.release(freeze=True)
        assert collector.frozen  # so its first full collection does not walk everything again
        # frozen: in no generation a collection walks (gc.get_objects lists those; the freeze count
        # is no measure: a frozen object freed meanwhile leaves it, as one did once in CI)
        walked = {id(o) for o in gc.get_objects()}
        assert not any(id(a) in walked for a in alive)
        assert gc.get_count()[0] < gc.get_threshold()[0]  # the young generation starts afresh
    finally:
        collector.stop()
        gc.disable()  # as the Qt tests' fixture keeps it (what was frozen stays frozen, as the suite does)


def test_autoplay_started_during_the_warmup_counts_only_real_runs(make_window, qloop):
    window = make_window(scenario="weather")
    gate = threading.Event()

    async def scenario() -> None:
        w = window.warmup = warmup.Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start_autoplay(pause=0.01, max_cycles=1)
        await asyncio.sleep(0.1)
        assert window.autoplay.cycles == 0 and not window.active  # waiting, not counting empty cycles
        gate.set()
        await w.wait()
        await wait_until(lambda: not window.autoplay.active, timeout=30)

    arun(qloop, scenario())
    assert window.autoplay.cycles == 1
    assert window.controller.last_status.phase.value == "committed"


def test_after_steps_run_once_ready_and_nothing_waits_for_them(qloop):
    slow = threading.Event()
    order: list[str] = []
    w = warmup.Warmup(lambda: order.append("needed"), after=(lambda: (slow.wait(), order.append("after")),))

    async def scenario() -> None:
        w.start(asyncio.get_running_loop())
        await w.wait()  # ready while the `after` step still waits
        assert w.ready and order == ["needed"] and not w.join(0)
        slow.set()

    arun(qloop, scenario())
    assert w.join(10) and order == ["needed", "after"]
