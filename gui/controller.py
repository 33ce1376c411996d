"""The Qt side of a lane's runs: a session lane's events as Qt signals, status coalesced.

`RunController(lane)` subscribes to a `livefill.session.lane.SessionLane` (which drives its `Run` as
an asyncio task). Status updates from the run (one per delta on a fast stream) are coalesced: a
new phase (connecting, streaming, ...) is told within a frame; while the phase stays, only the
counts and the elapsed time change, and those are told at most every `STEADY_MS` (a person reads
"7.4 s · 41 deltas" ten times a second at best; at once a frame the status lines of three compare
lanes and the window cost the GUI thread a few points for nothing). `finished` carries the final
status once the latest status has been flushed; `reset` says the lane forgot its last run (it
shows another document, or its form was cleared): `last_status` is None, "ready", again.
`stop()`, `wait()` and `shutdown()` are the lane's own.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from livefill.session.run import Run
from livefill.session.run_status import RunStatus
from livefill.session.lane import LaneError, LaneEvent, LaneFinished, LaneReset, LaneStarted, LaneStatus, SessionLane

FRAME_MS = 16
STEADY_MS = 100


class RunController(QObject):
    """A session lane's run events for the widgets (see the module docstring)."""

    statusChanged = Signal(object)  # noqa: N815 - RunStatus, coalesced (see the module docstring)
    started = Signal(object)  # the Run that just started
    finished = Signal(object)  # RunStatus, once per run, when it ended
    activeChanged = Signal(bool)  # noqa: N815
    error = Signal(str)  # the run could not start (or broke): a message for the user
    reset = Signal()  # the lane forgot its last run: no status to show ("ready")

    def __init__(
        self, lane: SessionLane, parent: QObject | None = None, *, frame_ms: int = FRAME_MS, steady_ms: int = STEADY_MS
    ) -> None:
        super().__init__(parent)
        self.lane = lane
        self.last_status: RunStatus | None = lane.status
        self._pending: RunStatus | None = None
        self._frame_ms = frame_ms
        self._steady_ms = max(frame_ms, steady_ms)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._flush)
        self._unsubscribe = lane.subscribe(self._on_event)

    @property
    def active(self) -> bool:
        """True while the lane's run is running."""
        return self.lane.active

    @property
    def run(self) -> Run | None:
        """The lane's latest run."""
        return self.lane.run

    def stop(self) -> bool:
        """Stop the active run (a real cancel). False if none is active."""
        return self.lane.stop()

    async def wait(self) -> RunStatus | None:
        """Wait for the active run (if any) to end; its final status."""
        await self.lane.wait()
        return self.last_status

    async def shutdown(self) -> None:
        """Cancel the active run and wait until its stream is closed."""
        await self.lane.shutdown()
        self._timer.stop()

    def detach(self) -> None:
        """Stop following the lane."""
        self._unsubscribe()
        self._timer.stop()

    def _on_event(self, event: LaneEvent) -> None:
        if isinstance(event, LaneStatus):
            self._pending = event.status
            last = self.last_status
            steady = last is not None and last.run_id == event.status.run_id and last.phase is event.status.phase
            wait = self._steady_ms if steady else self._frame_ms
            if not self._timer.isActive() or self._timer.remainingTime() > wait:
                self._timer.start(wait)
        elif isinstance(event, LaneStarted):
            self.started.emit(event.run)
            self.activeChanged.emit(True)
        elif isinstance(event, LaneError):
            self.error.emit(event.message)
        elif isinstance(event, LaneFinished):
            self._pending = event.status
            self._flush()
            self.finished.emit(event.status)
            self.activeChanged.emit(False)
        elif isinstance(event, LaneReset):
            self._timer.stop()
            self._pending = None
            self.last_status = None
            self.reset.emit()

    def _flush(self) -> None:
        self._timer.stop()
        if self._pending is not None:
            status, self._pending = self._pending, None
            self.last_status = status
            self.statusChanged.emit(status)
