"""File → Export animation…: the trace on hand rendered to an animated GIF (or MP4) in the background.

How this works
--------------
The trace is the one open for replay (`session.replay`), else the last one a recorded run wrote
(`session.record_paths`, the single form's lane first). The action is enabled only while there is
one, no run is going and no export is running; greyed, its text, tooltip and status tip say why
("needs a recorded run", and how to get one). The output path comes from a save dialog (`ask()`), or is given to
`export(path)` directly (tests, scripts). The render is `python -m livefill.gui.app animate TRACE OUT
[--compare MODES | --mode M]` in a QProcess, so the window stays responsive however long it takes:
the view (compare lanes or the single form's mode) is the window's at the moment of export. The
status bar says "rendering animation…" meanwhile, then the written path with an "Open folder"
button (QDesktopServices), or the command's one-line error (its last stderr line). Closing the
window (or `cancel()`) kills a render still going; it ends as "cancelled".
"""

from __future__ import annotations

import sys
from pathlib import Path
from PySide6.QtCore import QEvent, QObject, QProcess, QProcessEnvironment, Qt, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QToolButton

from livefill.recording.animation import check_output
from livefill.errors import UsageError
from livefill.gui.errors import reporting
from livefill.gui.saves import confirm_saved, save_folder
from livefill.session.session import Session

__all__ = ["AnimationExport", "NEEDS_TRACE"]

TEXT = "Export animation…"
TIP = "Render the replayed (or last recorded) run to an animated GIF or MP4"
NEEDS_TRACE = ("Export animation needs a recorded run: turn on File → Record runs and run, "
               "or open one (File → Recordings)")


class AnimationExport(QObject):
    """File → Export animation… for `window` showing `session` (see the module docstring)."""

    finished = Signal(bool, str)
    """(ok, the written path or the error line) when an export ends."""

    def __init__(self, window: QMainWindow, session: Session, file_menu: QMenu, *, before: QAction | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.process: QProcess | None = None
        self.out: Path | None = None
        self.last_error: str | None = None
        self._cancelled = False
        self.action = QAction(TEXT, window)
        self.action.setObjectName("exportAnimationAction")
        self.action.triggered.connect(reporting(lambda _checked=False: self.ask()))
        file_menu.insertAction(before, self.action)
        file_menu.setToolTipsVisible(True)  # a greyed item says why on hover, not only in its text
        file_menu.aboutToShow.connect(self.update_enabled)
        self.open_button = QToolButton()
        self.open_button.setObjectName("openAnimationFolder")
        self.open_button.setText("Open folder")
        self.open_button.setToolTip("Show the folder of the exported animation")
        self.open_button.clicked.connect(reporting(lambda _checked=False: self.open_folder()))
        self.open_button.setVisible(False)
        window.statusBar().addPermanentWidget(self.open_button)
        self.session.subscribe(lambda _event: self.update_enabled())
        window.installEventFilter(self)  # closing the window stops a render still going
        self.update_enabled()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if obj is self.window and event.type() == QEvent.Type.Close:
            self.cancel()
        return False

    def trace_path(self) -> Path | None:
        """The trace an export renders: the one open for replay, else the last one recorded."""
        replay = self.session.replay
        if replay is not None and replay.trace.path:
            return Path(replay.trace.path).resolve()
        paths = self.session.record_paths
        single = self.session.single.name
        for name in (single, *paths):
            path = paths.get(name)
            if path and Path(path).is_file():
                return Path(path).resolve()
        return None

    @property
    def running(self) -> bool:
        return self.process is not None

    def why_disabled(self) -> tuple[str, str] | None:
        """Why the export cannot be started now: (a few words for the menu item, the whole hint), or None."""
        if self.running:
            return "rendering…", "An animation is rendering (the status bar says when it is written)"
        if self.trace_path() is None:
            return "needs a recorded run", NEEDS_TRACE
        if self.session.active:
            return "after this run", "Export animation renders a recorded run: it is available when this run ends"
        return None

    def update_enabled(self) -> None:
        why = self.why_disabled()
        self.action.setEnabled(why is None)
        self.action.setText(TEXT if why is None else f"{TEXT} ({why[0]})")
        tip = TIP if why is None else why[1]
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)

    def ask(self) -> None:
        """A save dialog for the output (never a nested event loop), then `export`."""
        trace = self.trace_path()
        if trace is None:
            self._fail("no trace to export: open one (File → Recordings) or record a run first (File → Record runs)")
            return
        folder = save_folder(self.window)
        dialog = QFileDialog(self.window, "Export the run as an animation", str(Path(folder) / f"{trace.stem}.gif"),
                             "Animated GIF (*.gif);;MP4 video (*.mp4)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("gif")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(reporting(lambda chosen: self.export(chosen) if chosen else None))
        dialog.open()

    def command(self, out: Path) -> list[str]:
        """The render's argv (after the Python interpreter)."""
        trace = self.trace_path()
        assert trace is not None
        argv = ["-m", "livefill.gui.app", "animate", str(trace), str(out)]
        lanes = [lane.mode.value for lane in self.session.compare_lanes] if self.session.comparing else []
        if lanes:
            argv += ["--compare", ",".join(lanes)]
        else:
            argv += ["--mode", self.session.settings.mode.value]
        return argv

    def export(self, path: str | Path) -> bool:
        """Start rendering to `path` (False, with the reason in the status bar, when it cannot)."""
        if self.running:
            self._fail("an animation is already rendering")
            return False
        if self.trace_path() is None:
            self._fail("no trace to export: open one (File → Recordings) or record a run first (File → Record runs)")
            return False
        try:
            out = check_output(path).resolve()
        except UsageError as exc:
            self._fail(str(exc))
            return False
        self.out = out
        self.last_error = None
        self._cancelled = False
        self.open_button.setVisible(False)
        process = QProcess(self)
        process.setWorkingDirectory(str(out.parent))
        process.setProgram(sys.executable)
        process.setArguments(self.command(out))
        env = QProcessEnvironment.systemEnvironment()
        env.insert("QT_QPA_PLATFORM", "offscreen")
        process.setProcessEnvironment(env)
        process.finished.connect(self._done)
        process.errorOccurred.connect(self._process_error)
        self.process = process
        self.update_enabled()
        self.window.statusBar().showMessage(f"rendering animation… ({out.name})")
        process.start()
        return True

    def _process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._end(False, f"could not start the renderer: {self.process.errorString() if self.process else error}")

    def _done(self, code: int, _status: QProcess.ExitStatus) -> None:
        process = self.process
        if process is None:
            return
        stderr = bytes(process.readAllStandardError().data()).decode("utf-8", "replace")
        if self._cancelled:
            self._end(False, "cancelled")
            return
        if code == 0 and self.out is not None and self.out.is_file():
            self._end(True, str(self.out))
            return
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        self._end(False, lines[-1] if lines else f"the renderer exited with status {code}")

    def _end(self, ok: bool, text: str) -> None:
        if self.process is not None:
            self.process.deleteLater()
        self.process = None
        self.update_enabled()
        if ok:
            confirm_saved(self.window, text, "the animation")
            self.open_button.setVisible(True)
        else:
            self._fail(text)
        self.finished.emit(ok, text)

    def _fail(self, line: str) -> None:
        line = line.removeprefix("livefill animate: ")
        self.last_error = line
        self.window.statusBar().showMessage(f"export animation: {line}", 15000)

    def open_folder(self) -> None:
        if self.out is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.out.parent)))

    def cancel(self) -> None:
        """Stop a running render (the window is closing); it ends as "cancelled"."""
        if self.process is not None:
            self._cancelled = True
            self.process.kill()
            self.process.waitForFinished(3000)
