"""The compare view: the session's compare lanes side by side, with the metrics table under them.

How this works
--------------
`CompareView` renders the compare lanes of a `livefill.session.session.Session`: one `livefill.gui.lane.Lane` per
session lane, left to right in a splitter, the metrics table under them, and an "+ lane" button.
It keeps nothing of its own: the lanes, their modes and the runs are the session's (adding or
removing a lane, choosing a lane's mode are intents sent to the session; the view re-renders on
`LanesChanged`). Each lane has run settings of its own (its ⚙ button: `livefill.gui.lane_settings`);
its header says what differs from the other lanes ("anthropic · fine-grained"), the caption over
them what they share. "Lanes" offers the presets (`livefill.session.lane_settings.PRESETS`): the
five reading modes, every demo wire, and the live providers one has keys for (looked for off the
GUI thread; greyed, saying why, with fewer than two). `start(config)` starts every lane at one
shared t0 through the session, each with its own RunConfig; `stop()`
stops every lane, each closing its own connection, and each lane then ends as its mode dictates.

After a run with the demo provider the session asks the request log what the server saw of each
lane (`NotesReady`); each lane then shows "server stopped after 37 of 120 tokens".

The view never widens the window: the lanes share the width there is and, when each cannot have
`LANE_MIN_WIDTH`, scroll sideways; long texts in them elide (`livefill.widgets.elided_label`). Lanes and
the metrics table share the height in a splitter: the table takes at most `TABLE_SHARE` and
scrolls, and below `COMPACT_BELOW` the lane headers show only their mode (the figures stay in the
table), so the forms keep their height on a 720-px screen or with the docks open. "+ lane" adds
the first mode not shown yet. The lanes' rows line up (`align_lanes`): the headers share the
tallest one's height and the naive form's banner stays hidden (its header says it).
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from livefill.extraction.modes import Mode
from livefill.session.run_config import RunConfig
from livefill.session.run_status import RunStatus
from livefill.session.compare import MAX_LANES, MIN_LANES
from livefill.session.lane_settings import demo_words, differing, shared_words
from livefill.session.session import Session
from livefill.session.session_events import LanesChanged, NotesReady, SessionEvent, SettingsChanged
from livefill.session.lane import SessionLane
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed
from livefill.gui.compare_presets import PresetButton
from livefill.gui.lane import Lane
from livefill.widgets.metrics_table import MetricsTable
from livefill.widgets.turn_timer import next_turn_timer

__all__ = ["CompareView", "LANE_MIN_WIDTH", "next_mode"]

TABLE_REFRESH_MS = 400
"""The metrics table under the lanes repeats the headers' figures: it refreshes less often while lanes run."""

LANE_MIN_WIDTH = 272
"""A lane is never narrower than this: when the lanes do not fit side by side, they scroll sideways."""

COMPACT_BELOW = 700
"""Below this height (a short screen, the docks open) the lane headers show only their mode: the
figures stay in the metrics table, and the forms keep the height."""

TABLE_SHARE = 0.25
"""The metrics table takes at most this share of the compare view's height (then it scrolls)."""


def _natural_height(widget: QWidget) -> int:
    """The height `widget`'s layout asks for at its width (whatever minimum height it was given)."""
    layout = widget.layout()
    if layout is not None and layout.hasHeightForWidth():
        return layout.totalHeightForWidth(widget.width())
    return layout.totalSizeHint().height() if layout is not None else widget.sizeHint().height()


def next_mode(shown: Iterable[Mode]) -> Mode:
    """The mode a new lane reads: the first one not shown yet (partial when every mode is)."""
    taken = set(shown)
    return next((mode for mode in Mode if mode not in taken), Mode.PARTIAL)



class CompareView(QWidget):
    """The session's compare lanes side by side, one Start and one Stop for all (see the module docstring).

    Signals: `activeChanged(bool)` (some lane runs / none does), `statusChanged(RunStatus)` (a
    lane's, at most once per frame per lane), `laneFinished(str lane, RunStatus)`,
    `allFinished()` (the last lane of a run ended), `lanesChanged()`, `recorderChanged(str lane)`
    (a lane started a run with a new WireRecorder), `fieldPicked(str lane, str pointer)`,
    `notesReady()`, `error(str)`, `statusReset()` (a lane forgot its last run).
    """

    activeChanged = Signal(bool)  # noqa: N815 - Qt signal naming
    statusChanged = Signal(object)  # noqa: N815
    laneFinished = Signal(str, object)  # noqa: N815
    allFinished = Signal()  # noqa: N815
    lanesChanged = Signal()  # noqa: N815
    recorderChanged = Signal(str)  # noqa: N815
    fieldPicked = Signal(str, str)  # noqa: N815
    notesReady = Signal()  # noqa: N815
    error = Signal(str)
    statusReset = Signal()  # noqa: N815

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self.session = session
        self.lanes: list[Lane] = []
        self._running = False
        self._refit_timer = next_turn_timer(self, self.refit)
        self._align_timer = next_turn_timer(self, self.align_lanes)

        # the lanes share the width there is; when they cannot each have LANE_MIN_WIDTH they
        # scroll sideways instead of widening the window
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("laneSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.lane_scroll = QScrollArea(self)
        self.lane_scroll.setObjectName("laneScroll")
        self.lane_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.lane_scroll.setWidgetResizable(True)
        self.lane_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.lane_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.lane_scroll.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.lane_scroll.setWidget(self.splitter)
        self.metrics_table = MetricsTable(self, refresh_ms=TABLE_REFRESH_MS)
        self.metrics_table.setWordWrap(False)  # one line a figure: a long "run ended" elides (tooltip: all of it)
        self.metrics_table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.add_button = QPushButton("+ lane", self)
        self.add_button.setObjectName("addLaneButton")
        self.add_button.setToolTip(f"Add a lane (up to {MAX_LANES})")
        self.add_button.clicked.connect(lambda: self.add_lane())
        self.preset_button = PresetButton(session, self)  # "Lanes": the presets
        self.caption = QLabel(self)
        self.caption.setObjectName("compareCaption")
        self.caption.setWordWrap(True)
        self.bottom = QWidget()
        self.bottom.setObjectName("compareBottom")
        bottom = QHBoxLayout(self.bottom)
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.metrics_table, 1)
        side = QVBoxLayout()
        side.addWidget(self.add_button)
        side.addWidget(self.preset_button)
        side.addStretch(1)
        bottom.addLayout(side)
        # the lanes over the metrics table, in a splitter: on a short screen (or with the docks
        # open) the table gives its height to the lanes first and scrolls
        self.vsplitter = QSplitter(Qt.Orientation.Vertical, self)
        self.vsplitter.setObjectName("compareSplitter")
        self.vsplitter.setChildrenCollapsible(False)
        self.vsplitter.addWidget(self.lane_scroll)
        self.vsplitter.addWidget(self.bottom)
        self.vsplitter.setStretchFactor(0, 1)
        self.vsplitter.setStretchFactor(1, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addWidget(self.vsplitter, 1)
        self._unsubscribe = session.subscribe(self._on_session_event)
        self._render_lanes()

    # -- reading ------------------------------------------------------------------------------

    @property
    def timeline(self) -> TimelineModel:
        """The timeline model every lane reports to (replaced when the lanes change)."""
        return self.session.compare_feed.model

    @property
    def feed(self) -> TimelineFeed:
        """The timeline feed of the compare lanes."""
        return self.session.compare_feed

    @property
    def t0_wall(self) -> float:
        """time.time() at the last Start (request-log entries are stamped so)."""
        return self.session.t0_wall

    @property
    def active(self) -> bool:
        """True while some lane's run is running."""
        return any(lane.active for lane in self.lanes)

    @property
    def modes(self) -> list[Mode]:
        """The lanes' modes, left to right."""
        return self.session.modes

    def lane(self, key: int | str) -> Lane:
        """A lane by position or by name."""
        if isinstance(key, int):
            return self.lanes[key]
        for lane in self.lanes:
            if lane.name == key:
                return lane
        raise KeyError(key)

    def statuses(self) -> list[RunStatus | None]:
        """Each lane's latest run status, left to right."""
        return [lane.last_status for lane in self.lanes]

    async def wait(self) -> list[RunStatus | None]:
        """Wait until no lane runs (and the server notes were fetched); every lane's status."""
        await self.session.wait()
        for lane in list(self.lanes):
            await lane.controller.wait()
        return self.statuses()

    # -- intents (sent to the session) ----------------------------------------------------------

    def set_modes(self, modes: Iterable[Mode | str]) -> None:
        """Replace the lanes with one per mode (2 to 5), left to right."""
        self.session.set_modes(modes)

    def add_lane(self, mode: Mode | str | None = None) -> Lane | None:
        """Add a lane on the right (default: the first mode not shown yet); None if there are 5 already."""
        added = self.session.add_lane(mode if mode is not None else next_mode(self.modes))
        return self.lane(added.name) if added is not None else None

    def remove_lane(self, name: str) -> bool:
        """Remove lane `name` (False if only two are left)."""
        return self.session.remove_lane(name)

    def apply_preset(self, name: str) -> None:
        """Show the lanes of preset `name` ("modes", "wires", "live": livefill.session.lane_settings.PRESETS)."""
        self.preset_button.apply(name)

    def start(self, config: RunConfig | None = None) -> float:
        """Start every lane (with `config`, else the session's settings) at one shared t0."""
        if self.active:
            return self.session.t0
        t0 = self.session.start(config)
        self._running = True
        for lane in self.lanes:
            self.recorderChanged.emit(lane.name)
        self.add_button.setEnabled(False)
        self.preset_button.setEnabled(False)
        return t0 if t0 is not None else self.session.t0

    def stop(self) -> bool:
        """Stop every lane's run (each closes its own connection); False if none was running."""
        stopped = False
        for lane in self.lanes:
            stopped = lane.model.stop() or stopped
        return stopped

    async def shutdown(self) -> None:
        """Cancel every lane's run and wait until every stream is closed."""
        for lane in self.lanes:
            await lane.shutdown()

    def release(self) -> None:
        """Stop following the session (before the view is thrown away)."""
        self._unsubscribe()
        for lane in self.lanes:
            lane.release()

    # -- rendering ------------------------------------------------------------------------------

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, LanesChanged):
            self._render_lanes()
        elif isinstance(event, SettingsChanged):
            self.show_titles()  # what every lane shares (the session's speed, ...)
        elif isinstance(event, NotesReady):
            for lane in self.lanes:
                lane.show_server_note()
            self.notesReady.emit()

    def _render_lanes(self) -> None:
        models = self.session.compare_lanes
        kept = {lane.model.name: lane for lane in self.lanes}
        wanted = {model.name for model in models}
        for lane in self.lanes:
            if lane.name not in wanted:
                lane.release()
                lane.setParent(None)
                lane.deleteLater()
        lanes = []
        for index, model in enumerate(models):
            lane = kept.get(model.name)
            if lane is None:
                lane = self._make_lane(model)
                lane.setMinimumWidth(LANE_MIN_WIDTH)
                lane.installEventFilter(self)  # its layout changed: line the lanes up again
            self.splitter.insertWidget(index, lane)
            lanes.append(lane)
        self.lanes = lanes
        for lane in lanes:
            lane.set_removable(len(lanes) > MIN_LANES)
        self.splitter.setSizes([1000] * len(lanes))
        self.metrics_table.set_lanes([(lane.title, lane.metrics) for lane in lanes])
        self._fit_table()
        self.add_button.setEnabled(len(lanes) < MAX_LANES and not self.active)
        self.show_titles()
        self._align_timer.start()
        self.lanesChanged.emit()

    def show_titles(self) -> None:
        """Each lane's header says what differs from the other lanes; the caption, what they share."""
        lanes = self.lanes
        try:
            settings = self.session.compare.run_settings(self.session.settings)
        except ValueError:
            settings = []
        keys = differing(settings) if len(settings) == len(lanes) else ["provider"]
        plain = set(keys) <= {"mode"}  # lanes apart only by their mode: each header says its mode
        for lane in lanes:
            lane.show_title(None if plain else lane.title, about=plain or "mode" in keys)
        titles = ", ".join(lane.title for lane in lanes)
        if plain:
            text = f"One generation, read {titles}. Same request knobs for every lane (seed, speed, slicing, fault)."
        else:
            shared = " · ".join(shared_words(settings)) if settings else ""
            text = f"One document, {len(lanes)} requests: {titles}." + (f" Every lane: {shared}." if shared else "")
            demo = demo_words(settings)  # beside a live lane, the demo lanes' knobs are theirs only
            demo_lanes = sum(not s.live for s in settings)
            text += f" Demo lane{'s' if demo_lanes > 1 else ''}: {' · '.join(demo)}." if demo else ""
        self.caption.setText(text)

    def _make_lane(self, model: SessionLane) -> Lane:
        lane = Lane(self.session, model, chrome=True)
        lane.fit_width = self._narrowest_form  # every lane puts its labels over its values, or none does
        lane.statusChanged.connect(self.statusChanged)
        lane.finished.connect(lambda status, lane=lane: self._on_lane_finished(lane, status))
        lane.activeChanged.connect(self._on_lane_active)
        lane.fieldPicked.connect(self.fieldPicked)
        lane.error.connect(self.error)
        lane.statusReset.connect(self.statusReset)
        return lane

    def presentation_hide(self) -> list[QWidget]:
        """What presentation mode hides here: the add button, the caption, each lane's bar and
        naive banner (the lane's header says "incorrect on purpose" already)."""
        out: list[QWidget] = [self.add_button, self.preset_button, self.caption]
        for lane in self.lanes:
            out.append(lane.bar)
            if lane.form_view is not None:
                out.extend(lane.form_view.findChildren(QLabel, "naiveBanner"))
        return out

    def align_lanes(self) -> None:
        """Line the lanes' rows up: every field at the same height in every lane. The labels go
        over the values in every lane when the narrowest lane needs it; the lane headers
        take the tallest one's height (a mode's explanation wraps onto two lines in one lane and
        not in the next), and the naive form's banner is hidden (its header says "incorrect on
        purpose" already; the banner pushed its rows below the other lanes')."""
        headers = [lane.header for lane in self.lanes if lane.header is not None]
        for lane in self.lanes:
            lane.fit_fields()  # labels over values in every lane if the narrowest needs it
            if lane.form_view is not None:
                for banner in lane.form_view.findChildren(QLabel, "naiveBanner"):
                    banner.setVisible(False)
        tallest = max((_natural_height(header) for header in headers), default=0)
        for header in headers:
            if header.minimumHeight() != tallest:
                header.setMinimumHeight(tallest)

    def _narrowest_form(self) -> int:
        """The width of the narrowest lane's form (its viewport's)."""
        return min((lane.form_view.viewport().width() for lane in self.lanes if lane.form_view is not None), default=0)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802, ANN001 - Qt override
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize) and obj in self.lanes:
            self._align_timer.start()  # a new form, a header that grew or shrank, a lane dragged wider
        return False

    def refit(self) -> None:
        """Re-measure what depends on the font and the width (the metrics table's height)."""
        self.metrics_table.set_lanes([(lane.title, lane.metrics) for lane in self.lanes])
        self._fit_table()

    def _fit_table(self) -> None:
        """The metrics table asks for all its rows, but may shrink to its header and two rows
        (then it scrolls): the lanes' forms come first on a short screen."""
        table = self.metrics_table
        wanted = table.maximumHeight()  # what set_lanes measured for every row
        rows = [table.rowHeight(r) for r in range(min(2, table.rowCount()))]
        least = table.horizontalHeader().height() + sum(rows) + 2 * table.frameWidth()
        table.setMinimumHeight(min(least, wanted))
        table.setMaximumHeight(wanted)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.bottom.setMaximumHeight(wanted)
        self._fit_height()

    def _fit_height(self) -> None:
        """Share the height: compact lane headers on a short view, the table at most TABLE_SHARE."""
        height = self.vsplitter.height()
        if height <= 0:
            return
        compact = self.height() < COMPACT_BELOW
        for lane in self.lanes:
            if lane.header is not None:
                lane.header.set_compact(compact)
        self.align_lanes()
        self.caption.setMaximumHeight(0 if compact else 16777215)  # the lane headers name the modes
        table = self.metrics_table
        bottom = max(table.minimumHeight(), min(table.maximumHeight(), int(height * TABLE_SHARE)))
        self.vsplitter.setSizes([height - bottom - self.vsplitter.handleWidth(), bottom])

    def showEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().showEvent(event)
        self._refit_timer.start()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
        super().resizeEvent(event)
        self._refit_timer.start()  # row heights depend on the width (wrapped row titles)

    def _on_lane_active(self, _active: bool) -> None:
        active = self.active
        self.add_button.setEnabled(not active and len(self.lanes) < MAX_LANES)
        self.preset_button.setEnabled(not active)
        if active:
            self.activeChanged.emit(True)

    def _on_lane_finished(self, lane: Lane, status: RunStatus) -> None:
        self.laneFinished.emit(lane.name, status)
        if self.active or not self._running:
            return
        self._running = False
        self.add_button.setEnabled(len(self.lanes) < MAX_LANES)
        self.preset_button.setEnabled(True)
        self.activeChanged.emit(False)
        self.allFinished.emit()
