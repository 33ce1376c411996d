"""What the window does not need to be shown, done after it is shown, in one background thread.

`Warmup(*steps).start(loop)` runs the steps in order in one daemon thread (the embedded server,
the provider SDKs); `defer(fn)` keeps a Start pressed meanwhile until they are done, `await wait()`
waits for them. The app owns one and hands it to the window (`window.warmup`); a Warmup never
started is ready, unless it is `planned` (the app's: it starts once the window shows, and a Start
pressed before that waits too). Why one thread, in order: docs/notes/launch.md.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Warmup"]

# How this works: each step runs in the one thread, in order; a step that fails is kept in `errors`
# (the steps after it still run) and handed to `on_error` on the loop's thread, after `on_done`.
# A deferred Start is one intent: a second `defer` replaces it, `cancel_deferred()` (Stop, Esc)
# drops it. Steps given as `after` run in the same thread once the warm-up is ready, and nothing
# waits for them (the keyring's backend is chosen there: seconds on a desktop bus, no demo run
# needs it).


class Warmup:
    """Steps run in order in one background thread, after the window is shown (module docstring)."""

    def __init__(
        self,
        *steps: Callable[[], Any],
        on_error: Callable[[BaseException], None] | None = None,
        on_done: Callable[[], Any] | None = None,
        after: tuple[Callable[[], Any], ...] = (),
        planned: bool = False,
    ) -> None:
        self._steps = steps
        self._planned = planned  # not ready even before `start`: it will be started
        self._after = after  # run in the same thread once ready; nothing waits for them
        self.on_error = on_error
        self.on_done = on_done
        self.on_after: Callable[[], Any] | None = None  # on the loop's thread once the `after` steps have run too
        self._after_settled = False
        self.errors: list[BaseException] = []
        self.timings: list[tuple[str, float]] = []  # (step, seconds)
        self._done = threading.Event()  # the thread has run every step
        self._settled = False  # ... and the loop thread has run _finished
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._deferred: Callable[[], Any] | None = None
        self._waiters: list[asyncio.Future[None]] = []

    def start(self, loop: asyncio.AbstractEventLoop) -> Warmup:
        """Start the thread; `loop` (the GUI thread's) runs what waited for it."""
        self._loop = loop
        self._thread = threading.Thread(target=self._run, name="livefill-warmup", daemon=True)
        self._thread.start()
        return self

    @property
    def ready(self) -> bool:
        """True once every step has run and the loop has been told (`on_done` has run), or if the
        warm-up was never started and is not `planned`."""
        return self._settled or (self._thread is None and not self._planned)

    @property
    def idle(self) -> bool:
        """True once the `after` steps have run too and the loop has been told (`on_after` has
        run), or if the warm-up was never started and is not `planned`."""
        return self._after_settled or (self._thread is None and not self._planned)

    def _run(self) -> None:
        self._run_steps(self._steps)
        loop = self._loop
        try:
            if loop is None:
                raise RuntimeError("no loop")
            loop.call_soon_threadsafe(self._finished)
        except RuntimeError:  # no loop, or it is closed: the app is gone
            self._settled = True
        self._run_steps(self._after)
        self._done.set()
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._after_finished)
            except RuntimeError:  # the loop is closed: the app is gone
                pass

    def _after_finished(self) -> None:
        self._after_settled = True
        if self.on_after is not None:
            self.on_after()

    def _run_steps(self, steps: tuple[Callable[[], Any], ...]) -> None:
        for step in steps:
            t = time.monotonic()
            try:
                step()
            except BaseException as exc:  # noqa: BLE001 - kept and reported on the GUI thread
                self.errors.append(exc)
            self.timings.append((getattr(step, "__name__", repr(step)), time.monotonic() - t))

    def _finished(self) -> None:
        self._settled = True
        if self.on_done is not None:
            self.on_done()
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        if self.on_error is not None:
            for exc in self.errors:
                self.on_error(exc)
        deferred, self._deferred = self._deferred, None
        if deferred is not None:
            deferred()

    def defer(self, fn: Callable[[], Any]) -> bool:
        """Call `fn` on the GUI thread once ready, and return True; False (not kept) if ready now."""
        if self.ready:
            return False
        self._deferred = fn
        return True

    def cancel_deferred(self) -> bool:
        """Drop the deferred call; True if there was one."""
        had, self._deferred = self._deferred is not None, None
        return had

    async def wait(self) -> None:
        """Return once every step has run (at once if ready)."""
        if self.ready:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)  # resolved by _finished, which runs on this (the loop's) thread
        await waiter

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread, `after` steps included (not from the loop's thread); True if done."""
        return self._done.wait(timeout)

