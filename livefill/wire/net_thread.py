"""Network reads on a thread of their own: a stream source whose I/O never runs on the caller's loop.

    async with threaded(lambda tap: open_stream(request, tap=tap), tap) as events:
        async for event in events: ...       # on the caller's loop, as before

Off by default (`enabled()`: LIVEFILL_READ_THREAD=1): measured, it takes load off the GUI thread
but makes byte-to-pixel latency worse. How it works and the figures: docs/notes/net-thread.md.
The other way tried, a worker process per run (LIVEFILL_RUN_WORKER): docs/notes/run-worker.md.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, AsyncContextManager

from livefill import switches
from livefill.wire.taps import WireFrame, WireTap, arriving

__all__ = ["DRAIN_LIMIT", "enabled", "pace", "threaded"]

DRAIN_LIMIT = 2.0  # seconds a normal exit waits for the rest of the body (the wire's closing frames)

_READ, _FRAME, _EVENT, _YIELD, _OPENED, _FAILED, _END = range(7)

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def enabled() -> bool:
    """Whether runs read their streams on the net thread (LIVEFILL_READ_THREAD=1; off by default)."""
    return switches.flag("LIVEFILL_READ_THREAD")


def pace() -> float:
    """Seconds between two wake-ups of the caller's loop at most (LIVEFILL_READ_PACE_MS, default 4)."""
    return switches.number("LIVEFILL_READ_PACE_MS", 4.0, positive=False) / 1000


def _net_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            ready = threading.Event()
            # Explicitly a selector loop: under qasync the process-wide policy would hand this
            # thread a Qt loop, which cannot run outside the GUI thread.
            loop = asyncio.SelectorEventLoop()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=serve, name="livefill-net", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


class _Recorder:
    """The tap the source is given on the net thread: each call becomes an item of the pump."""

    __slots__ = ("_post", "_clock")

    def __init__(self, post: Callable[[tuple], None], clock: Callable[[], float]) -> None:
        self._post = post
        self._clock = clock

    def on_read(self, data: bytes) -> None:
        self._post((_READ, data, self._clock()))

    def on_frame(self, frame: WireFrame) -> None:
        self._post((_FRAME, frame))

    def on_event(self, event: Any) -> None:
        self._post((_EVENT, event))


class _Pump:
    """Both ends of one threaded stream: `_work` on the net thread, the async iterator here."""

    def __init__(self, factory: Callable[[WireTap], AsyncContextManager[AsyncIterator[Any]]], tap: WireTap | None):
        self._factory = factory
        self._tap = tap
        self._items: deque[tuple] = deque()
        self._lock = threading.Lock()
        self._wake_pending = False
        self._last_wake = 0.0  # when the caller's loop was last woken (net thread, monotonic)
        self._pace = pace()  # read once per stream, when it starts
        self._told = 0  # events, ends and failures in `_items` (the consumer's next steps)
        self._home = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self.headers: dict[str, str] = {}
        self._closed: asyncio.Future[None] = self._home.create_future()  # the source is closed there
        self._task: asyncio.Task[None] | None = None  # _work's task, on the net loop
        self._cancel_early = False
        recorder = _Recorder(self._post, time.monotonic) if tap is not None else None
        self._net = _net_loop()
        asyncio.run_coroutine_threadsafe(self._work(recorder), self._net)

    # -- the net thread ---------------------------------------------------------------------

    async def _work(self, recorder: _Recorder | None) -> None:
        self._task = asyncio.current_task()
        try:
            if self._cancel_early:
                raise asyncio.CancelledError
            async with self._factory(recorder) as events:  # type: ignore[arg-type]
                self._post((_OPENED, dict(getattr(events, "headers", {}) or {})))
                async for event in events:
                    self._post((_YIELD, event))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's side, in order
            self._post((_FAILED, exc))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        else:
            self._post((_END,))
        finally:
            self._tell_closed()

    def _tell_closed(self) -> None:
        def closed() -> None:
            if not self._closed.done():
                self._closed.set_result(None)

        try:
            self._home.call_soon_threadsafe(closed)
        except RuntimeError:
            pass  # the caller's loop is closed

    def _cancel(self) -> None:  # on the net loop
        if self._task is None:
            self._cancel_early = True  # _work has not begun: it ends at once
        elif not self._task.done():
            self._task.cancel()

    def _post(self, item: tuple) -> None:
        with self._lock:
            self._items.append(item)
            if item[0] >= _YIELD:
                self._told += 1
            if self._wake_pending:
                return
            self._wake_pending = True
        wait = self._last_wake + self._pace - time.monotonic()
        if wait > 0:
            asyncio.get_running_loop().call_later(wait, self._send_wake)
        else:
            self._send_wake()

    def _send_wake(self) -> None:
        self._last_wake = time.monotonic()
        try:
            self._home.call_soon_threadsafe(self._wake)
        except RuntimeError:
            pass  # the caller's loop is closed: nobody is waiting any more

    # -- the caller's loop ------------------------------------------------------------------

    def _wake(self) -> None:
        with self._lock:
            self._wake_pending = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _next_item(self) -> tuple:
        while not self._items:
            self._waiter = self._home.create_future()
            try:
                if not self._items:  # a post between the check above and the waiter
                    await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if item[0] >= _YIELD:
            with self._lock:
                self._told -= 1
        return item

    async def opened(self) -> None:
        """Wait until the source is open (its headers known); raise its opening failure."""
        while True:
            item = await self._next_item()
            if item[0] == _OPENED:
                self.headers = item[1]
                return
            if item[0] == _FAILED:
                self._ended = True
                raise item[1]
            self._replay(item)

    def _replay(self, item: tuple) -> None:
        tap = self._tap
        if tap is None:
            return
        kind = item[0]
        if kind == _READ:
            with arriving(item[2]):
                tap.on_read(item[1])
        elif kind == _FRAME:
            tap.on_frame(item[1])
        elif kind == _EVENT:
            tap.on_event(item[1])

    @property
    def pending(self) -> bool:
        """Whether an event (or the end) that has arrived is still waiting here: the consumer is
        mid-batch and will be back without waiting."""
        return self._told > 0

    def __aiter__(self) -> _Pump:
        return self

    async def __anext__(self) -> Any:
        if self._ended:
            raise StopAsyncIteration
        while True:
            item = await self._next_item()
            kind = item[0]
            if kind == _YIELD:
                return item[1]
            if kind == _END:
                self._ended = True
                raise StopAsyncIteration
            if kind == _FAILED:
                self._ended = True
                raise item[1]
            self._replay(item)

    async def close(self, *, cancel: bool) -> None:
        """Stop the pump (cancel) or let it read to its end (at most DRAIN_LIMIT s); either way
        return once the source is closed on the net thread."""
        closed = self._closed
        if not cancel:
            try:
                await asyncio.wait_for(asyncio.shield(closed), DRAIN_LIMIT)
                return
            except TimeoutError:
                pass
        try:
            self._net.call_soon_threadsafe(self._cancel)
        except RuntimeError:
            return  # the net loop is gone (the process is ending)
        try:
            await asyncio.shield(closed)
        except asyncio.CancelledError:
            if not closed.done():
                raise  # this side was cancelled again while it waited


@asynccontextmanager
async def threaded(
    factory: Callable[[WireTap], AsyncContextManager[AsyncIterator[Any]]], tap: WireTap | None
) -> AsyncIterator[AsyncIterator[Any]]:
    """`factory(tap)`'s stream, opened and read on the net thread (see the top of the module)."""
    pump = _Pump(factory, tap)
    try:
        await pump.opened()
    except BaseException:
        await pump.close(cancel=True)
        raise
    try:
        yield pump
    except BaseException:
        await pump.close(cancel=True)
        raise
    else:
        await pump.close(cancel=False)
