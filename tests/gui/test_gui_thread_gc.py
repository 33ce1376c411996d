"""gui/gui_thread_gc.py: automatic collection off; cycles collected by the GUI-thread timer."""

from __future__ import annotations

import gc
import threading
import weakref

from livefill.gui.gui_thread_gc import GuiThreadCollector, collect_between


class Node:
    def __init__(self) -> None:
        self.me = self


def test_collector_turns_automatic_collection_off_and_back_on(qapp):
    assert not gc.isenabled()  # the test fixture already guards Qt tests
    gc.enable()
    collector = GuiThreadCollector()
    collector.start()
    try:
        assert not gc.isenabled()
    finally:
        collector.stop()
    assert gc.isenabled()
    gc.disable()


def test_check_collects_only_once_the_threshold_is_crossed(qapp):
    collector = GuiThreadCollector()
    gc.collect()
    assert collector.check() == -1  # nothing allocated since: nothing to do
    cycle = Node()
    ref = weakref.ref(cycle)
    del cycle
    assert ref() is not None  # only the cyclic collector can free it
    alive = [[] for _ in range(gc.get_threshold()[0] + 10)]  # tracked allocations past threshold 0
    assert collector.check() >= 0
    assert ref() is None
    del alive


def test_a_cycle_dropped_in_another_thread_is_not_collected_there(qapp):
    collected_in: list[str] = []

    class Watched:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            collected_in.append(threading.current_thread().name)

    with collect_between():
        Watched()

        def churn() -> None:
            for _ in range(50):
                [Node() for _ in range(2000)]

        worker = threading.Thread(target=churn, name="server-like")
        worker.start()
        worker.join()
        assert collected_in == []  # nothing collected it in the worker thread
    assert collected_in == [threading.current_thread().name]


def test_freezing_the_survivors_keeps_them_out_of_later_collections_but_new_cycles_are_collected(qapp):
    collector = GuiThreadCollector()
    survivor = Node()  # alive when the app has started: lives as long as the app
    try:
        collector.freeze_survivors()
        assert collector.frozen and gc.get_freeze_count() > 0
        assert not gc.is_tracked(survivor) or survivor not in gc.get_objects(generation=2)
        cycle = Node()
        ref = weakref.ref(cycle)
        del cycle
        alive = [[] for _ in range(gc.get_threshold()[0] + 10)]
        assert collector.check() >= 0
        assert ref() is None  # made after the freeze: collected as before
        del alive
    finally:
        gc.unfreeze()


def test_the_first_full_collection_due_freezes_the_survivors(qapp, monkeypatch):
    collector = GuiThreadCollector()
    t0, t1, t2 = collector._thresholds  # noqa: SLF001
    monkeypatch.setattr(gc, "get_count", lambda: (t0 + 1, t1 + 1, t2 + 1))  # every generation due
    try:
        assert collector.check() == 2
        assert collector.frozen and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_full_collection_due_during_a_run_waits_for_its_end(qapp, monkeypatch):
    # A full collection walks everything made since the freeze (a session's recordings too): not
    # in the middle of a run. A young one runs instead; the full one at the first check after.
    collector = GuiThreadCollector()
    collector.frozen = True  # as after the launch's freeze
    t0, t1, t2 = collector._thresholds  # noqa: SLF001
    monkeypatch.setattr(gc, "get_count", lambda: (t0 + 1, t1 + 1, t2 + 1))  # every generation due
    collected: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collected.append(generation) or 0)
    running = [True]
    collector.busy = lambda: running[0]
    assert collector.check() == 1
    running[0] = False
    assert collector.check() == 2
    assert collected == [1, 2]
