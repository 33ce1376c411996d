"""View ▸ Autoplay for the window: the replay loop (`livefill.gui.autoplay`), its action, its status line.

`AutoplayControl` owns the window's `Autoplay`, keeps View ▸ Autoplay checked while the loop runs
and says between two runs when the next one starts (the screen said nothing before).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow

from livefill.gui.autoplay import DEFAULT_PAUSE, Autoplay
from livefill.gui.errors import reporting

__all__ = ["AutoplayControl", "AUTOPLAY_PAUSE"]

AUTOPLAY_PAUSE = "Autoplay: run "
"""The status bar's message between two autoplay runs begins so."""


class AutoplayControl(QObject):
    """Autoplay for `window` (it has `start()`, `stop()`, `active`, `wait_runs()`: `Autoplay`'s
    needs); `on_active()` re-renders what depends on whether something runs."""

    def __init__(self, window: QMainWindow, *, on_active: Callable[[], None]) -> None:
        super().__init__(window)
        self.window = window
        self.on_active = on_active
        self.action: QAction | None = None  # View ▸ Autoplay, once the menus are built
        self.autoplay = Autoplay(window, pause=DEFAULT_PAUSE)
        self.autoplay.activeChanged.connect(self._on_autoplay)
        self.autoplay.cycleFinished.connect(self._on_cycle)

    def start(self, pause: float | None = None, max_cycles: int | None = None) -> None:
        """Replay the chosen scenario in a loop (stop with Stop, Esc, or `autoplay.stop()`)."""
        if pause is not None:
            self.autoplay.pause = pause
        self.autoplay.max_cycles = max_cycles
        self.autoplay.start()

    @reporting
    def clicked(self, checked: bool) -> None:
        """View ▸ Autoplay was checked or unchecked."""
        if checked:
            self.start()
        else:
            self.autoplay.stop()

    def _on_autoplay(self, active: bool) -> None:
        if self.action is not None:
            self.action.setChecked(active)
        self.on_active()
        bar = self.window.statusBar()
        if not active and bar.currentMessage().startswith(AUTOPLAY_PAUSE):
            bar.clearMessage()  # "the next starts in …" is no longer true

    def _on_cycle(self, cycles: int) -> None:
        autoplay = self.autoplay
        if autoplay.max_cycles is not None and cycles >= autoplay.max_cycles:
            return
        self.window.statusBar().showMessage(
            f"{AUTOPLAY_PAUSE}{cycles} ended; the next starts in {autoplay.pause:g} s (Esc stops autoplay)",
            max(1, round(autoplay.pause * 1000)))
