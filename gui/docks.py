"""The window's two docks: the wire inspector (per lane) and the timeline (all lanes, Export PNG).

`InspectorDock` shows one `WireInspector` and a lane selector above it: every lane (or the single
form) registers its current `WireRecorder` under its name (`set_recorder`), and the inspector
shows the selected lane's. `show_field(lane, pointer)` switches to that lane and highlights the
bytes that carried the field's value. The inspector's slicing knob (one click away, in its top
row) is bound by the window to the session's slicing setting.

`TimelineDock` shows a `TimelineView` in a scroll area, a line saying how many fields it leaves
out, and an "Export PNG…" button (`export(path)` writes the picture without a dialog).

`DockFollower` makes both docks, puts them under the window's lanes, side by side, and points them at the
lanes the session shows (the single form's, or the compare lanes) whenever those change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QMainWindow,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from livefill.gui.saves import confirm_saved, save_folder
from livefill.gui.timeline_title import timeline_title
from livefill.session.session import SINGLE, Session
from livefill.session.timeline import TimelineModel
from livefill.recording.wiretap import WireRecorder
from livefill.widgets.timeline import TimelineView
from livefill.widgets.wire_inspector import WireInspector

__all__ = ["InspectorDock", "TimelineDock", "DockFollower", "DOCK_HEIGHT"]

DOCK_HEIGHT = 260
"""The bottom docks' height when first shown (less on a short window: a quarter of it)."""

DOCK_MIN_HEIGHT = 120
"""Below this a dock's contents scroll."""


class _Fitted(QWidget):
    """Holds a dock's contents at the scroll area's height, or at their minimum when that is
    taller. (A scroll area sizes contents that wrap text by their height-for-width, which is their
    preferred height: a short dock then showed only the top of a much taller body.)"""

    def __init__(self, body: QWidget) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(body)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return self.minimumSizeHint().height()


def _scrolling(body: QWidget) -> QScrollArea:
    """`body` in a scroll area: a dock may be smaller than its contents' minimum (they scroll),
    so an open dock never makes the window taller or wider than a small screen."""
    area = QScrollArea()
    area.setObjectName("dockScroll")
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidgetResizable(True)
    area.setWidget(_Fitted(body))
    area.setMinimumSize(160, DOCK_MIN_HEIGHT)
    return area


class InspectorDock(QDockWidget):
    """The wire inspector with a lane selector (see the module docstring)."""

    pointerSelected = Signal(str, str)  # noqa: N815 - (lane, pointer) the user picked in the inspector

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Wire inspector", parent)
        self.setObjectName("inspectorDock")
        self.recorders: dict[str, WireRecorder | None] = {}
        self._titles: dict[str, str] = {}
        self.lane_combo = QComboBox()
        self.lane_combo.setObjectName("inspectorLane")
        self.lane_combo.setToolTip("Whose wire to show")
        self.lane_combo.currentIndexChanged.connect(self._lane_chosen)
        self.inspector = WireInspector()
        self.inspector.pointerSelected.connect(lambda p: self.pointerSelected.emit(self.lane, p))
        top = QHBoxLayout()
        top.setContentsMargins(4, 4, 4, 0)
        top.addWidget(QLabel("Lane:"))
        top.addWidget(self.lane_combo, 1)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.inspector, 1)
        self.setWidget(_scrolling(body))

    @property
    def lane(self) -> str:
        """The lane shown ("" if none)."""
        return str(self.lane_combo.currentData() or "")

    def set_lanes(
        self, lanes: Sequence[tuple[str, str]], recorders: Mapping[str, WireRecorder | None] | None = None
    ) -> None:
        """The lanes to choose from: (name, title), left to right, and (optionally) their current
        recorders. Keeps the selection if it can."""
        current = self.lane
        self._titles = dict(lanes)
        known = {**self.recorders, **(recorders or {})}
        self.recorders = {name: known.get(name) for name, _ in lanes}
        self.lane_combo.blockSignals(True)
        self.lane_combo.clear()
        for name, title in lanes:
            self.lane_combo.addItem(title, name)
        i = self.lane_combo.findData(current)
        self.lane_combo.setCurrentIndex(i if i >= 0 else 0)
        self.lane_combo.blockSignals(False)
        self._lane_chosen(self.lane_combo.currentIndex())

    def set_recorder(self, lane: str, recorder: WireRecorder | None) -> None:
        """Lane `lane` started a run with `recorder`; shown now if that lane is selected."""
        self.recorders[lane] = recorder
        if lane == self.lane:
            self.inspector.set_recorder(recorder)

    def show_lane(self, lane: str) -> None:
        """Select lane `lane`."""
        i = self.lane_combo.findData(lane)
        if i >= 0 and i != self.lane_combo.currentIndex():
            self.lane_combo.setCurrentIndex(i)

    def show_field(self, lane: str, pointer: str) -> None:
        """Show lane `lane`'s wire and highlight the bytes that carried `pointer`'s value."""
        self.show_lane(lane)
        self.inspector.refresh()
        self.inspector.select_pointer(pointer)

    def _lane_chosen(self, _index: int) -> None:
        recorder = self.recorders.get(self.lane)
        if recorder is not self.inspector.recorder:
            self.inspector.set_recorder(recorder)


class TimelineDock(QDockWidget):
    """The timeline of every lane, scrollable, with Export PNG (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Timeline", parent)
        self.setObjectName("timelineDock")
        self.view = TimelineView()
        self.scroll = QScrollArea()
        self.scroll.setObjectName("timelineScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.view)
        self.export_button = QPushButton("Export PNG…")
        self.export_button.setObjectName("timelineExport")
        self.export_button.setToolTip("Write the whole timeline as a PNG picture")
        self.export_button.clicked.connect(self.ask_export)
        self.note = QLabel()
        self.note.setObjectName("timelineNote")
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 2)
        top.addWidget(self.note, 1)
        top.addWidget(self.export_button)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.scroll, 1)
        self.setWidget(_scrolling(body))
        self._dialog: QFileDialog | None = None

    def set_model(self, model: TimelineModel | None) -> None:
        """Paint `model`."""
        self.view.set_model(model)

    def set_note(self, text: str) -> None:
        """A line above the timeline (e.g. how many fields it leaves out)."""
        self.note.setText(text)

    def export(self, path: str | Path, title: str | None = None) -> Path:
        """Write the timeline to `path` as a PNG (no dialog), at a readable width under a title row
        naming the run and its lanes (default: `timeline_title` of the window's session)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if title is None:
            title = timeline_title(getattr(self.parent(), "session", None), self.view.model)
        self.view.export_png(str(path), title=title, subtitle=self.note.text())
        return path

    def ask_export(self) -> None:
        """Ask where to write the timeline PNG (a non-modal dialog), then write it."""
        window = self.parent()
        dialog = QFileDialog(self, "Export the timeline as PNG", str(save_folder(window) / "livefill-timeline.png"),
                             "PNG (*.png)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("png")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(lambda name: confirm_saved(window, self.export(name), "the timeline") if name else None)
        self._dialog = dialog
        dialog.open()  # never a nested event loop under qasync


class DockFollower:
    """Makes the two docks, lays them out under `window` and points them at the lanes `session`
    shows; the inspector's slicing knob shows and sets the session's slicing."""

    def __init__(self, window: QMainWindow, session: Session) -> None:
        self.window = window
        self.session = session
        self.inspector = inspector = InspectorDock(window)
        inspector.inspector.slicing.bind(session)
        self.timeline = timeline = TimelineDock(window)
        # both under the lanes, side by side: the lanes keep the window's whole width
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, timeline)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, inspector)
        window.splitDockWidget(timeline, inspector, Qt.Orientation.Horizontal)
        timeline.hide()
        inspector.hide()
        for dock in (timeline, inspector):
            dock.visibilityChanged.connect(lambda visible, dock=dock: self._shown(dock) if visible else None)
        self._sized = False

    def sync(self) -> None:
        """Point the inspector and the timeline at the lanes shown."""
        if self.session.comparing:
            lanes = self.session.compare_lanes
            self.inspector.set_lanes(
                [(lane.name, f"lane {i + 1}: {lane.title}") for i, lane in enumerate(lanes)],
                {lane.name: lane.recorder for lane in lanes},
            )
        else:
            single = self.session.single
            self.inspector.set_lanes([(SINGLE, f"this form ({single.mode.value})")], {SINGLE: single.recorder})
        self.timeline.set_model(self.session.feed.model)
        self.update_note()

    def update_note(self) -> None:
        """Say above the timeline how many fields it leaves out."""
        feed = self.session.feed
        self.timeline.set_note(
            f"Seconds from Start. Showing the first {feed.max_fields} fields ({feed.skipped:,} more not drawn)."
            if feed.skipped else "Seconds from Start; one row per field and lane."
        )

    def _shown(self, dock: QDockWidget) -> None:
        """The first time a dock is shown, give the bottom docks a useful height (a quarter of the
        window, at most DOCK_HEIGHT: the lanes above keep the rest)."""
        if self._sized:
            return
        self._sized = True
        window = self.window
        window.resizeDocks([dock], [max(DOCK_MIN_HEIGHT, min(DOCK_HEIGHT, window.height() // 4))], Qt.Orientation.Vertical)
        half = max(300, window.width() // 2)
        window.resizeDocks([self.timeline, self.inspector], [half, half], Qt.Orientation.Horizontal)
