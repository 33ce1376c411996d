"""The window's central area: the source pane beside the views, over the status line and run log.

`WindowBody` is the vertical splitter `bodySplitter`: on top the `topSplitter` holds the source
pane (`DocumentBar` over `SourceView`) and the view stack (`viewStack`: the single form under its
legend, `formHolder`; the compare view is added by `livefill.gui.window_views`); below them the
status line and the run log. It lays the widgets out and decides nothing.

`fit_to_screen(window)` sizes the window for its screen: its first size and its minimum within
the screen's available geometry, and, once the window manager has framed it (X11 tells the frame
only after the window is shown), the frame moved and shrunk into that geometry (`fit_frame`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMargins, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QSplitter, QStackedWidget, QVBoxLayout, QWidget

from livefill.widgets.document_bar import DocumentBar
from livefill.widgets.legend import Legend
from livefill.widgets.run_log import RunLog
from livefill.widgets.source_view import SourceView
from livefill.widgets.status_line import StatusLine

__all__ = ["WindowBody", "initial_size", "fit_to_screen", "fit_frame", "frame_of", "DEFAULT_SIZE", "MINIMUM_HEIGHT"]

DEFAULT_SIZE = (1280, 820)

MINIMUM_HEIGHT = 480
"""The window is never shorter: seven rows of the form stay in view over the status line and the
run log (at 350 px the form showed 1½ rows). Its least width is its layout's: the legend on at
most two lines (`livefill.widgets.legend.MAX_LINES`) beside the source pane's least width."""

FRAME_GUESS = QMargins(4, 32, 4, 4)
"""A window manager's frame (title bar, borders), assumed until the real one is known: X11 tells
it only once the window is shown (`fit_frame` then corrects the window)."""


def _available(window: QWidget) -> QRect | None:
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def frame_of(window: QWidget) -> QMargins:
    """The frame around `window`'s geometry as the window system reports it (zero before it is shown)."""
    outer, inner = window.frameGeometry(), window.geometry()
    return QMargins(inner.left() - outer.left(), inner.top() - outer.top(),
                    outer.right() - inner.right(), outer.bottom() - inner.bottom())


def _room(available: QRect, frame: QMargins) -> QSize:
    return QSize(available.width() - frame.left() - frame.right(), available.height() - frame.top() - frame.bottom())


def initial_size(window: QWidget, available: QRect | None = None, frame: QMargins | None = None) -> tuple[int, int]:
    """The window's first size: 1,280 × 820, or less on a smaller screen (a 1,024 × 768 projector):
    the window and its frame (`frame`, else the one known, else `FRAME_GUESS`) within the screen's
    `available` geometry (else the window's screen's)."""
    width, height = DEFAULT_SIZE
    if available is None:
        if QGuiApplication.platformName() == "offscreen":
            return width, height  # a virtual screen: pictures and tests keep the default size
        available = _available(window)
        if available is None:
            return width, height
    if frame is None:
        frame = frame_of(window)
        if frame.isNull():
            frame = FRAME_GUESS
    room = _room(available, frame)
    return min(width, room.width()), min(height, room.height())


def fit_frame(window: QWidget, available: QRect | None = None, frame: QMargins | None = None) -> bool:
    """Move and shrink `window` so that it and its frame lie within `available` (else its screen's
    available geometry); True if it had to. The least height gives way on a screen smaller still."""
    if window.isFullScreen() or window.isMaximized():
        return False
    available = available if available is not None else _available(window)
    if available is None:
        return False
    frame = frame if frame is not None else frame_of(window)
    room = _room(available, frame)
    if window.minimumHeight() > room.height():
        window.setMinimumHeight(room.height())
    inner = window.geometry()
    size = inner.size().boundedTo(room)
    outer = QRect(inner.topLeft() - QPoint(frame.left(), frame.top()),
                  size.grownBy(frame))
    left = min(max(outer.left(), available.left()), available.right() + 1 - outer.width())
    top = min(max(outer.top(), available.top()), available.bottom() + 1 - outer.height())
    if size == inner.size() and (left, top) == (outer.left(), outer.top()):
        return False
    window.resize(size)
    window.move(left, top)  # a window's position is its frame's top-left corner
    return True


class _FrameFit(QObject):
    """Fits the window to its screen once the window manager has framed it (the frame is known only
    after the window is shown, at the move that reparents it); then it removes itself. A window
    still at the size guessed for `FRAME_GUESS` takes the size its real frame leaves."""

    def __init__(self, window: QWidget, guessed: QSize) -> None:
        super().__init__(window)
        self.guessed = guessed

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show) and isinstance(obj, QWidget):
            # a window shown full screen first (--present) is fitted once it leaves full screen
            if obj.isVisible() and not frame_of(obj).isNull() and not (obj.isFullScreen() or obj.isMaximized()):
                obj.removeEventFilter(self)
                self.deleteLater()
                if obj.size() == self.guessed:
                    obj.resize(*initial_size(obj))
                fit_frame(obj)
        return False


def fit_to_screen(window: QWidget) -> None:
    """Give `window` its first size and its least height (`MINIMUM_HEIGHT`, less on a smaller
    screen), and once it is shown and framed, keep the frame within the screen (`fit_frame`)."""
    available = None if QGuiApplication.platformName() == "offscreen" else _available(window)
    least = MINIMUM_HEIGHT if available is None else min(MINIMUM_HEIGHT, _room(available, FRAME_GUESS).height())
    window.setMinimumHeight(least)  # the least width stays the layout's (see MINIMUM_HEIGHT)
    window.resize(*initial_size(window))
    if available is not None:
        window.installEventFilter(_FrameFit(window, window.size()))


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
        top.setCollapsible(1, False)  # the form: the source pane may be dragged away, never the form
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
