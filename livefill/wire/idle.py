"""The idle watchdog: one rule for how long a stream may stay silent.

A stream fails with `StreamTimeout` when no *content* arrived for `limit` seconds while its
consumer was waiting for the network; keep-alives do not count (the caller only `touch`es on
content), and time the consumer spends between reads is not idleness. The failure says which of
the two silences it was: the caller reports keep-alives too (`keepalive()`), so a stream that
kept sending them ("only keep-alives for 20 s, no content") is told apart from one that sent
nothing at all ("nothing arrived for 20 s"). The provider streams
(`livefill.wire.providers.open_stream`) and the relay client (`livefill.relay.client.open_relay`) both use it.

One lazily re-armed timer per stream: a read costs no timer operation. When the timer fires it
either finds nobody waiting (the next read re-arms it), finds the deadline moved (re-arms for it),
or cancels the waiting read, which then raises StreamTimeout. A cancel from anyone else stays a
cancel (Task.uncancel tells them apart). `clock` (default: the loop's own time) is injectable so
tests can move time by hand and call `check()` instead of sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from livefill.errors import StreamTimeout

__all__ = ["IdleWatch"]

T = TypeVar("T")


class IdleWatch:
    """The idle limit of one stream (see the module docstring)."""

    def __init__(self, limit: float, what: str, *, clock: Callable[[], float] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._clock = clock or self._loop.time
        self.limit = limit
        self.what = what
        self._last = self._clock()  # last content, shifted by the time spent outside reads
        self._paused_at: float | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[Any] | None = None
        self._expired = False
        self.heard_since_content = False  # a keep-alive arrived since the last content

    def touch(self) -> None:
        """Content arrived: the silence starts again now."""
        self._last = self._clock()
        self.heard_since_content = False

    def keepalive(self) -> None:
        """A keep-alive arrived: it does not move the deadline, but the stream is not silent."""
        self.heard_since_content = True

    def timeout_message(self) -> str:
        """What the silence was, for a person: keep-alives without content, or nothing at all."""
        if self.heard_since_content:
            return f"{self.what}: only keep-alives for {self.limit:g} s, no content"
        return f"{self.what}: nothing arrived for {self.limit:g} s"

    def close(self) -> None:
        """Stop watching (the stream ended)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    @property
    def deadline(self) -> float:
        return self._last + self.limit

    def check(self) -> None:
        """The timer's callback: cancel the waiting read if the deadline has passed, else re-arm."""
        self._handle = None
        if self._task is None:
            return
        remaining = self.deadline - self._clock()
        if remaining > 0:
            self._handle = self._loop.call_later(remaining, self.check)
            return
        self._expired = True
        self._task.cancel()

    async def guard(self, read: Awaitable[T]) -> T:
        """Await one network read under the watch; StreamTimeout if the stream stayed silent."""
        now = self._clock()
        if self._paused_at is not None:
            self._last += now - self._paused_at
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        if self._handle is None:
            self._handle = self._loop.call_later(max(0.0, self.deadline - now), self.check)
        try:
            return await read
        except asyncio.CancelledError:
            if self._expired and task.uncancel() == 0:
                raise StreamTimeout(self.timeout_message()) from None
            raise
        finally:
            self._expired = False
            self._task = None
            self._paused_at = self._clock()
