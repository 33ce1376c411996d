"""Tooltips with the whole value wherever a form cuts one short.

A narrow compare lane cuts long values: a one-line editor shows "Martinez S" of "Martinez SA", a
table cell or column title ends in "…". `ValueTips` is one event filter on the application that
answers a tooltip request over such a widget with the whole text (and the widget's own tooltip,
if it has one, under it): over a field's line editor whose text is wider than the editor, over a
cell of a field table whose text does not fit its column, and over a column title that does not
fit its section. Where nothing is cut, the widget's own tooltip shows as usual.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QHeaderView, QLineEdit, QTableView, QToolTip, QWidget

__all__ = ["ValueTips", "install_value_tips", "cut_text"]


def cut_text(widget: QWidget, pos) -> str | None:  # noqa: ANN001 - a QPoint in widget coordinates
    """The whole text under `pos` in `widget` when the widget shows it cut short, else None."""
    if isinstance(widget, QLineEdit) and widget.objectName() == "fieldEditor":
        text = widget.text()
        room = widget.contentsRect().width() - 8  # the frame's and the text's own margins
        return text if text and widget.fontMetrics().horizontalAdvance(text) > room else None
    parent = widget.parent()
    if isinstance(parent, QTableView) and widget is parent.viewport() and parent.objectName() == "fieldTable":
        index = parent.indexAt(pos)
        if not index.isValid():
            return None
        text = str(index.data() or "")
        room = parent.visualRect(index).width() - 8
        return text if text and parent.fontMetrics().horizontalAdvance(text) > room else None
    if isinstance(widget, QHeaderView) and isinstance(widget.parent(), QTableView) and widget.parent().objectName() == "fieldTable":
        section = widget.logicalIndexAt(pos)
        if section < 0:
            return None
        text = str(widget.model().headerData(section, widget.orientation()) or "")
        room = widget.sectionSize(section) - 8
        return text if text and widget.fontMetrics().horizontalAdvance(text) > room else None
    return None


class ValueTips(QObject):
    """The application-wide event filter (see the module docstring)."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.ToolTip or not isinstance(obj, QWidget):
            return False
        help_event: QHelpEvent = event  # type: ignore[assignment]
        text = cut_text(obj, help_event.pos())
        if text is None:
            return False
        own = obj.toolTip()
        QToolTip.showText(help_event.globalPos(), f"{text}\n{own}" if own and own != text else text, obj)
        return True


def install_value_tips(app: QApplication | None = None) -> ValueTips | None:
    """Install the filter on the application once; the filter (None without an application)."""
    app = app or QApplication.instance()
    if app is None:
        return None
    existing = app.findChild(ValueTips, "valueTips")
    if existing is not None:
        return existing
    tips = ValueTips(app)
    tips.setObjectName("valueTips")
    app.installEventFilter(tips)
    return tips
