"""The Qt side of a run: starts `core.run.Run` as an asyncio task and reports it as Qt signals.

Status updates from the run (one per delta on a fast stream) are coalesced to one
`statusChanged` per frame; `finished` carries the final status. `stop()` is the real cancel
(`Run.stop()` cancels the task; the stream's context closes the HTTP response before the run
says "stopped"). `shutdown()` cancels whatever is running and waits for it, inside the loop, so
no stream is left for the garbage collector to finalise after the loop is gone.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from core.errors import LivefillError
from core.form import FormModel
from core.history import History
from core.run import Run, RunConfig, RunStatus

FRAME_MS = 16


class RunController(QObject):
    """Runs one `Run` at a time for a window (or a lane)."""

    statusChanged = Signal(object)  # RunStatus, at most once per frame
    finished = Signal(object)  # RunStatus, once per run, when it ended
    activeChanged = Signal(bool)
    error = Signal(str)  # the run could not start (or broke): a message for the user

    def __init__(self, parent: QObject | None = None, *, frame_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self.run: Run | None = None
        self.last_status: RunStatus | None = None
        self._task: asyncio.Task[Any] | None = None
        self._pending: RunStatus | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(frame_ms)
        self._timer.timeout.connect(self._flush)

    @property
    def active(self) -> bool:
        """True while a run's task is running."""
        return self._task is not None and not self._task.done()

    def start(self, form: FormModel, config: RunConfig, *, history: History | None = None, tap: Any = None) -> Run:
        """Start a run of `config` into `form`; returns it (its task runs on the current loop)."""
        if self.active:
            raise RuntimeError("a run is already active")
        run = Run(form, config, history=history, tap=tap)
        self.run = run
        run.subscribe(self._on_status)
        self._task = asyncio.ensure_future(self._drive(run))
        self.activeChanged.emit(True)
        return run

    def stop(self) -> bool:
        """Stop the active run (a real cancel). False if none is active."""
        return self.run.stop() if self.run is not None and self.active else False

    async def wait(self) -> RunStatus | None:
        """Wait for the active run (if any) to end; its final status."""
        if self._task is not None:
            await asyncio.shield(self._task)
        return self.last_status

    async def shutdown(self) -> None:
        """Cancel the active run and wait until its stream is closed."""
        task = self._task
        if task is not None and not task.done():
            if not self.stop():
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._timer.stop()

    def _on_status(self, status: RunStatus) -> None:
        self._pending = status
        if not self._timer.isActive():
            self._timer.start()

    def _flush(self) -> None:
        self._timer.stop()
        if self._pending is not None:
            status, self._pending = self._pending, None
            self.last_status = status
            self.statusChanged.emit(status)

    async def _drive(self, run: Run) -> None:
        try:
            await run.run()
        except LivefillError as exc:  # the run could not start (e.g. a mode whose part is missing)
            self.error.emit(str(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: the user must hear of it
            self.error.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self._pending = run.status
            self._flush()
            self._task = None
            self.finished.emit(run.status)
            self.activeChanged.emit(False)
