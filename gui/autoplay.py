"""Autoplay: replay the chosen scenario in a loop, with a pause between runs (a booth screen).

`Autoplay(window, pause=3.0)` drives any window that has `start()`, `stop()`, `active`,
`async wait_runs()` and a `warmup` (the main window, single or compare view). `start()` runs the
loop as an asyncio task: Start, wait until every lane has ended, pause, again. `stop()` cancels the loop and
stops the run in progress (a real cancel: every connection closes); `await shutdown()` does the
same and waits for the loop to be gone. `cycles` counts the runs that ended; `max_cycles` (if
set) ends the loop after that many. A Stop pressed by a person ends autoplay too (the window calls
`stop()`). While the loop runs the window's session knows (`session.autoplaying`): its runs reach
the history only if the user asked for compare and autoplay runs to be recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from PySide6.QtCore import QObject, Signal

from livefill.gui.warmup import Warmup
from livefill.session.run_status import RunStatus
from livefill.session.session import Session

__all__ = ["Autoplay", "DEFAULT_PAUSE", "Player"]

DEFAULT_PAUSE = 3.0
"""Seconds between the end of one run and the next Start."""


class Player(Protocol):
    """What autoplay drives: the main window, single or compare view."""

    session: Session
    warmup: Warmup

    @property
    def active(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    async def wait_runs(self) -> list[RunStatus | None]: ...


class Autoplay(QObject):
    """The replay loop (see the module docstring)."""

    cycleFinished = Signal(int)  # noqa: N815 - Qt signal naming; the number of runs ended so far
    activeChanged = Signal(bool)  # noqa: N815

    def __init__(self, window: Player, *, pause: float = DEFAULT_PAUSE, max_cycles: int | None = None) -> None:
        super().__init__(window if isinstance(window, QObject) else None)
        self.window = window
        self.pause = pause
        self.max_cycles = max_cycles
        self.cycles = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def active(self) -> bool:
        """True while the loop runs."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the loop (no-op if it runs already)."""
        if self.active:
            return
        self.cycles = 0
        self._autoplaying(True)
        self._task = asyncio.ensure_future(self._loop())
        self.activeChanged.emit(True)

    def stop(self) -> bool:
        """Stop the loop and the run in progress; False if the loop was not running."""
        task = self._task
        if task is None or task.done() or self._stopping:
            return False
        self._stopping = True  # the window's stop() calls back here
        try:
            task.cancel()
            if self.window.active:
                self.window.stop()
        finally:
            self._stopping = False
        return True

    async def shutdown(self) -> None:
        """Stop, and wait until the loop has ended."""
        task = self._task
        self.stop()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def wait(self) -> int:
        """Wait for the loop to end (by `max_cycles` or `stop()`); the number of cycles run."""
        task = self._task
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        return self.cycles

    async def _loop(self) -> None:
        try:
            await self.window.warmup.wait()  # each cycle's Start would otherwise be deferred, not run
            while True:
                if not self.window.active:
                    self.window.start()
                await asyncio.sleep(0)
                await self.window.wait_runs()
                self.cycles += 1
                self.cycleFinished.emit(self.cycles)
                if self.max_cycles is not None and self.cycles >= self.max_cycles:
                    return
                await asyncio.sleep(self.pause)
        finally:
            self._task = None
            self._autoplaying(False)
            self.activeChanged.emit(False)

    def _autoplaying(self, on: bool) -> None:
        """Tell the window's session its runs are autoplay's (recorded only when the user asked)."""
        self.window.session.autoplaying = on
