"""A field table's columns are as wide as what they hold: short codes narrow, numbers whole, the
long text taking the rest (and whole in a tooltip when it is still cut). Real widgets, offscreen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SCHEMAS
from livefill.widgets.column_widths import Column, fit_columns
from livefill.widgets.form_view import FormView
from livefill.widgets.state_delegate import GLYPH_SPACE
from livefill.widgets.value_tips import cut_text

S = FieldState


def _invoice_table(qtbot, width: int, *, presenting: bool = False):  # noqa: ANN001, ANN202
    form = FormModel(SCHEMAS["invoice"])
    form.load(get_scenario("invoice").output)
    view = FormView(form)
    qtbot.addWidget(view)
    if presenting:
        from livefill.gui.presentation import presentation_qss

        view.setStyleSheet(presentation_qss(QApplication.font().pointSizeF()))
    view.resize(width, 900)
    view.show()
    qtbot.waitExposed(view)
    return form, view, view.field("/line_items")


def _column(table, name: str) -> int:  # noqa: ANN001
    return next(c for c, spec in enumerate(table.spec.children) if spec.name == name)


def _whole(table, row: int, column: int) -> bool:  # noqa: ANN001
    view = table.view
    text = str(table.model.index(row, column).data())
    return view.fontMetrics().horizontalAdvance(text) <= view.columnWidth(column) - GLYPH_SPACE - 4


# The form pane's width in presentation mode with the History panel open at 1,280 × 720 (~470 px),
# the same without the panel, and the ordinary window at 1,280 px (~700 px).
@pytest.mark.parametrize(("width", "presenting"), [(470, True), (700, True), (700, False), (1000, False)])
def test_short_codes_are_narrow_numbers_whole_and_the_description_takes_the_rest(qtbot, width, presenting):
    # The Sku column was as wide as the Description (two stretched columns: ~240 px for "DSK-140")
    # while every description was cut.
    _form, _view, table = _invoice_table(qtbot, width, presenting=presenting)
    view, model = table.view, table.model
    sku, description = _column(table, "sku"), _column(table, "description")

    others = [c for c in range(model.columnCount()) if c != description]

    def laid_out() -> bool:  # (a style sheet's larger font reaches the table a moment later)
        codes = max(view.fontMetrics().horizontalAdvance(model.index(r, sku).data()) for r in range(model.rowCount()))
        narrow = view.columnWidth(sku) <= codes + GLYPH_SPACE + 40 < view.columnWidth(description)
        whole = all(_whole(table, r, c) for r in range(model.rowCount()) for c in others)
        header = view.horizontalHeader()
        filled = sum(header.sectionSize(c) for c in range(header.count())) == view.viewport().width()
        return narrow and whole and filled  # filled: the table's width used, no sideways scroll bar

    qtbot.waitUntil(laid_out, timeout=2000)
    assert view.horizontalScrollBar().maximum() == 0


def test_a_description_still_cut_is_whole_in_its_tooltip(qtbot):
    _form, _view, table = _invoice_table(qtbot, 470, presenting=True)
    view, model = table.view, table.model
    description = _column(table, "description")
    def cut() -> list[int]:
        return [r for r in range(model.rowCount()) if not _whole(table, r, description)]

    # at this width (once the columns are sized for the style sheet's font) descriptions are cut
    qtbot.waitUntil(lambda: bool(cut()), timeout=2000)
    row = cut()[0]
    rect = view.visualRect(model.index(row, description))
    assert cut_text(view.viewport(), QPoint(rect.center())) == model.index(row, description).data()


def test_columns_follow_the_values_of_a_streaming_table_without_shrinking_mid_run(qtbot):
    # A run empties the table and writes it again row by row: the columns keep their widths while
    # it is empty, a code column widens as its codes grow, and numbers are never cut.
    form, _view, table = _invoice_table(qtbot, 700)
    view = table.view
    sku, price = _column(table, "sku"), _column(table, "unit_price")
    header = view.horizontalHeader()
    qtbot.waitUntil(lambda: sum(header.sectionSize(c) for c in range(header.count())) == view.viewport().width())
    before = [view.columnWidth(c) for c in range(table.model.columnCount())]
    form.begin_run()
    _view.signals.flush()
    qtbot.wait(20)
    assert [view.columnWidth(c) for c in range(table.model.columnCount())] == before  # emptied: no jump
    form.apply_many([("/line_items", S.PROVISIONAL, [{"sku": "X"}]), ("/line_items/0/sku", S.PROVISIONAL, "X")])
    _view.signals.flush()
    long_code = "LONGCODE-123456"
    form.apply_many([("/line_items/0/sku", S.SETTLED, long_code), ("/line_items/0/unit_price", S.SETTLED, 123456.75)])
    _view.signals.flush()
    qtbot.waitUntil(lambda: _whole(table, 0, sku) and _whole(table, 0, price), timeout=2000)
    widened = view.columnWidth(sku)
    form.apply_many([("/line_items/0/sku", S.SETTLED, "Y")])  # narrower again: kept while the run lasts
    _view.signals.flush()
    qtbot.wait(20)
    assert view.columnWidth(sku) == widened


def test_fit_columns_shares_the_room_by_need():
    code, text, number = Column(90, 72, text=True), Column(300, 72, text=True, long=True), Column(70, 70)
    assert fit_columns([code, text, number], 600) == [90, 440, 70]  # the spare room to the long text
    assert fit_columns([code, text, number], 300) == [90, 140, 70]  # short: the code whole, the text cut
    assert fit_columns([code, text, Column(110, 60)], 300) == [90, 150, 60]  # a title wraps before text is cut
    assert fit_columns([code, text, number], 200) == [90, 72, 70]  # under the floors: it scrolls sideways, codes whole
    assert fit_columns([Column(90, 72, text=True), Column(95, 72, text=True)], 140) == [72, 72]  # no long text: all at floor
    assert fit_columns([Column(50, 72, text=True), Column(60, 72, text=True)], 301) == [151, 150]  # none long: all share
