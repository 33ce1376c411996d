"""livefill/wire/idle.py: the one idle watchdog, driven by a hand-moved clock (no sleeping, no margins)."""

from __future__ import annotations

import asyncio

import pytest

from livefill.errors import StreamTimeout
from livefill.wire.events import ArgsDelta, KeepAlive
from livefill.wire.idle import IdleWatch


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _waiting(watch: IdleWatch) -> asyncio.Task:
    """A task blocked in a guarded read that never completes on its own."""
    task = asyncio.ensure_future(watch.guard(asyncio.get_running_loop().create_future()))
    await asyncio.sleep(0)  # let it start waiting
    return task


async def test_a_read_silent_past_the_limit_is_a_stream_timeout():
    clock = Clock()
    watch = IdleWatch(5.0, "test", clock=clock)
    task = await _waiting(watch)
    clock.now += 4.9
    watch.check()
    await asyncio.sleep(0)
    assert not task.done()  # not yet: re-armed for the deadline
    clock.now += 0.2
    watch.check()
    with pytest.raises(StreamTimeout, match="5 s"):
        await task
    watch.close()


async def test_content_moves_the_deadline_keepalives_do_not():
    clock = Clock()
    watch = IdleWatch(5.0, "test", clock=clock)
    task = await _waiting(watch)
    clock.now += 4.0
    watch.touch()  # content
    clock.now += 4.0
    watch.check()
    await asyncio.sleep(0)
    assert not task.done()
    clock.now += 1.5  # 5.5 s after the last content
    watch.check()
    with pytest.raises(StreamTimeout):
        await task
    watch.close()


async def test_time_spent_outside_reads_is_not_idle_time():
    clock = Clock()
    watch = IdleWatch(5.0, "test", clock=clock)
    assert await watch.guard(asyncio.sleep(0, result=b"x")) == b"x"
    clock.now += 60.0  # the consumer was busy, not the stream silent
    task = await _waiting(watch)
    watch.check()
    await asyncio.sleep(0)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # a cancel from anyone else stays a cancel
        await task
    watch.close()


async def test_a_silent_stream_and_a_pinging_stream_say_different_things():
    clock = Clock()
    silent = IdleWatch(5.0, "demo", clock=clock)
    task = await _waiting(silent)
    clock.now += 5.1
    silent.check()
    with pytest.raises(StreamTimeout) as caught:
        await task
    assert str(caught.value) == "demo: nothing arrived for 5 s"
    silent.close()

    pinging = IdleWatch(5.0, "demo", clock=clock)
    pinging.keepalive()
    task = await _waiting(pinging)
    clock.now += 5.1
    pinging.check()
    with pytest.raises(StreamTimeout) as caught:
        await task
    assert str(caught.value) == "demo: only keep-alives for 5 s, no content"
    pinging.close()


async def test_content_after_a_keepalive_makes_the_next_silence_a_silent_one():
    clock = Clock()
    watch = IdleWatch(5.0, "demo", clock=clock)
    watch.keepalive()
    watch.touch()  # content: the keep-alive before it no longer describes the silence
    task = await _waiting(watch)
    clock.now += 5.1
    watch.check()
    with pytest.raises(StreamTimeout, match="nothing arrived"):
        await task
    watch.close()
