"""Run Python's cyclic garbage collector on the GUI thread only.

How this works
--------------
Python's automatic collector runs in whichever thread happens to allocate when a threshold is
crossed. In livefill that may be the embedded server's thread or an executor thread, or the GUI
thread in the middle of a Qt signal emission. A reference cycle that holds a Qt object (a widget
subscribed to a plain-Python model, a slot that refers back to its owner) is then destroyed off
the GUI thread, or while one of its own timers is being dispatched, and Qt crashes a little later
inside processEvents (seen here: a segfault in about one full test run of three).

`GuiThreadCollector` switches automatic collection off and collects from a timer on the GUI
thread instead, with the interpreter's own thresholds, one generation at a time, exactly as the
automatic collector would have. `stop()` restores automatic collection.

While a background thread imports a large library (the app's warm-up: the provider SDKs are
hundreds of thousands of long-lived objects), every collection would walk all of them on the GUI
thread (a young one after the import takes tens of ms, a full one hundreds): `hold()` suspends
collecting, and `release(freeze=True)` moves everything that exists then into the permanent
generation (`gc.freeze()`: the imported modules live as long as the process; so do the few cycles
made meanwhile) before collecting resumes, so no later collection walks them, on the GUI thread
or at exit (no collection first: that full walk is what must not happen on the GUI thread).

A full (generation 2) collection walks every object the interpreter tracks — with PySide6, the
provider SDKs and pydantic loaded, a few hundred thousand, some 300 ms on the GUI thread. What is
alive once the app has started (modules, classes, the window) lives as long as the app, so
`freeze_survivors()` collects once and moves the survivors out of the collector's sight
(`gc.freeze()`); later full collections walk only what was made after. The first full collection
`check()` runs does that itself if no one froze before (`release(freeze=True)` counts).

`collect_between()` is the same guard for a block of code that has no timer of its own (a test):
collection is off inside the block and done, on this thread, before and after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject, QTimer


class GuiThreadCollector(QObject):
    """While alive and started, cyclic garbage is collected only here, on the GUI thread."""

    def __init__(self, parent: QObject | None = None, *, interval_ms: int = 250) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._was_enabled = gc.isenabled()
        self._held = False
        self.frozen = False
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        gc.disable()
        self._timer.start()

    def hold(self) -> None:
        """Collect nothing until `release()` (see the module docstring)."""
        self._held = True

    def release(self, *, freeze: bool = False) -> None:
        """Collect again; with `freeze`, first move every object alive now out of the collector's sight."""
        if freeze:
            gc.freeze()
            self.frozen = True
        self._held = False

    def check(self) -> int:
        """Collect the generation the interpreter would collect now; returns it (-1: none)."""
        if self._held:
            return -1
        t0, t1, t2 = self._thresholds
        c0, c1, c2 = gc.get_count()
        if c0 <= t0:
            return -1
        generation = 2 if c2 >= t2 and c1 >= t1 else 1 if c1 >= t1 else 0
        if generation == 2 and not self.frozen:
            self.freeze_survivors()
            return 2
        gc.collect(generation)
        return generation

    def freeze_survivors(self) -> None:
        """Collect everything now, then keep what survived out of later collections (see the top)."""
        gc.collect()
        gc.freeze()
        self.frozen = True

    def stop(self) -> None:
        self._timer.stop()
        if self._was_enabled:
            gc.enable()


@contextmanager
def collect_between() -> Iterator[None]:
    """Collect now, keep automatic collection off inside the block, collect again after it."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        if was_enabled:
            gc.enable()
