"""Make a qasync loop finalise abandoned async generators the way asyncio's own loops do, and
tell sniffio that this thread's async library is asyncio.

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

httpcore asks sniffio which async library runs when it closes a response body
(`AsyncShieldCancellation`); under qasync sniffio's guess (a current asyncio task) sometimes finds
none, and a lane then failed with "internal error: AsyncLibraryNotFoundError" (seen under load in
the compare tests). The thread that runs the qasync loop runs no other async library, so for the
block sniffio is told so (`sniffio.thread_local.name`, its documented override).
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import sniffio


@contextmanager
def asyncgen_hooks(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Install `loop`'s async-generator hooks, and name asyncio to sniffio on this thread, for the
    duration of the block."""
    named = sniffio.thread_local.name
    sniffio.thread_local.name = "asyncio"
    try:
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
    finally:
        sniffio.thread_local.name = named


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
