"""What the window shows, as JSON in a file: a test hook for driving the real process from outside.

With `LIVEFILL_STATE_FILE=PATH` (livefill/switches.py) the app writes `visible_state(window)` to
PATH every 100 ms while it changes (to a sibling file first, then renamed: a reader never sees
half a file); while a run is active, without rectangles and table cells (cheaper). Off by
default; nothing is read back. tests/gui/test_demo_script.py drives the app
on a real X server with xdotool and reads here what the audience sees: the status lines (whole,
and whether cut), each field's shown text, state and mark, the lanes and their figures, the
wire inspector's line, the toolbar's visible items, an open menu or list with the screen
rectangles of its entries (to click them), open dialogs, and the window's geometry against the
screen's. `seq` counts the writes, so a reader can wait for a state written after its action.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from livefill import switches
from livefill.widgets.elided_label import ElidedLabel
from livefill.widgets.field_base import FieldWidget

__all__ = ["StateDump", "install_state_dump", "visible_state"]

INTERVAL_MS = 100


def _rect(widget: QWidget) -> list[int]:
    """The widget's rectangle on the screen: [x, y, width, height]."""
    top_left = widget.mapToGlobal(widget.rect().topLeft())
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]


def _box(rect: QRect) -> list[int]:
    return [rect.x(), rect.y(), rect.width(), rect.height()]


def _text_of(widget: QWidget) -> str | None:
    """The text a widget shows, for the kinds that show one."""
    if isinstance(widget, QComboBox):
        return widget.currentText()
    if isinstance(widget, (QLabel, QAbstractButton, QLineEdit)):
        return widget.text()
    if isinstance(widget, QPlainTextEdit):
        return widget.toPlainText()
    if isinstance(widget, QTextEdit):
        return widget.toPlainText()
    return None


def _cut(widget: QWidget) -> bool:
    """True if the widget's text is not shown whole (an elided label, a line edit too narrow)."""
    if isinstance(widget, ElidedLabel):
        return bool(widget.elided())
    if isinstance(widget, QLineEdit):
        return widget.fontMetrics().horizontalAdvance(widget.text()) > widget.contentsRect().width() - 8
    return False


def _cells(view: QAbstractItemView) -> list[list[str]]:
    model = view.model()
    if model is None:
        return []
    rows = []
    for r in range(model.rowCount(QModelIndex())):
        rows.append([str(model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole) or "")
                     for c in range(model.columnCount(QModelIndex()))])
    return rows


def _field(widget: FieldWidget, detail: bool) -> dict[str, Any]:
    editor = widget.editor
    entry: dict[str, Any] = {
        "label": widget.label.text(),
        "text": str(widget.property("displayValue") or ""),
        "state": str(widget.property("state") or ""),
        "origin": str(widget.property("origin") or ""),
        "marker": widget.marker.text(),
    }
    if isinstance(editor, QLineEdit):
        entry["editor"] = editor.text()
        entry["placeholder"] = editor.placeholderText()
    if not detail:
        return entry
    entry["visible"] = widget.isVisible()
    entry["rect"] = _rect(editor)
    shown = _text_of(editor)
    if shown is not None:
        entry["editor"] = shown
        entry["cut"] = _cut(editor)
    views = [editor] if isinstance(editor, QAbstractItemView) else editor.findChildren(QAbstractItemView)
    if views:
        entry["cells"] = _cells(views[0])
    return entry


def _fields(form_view: Any, detail: bool) -> dict[str, Any]:
    if form_view is None:
        return {}
    return {pointer: _field(w, detail) for pointer, w in form_view.fields.items()}


def _label(label: QLabel | None) -> dict[str, Any] | None:
    if label is None:
        return None
    return {"text": label.text(), "visible": label.isVisible(), "cut": _cut(label), "rect": _rect(label)}


def _toolbar(window: Any) -> list[dict[str, Any]]:
    bar = window.run_toolbar
    items = []
    for action in bar.actions():
        w = bar.widgetForAction(action)
        if w is None or action.isSeparator():
            continue
        texts = [t for t in (_text_of(w),) if t] or [
            t for c in w.findChildren(QWidget) if c.isVisible() and (t := _text_of(c))]
        items.append({"text": " ".join(texts) or action.text(), "visible": w.isVisible(),
                      "enabled": w.isEnabled(), "rect": _rect(w)})
    return items


def _more(window: Any) -> dict[str, Any] | None:
    """The toolbar's ›› button (the items that do not fit are behind it), when it is shown."""
    button = window.run_toolbar.findChild(QAbstractButton, "qt_toolbar_ext_button")
    return {"rect": _rect(button)} if button is not None and button.isVisible() else None


def _lane(lane: Any, detail: bool) -> dict[str, Any]:
    header = lane.header
    entry = {
        "name": lane.name,
        "mode": lane.mode.value,
        "title": lane.title,
        "status": _label(getattr(lane, "status_label", None)),
        "fields": _fields(lane.form_view, detail),
    }
    if detail:
        entry["header"] = [t for c in header.findChildren(QLabel) if c.isVisible() and (t := c.text())] if header else []
        entry["rect"] = _rect(lane)
    return entry


def _metrics(view: Any) -> dict[str, Any] | None:
    if view is None or not view.isVisible():
        return None
    table = view.metrics_table
    rows = {}
    for r in range(table.rowCount()):
        head = table.verticalHeaderItem(r)
        rows[head.text() if head else str(r)] = [
            (table.item(r, c).text() if table.item(r, c) else "") for c in range(table.columnCount())]
    columns = [(table.horizontalHeaderItem(c).text() if table.horizontalHeaderItem(c) else "")
               for c in range(table.columnCount())]
    height = table.viewport().height()
    hidden = [title for r, title in enumerate(rows)
              if table.rowViewportPosition(r) < 0 or table.rowViewportPosition(r) + table.rowHeight(r) > height]
    return {"columns": columns, "rows": rows, "hidden_rows": hidden, "visible": table.isVisible(), "rect": _rect(table)}


def _popup() -> dict[str, Any] | None:
    """The open menu or drop-down list, with each entry's rectangle on the screen."""
    popup = QApplication.activePopupWidget()
    if popup is None:
        return None
    if isinstance(popup, QMenu):
        items = []
        for action in popup.actions():
            if action.isSeparator() or not action.isVisible():
                continue
            geometry = popup.actionGeometry(action)
            top_left = popup.mapToGlobal(geometry.topLeft())
            items.append({"text": action.text().replace("&", ""), "enabled": action.isEnabled(),
                          "checked": action.isChecked(), "submenu": action.menu() is not None,
                          "rect": [top_left.x(), top_left.y(), geometry.width(), geometry.height()]})
        return {"kind": "menu", "title": popup.title().replace("&", ""), "items": items, "rect": _rect(popup)}
    views = popup.findChildren(QAbstractItemView)
    if views:
        view = views[0]
        model = view.model()
        items = []
        for r in range(model.rowCount(QModelIndex())):
            index = model.index(r, view.modelColumn() if hasattr(view, "modelColumn") else 0)
            visual = view.visualRect(index)
            top_left = view.viewport().mapToGlobal(visual.topLeft())
            items.append({"text": str(model.data(index, Qt.ItemDataRole.DisplayRole) or ""),
                          "rect": [top_left.x(), top_left.y(), visual.width(), visual.height()]})
        return {"kind": "list", "items": items, "rect": _rect(popup)}
    return {"kind": type(popup).__name__, "items": [], "rect": _rect(popup)}


def _dialogs(window: Any) -> list[dict[str, Any]]:
    found = []
    for w in QApplication.topLevelWidgets():
        if w is window or not w.isVisible() or not isinstance(w, QDialog):
            continue
        texts = [t for c in w.findChildren(QLabel) if c.isVisible() and (t := c.text())]
        found.append({"title": w.windowTitle(), "texts": texts, "rect": _rect(w)})
    return found


def _focus() -> dict[str, Any] | None:
    w = QApplication.focusWidget()
    if w is None:
        return None
    field = w
    while field is not None and not isinstance(field, FieldWidget):
        field = field.parentWidget()
    return {"class": type(w).__name__, "name": w.objectName(),
            "field": field.pointer if isinstance(field, FieldWidget) else None}


def _status_bar(window: Any) -> dict[str, Any]:
    bar = window.statusBar()
    shown = [{"text": t, "rect": _rect(c)} for c in bar.findChildren(QWidget)
             if c.isVisible() and c.parentWidget() is not None and (t := _text_of(c))]
    return {"message": bar.currentMessage(), "widgets": shown, "visible": bar.isVisible(), "rect": _rect(bar)}


def visible_state(window: Any, detail: bool = True) -> dict[str, Any]:
    """What `window` (a MainWindow) shows now; see the module docstring. Without `detail` (while
    a run is active: a dump costs the GUI thread) the fields' texts and marks only, no rectangles,
    table cells, toolbar or menu bar."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    inspector = window.inspector_dock.inspector
    run_log = window.run_log
    log = [run_log.item(i).text() for i in range(max(0, run_log.count() - 8), run_log.count())] \
        if isinstance(run_log, QListWidget) else []
    menus = window.menus
    return {
        "window": {
            "frame": _box(window.frameGeometry()), "geometry": _box(window.geometry()),
            "screen": _box(screen.geometry()), "available": _box(screen.availableGeometry()),
            "minimum": [window.minimumWidth(), window.minimumHeight()],
            "fullscreen": window.isFullScreen(), "maximized": window.isMaximized(),
            "active": window.isActiveWindow(), "title": window.windowTitle(),
        },
        "warm": window.warmup.ready, "active": window.active, "comparing": window.comparing, "presenting": window.presenting,
        "status_line": _label(window.status_line),
        "status_bar": _status_bar(window),
        "legend": {"visible": window.legend.isVisible(), "text": window.legend.text()},
        "document": _label(window.document_bar.name_label),
        "source": window.source_view.toPlainText()[:300],
        "toolbar": _toolbar(window) if detail else [],
        "toolbar_more": _more(window) if detail else None,
        "menu_bar": [{"text": a.text().replace("&", ""), "rect": _box_global(window.menuBar(), a)}
                     for a in window.menuBar().actions() if a.isVisible()] if detail else [],
        "fields": _fields(window.form_view, detail) if not window.comparing else {},
        "lanes": [_lane(lane, detail) for lane in window.lanes],
        "metrics": _metrics(window.compare_view) if window.comparing else None,
        "inspector": {"visible": window.inspector_dock.isVisible(), "field": inspector.pointer,
                      "field_box": inspector.field_combo.currentText(), "line": inspector.value_label.text(),
                      "stats": inspector.stats_label.text()},
        "actions": {name: getattr(menus, f"{name}_action").isChecked()
                    for name in ("present", "autoplay", "legend", "inspector", "timeline", "history")
                    if getattr(menus, f"{name}_action", None) is not None} | {"compare": window.compare_action.isChecked()},
        "run_log": log,
        "popup": _popup(),
        "dialogs": _dialogs(window),
        "focus": _focus(),
    }


def _box_global(bar: QWidget, action: Any) -> list[int]:
    geometry = bar.actionGeometry(action)
    top_left = bar.mapToGlobal(geometry.topLeft())
    return [top_left.x(), top_left.y(), geometry.width(), geometry.height()]


class StateDump(QObject):
    """Writes `visible_state(window)` to `path` every `interval_ms` while it changes."""

    def __init__(self, window: QWidget, path: str | Path, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(window)
        self.window = window
        self.path = Path(path)
        self.seq = 0
        self._last = ""
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.write)
        self._timer.start()

    def write(self) -> None:
        """Write the state now, if it changed since the last write."""
        try:
            state = visible_state(self.window, detail=not self.window.active)
        except RuntimeError:  # the window is being torn down
            return
        text = json.dumps(state, ensure_ascii=False, default=str)
        if text == self._last:
            return
        self._last = text
        self.seq += 1
        state["seq"] = self.seq
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(state, ensure_ascii=False, default=str), encoding="utf-8")
        os.replace(temporary, self.path)


def install_state_dump(window: QWidget) -> StateDump | None:
    """Start writing the window's state if LIVEFILL_STATE_FILE names a file (else nothing)."""
    path = switches.text("LIVEFILL_STATE_FILE")
    return StateDump(window, path) if path else None
