"""gui/gui_thread_gc.py: automatic collection off; cycles collected by the GUI-thread timer."""

from __future__ import annotations

import gc
import threading
import weakref

from gui.gui_thread_gc import GuiThreadCollector, collect_between


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
