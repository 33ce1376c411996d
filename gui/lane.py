"""One lane of the compare view: a form read in one mode, with its own run, metrics and wire.

How this works
--------------
A `Lane` is a column of the compare view. It owns a `FormModel` (for the scenario shown), the
`FormView` rendering it, a `RunController`, the lane's `LaneMetrics` (shown by its `LaneHeader`)
and, per run, a fresh `WireRecorder` (the wire inspector shows it). A `FormProbe` feeds the metrics
and the shared timeline from the form model; it is re-made whenever the form is.

`start(config, t0, final)` is called by the compare view with the same `RunConfig` for every lane
(same scenario, provider, speed, seed, slicing, fault) and one `t0`; the lane puts its own mode in
and starts the run with its recorder as the wire tap. When the run ends the lane closes its
metrics and its timeline bars at that moment. Nothing here decides anything about the run itself
(`core.run` does: naive keeps what it showed, the other modes restore on a stop).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.form import MISSING, FormModel
from core.metrics import FormProbe, LaneMetrics
from core.run import MODE_LABELS, Mode, Phase, Run, RunConfig, RunStatus
from core.scenarios import get_scenario
from core.schemas import schema_model
from core.taps import tee
from core.wiretap import DEFAULT_MAX_BYTES, WireRecorder
from gui.controller import RunController
from gui.field_picker import FieldPicker
from widgets.field_base import repolish
from widgets.form_view import FormView
from widgets.lane_header import LaneHeader
from widgets.status_line import status_text

__all__ = ["Lane", "outcome_of"]

HEADER_REFRESH_MS = 200
"""How often a lane header re-reads its metrics while they change (a summary walks every field)."""


def outcome_of(status: RunStatus) -> str:
    """How a run ended, for the metrics and the timeline ("committed", "stopped", "failed: ...")."""
    if status.phase is Phase.FAILED:
        return f"failed: {status.reason}" if status.reason else "failed"
    return status.phase.value


class Lane(QFrame):
    """One compare-view lane (see the module docstring).

    Signals: `statusChanged(RunStatus)` (at most once per frame), `finished(RunStatus)`,
    `activeChanged(bool)`, `fieldPicked(str lane, str pointer)` (the user pressed on a field),
    `modeChanged(str lane)`, `removeRequested(str lane)`, `error(str)`.
    """

    statusChanged = Signal(object)  # noqa: N815 - Qt signal naming
    finished = Signal(object)
    activeChanged = Signal(bool)  # noqa: N815
    fieldPicked = Signal(str, str)  # noqa: N815
    modeChanged = Signal(str)  # noqa: N815
    removeRequested = Signal(str)  # noqa: N815
    error = Signal(str)

    def __init__(
        self,
        name: str,
        *,
        scenario: str,
        mode: Mode | str = Mode.PARTIAL,
        timeline: Any = None,
        recorder_max_bytes: int = DEFAULT_MAX_BYTES,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.name = name
        self.setObjectName(f"lane:{name}")
        self.setProperty("role", "lane")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.mode = Mode(mode)
        self.scenario = scenario
        self.timeline = timeline
        self.recorder_max_bytes = recorder_max_bytes
        self.recorder: WireRecorder | None = None
        self.extra_tap: Any = None  # tests: another tap to see the wire (with the recorder)
        self.server_note = ""
        self._final: Any = MISSING
        self.title = self.mode.value
        self.metrics = LaneMetrics()
        self.controller = RunController(self)
        self.controller.statusChanged.connect(self._on_status)
        self.controller.finished.connect(self._on_finished)
        self.controller.activeChanged.connect(self._on_active)
        self.controller.activeChanged.connect(self.activeChanged)
        self.controller.error.connect(self.error)
        self.form: FormModel | None = None
        self.form_view: FormView | None = None
        self.probe: FormProbe | None = None
        self._picker: FieldPicker | None = None

        self.mode_combo = QComboBox(self)
        self.mode_combo.setObjectName("laneMode")
        for m in Mode:
            self.mode_combo.addItem(MODE_LABELS[m], m.value)
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(self.mode.value))
        self.mode_combo.setToolTip("How this lane reads the stream")
        self.mode_combo.currentIndexChanged.connect(self._mode_chosen)
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("laneRemove")
        self.remove_button.setText("✕")
        self.remove_button.setToolTip("Remove this lane")
        self.remove_button.clicked.connect(lambda: self.removeRequested.emit(self.name))
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        self.mode_label = QLabel("Mode")
        bar.addWidget(self.mode_label)
        bar.addWidget(self.mode_combo, 1)
        bar.addWidget(self.remove_button)
        self.bar = QWidget(self)
        self.bar.setObjectName("laneBar")
        self.bar.setLayout(bar)

        self.header = LaneHeader(self.metrics, mode=self.mode.value, live=False, parent=self, refresh_ms=HEADER_REFRESH_MS)
        self.status_label = QLabel(self)
        self.status_label.setObjectName("laneStatus")
        self.status_label.setWordWrap(True)
        self.status_label.setText(status_text(None).split(" — ")[0])

        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.bar)
        self._layout.addWidget(self.header, 0, Qt.AlignmentFlag.AlignTop)
        self._layout.addWidget(self.status_label)
        self._make_form()

    # -- reading ------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """True while this lane's run is running."""
        return self.controller.active

    @property
    def run(self) -> Run | None:
        """The lane's latest run."""
        return self.controller.run

    @property
    def last_status(self) -> RunStatus | None:
        """The latest status of the lane's run (None before the first)."""
        return self.controller.last_status

    def field(self, pointer: str) -> Any:
        """The widget of the field at `pointer` in this lane's form."""
        assert self.form_view is not None
        return self.form_view.field(pointer)

    def field_states(self) -> dict[str, str]:
        """The `state` property of every field widget shown, by pointer."""
        if self.form_view is None:
            return {}
        return {p: str(w.property("state")) for p, w in self.form_view.fields.items()}

    # -- set-up -------------------------------------------------------------------------------

    def set_title(self, title: str) -> None:
        """What the timeline and the metrics table call this lane."""
        self.title = title

    def set_mode(self, mode: Mode | str) -> None:
        """Read the next run in `mode` (not while a run is active)."""
        mode = Mode(mode)
        if self.active:
            raise RuntimeError("cannot change a lane's mode while it runs")
        if mode is self.mode and self.form is not None and self.form.marking == (mode is not Mode.NAIVE):
            return
        self.mode = mode
        i = self.mode_combo.findData(mode.value)
        if self.mode_combo.currentIndex() != i:
            self.mode_combo.blockSignals(True)
            self.mode_combo.setCurrentIndex(i)
            self.mode_combo.blockSignals(False)
        self.header.set_mode(mode.value)
        self.setProperty("mode", mode.value)
        repolish(self)
        self._show_form()
        self.modeChanged.emit(self.name)

    def set_scenario(self, scenario: str) -> None:
        """Show a fresh form for `scenario` (not while a run is active)."""
        if self.active:
            raise RuntimeError("cannot change a lane's scenario while it runs")
        if scenario == self.scenario and self.form is not None:
            return
        self.scenario = scenario
        self._make_form()

    def set_removable(self, removable: bool) -> None:
        """Enable the remove button (a compare view keeps at least two lanes)."""
        self.remove_button.setEnabled(removable and not self.active)
        self._removable = removable

    def _make_form(self) -> None:
        if self.probe is not None:
            self.probe.close()
        form = FormModel(schema_model(get_scenario(self.scenario).schema_name))
        self.form = form
        self.probe = FormProbe(form, self.metrics, lane=self.name, timeline=self.timeline)
        self.setProperty("mode", self.mode.value)
        self._show_form()

    def _show_form(self) -> None:
        form = self.form
        assert form is not None
        form.marking = self.mode is not Mode.NAIVE
        if self._picker is not None:
            self._picker.close()
        if self.form_view is not None:
            self.form_view.detach()
            self._layout.removeWidget(self.form_view)
            self.form_view.deleteLater()
        self.form_view = FormView(form)
        self._picker = FieldPicker(self.form_view)
        self._picker.picked.connect(lambda pointer: self.fieldPicked.emit(self.name, pointer))
        self._layout.addWidget(self.form_view, 1)

    def set_timeline(self, timeline: Any) -> None:
        """Report field transitions to `timeline` (a `TimelineModel` or a feed) from now on."""
        self.timeline = timeline
        if self.probe is not None:
            self.probe.timeline = timeline

    # -- a run ----------------------------------------------------------------------------------

    def start(self, config: RunConfig, t0: float, final: Any = MISSING) -> Run:
        """Start this lane's run of `config` (its own mode put in) at the shared `t0`."""
        assert self.form is not None
        self.recorder = WireRecorder(t0=t0, max_bytes=self.recorder_max_bytes)
        self.server_note = ""
        self.metrics.start(t0)
        self._final = final
        if final is not MISSING:
            self.metrics.set_final(final)
        self.header.set_live(config.demo is None)
        self.form.marking = self.mode is not Mode.NAIVE
        label = f"{config.label} · lane {self.title}" if config.label else f"lane {self.title}"
        cfg = replace(config, mode=self.mode, label=label)
        tap = tee(self.recorder, self.extra_tap)
        return self.controller.start(self.form, cfg, history=None, tap=tap)

    def stop(self) -> bool:
        """Stop this lane's run (a real cancel); False if none is active."""
        return self.controller.stop()

    def set_server_note(self, note: str) -> None:
        """What the demo provider saw of this lane's request (shown under the header)."""
        self.server_note = note
        self._show_status(self.last_status)

    def _on_status(self, status: RunStatus) -> None:
        self._show_status(status)
        self.statusChanged.emit(status)

    def _show_status(self, status: RunStatus | None) -> None:
        text = status_text(status)
        if status is not None and status.phase.final:
            head = text.split("  ·  ")[0]
            if self.server_note and self.server_note not in head:
                head = head.split(" — server ")[0] + f" — {self.server_note}"
            text = head
        self.status_label.setText(text)
        phase = status.phase.value if status is not None else "ready"
        if self.status_label.property("phase") != phase:
            self.status_label.setProperty("phase", phase)
            repolish(self.status_label)

    def _on_finished(self, status: RunStatus) -> None:
        now = time.monotonic()
        outcome = outcome_of(status)
        self.metrics.finish(now, outcome)
        if self.timeline is not None and hasattr(self.timeline, "model"):
            self.timeline.model.stop(self.name, now, outcome)
        elif self.timeline is not None:
            self.timeline.stop(self.name, now, outcome)
        run = self.controller.run
        if status.phase is Phase.COMMITTED and run is not None and run.result is not MISSING and run.result != self._final:
            self.metrics.set_final(run.result)  # (re-judging every display: only when it tells something new)
        self.header.refresh()  # the final figures at once, not a frame later
        self._show_status(status)
        self.finished.emit(status)

    def _on_active(self, active: bool) -> None:
        self.mode_combo.setEnabled(not active)
        self.remove_button.setEnabled(not active and getattr(self, "_removable", True))

    def _mode_chosen(self, _index: int) -> None:
        value = self.mode_combo.currentData()
        if value and Mode(value) is not self.mode:
            self.set_mode(Mode(value))

    async def shutdown(self) -> None:
        """Cancel the lane's run (if any) and wait until its stream is closed."""
        await self.controller.shutdown()
        self.release()

    def release(self) -> None:
        """Stop following the form (before the lane is thrown away)."""
        if self._picker is not None:
            self._picker.close()
        if self.form_view is not None:
            self.form_view.detach()
        if self.probe is not None:
            self.probe.close()
