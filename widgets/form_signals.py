"""The Qt side of a FormModel: its plain-Python updates as one Qt signal, coalesced per frame.

The form model calls its observers synchronously for every batch of changes (hundreds per second
on a fast stream). `FormSignals` collects the changed pointers and emits `updated` at most once
per frame, so widgets repaint once per frame however fast the stream: during a run, a change that
comes when the last emission is a frame old or more is emitted as soon as the event loop is free
(a 0 ms timer: no frame of delay on a slow stream), otherwise at the end of that frame (`frame_ms`
after the last emission) — unless a value settled (or was found invalid) with the change: that is
the moment the demo is about, so it does not wait for a longer `frame_ms`, only for the end of the
display frame (`settle_ms`, 16 ms, after the last emission; byte-to-pixel latency): at 1,000
tokens/s settles come a hundred a second or more, and each emission is a repaint of the form.
Outside a run (the user's edits, a load) a frame after the change.
Use `flush()` to deliver what is pending at once (tests, screenshots). `paint_probe` is where
the form's widgets report the first paint of a value shown settled (byte-to-pixel latency).
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal

from livefill.extraction.form import FormModel, FormUpdate
from livefill.widgets.paint_probe import PaintProbe

FRAME_MS = 16


class FormSignals(QObject):
    """Emits `updated(pointers: set[str], reset: bool)` after the form changed (once per frame)."""

    updated = Signal(object, bool)
    runningChanged = Signal(bool)

    def __init__(self, form: FormModel, parent: QObject | None = None, *, frame_ms: int = FRAME_MS,
                 settle_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self.form = form
        self._pointers: set[str] = set()
        self._reset = False
        self._frame_ms = frame_ms
        self._settle_ms = min(settle_ms, frame_ms)  # a settled value waits at most this after the last emission
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        # a frame is a frame: a coarse timer may fire up to 5 % early (two emissions 38 ms apart
        # at a 40 ms frame, seen once in a full test run)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.flush)
        self._since = QElapsedTimer()  # since the last emission
        self.paint_probe = PaintProbe(self)
        self._unsubscribe = form.subscribe(self._on_update)

    def _on_update(self, update: FormUpdate) -> None:
        if update.reset:
            self._reset = True
            self._pointers.clear()
            if update.running:  # a new run: what waited for a paint belongs to the last one
                self.paint_probe.clear()
        elif not self._reset:
            self._pointers |= update.pointers
        if update.running is not None:
            self.flush()
            self.runningChanged.emit(update.running)
            return
        if update.settled and self.form.running:
            # a value just settled: shown at the end of the display frame, not a longer frame's
            wait = max(0, self._settle_ms - self._since.elapsed()) if self._since.isValid() else 0
            if not self._timer.isActive() or self._timer.remainingTime() > wait:
                self._timer.start(wait)
        elif not self._timer.isActive():
            since = self._since.elapsed() if self._since.isValid() and self.form.running else 0
            self._timer.start(max(0, self._frame_ms - since))

    def flush(self) -> None:
        """Deliver the pending update now (no-op if nothing is pending)."""
        self._timer.stop()
        if not self._reset and not self._pointers:
            return
        pointers, reset = self._pointers, self._reset
        self._pointers, self._reset = set(), False
        self._since.start()
        self.updated.emit(pointers, reset)

    def detach(self) -> None:
        """Stop listening to the form (before the widgets go away)."""
        self._timer.stop()
        self._unsubscribe()
