"""What following a run costs the table model and its view per update, counted: a cell is read
without FormModel.display's lookups (and reads the same text), and a row appended past the rows
the table shows does not fit the table's height again."""

from __future__ import annotations

import pytest

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SCHEMAS
from livefill.widgets.table_field import MAX_VISIBLE_ROWS, TableField
from tests.widgets.shown import shown_catalog

ROWS = get_scenario("catalog").output["items"]


@pytest.mark.parametrize("marking", [True, False], ids=["partial", "naive"])
def test_a_cell_reads_the_text_the_form_displays_without_the_forms_lookups(qtbot, monkeypatch, marking):
    from livefill.widgets.form_view import FormView  # noqa: PLC0415

    form = FormModel(SCHEMAS["catalog"], marking=marking)
    view = FormView(form)
    qtbot.addWidget(view)
    form.begin_run()
    row = ROWS[5]
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, r) for i, r in enumerate(ROWS[:3])]
                    + [("/items/3/sku", FieldState.PROVISIONAL, row["sku"][:4]), ("/items/3/name", FieldState.PROVISIONAL, "Sa"),
                       ("/items/3/price", FieldState.PROVISIONAL, 12), ("/items/3/in_stock", FieldState.SETTLED, True),
                       ("/items/3/tags", FieldState.PROVISIONAL, ["a", "b"]), ("/items/3/dimensions/width_cm", FieldState.PENDING, None),
                       ("/items/2/price", FieldState.INVALID, "twelve", "not a number")])
    view.signals.flush()
    model = view.field("/items").model
    assert model.rowCount() == 4
    displayed = {(r, c): form.display(model.cell_pointer(r, c)) for r in range(4) for c in range(model.columnCount())}
    assert any(text.endswith("…") for text in displayed.values()) is marking
    calls = []
    real = FormModel.display
    monkeypatch.setattr(FormModel, "display", lambda self, pointer: calls.append(pointer) or real(self, pointer))
    model._cache.clear()  # noqa: SLF001 - every cell read again
    read = {(r, c): model.cell(r, c)[0] for r in range(4) for c in range(model.columnCount())}
    assert read == displayed  # the same text as the form's
    assert calls == []  # the old code asked the form's display() (a spec and pointer lookup) per cell


def test_rows_appended_past_the_rows_shown_do_not_fit_the_tables_height_again(qtbot, monkeypatch):
    form, view = shown_catalog(qtbot, height=900)
    table = view.field("/items")
    fits = []
    real = TableField._header_height  # what every fit of the table's height measures first
    monkeypatch.setattr(TableField, "_header_height", lambda self: fits.append(1) or real(self))
    form.begin_run()
    view.signals.flush()
    shown = MAX_VISIBLE_ROWS + 1  # (one more: the vertical scroll bar has come, the columns fitted to it)
    for i, row in enumerate(ROWS[:shown]):
        form.apply_many([(f"/items/{i}", FieldState.SETTLED, row)])
        view.signals.flush()
        qtbot.wait(1)
    qtbot.waitUntil(lambda: table.model.rowCount() == shown)
    qtbot.wait(50)
    height = table.view.height()
    assert fits  # the table grew row by row up to the rows it shows
    fits.clear()
    for i in range(shown, shown + 6):  # (values no wider than those shown: no column widens)
        form.apply_many([(f"/items/{i}", FieldState.SETTLED, ROWS[i % 2])])
        view.signals.flush()
        qtbot.wait(1)
    qtbot.waitUntil(lambda: table.model.rowCount() == shown + 6)
    qtbot.wait(50)
    assert fits == []  # the old code fitted the height again for each row appended (6 here)
    assert table.view.height() == height  # ... to the same height
