"""A Start pressed while the app still loads its providers: taken at once, run once they are up.

`PendingStart(window, status_line, warmup=..., start=..., ...)` is the window's one Start that
waits for the warm-up (`livefill.gui.warmup`: the embedded demo server and the provider SDKs load
in a background thread for the first seconds after launch). `take()` keeps the Start and shows at once
that it was taken; `cancel()` (Stop, Esc, opening a past run) drops it and shows the window as it
was. `waiting` says whether one is kept: the window greys Start and enables Stop meanwhile.

How this works: the kept Start is `warmup.defer(self._begin)`; when the warm-up is done,
`_begin` runs on the GUI thread, forgets the wait and calls `start` (the window's real Start).
While one waits, the main status line says "⇄ starting…" and the status bar says why it waits
(`WAITING_FOR_WARMUP`). The window's `show_busy()` greys what a run greys while `waiting` (or a
run is active); its `show_status()` shows the runs' own status line again after. Nothing in the
form changes before the run begins, so a cancel leaves the form as it was.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMainWindow

from livefill.gui.warmup import Warmup
from livefill.widgets.status_line import StatusLine

__all__ = ["PendingStart", "WAITING_FOR_WARMUP"]

WAITING_FOR_WARMUP = "starting as soon as the demo provider is up…"
"""The status bar's line while a Start waits for the warm-up."""


class PendingStart:
    """The window's Start waiting for the warm-up (see the module docstring). `warmup` is read
    when used (the app hands the window its warm-up after building it)."""

    def __init__(self, window: QMainWindow, status_line: StatusLine, *, warmup: Callable[[], Warmup],
                 start: Callable[[], None], show_busy: Callable[[], None], show_status: Callable[[], None]) -> None:
        self.window = window
        self.status_line = status_line
        self.warmup = warmup
        self.start = start
        self.show_busy = show_busy
        self.show_status = show_status
        self.waiting = False

    def take(self) -> bool:
        """Keep a Start until the warm-up is done and show it was taken: True. False: the warm-up
        is done (or none runs), the caller starts now."""
        if not self.warmup().defer(self._begin):
            self._forget()
            return False
        self.waiting = True
        self.window.statusBar().showMessage(WAITING_FOR_WARMUP)
        self.show_busy()
        self.status_line.show_starting()
        return True

    def cancel(self) -> bool:
        """Drop the Start kept (Stop, Esc, a past run opened) and show the window as it was; True if there was one."""
        kept = self.warmup().cancel_deferred()
        if kept or self.waiting:
            self._forget()
            self._show_idle()
        return kept

    def _begin(self) -> None:
        self._forget()
        try:
            self.start()
        finally:
            self._show_idle()  # it began (the run's status shows), or it could not (said; Start is pressable again)

    def _show_idle(self) -> None:
        self.show_busy()
        self.show_status()

    def _forget(self) -> None:
        self.waiting = False
        bar = self.window.statusBar()
        if bar.currentMessage() == WAITING_FOR_WARMUP:
            bar.clearMessage()
