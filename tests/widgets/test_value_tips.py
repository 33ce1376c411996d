"""Tooltips over values a narrow form cuts short (widgets/value_tips.py), asked the way Qt asks:
a ToolTip event sent to the widget under the mouse."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QTableView, QToolTip, QWidget

import livefill.widgets.value_tips as value_tips
from tests.widgets.shown import shown_catalog
from livefill.widgets.value_tips import cut_text, install_value_tips

LONG = "a very long product name that cannot fit in a narrow column, not even nearly"


@pytest.fixture
def catalog(qtbot):  # noqa: ANN001
    """A narrow catalog form holding one item whose name and description are long."""
    form, view = shown_catalog(qtbot, 420, 700)
    install_value_tips()
    item = {"sku": "SKU-1", "name": LONG, "description": LONG, "price": 1.5, "discount": 0, "qty": 2,
            "in_stock": True, "ref": None, "tags": [], "dimensions": {"width_cm": 1.0, "height_cm": 2.0, "depth_cm": 3.0}}
    form.load({"supplier": "Müller & Söhne", "season": "Autumn", "item_count": 1, "currency": "EUR",
               "contact": {"name": "Anna", "email": "anna@example.com", "phone": None}, "items": [item], "notes": LONG})
    view.signals.flush()
    QApplication.processEvents()
    return form, view


def ask_tooltip(widget: QWidget, pos: QPoint) -> str:
    QToolTip.showText(QPoint(0, 0), "")  # no tooltip before the request
    event = QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos))
    QApplication.sendEvent(widget, event)
    return QToolTip.text()


def test_a_cut_table_cell_shows_its_whole_value_over_the_cells_own_tooltip(catalog):
    _form, view = catalog
    table = view.findChild(QTableView)
    assert table.objectName() == "fieldTable"  # its own name (its style sheet rule, these tips)
    model = table.model()
    column = next(c for c in range(model.columnCount()) if model.index(0, c).data() == LONG)
    index = model.index(0, column)
    pos = table.visualRect(index).center()
    assert cut_text(table.viewport(), pos) == LONG
    own = index.data(Qt.ItemDataRole.ToolTipRole)
    assert own  # the cell's own tooltip (its pointer and state) is kept, under the value
    assert ask_tooltip(table.viewport(), pos) == f"{LONG}\n{own}"


def test_a_cell_that_fits_keeps_its_own_tooltip(catalog):
    _form, view = catalog
    table = view.findChild(QTableView)
    model = table.model()
    index = model.index(0, next(c for c in range(model.columnCount()) if model.index(0, c).data() == "SKU-1"))
    pos = table.visualRect(index).center()
    assert cut_text(table.viewport(), pos) is None
    assert ask_tooltip(table.viewport(), pos) == index.data(Qt.ItemDataRole.ToolTipRole)


def test_a_cut_column_title_shows_the_whole_title(catalog, qtbot):  # noqa: ANN001
    _form, view = catalog
    table = view.findChild(QTableView)
    header = table.horizontalHeader()
    titles = [str(table.model().headerData(s, Qt.Orientation.Horizontal) or "") for s in range(header.count())]
    header.setMinimumSectionSize(10)  # (a field table keeps 72 px; a long title can still be cut)
    header.resizeSection(0, 24)  # far too narrow for its title
    QApplication.processEvents()
    pos = QPoint(header.sectionViewportPosition(0) + 4, header.height() // 2)
    assert cut_text(header.viewport(), pos) == titles[0]
    assert ask_tooltip(header.viewport(), pos) == titles[0]


def test_a_cut_line_editor_shows_its_whole_text(catalog):
    _form, view = catalog
    editor = next(e for e in view.findChildren(QLineEdit, "fieldEditor") if e.text() == "Müller & Söhne")
    editor.setText(LONG)
    editor.resize(80, editor.height())
    assert cut_text(editor, QPoint(5, 5)) == LONG
    tip = ask_tooltip(editor, QPoint(5, 5))
    assert tip.startswith(LONG)


def test_the_filter_sits_on_the_watched_widgets_not_on_the_application(catalog, qtbot, monkeypatch):  # noqa: ANN001
    """An application-wide filter in Python would run for every event of every object (timers,
    socket notifiers, paints: ~1,500 a second while a run streams)."""
    _form, view = catalog
    asked: list[QObject] = []
    real = value_tips.cut_text

    def counting(widget, pos):  # noqa: ANN001
        asked.append(widget)
        return real(widget, pos)

    monkeypatch.setattr(value_tips, "cut_text", counting)
    plain = QWidget()
    qtbot.addWidget(plain)
    plain.setToolTip("mine")
    assert ask_tooltip(plain, QPoint(2, 2)) == "mine"
    ask_tooltip(view, QPoint(2, 2))
    assert asked == []  # the filter never saw the unwatched widgets' events
    table = view.findChild(QTableView)
    ask_tooltip(table.viewport(), QPoint(2, 2))
    assert asked == [table.viewport()]


def test_widgets_made_after_the_filter_are_watched_at_once(catalog, qtbot):  # noqa: ANN001
    _form, later = shown_catalog(qtbot, 420, 700)
    table = later.findChild(QTableView)
    header = table.horizontalHeader()
    QApplication.processEvents()  # the table has sized its columns by what they hold (a turn after it shows)
    header.setMinimumSectionSize(10)
    header.resizeSection(0, 24)
    QApplication.processEvents()
    pos = QPoint(header.sectionViewportPosition(0) + 4, header.height() // 2)
    title = str(table.model().headerData(0, Qt.Orientation.Horizontal))
    assert ask_tooltip(header.viewport(), pos) == title
