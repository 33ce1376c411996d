"""Presentation mode: full screen, larger type, only scenario / Start / Stop left in the toolbar.

`Presentation(window, toolbar, keep=..., hide=...)` remembers what it changes and puts it back:
`enter()` hides every toolbar action except those in `keep` (one with a shortcut, Compare's
Ctrl+K, is taken off the toolbar instead, so that its shortcut still works), hides the menu bar
and what `hide()` lists (the run log, the lanes' own controls), applies a larger-type style sheet
to the window and shows it full screen; `leave()` restores the window's state, geometry and
visibility exactly (the geometry as `geometry()` gave it: `restoreGeometry` put a framed X11
window a frame's width lower). `changed(active)` is emitted after either. `toggle()` is what F11 does; the
window's Esc leaves it when no run is active.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMainWindow, QToolBar, QWidget

from livefill.gui.window_body import frame_of
from livefill.widgets.field_base import LABEL_WIDTH, FieldWidget
from livefill.widgets.form_view import WIDGETS

__all__ = ["Presentation", "presentation_qss"]

SCALE = 1.3
"""How much larger the type is in presentation mode."""


def presentation_qss(base_pt: float) -> str:
    """The window style sheet of presentation mode, for an application font of `base_pt` points."""
    big = round(base_pt * SCALE)
    return f"""
QWidget {{ font-size: {big}pt; }}
{label_widths_qss(round(LABEL_WIDTH * SCALE))}
QLabel#fieldMarker {{ font-size: {round(big * 0.8)}pt; }}
QLabel#formTitle {{ font-size: {round(big * 1.15)}pt; }}
QLabel#laneTitle {{ font-size: {round(big * 1.25)}pt; font-weight: bold; }}
QLabel#laneAbout, QLabel#laneLive, QLabel#laneOutcome, QLabel#laneStatus {{ font-size: {round(big * 0.85)}pt; }}
QLabel#naiveBanner {{ font-size: {round(big * 0.85)}pt; }}
QTableView#metricsTable, QHeaderView::section {{ font-size: {round(big * 0.9)}pt; }}
"""


def label_widths_qss(width: int) -> str:
    """Labels beside their editor are a fixed width (`LABEL_WIDTH`): wider, for the larger type."""
    kinds = sorted({kind.value for kind, cls in WIDGETS.items() if not cls.stacked})
    selectors = ", ".join(f'QFrame[role="field"][fieldKind="{k}"][labelAbove="false"] > QLabel#fieldLabel' for k in kinds)
    return f"{selectors} {{ min-width: {width}px; max-width: {width}px; }}"


def restore_label_widths(root: QWidget) -> None:
    """Put back the fixed label width the style sheet overrode (a style sheet does not undo it)."""
    for field in root.findChildren(FieldWidget):
        if not field.stacked and not field.label_above:
            field.label.setFixedWidth(int(field.property("labelWidth") or LABEL_WIDTH))  # a compare lane's is shorter


class Presentation(QObject):
    """Enter / leave presentation mode on `window` (see the module docstring)."""

    changed = Signal(bool)

    def __init__(self, window: QMainWindow, toolbar: QToolBar, *, keep: Sequence[QAction] = (),
                 hide: Callable[[], list[QWidget]] = list) -> None:
        super().__init__(window)
        self.window = window
        self.toolbar = toolbar
        self.keep = keep  # read at each enter (the toolbar's list may change)
        self.hidden_too = hide
        self.active = False
        self._saved: dict[str, Any] = {}

    def toggle(self) -> None:
        """Enter if not presenting, else leave."""
        if self.active:
            self.leave()
        else:
            self.enter()

    def enter(self) -> None:
        """Full screen, larger type, toolbar reduced (no-op if presenting already)."""
        if self.active:
            return
        w = self.window
        saved: dict[str, Any] = {
            "state": w.windowState(),
            # not saveGeometry(): restored under X11 it lands a frame's width lower; and none before
            # the window manager has framed the window (--present): it puts the window back itself
            "geometry": w.geometry() if not frame_of(w).isNull() else None,
            "style": w.styleSheet(),
            "hidden": [],
        }
        keep = set(self.keep)
        saved["removed"] = []
        bar = self.toolbar
        actions = bar.actions()
        for index, action in enumerate(actions):
            if action in keep or not action.isVisible():
                continue
            if not action.shortcut().isEmpty():
                # taken off the toolbar, not hidden: a hidden action's shortcut (Ctrl+K) stops working
                after = actions[index + 1] if index + 1 < len(actions) else None
                bar.removeAction(action)
                saved["removed"].append((action, after))
            else:
                self._show_action(action, False)
                saved["hidden"].append(action)
        for widget in self._extra_widgets():
            if widget.isVisibleTo(w):
                widget.setVisible(False)
                saved["hidden"].append(widget)
        self._saved = saved
        app = QApplication.instance()
        base = app.font().pointSizeF() if app is not None else 10.0
        w.setStyleSheet(presentation_qss(base if base > 0 else 10.0))
        self.active = True
        w.setProperty("presenting", True)
        w.showFullScreen()
        self.changed.emit(True)

    def leave(self) -> None:
        """Back to the window as it was (no-op if not presenting)."""
        if not self.active:
            return
        w = self.window
        saved = self._saved
        self.active = False
        w.setProperty("presenting", False)
        w.setStyleSheet(saved.get("style", ""))
        restore_label_widths(w)
        for action, after in reversed(saved.get("removed", [])):
            self.toolbar.insertAction(after, action)
        for item in saved.get("hidden", []):
            try:
                if isinstance(item, QAction):
                    self._show_action(item, True)
                else:
                    item.setVisible(True)
            except RuntimeError:  # a lane removed while presenting: its widgets are gone
                pass
        state = saved.get("state", Qt.WindowState.WindowNoState)
        if state & Qt.WindowState.WindowMaximized:
            w.showMaximized()
        else:
            w.showNormal()
            geometry = saved.get("geometry")
            if geometry is not None:
                w.setGeometry(geometry)
        self._saved = {}
        self.changed.emit(False)

    def _show_action(self, action: QAction, visible: bool) -> None:
        """Show or hide a toolbar action, its widget staying as enabled as it was (a widget action
        re-enables its widget on every change: the provider picker came back enabled while a
        recording, whose provider it shows, was loaded)."""
        widget = self.toolbar.widgetForAction(action)
        enabled = widget.isEnabled() if widget is not None else None
        action.setVisible(visible)
        if widget is not None and enabled is not None and widget.isEnabled() != enabled:
            widget.setEnabled(enabled)

    def _extra_widgets(self) -> list[QWidget]:
        return [self.window.menuBar(), *self.hidden_too()]
