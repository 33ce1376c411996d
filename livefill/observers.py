"""One observer helper: callbacks that subscribe, get an unsubscribe function, and are told.

Every model that others watch (the form, a run, a session and its lanes, metrics, the
timeline) keeps an `Observers` and calls `notify(event)`; a callback subscribed while a
notification runs is told from the next one on, and one that unsubscribes is not told again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Observers"]

E = TypeVar("E")


class Observers(Generic[E]):
    """A list of callbacks taking one event of type `E`."""

    __slots__ = ("_callbacks",)

    def __init__(self) -> None:
        self._callbacks: list[Callable[[E], None]] = []

    def subscribe(self, callback: Callable[[E], None]) -> Callable[[], None]:
        """Call `callback(event)` on every notification; returns a function that unsubscribes it."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def notify(self, event: E) -> None:
        """Tell every callback subscribed now, in the order they subscribed. One unsubscribed while
        this notification runs (by itself or by another callback) is not called after that."""
        callbacks = self._callbacks
        for callback in list(callbacks):
            if callback in callbacks:
                callback(event)

    def clear(self) -> None:
        """Forget every callback."""
        self._callbacks.clear()

    def __len__(self) -> int:
        return len(self._callbacks)
