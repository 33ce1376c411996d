"""A lane on screen: the form of a session lane, and (in the compare view) its bar, header and status.

How this works
--------------
`Lane` renders one `livefill.session.lane.SessionLane`: the `FormView` of the lane's form model
(re-made when the session lane shows another form), and, with `chrome=True` (a compare lane), a
bar with the lane's mode, its settings button (`livefill.gui.lane_settings`: provider, model,
wire, knobs of its own) and a remove button, a `LaneHeader` showing its metrics and a status
label. The single form is the same widget with `chrome=False`: just the form. The lane keeps no
setting of its own: choosing a mode or pressing remove sends the intent to the session. Its
`RunController` turns the lane's run events into Qt signals (status once a frame). A lane that
measures tells its metrics when a value is first painted settled (byte-to-pixel latency).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.session.run import Run
from livefill.session.run_status import RunStatus
from livefill.session.session import Session
from livefill.recording.wiretap import WireRecorder
from livefill.session.lane import LaneEvent, LaneFormReplaced, LaneModeChanged, SessionLane
from livefill.session.metrics import LaneMetrics
from livefill.gui.controller import RunController
from livefill.gui.errors import reporting
from livefill.gui.field_picker import FieldPicker
from livefill.gui.lane_settings import LaneSettingsDialog
from livefill.gui.run_toolbar import ElidingCombo
from livefill.widgets.field_base import FieldWidget, repolish
from livefill.widgets.form_view import FormView
from livefill.widgets.elided_label import ElidedLabel
from livefill.widgets.lane_header import LaneHeader
from livefill.widgets.status_line import status_text
from livefill.widgets.turn_timer import next_turn_timer

__all__ = ["Lane", "HEADER_REFRESH_MS"]

LANE_LABEL_WIDTH = 100
"""A compare lane's field labels are this wide (the single form's: LABEL_WIDTH)."""

BESIDE_CHARS = 64
"""A compare lane's form narrower than this many average characters puts each field's label over
its value (the value then gets the whole width instead of being cut short)."""

HEADER_REFRESH_MS = 200
"""How often a lane header re-reads its metrics while they change (a summary walks every field)."""


class Lane(QFrame):
    """One session lane on screen (see the module docstring).

    Signals: `statusChanged(RunStatus)` (at most once per frame), `finished(RunStatus)`,
    `statusReset()` (the lane forgot its last run: it is "ready", its figures empty),
    `activeChanged(bool)`, `fieldPicked(str lane, str pointer)` (the user pressed on a field),
    `error(str)`.
    """

    statusChanged = Signal(object)  # noqa: N815 - Qt signal naming
    finished = Signal(object)
    statusReset = Signal()  # noqa: N815
    activeChanged = Signal(bool)  # noqa: N815
    fieldPicked = Signal(str, str)  # noqa: N815
    error = Signal(str)

    def __init__(self, session: Session, lane: SessionLane, *, chrome: bool = True, parent: QWidget | None = None,
                 defer_form: bool = False) -> None:
        super().__init__(parent)
        self.session = session
        self.model = lane
        self.chrome = chrome
        self.setObjectName(f"lane:{lane.name}")
        self.form_view: FormView | None = None
        self.form_deferred = defer_form  # the form is built on first use (`ensure_form`): a view hidden at launch
        self._picker: FieldPicker | None = None
        self._removable = True
        self.settings_dialog: LaneSettingsDialog | None = None  # the last one opened
        self.controller = RunController(lane, self)
        self.controller.statusChanged.connect(self._on_status)
        self.controller.started.connect(self._on_started)
        self.controller.finished.connect(self._on_finished)
        self.controller.reset.connect(self._on_reset)
        self.controller.activeChanged.connect(self._on_active)
        self.controller.activeChanged.connect(self.activeChanged)
        self.controller.error.connect(self.error)
        self._unsubscribe = lane.subscribe(self._on_lane_event)

        self._fit_timer = next_turn_timer(self, self.fit_fields)
        self.fit_width: Callable[[], int] | None = None  # the compare view's: its narrowest lane's, so rows line up
        self._layout = QVBoxLayout(self)
        self.header: LaneHeader | None = None
        if chrome:
            self._build_chrome()
        else:
            self._layout.setContentsMargins(0, 0, 0, 0)
        self._show_form()

    def _build_chrome(self) -> None:
        lane = self.model
        self.setProperty("role", "lane")
        self.setProperty("mode", lane.mode.value)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.mode_combo = ElidingCombo(self)  # a narrow lane shows "naive — incorrect o…", never cut mid-word
        self.mode_combo.setObjectName("laneMode")
        for m in Mode:
            self.mode_combo.addItem(m.label, m.value)
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(lane.mode.value))
        self.mode_combo.setToolTip("How this lane reads the stream")
        # as wide as the lane allows, never wider: "naive — incorrect on purpose" must not widen a lane
        self.mode_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode_combo.setMinimumContentsLength(8)
        self.mode_combo.view().setMinimumWidth(self.mode_combo.view().sizeHintForColumn(0) + 24)
        self.mode_combo.currentIndexChanged.connect(self._mode_chosen)
        self.settings_button = QToolButton(self)
        self.settings_button.setObjectName("laneSettings")
        self.settings_button.setText("⚙")
        self.settings_button.setToolTip("This lane's settings: provider, model, wire, mode, demo knobs")
        self.settings_button.clicked.connect(self.edit_settings)
        self.remove_button = QToolButton(self)
        self.remove_button.setObjectName("laneRemove")
        self.remove_button.setText("✕")
        self.remove_button.setToolTip("Remove this lane")
        self.remove_button.clicked.connect(self._remove_clicked)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        self.mode_label = QLabel("Mode")
        bar.addWidget(self.mode_label)
        bar.addWidget(self.mode_combo, 1)
        bar.addWidget(self.settings_button)
        bar.addWidget(self.remove_button)
        self.bar = QWidget(self)
        self.bar.setObjectName("laneBar")
        self.bar.setLayout(bar)
        self.header = LaneHeader(lane.metrics, mode=lane.mode.value, live=False, parent=self, refresh_ms=HEADER_REFRESH_MS)
        # a long reason: elided, whole in the tooltip; always two lines high, so the form under it
        # does not jump while the figures in the line grow
        self.status_label = ElidedLabel(parent=self, max_lines=2, min_lines=2)
        self.status_label.setObjectName("laneStatus")
        self._show_status(None)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.bar)
        self._layout.addWidget(self.header, 0, Qt.AlignmentFlag.AlignTop)
        self._layout.addWidget(self.status_label)

    # -- reading (the session lane's) -----------------------------------------------------------

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def mode(self) -> Mode:
        return self.model.mode

    @property
    def title(self) -> str:
        """What the timeline and the metrics table call this lane."""
        return self.model.title

    @property
    def form(self) -> FormModel:
        return self.model.form

    @property
    def metrics(self) -> LaneMetrics:
        return self.model.metrics

    @property
    def recorder(self) -> WireRecorder | None:
        """The wire recorder of the lane's latest run."""
        return self.model.recorder

    @property
    def server_note(self) -> str:
        return self.model.server_note

    @property
    def extra_tap(self) -> Any:
        """Another wire tap that sees the lane's next runs (with the recorder)."""
        return self.model.extra_tap

    @extra_tap.setter
    def extra_tap(self, tap: Any) -> None:
        self.model.extra_tap = tap

    @property
    def active(self) -> bool:
        return self.model.active

    @property
    def run(self) -> Run | None:
        return self.model.run

    @property
    def last_status(self) -> RunStatus | None:
        """The latest status shown (None before the first run)."""
        return self.controller.last_status

    def field(self, pointer: str) -> FieldWidget:
        """The widget of the field at `pointer` in this lane's form."""
        view = self.ensure_form()
        assert view is not None
        return view.field(pointer)

    def field_states(self) -> dict[str, str]:
        """The `state` property of every field widget shown, by pointer."""
        if self.form_view is None:
            return {}
        return {p: str(w.property("state")) for p, w in self.form_view.fields.items()}

    def set_removable(self, removable: bool) -> None:
        """Enable the remove button (a compare view keeps at least two lanes)."""
        self._removable = removable
        if self.chrome:
            self.remove_button.setEnabled(removable and not self.active)

    def edit_settings(self) -> LaneSettingsDialog:
        """Open the lane's settings (provider, model, wire, mode, knobs: `livefill.gui.lane_settings`)."""
        dialog = LaneSettingsDialog(self.session, self.name, self)
        dialog.open()
        self.settings_dialog = dialog
        return dialog

    def show_title(self, title: str | None, *, about: bool = True) -> None:
        """The header says `title` (what differs from the other lanes; None: the mode) and, with
        `about`, what the mode means."""
        if self.header is not None:
            self.header.set_title(title, about=about)

    def show_server_note(self) -> None:
        """Show the demo provider's note about the lane's request under the header."""
        if self.chrome:
            self._show_status(self.last_status)

    # -- rendering ------------------------------------------------------------------------------

    def _on_lane_event(self, event: LaneEvent) -> None:
        if isinstance(event, LaneFormReplaced):
            self._show_form()
        elif isinstance(event, LaneModeChanged) and self.chrome:
            i = self.mode_combo.findData(event.mode.value)
            if self.mode_combo.currentIndex() != i:
                self.mode_combo.blockSignals(True)
                self.mode_combo.setCurrentIndex(i)
                self.mode_combo.blockSignals(False)
            self.header.set_mode(event.mode.value)
            self.setProperty("mode", event.mode.value)
            repolish(self)

    def ensure_form(self) -> FormView | None:
        """The form's view, built now if it was deferred."""
        if self.form_deferred:
            self.form_deferred = False
            self._show_form()
        return self.form_view

    def _show_form(self) -> None:
        if not self.model.has_form or self.form_deferred:
            return
        form = self.model.form
        if self._picker is not None:
            self._picker.close()
        if self.form_view is not None:
            self.form_view.detach()
            self._layout.removeWidget(self.form_view)
            self.form_view.deleteLater()
        self.form_view = FormView(form)
        if self.chrome:  # a compare lane is narrow: shorter labels leave its values the width
            for widget in self.form_view.fields.values():
                if not widget.stacked:
                    widget.setProperty("labelWidth", LANE_LABEL_WIDTH)
                    widget.label.setFixedWidth(LANE_LABEL_WIDTH)
            self.form_view.viewport().installEventFilter(self)
            self._fit_timer.start()
        if self.model.measure:  # byte-to-pixel: the paint that shows a value settled
            self.form_view.signals.paint_probe.sink = self._painted
        self._picker = FieldPicker(self.form_view)
        self._picker.picked.connect(lambda pointer: self.fieldPicked.emit(self.name, pointer))
        self._layout.addWidget(self.form_view, 1)

    def fit_fields(self) -> None:
        """Labels over the values in a narrow lane, beside them in a wide one (compare lanes only)."""
        view = self.form_view
        if not self.chrome or view is None:
            return
        width = self.fit_width() if self.fit_width is not None else view.viewport().width()
        above = width < BESIDE_CHARS * view.fontMetrics().averageCharWidth()
        for widget in view.fields.values():
            widget.set_label_above(above)

    def eventFilter(self, obj: Any, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if self.form_view is not None and obj is self.form_view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_timer.start()  # after the resize: the new width, the new font
        return False
    def _painted(self, pointer: str) -> None:
        self.model.metrics.painted(pointer, self.model.clock())

    def _on_started(self, run: Run) -> None:
        if self.header is not None:
            self.header.set_live(run.config.demo is None)

    def _on_status(self, status: RunStatus) -> None:
        if self.chrome:
            self._show_status(status)
        self.statusChanged.emit(status)

    def _show_status(self, status: RunStatus | None) -> None:
        text = status_text(status)
        if status is None:
            text = text.split(" — ")[0]  # "○ ready": the window's status line says how to start
        note = self.model.server_note
        if status is not None and status.phase.final:
            head = text.split("  ·  ")[0]
            if note and note not in head:
                head = head.split(" — server ")[0] + f" — {note}"
            text = head
        self.status_label.setText(text)
        phase = status.phase.value if status is not None else "ready"
        if self.status_label.property("phase") != phase:
            self.status_label.setProperty("phase", phase)
            repolish(self.status_label)

    def _on_finished(self, status: RunStatus) -> None:
        if self.header is not None:
            self.header.refresh()  # the final figures at once, not a frame later
            self._show_status(status)
        self.finished.emit(status)

    def _on_reset(self) -> None:
        if self.header is not None:
            self.header.set_live(False)
            self.header.refresh()  # empty figures at once
            self._show_status(None)
        self.statusReset.emit()

    def _on_active(self, active: bool) -> None:
        if self.chrome:
            self.mode_combo.setEnabled(not active)
            self.settings_button.setEnabled(not active)
            self.remove_button.setEnabled(not active and self._removable)

    @reporting
    def _mode_chosen(self, _index: int) -> None:
        value = self.mode_combo.currentData()
        if value and Mode(value) is not self.mode:
            self.session.set_lane_mode(self.name, Mode(value))

    @reporting
    def _remove_clicked(self) -> None:
        self.session.remove_lane(self.name)

    async def shutdown(self) -> None:
        """Cancel the lane's run (if any) and wait until its stream is closed."""
        await self.controller.shutdown()

    def release(self) -> None:
        """Stop following the session lane and the form (before the widget is thrown away)."""
        self._unsubscribe()
        self.controller.detach()
        if self._picker is not None:
            self._picker.close()
        if self.form_view is not None:
            self.form_view.detach()
