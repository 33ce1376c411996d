"""The table's own paint (livefill.widgets.table_paint) looks exactly as Qt's, pixel for pixel, and
skips Qt's per-cell work: no QStyleOptionViewItem, no flags(), no delegate.paint for a plain cell."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLineEdit

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SCHEMAS
from livefill.gui import theme
from livefill.gui.presentation import presentation_qss
from livefill.session.expected_answer import form_marks
from livefill.session.scoring import FieldScore, Score, Verdict
from livefill.widgets import state_delegate, table_model
from livefill.widgets.form_view import FormView
from livefill.widgets.table_field import FieldTable

ROWS = get_scenario("catalog").output["items"]


@pytest.fixture(params=["light", "dark"])
def themed(request, qapp):
    """The app styled as the theme `request.param` styles it, put back afterwards."""
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    qapp.setStyle("Fusion")
    qapp.setPalette(theme.dark_palette() if request.param == "dark" else theme.light_palette())
    qapp.setStyleSheet(theme.stylesheet(request.param))
    yield request.param
    qapp.setStyleSheet(sheet)
    qapp.setPalette(palette)
    qapp.setStyle(style)


def _view(qtbot, width: int, *, presenting: bool = False, marking: bool = True) -> tuple[FormModel, FormView]:
    form = FormModel(SCHEMAS["catalog"], marking=marking)
    view = FormView(form)
    qtbot.addWidget(view)
    if presenting:
        view.setStyleSheet(presentation_qss(QApplication.font().pointSizeF()))
    view.resize(width, 700)
    view.show()
    qtbot.waitExposed(view)
    return form, view


def _grabs(qtbot, table: FieldTable) -> tuple[QImage, QImage]:
    """The table's viewport as its own paint draws it, then as Qt's does."""
    qtbot.wait(30)  # pending layouts and column sizing done
    viewport = table.viewport()
    table.fast_paint = True
    before = table.fast_paints
    ours = viewport.grab().toImage()
    assert table.fast_paints > before  # painted by table_paint, not handed back to Qt
    table.fast_paint = False
    try:
        theirs = viewport.grab().toImage()
    finally:
        table.fast_paint = True
    return ours, theirs


def _same(ours: QImage, theirs: QImage, name: str) -> None:
    if ours != theirs:
        ours.save(f"/tmp/table-paint-{name}-ours.png")
        theirs.save(f"/tmp/table-paint-{name}-qt.png")
        differing = sum(ours.pixel(x, y) != theirs.pixel(x, y) for y in range(ours.height()) for x in range(ours.width()))
        pytest.fail(f"{name}: {differing} pixels differ (/tmp/table-paint-{name}-*.png)")


def _committed(qtbot, form: FormModel, view: FormView) -> FieldTable:
    """Twenty rows committed; a cell the user typed, an invalid one, one right and one wrong."""
    form.begin_run()
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, row) for i, row in enumerate(ROWS[:20])])
    form.commit()
    view.signals.flush()
    form.set_value("/items/1/name", "Typed by hand")
    form.set_value("/items/2/price", "twelve", invalid_reason="not a number")
    view.signals.flush()
    sku, price = ROWS[0]["sku"], ROWS[3]["price"]
    form_marks(form).set(Score(fields=(FieldScore(pointer="/items/0/sku", verdict=Verdict.RIGHT, expected=sku, actual=sku),
                                        FieldScore(pointer="/items/3/price", verdict=Verdict.WRONG, expected=price + 1, actual=price))))
    table = view.field("/items").view
    qtbot.waitUntil(lambda: table.model().rowCount() == 20)
    return table


@pytest.mark.parametrize("presenting", [False, True], ids=["normal", "presentation"])
def test_the_committed_table_looks_the_same_as_qt_paints_it(qtbot, themed, presenting):
    form, view = _view(qtbot, 520, presenting=presenting)
    table = _committed(qtbot, form, view)
    model = table.model()
    assert model.answer(0, 0) == "right" and model.cell(2, 2)[1] == "invalid"
    _same(*_grabs(qtbot, table), f"{themed}-committed-{presenting}")
    # selected cells, and the current one with the focus
    table.setCurrentIndex(model.index(2, 1))
    selection = table.selectionModel()
    for row, column in ((3, 0), (3, 2), (4, 4)):  # a wrong one among them
        selection.select(model.index(row, column), QItemSelectionModel.SelectionFlag.Select)
    table.activateWindow()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    _same(*_grabs(qtbot, table), f"{themed}-selected-{presenting}")
    # scrolled down and sideways (the lane is narrower than the columns)
    bars = table.verticalScrollBar(), table.horizontalScrollBar()
    assert bars[0].maximum() > 0 and bars[1].maximum() > 0
    bars[0].setValue(bars[0].maximum() // 2 + 7)
    bars[1].setValue(bars[1].maximum() // 2 + 13)
    _same(*_grabs(qtbot, table), f"{themed}-scrolled-{presenting}")


@pytest.mark.parametrize("marking", [True, False], ids=["partial", "naive"])
def test_a_table_being_written_looks_the_same_as_qt_paints_it(qtbot, themed, marking):
    form, view = _view(qtbot, 900, marking=marking)
    form.begin_run()
    changes = [(f"/items/{i}", FieldState.SETTLED, row) for i, row in enumerate(ROWS[:4])]
    changes += [("/items/4/sku", FieldState.SETTLED, ROWS[4]["sku"]),
                ("/items/4/name", FieldState.PROVISIONAL, ROWS[4]["name"][:9]),
                ("/items/4/price", FieldState.PROVISIONAL, 12.5),
                ("/items/4/in_stock", FieldState.PENDING, None),
                ("/items/3/sku", FieldState.INVALID, "??", "not a code")]
    form.apply_many(changes)
    view.signals.flush()
    table = view.field("/items").view
    qtbot.waitUntil(lambda: table.model().rowCount() == 5)
    states = {table.model().cell(r, c)[1] for r in range(5) for c in range(table.model().columnCount())}
    assert {"settled", "provisional", "pending", "invalid"} <= states if marking else {"settled", "empty", "invalid"} <= states
    _same(*_grabs(qtbot, table), f"{themed}-running-{marking}")


def test_an_open_cell_editor_is_drawn_over_the_cells_either_way(qtbot):
    form, view = _view(qtbot, 700)
    table = _committed(qtbot, form, view)
    table.edit(table.model().index(4, 1))
    qtbot.waitUntil(lambda: table.viewport().findChild(QLineEdit) is not None)
    editor = table.viewport().findChild(QLineEdit)
    editor.setText("half typed")
    ours, theirs = _grabs(qtbot, table)
    _same(ours, theirs, "editor")
    assert editor.isVisible()


def test_a_paint_builds_no_option_asks_no_flags_and_calls_no_delegate_paint_for_a_plain_cell(qtbot, monkeypatch):
    form, view = _view(qtbot, 700)
    table = _committed(qtbot, form, view)
    qtbot.wait(30)
    counted = {"paint": 0, "flags": 0, "cells": 0}
    real_paint, real_flags, real_cell = state_delegate.StateDelegate.paint, table_model.FormTableModel.flags, \
        state_delegate.StateDelegate.paint_cell

    def paint(self, *args):  # noqa: ANN001, ANN002, ANN202
        counted["paint"] += 1
        return real_paint(self, *args)

    def flags(self, *args):  # noqa: ANN001, ANN002, ANN202
        counted["flags"] += 1
        return real_flags(self, *args)

    def cell(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        counted["cells"] += 1
        return real_cell(self, *args, **kwargs)

    monkeypatch.setattr(state_delegate.StateDelegate, "paint", paint)
    monkeypatch.setattr(table_model.FormTableModel, "flags", flags)
    monkeypatch.setattr(state_delegate.StateDelegate, "paint_cell", cell)
    # (a new table: Qt calls the Python overrides a widget had when it was made)
    form2, view2 = _view(qtbot, 700)
    table2 = _committed(qtbot, form2, view2)
    qtbot.wait(30)
    for key in counted:
        counted[key] = 0
    table2.viewport().repaint()
    assert counted["cells"] >= 30  # every visible cell painted, from the model's cell()
    # the old code: Qt built an option, asked flags() and called the delegate's paint per cell
    assert counted["paint"] == 0 and counted["flags"] == 0
    table2.fast_paint = False
    counted.update(paint=0, flags=0)
    table2.viewport().repaint()
    assert counted["paint"] >= 30 and counted["flags"] >= 30  # (what the old code did, still there to compare)
    del form, view, table


def _provisional(delegate: state_delegate.StateDelegate, text: str, *, selected: bool = False) -> QImage:
    """A provisional cell drawn by the delegate on an opaque image, as on the table's viewport."""
    from PySide6.QtCore import QRect  # noqa: PLC0415
    from PySide6.QtGui import QPainter  # noqa: PLC0415
    from PySide6.QtWidgets import QStyleOptionViewItem  # noqa: PLC0415

    image = QImage(200, 60, QImage.Format.Format_RGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.font = QApplication.font()
    option.palette = QApplication.palette()
    for y in (3, 30):  # two cells of one size
        delegate._draw(painter, QRect(5, y, 160, 24), option, delegate._fonts(option.font), text, "provisional",  # noqa: SLF001
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), True, False, selected=selected)
    painter.end()
    return image


def test_a_provisional_cell_strokes_its_dashed_outline_once_per_size_and_looks_the_same(qtbot, monkeypatch):
    from PySide6.QtGui import QPainter, QPen  # noqa: PLC0415

    strokes = []
    real = QPainter.drawRect

    def counting(painter, *args):  # noqa: ANN001, ANN002, ANN202
        strokes.append(args)
        return real(painter, *args)

    monkeypatch.setattr(QPainter, "drawRect", counting)
    delegate = state_delegate.StateDelegate()
    cached = [_provisional(delegate, text, selected=selected) for text in ("Sand alumin", "Sand aluminium pendant lig")
              for selected in (False, True)]
    assert len(strokes) == 1  # the old code stroked the dashed pen for every cell drawn (8 here)

    def stroked(painter, rect, inner):  # noqa: ANN001, ANN202 - the outline as the old code drew it
        painter.setPen(QPen(state_delegate.AMBER, 1.5, Qt.PenStyle.DashLine))
        real(painter, inner)

    monkeypatch.setattr(delegate, "_dashed_outline", stroked)
    direct = [_provisional(delegate, text, selected=selected) for text in ("Sand alumin", "Sand aluminium pendant lig")
              for selected in (False, True)]
    for i, (ours, theirs) in enumerate(zip(cached, direct)):
        _same(ours, theirs, f"provisional-{i}")
