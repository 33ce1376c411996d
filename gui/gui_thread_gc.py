"""Run Python's cyclic garbage collector on the GUI thread only.

`GuiThreadCollector` switches automatic collection off and collects from a timer on the GUI
thread, as the interpreter would; `hold()` / `release(freeze=True)` keep it off while the warm-up
imports the SDKs and then move them out of its sight; `busy` (the window's "a run is active")
puts a full collection due during a run off to the first check after it; `collect_between()`
guards a block of code (a test). Why (Qt objects destroyed off the GUI thread crash it):
docs/notes/gui-thread-gc.md.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
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
        # while this says True (a run streams), a full collection due is put off: a young one runs
        # instead, and the full one at the first check after (it walks everything made since the
        # freeze: tens of ms or more on the GUI thread, a stutter in the middle of a run)
        self.busy: Callable[[], bool] | None = None
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
        if generation == 2 and self.busy is not None and self.busy():
            generation = 1
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
