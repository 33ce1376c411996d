"""The window's central area: the source pane beside the views, over the status line and run log.

`WindowBody` is the vertical splitter `bodySplitter`: on top the `topSplitter` holds the source
pane (`DocumentBar` over `SourceView`) and the view stack (`viewStack`: the single form under its
legend, `formHolder`; the compare view is added by `livefill.gui.window_views`); below them the
status line and the run log. It lays the widgets out and decides nothing.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter, QStackedWidget, QVBoxLayout, QWidget

from livefill.widgets.document_bar import DocumentBar
from livefill.widgets.legend import Legend
from livefill.widgets.run_log import RunLog
from livefill.widgets.source_view import SourceView
from livefill.widgets.status_line import StatusLine

__all__ = ["WindowBody", "initial_size", "DEFAULT_SIZE"]

DEFAULT_SIZE = (1280, 820)


def initial_size(window: QWidget) -> tuple[int, int]:
    """The window's first size: 1,280 × 820, or less on a smaller screen (a 1,024 × 768 projector)."""
    width, height = DEFAULT_SIZE
    if QGuiApplication.platformName() == "offscreen":
        return width, height  # a virtual screen: pictures and tests keep the default size
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return width, height
    frame = window.frameGeometry().size() - window.geometry().size()
    available = screen.availableGeometry()
    return (min(width, available.width() - max(0, frame.width())),
            min(height, available.height() - max(0, frame.height())))


def _column(*widgets: QWidget) -> QVBoxLayout:
    layout = QVBoxLayout()
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    for widget in widgets:
        layout.addWidget(widget)
    return layout


class WindowBody(QSplitter):
    """The central splitter (see the module docstring); `single` is the single form's widget."""

    def __init__(self, single: QWidget) -> None:
        super().__init__(Qt.Orientation.Vertical)
        self.setObjectName("bodySplitter")
        self.source_view = SourceView()
        self.document_bar = DocumentBar()
        self.source_pane = QWidget()
        self.source_pane.setObjectName("sourcePane")
        self.source_pane.setLayout(_column(self.document_bar, self.source_view))

        self.legend = Legend()  # what the markers mean (View ▸ Legend; livefill.gui.window_menus)
        self.form_holder = QWidget()
        self.form_holder.setObjectName("formHolder")
        self.form_holder.setLayout(_column(self.legend, single))
        self.stack = QStackedWidget()
        self.stack.setObjectName("viewStack")
        self.stack.addWidget(self.form_holder)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.setObjectName("topSplitter")
        top.addWidget(self.source_pane)
        top.addWidget(self.stack)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 3)
        top.setSizes([560, 720])
        self.top_splitter = top

        self.status_line = StatusLine()
        self.run_log = RunLog()
        bottom = QWidget()
        bottom.setLayout(_column(self.status_line, self.run_log))

        self.addWidget(top)
        self.addWidget(bottom)
        self.setStretchFactor(0, 5)
        self.setStretchFactor(1, 1)
        self.setSizes([700, 90])
