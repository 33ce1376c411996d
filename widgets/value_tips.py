"""Tooltips with the whole value wherever a form cuts one short.

A narrow compare lane cuts long values: a one-line editor shows "Martinez S" of "Martinez SA", a
table cell or column title ends in "…". `ValueTips` is one event filter that answers a tooltip
request over such a widget with the whole text (and the tooltip the widget or the cell would have
shown, if any, under it): over a field's line editor whose text is wider than the editor, over a
cell of a field table whose text does not fit its column, and over a column title that does not
fit its section. Where nothing is cut, the usual tooltip shows.

The filter sits on those widgets only (`watch(widget)`, called by the fields that make them), not
on the application: a filter in Python on the application runs for every event of every object
(some 1,500 a second while a run streams: timers, socket notifiers, paints), and only these
widgets ever cut a value. `install_value_tips()` makes the application's one filter and puts it on
every widget watched so far; widgets watched later get it at once. It runs once the window is
built, so the ~15,000 events of building it meet no filter.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QHeaderView, QLineEdit, QTableView, QToolTip, QWidget

__all__ = ["ValueTips", "cut_text", "install_value_tips", "watch"]

_WATCHED = "valueTipsWatched"  # a dynamic property: this widget may show a value cut short


def _field_table(widget: QWidget | None) -> QTableView | None:
    return widget if isinstance(widget, QTableView) and widget.objectName() == "fieldTable" else None


def _header_of(widget: QWidget) -> QHeaderView | None:
    """The field table's column header that `widget` is (or is the viewport of)."""
    header = widget if isinstance(widget, QHeaderView) else widget.parent()
    if isinstance(header, QHeaderView) and _field_table(header.parent()) is not None:
        return header
    return None


def _if_cut(text: str, widget: QWidget, room: int) -> str | None:
    """`text` if it is wider than `room` pixels in `widget`'s font, else None."""
    return text if text and widget.fontMetrics().horizontalAdvance(text) > room else None


def cut_text(widget: QWidget, pos) -> str | None:  # noqa: ANN001 - a QPoint in widget coordinates
    """The whole text under `pos` in `widget` when the widget shows it cut short, else None."""
    if isinstance(widget, QLineEdit) and widget.objectName() == "fieldEditor":
        return _if_cut(widget.text(), widget, widget.contentsRect().width() - 8)  # less frame and text margins
    table = _field_table(widget.parent())
    if table is not None and widget is table.viewport():
        index = table.indexAt(pos)
        if not index.isValid():
            return None
        return _if_cut(str(index.data() or ""), table, table.visualRect(index).width() - 8)
    header = _header_of(widget)
    if header is not None:
        section = header.logicalIndexAt(pos)
        if section < 0:
            return None
        title = str(header.model().headerData(section, header.orientation()) or "")
        return _if_cut(title, header, header.sectionSize(section) - 8)
    return None


def _own_tip(widget: QWidget, pos) -> str:  # noqa: ANN001 - a QPoint in widget coordinates
    """The tooltip the widget (or, over a table, its cell) would have shown."""
    table = _field_table(widget.parent())
    if table is not None and widget is table.viewport():
        return str(table.indexAt(pos).data(Qt.ItemDataRole.ToolTipRole) or "")
    return widget.toolTip()


class ValueTips(QObject):
    """The event filter on the watched widgets (see the module docstring)."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.ToolTip or not isinstance(obj, QWidget):
            return False
        help_event: QHelpEvent = event  # type: ignore[assignment]
        text = cut_text(obj, help_event.pos())
        if text is None:
            return False
        own = _own_tip(obj, help_event.pos())
        QToolTip.showText(help_event.globalPos(), f"{text}\n{own}" if own and own != text else text, obj)
        return True


def _installed(app: QApplication | None = None) -> ValueTips | None:
    app = app or QApplication.instance()
    return None if app is None else app.findChild(ValueTips, "valueTips")


def watch(widget: QWidget) -> None:
    """`widget` may show a value cut short: its tooltip requests go through the application's
    ValueTips (put on it now if installed, else when `install_value_tips()` runs)."""
    widget.setProperty(_WATCHED, True)
    tips = _installed()
    if tips is not None:
        widget.installEventFilter(tips)


def install_value_tips(app: QApplication | None = None) -> ValueTips | None:
    """Make the application's filter once and put it on every watched widget; the filter (None
    without an application)."""
    app = app or QApplication.instance()
    if app is None:
        return None
    tips = _installed(app)
    if tips is None:
        tips = ValueTips(app)
        tips.setObjectName("valueTips")
        for widget in app.allWidgets():  # type: ignore[attr-defined]
            if widget.property(_WATCHED):
                widget.installEventFilter(tips)
    return tips
