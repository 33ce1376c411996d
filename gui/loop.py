"""Make a qasync loop finalise abandoned async generators the way asyncio's own loops do.

On Python 3.11 `qasync.QEventLoop.run_forever` runs Qt's exec() without installing asyncio's
async-generator hooks (BaseEventLoop.run_forever does; qasync replaces it). An async generator
left mid-way (an HTTP body iterator whose consumer raised) is then finalised by the garbage
collector outside any task: httpcore/anyio print "async generator ignored GeneratorExit" or
"no running event loop" on stderr. With the hooks installed, the loop schedules `aclose()` as a
task instead, and `shutdown_asyncgens()` closes whatever is left before the loop goes away.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager


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
