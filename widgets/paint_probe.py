"""The screen side of the byte-to-pixel latency: the first paint that shows a value settled.

`PaintProbe` belongs to a form's `FormSignals`. When a field widget starts to show its value
settled it arms the probe for the widget that shows it (`arm(widget, pointer)`: the field's marker,
a chip) — only if that widget is on screen now; the probe then catches the widget's next paint
event (an event filter, removed at once) and calls `sink(pointer)`. Table cells are painted by
their delegate, which calls `painted(pointer)` itself. With no `sink` (a lane that measures
nothing) nothing is armed and no paint is watched.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

__all__ = ["PaintProbe", "on_screen"]

_PAINT = QEvent.Type.Paint


def on_screen(widget: QWidget) -> bool:
    """True if part of `widget` can be painted now (shown, and not scrolled or clipped away)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


class PaintProbe(QObject):
    """Tells `sink(pointer)` when a value's widget first paints it settled (see the module docstring)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sink: Callable[[str], None] | None = None
        self._armed: dict[int, tuple[QWidget, list[str]]] = {}

    def arm(self, widget: QWidget, pointer: str) -> bool:
        """Report `pointer` at `widget`'s next paint; False (nothing armed) if no one listens or the
        widget is not on screen (it will not be painted)."""
        if self.sink is None or not on_screen(widget):
            return False
        entry = self._armed.get(id(widget))
        if entry is None:
            self._armed[id(widget)] = (widget, [pointer])
            widget.installEventFilter(self)
        elif pointer not in entry[1]:
            entry[1].append(pointer)
        return True

    def painted(self, pointer: str) -> None:
        """A value was painted settled by something that paints it itself (a table's delegate)."""
        if self.sink is not None:
            self.sink(pointer)

    def clear(self) -> None:
        """Forget every armed widget (the form was reset)."""
        for widget, _ in self._armed.values():
            try:
                widget.removeEventFilter(self)
            except RuntimeError:  # the widget is gone already (a chip of a shrunk array)
                pass
        self._armed.clear()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == _PAINT:
            entry = self._armed.pop(id(watched), None)
            if entry is not None:
                watched.removeEventFilter(self)
                if self.sink is not None:
                    for pointer in entry[1]:
                        self.sink(pointer)
        return False
