"""What the window's two docks show, built the first time a dock is shown or used (`livefill.gui.docks`).

`InspectorBody`: a lane selector over a `WireInspector`. `TimelineBody`: a `TimelineView` in a
scroll area under a line of text and an "Export PNG…" button. Both docks are hidden at launch, so
this module (and the wire inspector's and the timeline's widgets) is imported, and the bodies are
built, only when one is first needed: not before the window is first shown.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from livefill.widgets.timeline import TimelineView
from livefill.widgets.wire_inspector import WireInspector

__all__ = ["DOCK_MIN_HEIGHT", "InspectorBody", "TimelineBody", "scrolling"]

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


def scrolling(body: QWidget) -> QScrollArea:
    """`body` in a scroll area: a dock may be smaller than its contents' minimum (they scroll),
    so an open dock never makes the window taller or wider than a small screen."""
    area = QScrollArea()
    area.setObjectName("dockScroll")
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidgetResizable(True)
    area.setWidget(_Fitted(body))
    area.setMinimumSize(160, DOCK_MIN_HEIGHT)
    return area


class InspectorBody(QWidget):
    """The wire inspector under its lane selector ("Lane: [...]")."""

    def __init__(self) -> None:
        super().__init__()
        self.lane_combo = QComboBox()
        self.lane_combo.setObjectName("inspectorLane")
        self.lane_combo.setToolTip("Whose wire to show")
        self.inspector = WireInspector()
        top = QHBoxLayout()
        top.setContentsMargins(4, 4, 4, 0)
        top.addWidget(QLabel("Lane:"))
        top.addWidget(self.lane_combo, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.inspector, 1)


class TimelineBody(QWidget):
    """The timeline, scrollable, under a note and its "Export PNG…" button."""

    def __init__(self) -> None:
        super().__init__()
        self.view = TimelineView()
        self.scroll = QScrollArea()
        self.scroll.setObjectName("timelineScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.view)
        self.export_button = QPushButton("Export PNG…")
        self.export_button.setObjectName("timelineExport")
        self.export_button.setToolTip("Write the whole timeline as a PNG picture")
        self.note = QLabel()
        self.note.setObjectName("timelineNote")
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 2)
        top.addWidget(self.note, 1)
        top.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.scroll, 1)
