"""A timer that runs a slot on the event loop's next turn."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def next_turn_timer(parent: QObject, slot: Callable[[], object]) -> QTimer:
    """A single-shot 0 ms timer owned by `parent` that calls `slot`: `start()` runs it once the
    loop has done what is pending now (layouts, posted events); started again while it waits,
    it still runs once."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(0)
    timer.timeout.connect(slot)
    return timer
