"""Make a qasync loop finalise abandoned async generators the way asyncio's own loops do.

On Python 3.11 `qasync.QEventLoop.run_forever` runs Qt's exec() without installing asyncio's
async-generator hooks (BaseEventLoop.run_forever does; qasync replaces it). An async generator
left mid-way (an HTTP body iterator whose consumer raised) is then finalised by the garbage
collector outside any task: httpcore/anyio print "async generator ignored GeneratorExit" or
"no running event loop" on stderr. With the hooks installed, the loop schedules `aclose()` as a
task instead, and `shutdown_asyncgens()` closes whatever is left before the loop goes away.

A closed qasync loop also leaves Python-owned QObjects in reference cycles: its call_later timer
object (`_SimpleTimer`, which still has Qt timers registered for cancelled handles) and its thread
workers. Whenever the cyclic GC next runs they are destroyed, in whatever thread it runs in; in a
thread other than the GUI thread (the embedded server's, say) the registered timers outlive their
object and the GUI thread's next timer tick dereferences freed memory. So when the hooks are left
on a loop that is not running (a test's loop, about to be closed), its `close()` is made to collect
that garbage at once, on the closing (GUI) thread. `collect_on_close(loop)` does that on its own.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def asyncgen_hooks(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Install `loop`'s async-generator hooks for the duration of the block."""
    firstiter = getattr(loop, "_asyncgen_firstiter_hook", None)
    finalizer = getattr(loop, "_asyncgen_finalizer_hook", None)
    if firstiter is None or finalizer is None:
        yield
        return
    old = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)
    try:
        yield
    finally:
        sys.set_asyncgen_hooks(*old)
        if not loop.is_running() and not loop.is_closed():
            collect_on_close(loop)


def collect_on_close(loop: asyncio.AbstractEventLoop) -> None:
    """Make `loop.close()` collect the garbage it leaves, on the thread that closes it (see above)."""
    close = loop.close
    if getattr(close, "_collects", False):
        return

    def close_and_collect() -> None:
        close()
        gc.collect()

    close_and_collect._collects = True  # type: ignore[attr-defined]
    loop.close = close_and_collect  # type: ignore[method-assign]


# ---------------------------------------------------------------------------------------------
# A qasync loop that keeps its read notifiers
#
# qasync makes a new QSocketNotifier (and connects a new slot) every time a reader is added, and
# disconnects it every time one is removed; it then hands each readiness to the loop as a call_soon
# (one more Qt timer event). The HTTP stack under every stream (httpcore on anyio) resumes reading
# before each read and pauses after it, so each network read cost the GUI thread a notifier made,
# registered with Qt's dispatcher, and unmade, and two trips through Qt's event queue.
# `SteadyQEventLoop` keeps one notifier per file descriptor for the loop's life: removing a
# reader disables it, adding one enables it again, and a ready descriptor runs its callback in
# the notifier's own slot. LIVEFILL_STOCK_LOOP=1 gives qasync's own loop (benchmarks compare).

import os  # noqa: E402

import qasync  # noqa: E402
from PySide6.QtCore import QSocketNotifier  # noqa: E402

_READ = QSocketNotifier.Type.Read


def _fileno(fd: Any) -> int:
    return fd if isinstance(fd, int) else int(fd.fileno())


class SteadyQEventLoop(qasync.QEventLoop):
    """qasync's QEventLoop with one enduring read notifier per file descriptor (see above)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._parked: dict[Any, QSocketNotifier] = {}  # disabled notifiers of removed readers
        self._reader_calls: dict[Any, tuple[Callable[..., Any], tuple[Any, ...]]] = {}
        super().__init__(*args, **kwargs)  # (adds its self-pipe's reader)

    def _add_reader(self, fd: Any, callback: Callable[..., Any], *args: Any) -> None:
        self._check_closed()
        notifier = self._read_notifiers.get(fd)
        if notifier is None:
            notifier = self._parked.pop(fd, None)
        if notifier is None:
            notifier = QSocketNotifier(_fileno(fd), _READ)
            notifier.activated.connect(lambda *_: self._reader_ready(fd, notifier))
        self._reader_calls[fd] = (callback, args)
        self._read_notifiers[fd] = notifier
        notifier.setEnabled(True)

    def _remove_reader(self, fd: Any) -> bool:
        if self.is_closed():
            return False
        self._reader_calls.pop(fd, None)
        notifier = self._read_notifiers.pop(fd, None)
        if notifier is None:
            return False
        notifier.setEnabled(False)
        self._parked[fd] = notifier
        return True

    def _reader_ready(self, fd: Any, notifier: QSocketNotifier) -> None:
        if self._read_notifiers.get(fd) is not notifier:
            notifier.setEnabled(False)  # removed meanwhile
            return
        callback, args = self._reader_calls[fd]
        notifier.setEnabled(False)  # not again while the callback runs (it may read, or remove it)
        try:
            callback(*args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - as asyncio's Handle does
            self.call_exception_handler({"message": f"Exception in reader callback {callback!r}", "exception": exc})
        finally:
            if self._read_notifiers.get(fd) is notifier:
                notifier.setEnabled(True)

    def close(self) -> None:
        if not self.is_running() and not self.is_closed():
            for notifier in self._parked.values():
                notifier.setEnabled(False)
            self._parked.clear()
        super().close()


def new_loop(app: Any = None) -> qasync.QEventLoop:
    """The app's event loop: SteadyQEventLoop, or qasync's own with LIVEFILL_STOCK_LOOP=1."""
    if os.environ.get("LIVEFILL_STOCK_LOOP") == "1":
        return qasync.QEventLoop(app)
    return SteadyQEventLoop(app)


def run(coro: Any) -> Any:
    """`qasync.run(coro)` on `new_loop()` (Python 3.11's asyncio.run has no loop_factory)."""

    class Policy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            return new_loop()

    old = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(Policy())
    try:
        return asyncio.run(coro)
    finally:
        asyncio.set_event_loop_policy(old)
