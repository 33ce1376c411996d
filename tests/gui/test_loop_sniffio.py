"""The qasync thread names asyncio to sniffio (livefill/gui/loop.py).

httpcore asks sniffio which async library runs when it closes a response body; under qasync the
guess (a current asyncio task) sometimes found none, and a compare lane failed with "internal
error: AsyncLibraryNotFoundError" (tests/gui/test_compare_lanes.py, under load). Inside
`asyncgen_hooks` — the app's loop and the tests' — the answer is asyncio even where no task is
current, and the thread's own setting comes back after the block.
"""

from __future__ import annotations

import threading

import pytest
import sniffio

from livefill.gui.loop import asyncgen_hooks


def test_sniffio_says_asyncio_on_the_loop_thread_even_outside_a_task(qloop):
    # qloop runs inside asyncgen_hooks (tests/gui/conftest.py), as the app's loop does (gui/launch.py)
    assert sniffio.current_async_library() == "asyncio"  # a plain call: no task is current here


def test_the_thread_setting_comes_back_after_the_block(qapp):
    import qasync

    loop = qasync.QEventLoop(qapp)
    try:
        before = sniffio.thread_local.name
        with asyncgen_hooks(loop):
            assert sniffio.thread_local.name == "asyncio"
        assert sniffio.thread_local.name == before
    finally:
        loop.close()


def test_another_thread_is_not_told(qloop):
    seen: list[str] = []

    def ask() -> None:
        try:
            seen.append(sniffio.current_async_library())
        except sniffio.AsyncLibraryNotFoundError:
            seen.append("none")

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join()
    assert seen == ["none"]


