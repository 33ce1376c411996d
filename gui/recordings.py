"""The window's record and replay: File → Record runs, File → Recordings, dropped traces.

How this works
--------------
`Recordings(window, session, file_menu, ...)` adds to the window: a checkable "Record runs" action (File menu; while on,
the status bar shows "● recording" and every run's lanes get a trace file: livefill.session.replay),
a File → Recordings submenu (rebuilt each time it opens: the newest recordings of
`livefill.recording.recordings.list_recordings()` with their date, provider, model, schema, document and ending, then
the bundled real-model traces `assets/scenarios/*/trace-*.jsonl`, then "Open trace…"; a trace that
cannot be used is listed disabled, its error as tooltip), a "replay: NAME ×1" indicator with a
close button in the status bar, and a replay speed choice shown in the Run toolbar in place of the
demo speed while replaying.

`open_trace(path)` loads a trace (a TraceError: one line naming the file and line, in the status
bar and a message box; the session is left as it was), hands it to the demo provider
(`window.trace_host(trace) -> id`, set by the app to `EmbeddedServer.add_trace`; else POST
/_demo/traces on the session's base URL) and makes it the session's replay: Start replays it in
the chosen mode (every compare lane reads it). The close button, or choosing a scenario, leaves
replay. When a run ends, the run log gets one line per trace written (or why a lane was not).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMenu, QToolButton, QWidget

from livefill.embedded.server import EmbeddedServer
from livefill.errors import TraceError
from livefill.session.session import Session
from livefill.session.session_events import ActiveChanged, AllDone, SessionEvent, SettingsChanged
from livefill.session.replay import RecordChanged, ReplayChanged, ReplaySource
from livefill.session.settings import REPLAY_SPEEDS
from livefill.recording.recordings import TraceSummary, list_recordings, recordings_dir, summarize
from livefill.recording.trace import Trace, load_trace
from livefill.gui.errors import reporting, show_error
from livefill.gui.run_toolbar import RunToolbar
from livefill.widgets.run_log import RunLog
from livefill.resources import SCENARIOS_DIR

__all__ = ["Recordings", "bundled_traces", "summary_text", "MAX_LISTED"]

MAX_LISTED = 15
ASSETS = SCENARIOS_DIR
_MODEL_NAMES = {"smollm2": "SmolLM2"}


def bundled_traces() -> list[tuple[str, Path]]:
    """The committed real-model traces: ("Real model: weather (SmolLM2)", path), by scenario. A
    recording whose run did not commit says how it ended ("… — validation failed at /priority"),
    so that its replay failing is no surprise."""
    out = []
    for path in sorted(ASSETS.glob("*/trace-*.jsonl")):
        model = path.stem.removeprefix("trace-")
        text = f"Real model: {path.parent.name} ({_MODEL_NAMES.get(model, model)})"
        ending = _ending(summarize(path))
        out.append((f"{text} — {ending}" if ending else text, path))
    return out


def _ending(summary: TraceSummary) -> str:
    """How a recorded run that did not complete ended, in a few words ("" if it completed)."""
    if summary.error or summary.end in ("complete", ""):
        return ""
    reason = (summary.reason or "").split(":", 1)[0].strip()  # "validation failed at /priority"
    return reason if summary.end == "failed" and reason else summary.end


def _modified(summary: TraceSummary) -> float:
    try:
        return summary.path.stat().st_mtime
    except OSError:
        return 0.0


def summary_text(s: TraceSummary) -> str:
    """One Recordings menu line: date, provider, model, schema, document, the mode it was read in
    (compare lanes recorded at once differ only there), ending."""
    if s.error:
        return f"{s.path.name} — cannot be replayed"
    when = s.started_at.replace("T", " ")[:16]
    document = s.label.removeprefix("extract · ").removeprefix("replay ").split(" · ")[0] if s.label else ""
    parts = [when, s.provider, s.model or "", s.schema_name, document, f"{s.mode} mode" if s.mode else "", s.end]
    return " · ".join(p for p in parts if p)


class Recordings(QObject):
    """Record and replay for `window` (see the module docstring)."""

    def __init__(self, window: QMainWindow, session: Session, file_menu: QMenu, *, toolbar: RunToolbar, run_log: RunLog,
                 before: QAction | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.run_log = run_log
        self.trace_host: Callable[[Trace], str] | None = None
        self.last_error: str | None = None
        self.directory: str | None = None  # where the menu lists recordings (None: recordings_dir())
        self.folders: list[Path] = []  # other folders recorded into since the app started: listed too

        self.record_action = QAction("Record runs", window, checkable=True)
        self.record_action.setObjectName("recordAction")
        self.record_action.setToolTip("Write every run's stream, byte for byte with its timing, to a trace file")
        self.record_action.toggled.connect(reporting(self._record_toggled))
        self.menu = QMenu("Recordings", window)
        self.menu.setObjectName("recordingsMenu")
        self.menu.aboutToShow.connect(self.rebuild_menu)
        self.open_action = QAction("Open trace…", window)
        self.open_action.setObjectName("openTraceAction")
        self.open_action.triggered.connect(reporting(lambda _checked=False: self.ask_open()))
        file_menu.insertAction(before, self.record_action)
        file_menu.insertMenu(before, self.menu)
        file_menu.insertSeparator(before)

        bar = window.statusBar()
        self.record_label = QLabel("● recording")
        self.record_label.setObjectName("recordingIndicator")
        self.record_label.setStyleSheet("color: #c62828; font-weight: bold;")
        self.record_label.setVisible(False)
        bar.addPermanentWidget(self.record_label)
        self.replay_box = QWidget()
        self.replay_box.setObjectName("replayIndicator")
        box = QHBoxLayout(self.replay_box)
        box.setContentsMargins(0, 0, 0, 0)
        self.replay_label = QLabel()
        self.replay_label.setObjectName("replayLabel")
        self.replay_close = QToolButton()
        self.replay_close.setObjectName("replayClose")
        self.replay_close.setText("×")
        self.replay_close.setToolTip("Leave replay (back to the demo provider's scenarios)")
        self.replay_close.clicked.connect(reporting(lambda _checked=False: self.leave()))
        box.addWidget(self.replay_label)
        box.addWidget(self.replay_close)
        self.replay_box.setVisible(False)
        bar.addPermanentWidget(self.replay_box)

        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("replaySpeedCombo")
        self.speed_combo.setToolTip("How fast the recorded stream is replayed (its recorded timing, scaled)")
        for label, value in REPLAY_SPEEDS:
            self.speed_combo.addItem(label, value)
        self.speed_combo.currentIndexChanged.connect(reporting(self._speed_chosen))
        bar = toolbar.bar
        self._demo_speed_actions = [a for a in bar.actions() if bar.widgetForAction(a) is toolbar.speed_combo]
        anchor = self._demo_speed_actions[0] if self._demo_speed_actions else None
        self.speed_action = bar.insertWidget(anchor, self.speed_combo) if anchor else bar.addWidget(self.speed_combo)
        self.speed_action.setVisible(False)
        self._hidden_demo: list[QAction] = []
        self.session.subscribe(self._on_session_event)
        self._show_speed()

    def apply_args(self, args: argparse.Namespace, server: EmbeddedServer | None = None) -> None:
        """The app's `--record [PATH]`, `--replay TRACE` and `--replay-speed X` (`server`: the
        embedded demo provider, which keeps the trace)."""
        if server is not None:  # (a server in a process of its own has none: a trace goes over HTTP)
            self.trace_host = getattr(server, "add_trace", None)
        speed = getattr(args, "replay_speed", None)
        if speed is not None and speed != self.session.settings.replay_speed:
            self.session.replace(replay_speed=float(speed))
        if getattr(args, "record", None) is not None:
            self.record(args.record)
        if getattr(args, "replay", None):
            self.open_trace(getattr(args, "replay_trace", None) or args.replay)

    # -- recording --------------------------------------------------------------------------

    def record(self, target: str | None) -> None:
        """Record every run (`target`: "" the recordings folder, a directory or a file; None: stop)."""
        self.session.set_record(target)

    @property
    def recording(self) -> bool:
        return self.session.record_target is not None

    def _record_toggled(self, on: bool) -> None:
        if on != self.recording:
            self.session.set_record("" if on else None)

    # -- opening a trace ----------------------------------------------------------------------

    def ask_open(self) -> None:
        dialog = QFileDialog(self.window, "Open a recorded trace", str(recordings_dir()), "Traces (*.jsonl)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(reporting(lambda chosen: self.open_trace(chosen) if chosen else None))
        dialog.open()

    def open_trace(self, path: str | Path | Trace) -> bool:
        """Replay the trace at `path` (or one already loaded) from now on (False, and one line shown,
        if it cannot be used)."""
        if self.session.active:
            self._fail("a run is active: stop it before opening a trace")
            return False
        try:
            trace = path if isinstance(path, Trace) else load_trace(path)
            trace_id = self._host(trace)
        except TraceError as exc:
            self._fail(str(exc))
            return False
        self.last_error = None
        self.session.open_replay(ReplaySource(trace, trace_id))
        self.window.statusBar().showMessage(f"replaying {trace.name}: press Start", 8000)
        return True

    def _host(self, trace: Trace) -> str:
        if self.trace_host is not None:
            return self.trace_host(trace)
        import httpx  # lazy: off the launch path until a trace is handed over HTTP (~200-370 ms at load 9)

        base = self.session.settings.base_url.rstrip("/")
        raw = Path(trace.path).read_bytes()
        try:
            response = httpx.post(f"{base}/_demo/traces", params={"name": trace.path}, content=raw, timeout=10)
        except httpx.HTTPError as exc:
            raise TraceError(f"{trace.path}: the demo provider at {base} could not take the trace: {exc}") from None
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        if response.status_code != 200 or "id" not in body:
            message = (body.get("error") or {}).get("message") or f"HTTP {response.status_code}"
            raise TraceError(f"{trace.path}: the demo provider refused the trace: {message}")
        return str(body["id"])

    def _fail(self, message: str) -> None:
        line = message.splitlines()[0] if message else "the trace cannot be used"
        self.last_error = line
        self.window.statusBar().showMessage(line, 15000)
        show_error(line, self.window)

    def leave(self) -> None:
        """Leave replay: back to the scenario."""
        self.session.leave_replay()

    # -- the menu -----------------------------------------------------------------------------

    def rebuild_menu(self) -> None:
        self.menu.clear()
        found = self._listed()
        if not found:
            empty = self.menu.addAction("No recordings yet (File → Record runs)")
            empty.setEnabled(False)
        for summary in found:
            action = self.menu.addAction(summary_text(summary))
            action.setData(str(summary.path))
            if summary.error:
                action.setEnabled(False)
                action.setToolTip(summary.error)
            else:
                action.setToolTip(str(summary.path))
                action.triggered.connect(reporting(lambda _c=False, p=summary.path: self.open_trace(p)))
        bundled = bundled_traces()
        if bundled:
            self.menu.addSeparator()
            for text, path in bundled:
                action = self.menu.addAction(text)
                action.setData(str(path))
                reason = summarize(path).reason
                action.setToolTip(f"{reason}\n{path}" if reason else str(path))
                action.triggered.connect(reporting(lambda _c=False, p=path: self.open_trace(p)))
        self.menu.addSeparator()
        self.menu.addAction(self.open_action)
        self.menu.setToolTipsVisible(True)

    def _listed(self) -> list[TraceSummary]:
        """The recordings to list, newest first: the recordings folder's, and those of every other
        folder runs were recorded into since the app started (`--record DIR`, or a file's folder)."""
        listed = Path(self.directory) if self.directory is not None else recordings_dir()
        found = list_recordings(listed, limit=MAX_LISTED)
        others = {folder.resolve() for folder in self.folders} - {listed.resolve()}
        if others:
            for folder in others:
                found += list_recordings(folder, limit=MAX_LISTED)
            found.sort(key=_modified, reverse=True)
        return found[:MAX_LISTED]

    def entries(self) -> list[tuple[str, bool, str]]:
        """The menu's lines (text, enabled, tooltip), as it shows them now."""
        self.rebuild_menu()
        return [(a.text(), a.isEnabled(), a.toolTip()) for a in self.menu.actions() if not a.isSeparator()]

    # -- following the session ----------------------------------------------------------------

    def _speed_chosen(self, _index: int) -> None:
        value = self.speed_combo.currentData()
        if value is not None and float(value) != self.session.settings.replay_speed:
            self.session.replace(replay_speed=float(value))

    def _show_speed(self) -> None:
        replaying = self.session.replay is not None
        if replaying:
            self._hide_demo_speed()
        elif self.speed_action.isVisible():
            for action in self._hidden_demo:
                action.setVisible(True)
            self._hidden_demo = []
        self.speed_action.setVisible(replaying)
        speed = self.session.settings.replay_speed
        index = self.speed_combo.findData(speed)
        if index < 0:
            self.speed_combo.addItem(f"{speed:g}×", speed)
            index = self.speed_combo.count() - 1
        self.speed_combo.blockSignals(True)
        self.speed_combo.setCurrentIndex(index)
        self.speed_combo.blockSignals(False)
        source = self.session.replay
        if source is not None:
            label = next((t for t, v in REPLAY_SPEEDS if v == speed), f"{speed:g}×")
            self.replay_label.setText(f"replay: {source.name} {'×' + format(speed, 'g') if speed else label}")
            t = source.trace
            self.replay_label.setToolTip(
                f"{t.path}\nrecorded from {t.provider} ({t.model or 'no model named'}), {t.header.get('started_at', '')}, "
                f"ended {t.end}; the demo provider serves it on the {t.wire} wire, in the mode you choose"
            )
        self.replay_box.setVisible(replaying)

    def _hide_demo_speed(self) -> None:
        """The demo speed gives way while replaying (the toolbar shows it again on every settings
        change, so this runs after each one)."""
        for action in self._demo_speed_actions:
            if action.isVisible():
                action.setVisible(False)
                if action not in self._hidden_demo:
                    self._hidden_demo.append(action)

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, ReplayChanged):
            self._show_speed()
            bar = self.window.statusBar()
            if self.session.replay is None and bar.currentMessage().startswith("replaying "):
                bar.clearMessage()  # its "press Start" is no longer true
        elif isinstance(event, RecordChanged):
            on = event.target is not None
            if event.target:  # a folder of the user's (or a file's): its recordings are listed too from now on
                chosen = Path(event.target).expanduser()
                folder = chosen if chosen.is_dir() else chosen.parent
                if folder not in self.folders:
                    self.folders.append(folder)
            self.record_label.setVisible(on)
            self.record_label.setToolTip(event.target or "into the recordings folder")
            if self.record_action.isChecked() != on:
                self.record_action.blockSignals(True)
                self.record_action.setChecked(on)
                self.record_action.blockSignals(False)
        elif isinstance(event, SettingsChanged):
            if "replay_speed" in event.changed:
                self._show_speed()
            elif self.session.replay is not None:
                self._hide_demo_speed()
            if (
                self.session.replay is not None and not self.session.active
                and event.changed & {"scenario", "document", "schema_name"}
            ):  # a scenario or a document of one's own was chosen: replay is over
                chose_scenario = "scenario" in event.changed or event.settings.document is None
                self.session.leave_replay(keep_document=not chose_scenario)
        elif isinstance(event, ActiveChanged) and event.active:
            bar = self.window.statusBar()
            if bar.currentMessage().startswith("replaying "):
                bar.clearMessage()  # "press Start": it was pressed
            if self.session.record_notes:
                bar.showMessage("; ".join(self.session.record_notes), 15000)
        elif isinstance(event, AllDone):
            self._log_traces()

    def _log_traces(self) -> None:
        session = self.session
        lines = []
        for lane in (session.single, *session.compare_lanes):
            path = session.record_paths.get(lane.name)
            run = lane.run
            if path is None or run is None:
                continue
            writer = run.recorder
            who = "" if lane is session.single else f"lane {lane.title}: "
            if writer is not None and writer.error:
                lines.append(f"{who}{writer.error}")
            elif writer is not None and writer.begun:
                lines.append(f"{who}trace written to {path}")
            else:
                lines.append(f"{who}no trace (the run ended before any response)")
        lines.extend(session.record_notes)
        if lines:
            self.run_log.addItem("recorded: " + "; ".join(lines))
            self.run_log.scrollToBottom()
