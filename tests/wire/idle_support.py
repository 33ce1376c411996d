"""Test support: a scripted event source read under an IdleWatch, as `open_stream` reads a wire."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from livefill.wire.idle import IdleWatch

T = TypeVar("T")


async def watch_events(events: AsyncIterator[T], watch: IdleWatch, *, is_content: Callable[[T], bool]) -> AsyncIterator[T]:
    """`events` read under `watch`: every item for which `is_content` is true resets its clock."""
    try:
        while True:
            try:
                item = await watch.guard(anext(events))
            except StopAsyncIteration:
                return
            if is_content(item):
                watch.touch()
            else:
                watch.keepalive()
            yield item
    finally:
        watch.close()
