"""The window's two docks: the wire inspector (per lane) and the timeline (all lanes, Export PNG).

`InspectorDock` shows one `WireInspector` and a lane selector above it: every lane (or the single
form) registers its current `WireRecorder` under its name (`set_recorder`), and the inspector
shows the selected lane's. `show_field(lane, pointer)` switches to that lane and highlights the
bytes that carried the field's value. The inspector's slicing knob (one click away, in its top
row) is bound by the window to the session's slicing setting.

`TimelineDock` shows a `TimelineView` in a scroll area, a line saying how many fields it leaves
out, and an "Export PNG…" button (`export(path)` writes the picture without a dialog).

Both are hidden at launch: what they show (`livefill.gui.dock_bodies`) is built the first time a
dock is shown or its contents are asked for (`inspector`, `view`, ...); until then a dock keeps
what it was told (lanes, recorders, the timeline's model and note) and hands it over then.

`DockFollower` makes both docks, puts them under the window's lanes, side by side, and points them at the
lanes the session shows (the single form's, or the compare lanes) whenever those change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QDockWidget, QFileDialog, QLabel, QMainWindow, QPushButton, QScrollArea, QWidget

from livefill.gui.saves import confirm_saved, save_folder
from livefill.gui.timeline_title import timeline_title
from livefill.recording.wiretap import WireRecorder
from livefill.session.session import SINGLE, Session
from livefill.session.timeline import TimelineModel

if TYPE_CHECKING:
    from livefill.gui.dock_bodies import InspectorBody, TimelineBody
    from livefill.widgets.timeline import TimelineView
    from livefill.widgets.wire_inspector import WireInspector

__all__ = ["InspectorDock", "TimelineDock", "DockFollower", "DOCK_HEIGHT"]

DOCK_HEIGHT = 260
"""The bottom docks' height when first shown (less on a short window: a quarter of it)."""

DOCK_MIN_HEIGHT = 120
"""Below this a dock's contents scroll (as livefill.gui.dock_bodies.DOCK_MIN_HEIGHT)."""


def _bodies():  # noqa: ANN202 - the module
    """livefill.gui.dock_bodies, imported when a dock's contents are first built."""
    from livefill.gui import dock_bodies  # lazy: the wire inspector's and the timeline's widgets, not before the window shows

    return dock_bodies


class _Deferred(QDockWidget):
    """A dock whose contents are built the first time it is shown, or asked for (`body()`)."""

    def __init__(self, title: str, parent: QWidget | None) -> None:
        super().__init__(title, parent)
        self._body: QWidget | None = None

    @property
    def built(self) -> bool:
        """True once the contents are built."""
        return self._body is not None

    def body(self) -> QWidget:
        """The contents, built now if they were not."""
        if self._body is None:
            self._body = self._build()
            self.setWidget(_bodies().scrolling(self._body))
        return self._body

    def _build(self) -> QWidget:
        raise NotImplementedError

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt override: show(), the View menu, restoreState
        if visible:
            self.body()
        super().setVisible(visible)


class InspectorDock(_Deferred):
    """The wire inspector with a lane selector (see the module docstring). `on_built(inspector)`
    runs once its WireInspector is made (the window binds its slicing knob to the session)."""

    pointerSelected = Signal(str, str)  # noqa: N815 - (lane, pointer) the user picked in the inspector

    def __init__(self, parent: QWidget | None = None, *,
                 on_built: Callable[[WireInspector], None] | None = None) -> None:
        super().__init__("Wire inspector", parent)
        self.setObjectName("inspectorDock")
        self.recorders: dict[str, WireRecorder | None] = {}
        self._titles: dict[str, str] = {}
        self._lanes: list[tuple[str, str]] = []  # (name, title), kept for the lane selector until it is built
        self._lane = ""  # the lane selected until the selector is built
        self._busy = False
        self._on_built = on_built

    def _build(self) -> InspectorBody:
        body = _bodies().InspectorBody()
        body.lane_combo.currentIndexChanged.connect(self._lane_chosen)
        body.inspector.pointerSelected.connect(lambda p: self.pointerSelected.emit(self.lane, p))
        body.inspector.slicing.setEnabled(not self._busy)
        if self._on_built is not None:
            self._on_built(body.inspector)
        self._body = body
        self._fill(body.lane_combo, self._lane)
        return body

    @property
    def inspector(self) -> WireInspector:
        """The wire inspector (built now if it was not)."""
        return self.body().inspector  # type: ignore[attr-defined]

    @property
    def lane_combo(self) -> QComboBox:
        """The lane selector (built now if it was not)."""
        return self.body().lane_combo  # type: ignore[attr-defined]

    @property
    def lane(self) -> str:
        """The lane shown ("" if none)."""
        if self._body is None:
            return self._lane
        return str(self._body.lane_combo.currentData() or "")  # type: ignore[attr-defined]

    def set_busy(self, busy: bool) -> None:
        """A run is active (or a Start waits): the slicing knob is greyed meanwhile."""
        self._busy = busy
        if self._body is not None:
            self._body.inspector.slicing.setEnabled(not busy)  # type: ignore[attr-defined]

    def set_lanes(
        self, lanes: Sequence[tuple[str, str]], recorders: Mapping[str, WireRecorder | None] | None = None
    ) -> None:
        """The lanes to choose from: (name, title), left to right, and (optionally) their current
        recorders. Keeps the selection if it can."""
        current = self.lane
        self._lanes = list(lanes)
        self._titles = dict(lanes)
        known = {**self.recorders, **(recorders or {})}
        self.recorders = {name: known.get(name) for name, _ in lanes}
        if self._body is None:
            names = [name for name, _ in lanes]
            self._lane = current if current in names else (names[0] if names else "")
            return
        self._fill(self._body.lane_combo, current)  # type: ignore[attr-defined]

    def _fill(self, combo: QComboBox, current: str) -> None:
        combo.blockSignals(True)
        combo.clear()
        for name, title in self._lanes:
            combo.addItem(title, name)
        i = combo.findData(current)
        combo.setCurrentIndex(i if i >= 0 else 0)
        combo.blockSignals(False)
        self._lane_chosen(combo.currentIndex())

    def set_recorder(self, lane: str, recorder: WireRecorder | None) -> None:
        """Lane `lane` started a run with `recorder`; shown now if that lane is selected."""
        self.recorders[lane] = recorder
        if self._body is not None and lane == self.lane:
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


class TimelineDock(_Deferred):
    """The timeline of every lane, scrollable, with Export PNG (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Timeline", parent)
        self.setObjectName("timelineDock")
        self._model: TimelineModel | None = None
        self._note = ""
        self._dialog: QFileDialog | None = None

    def _build(self) -> TimelineBody:
        body = _bodies().TimelineBody()
        body.export_button.clicked.connect(self.ask_export)
        body.view.set_model(self._model)
        body.note.setText(self._note)
        return body

    @property
    def view(self) -> TimelineView:
        """The timeline's view (built now if it was not)."""
        return self.body().view  # type: ignore[attr-defined]

    @property
    def scroll(self) -> QScrollArea:
        """The scroll area around the view (built now if it was not)."""
        return self.body().scroll  # type: ignore[attr-defined]

    @property
    def note(self) -> QLabel:
        """The line above the timeline (built now if it was not)."""
        return self.body().note  # type: ignore[attr-defined]

    @property
    def export_button(self) -> QPushButton:
        """Its "Export PNG…" button (built now if it was not)."""
        return self.body().export_button  # type: ignore[attr-defined]

    def set_model(self, model: TimelineModel | None) -> None:
        """Paint `model`."""
        self._model = model
        if self.built:
            self.view.set_model(model)

    def set_note(self, text: str) -> None:
        """A line above the timeline (e.g. how many fields it leaves out)."""
        self._note = text
        if self.built:
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
        self.inspector = inspector = InspectorDock(window, on_built=lambda shown: shown.slicing.bind(session))
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
