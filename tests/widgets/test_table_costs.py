"""What a table's update costs the GUI thread, counted (not timed): the cells settled by one update
are tested against what is on screen once for them all, not once a cell."""

from __future__ import annotations

from PySide6.QtGui import QPalette

from livefill.extraction.form import FieldState
from livefill.extraction.scenarios import get_scenario
from livefill.widgets import table_field
from livefill.widgets.state_delegate import StateDelegate
from tests.widgets.shown import shown_catalog

CATALOG = get_scenario("catalog")


def test_the_cells_settled_by_one_update_ask_once_what_is_on_screen(qtbot, monkeypatch):
    form, view = shown_catalog(qtbot, height=900)
    painted: list[str] = []
    view.signals.paint_probe.sink = painted.append  # byte-to-pixel on, as in a compare lane
    table = view.field("/items")
    asked = []
    real = table_field.on_screen

    def counting(widget):  # noqa: ANN001, ANN202
        asked.append(widget)
        return real(widget)

    monkeypatch.setattr(table_field, "on_screen", counting)
    form.begin_run()
    view.signals.flush()
    rows = CATALOG.output["items"][:3]
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, row) for i, row in enumerate(rows)])
    view.signals.flush()
    asked_in_update = len(asked)
    columns = table.model.columnCount()
    assert table.model.rowCount() == 3 and columns >= 5
    shown = {(r, c) for r in range(3) for c in range(columns) if table._cell_visible(r, c)}  # noqa: SLF001
    assert len(shown) >= 10
    # the old code asked for each of the settled cells (over a dozen here); now once
    assert asked_in_update == 1
    assert {cell for cell in table.model.armed} <= shown and table.model.armed  # armed: the visible ones
    qtbot.waitUntil(lambda: not table.model.armed, timeout=2000)  # ... until their first paint
    assert any(p.startswith("/items/0/") for p in painted)


def test_a_paint_of_the_table_reads_the_text_colour_once_not_once_a_cell(qtbot, monkeypatch):
    form, view = shown_catalog(qtbot, height=900)
    table = view.field("/items")
    form.begin_run()
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, row) for i, row in enumerate(CATALOG.output["items"][:6])])
    form.commit()
    view.signals.flush()
    qtbot.waitUntil(lambda: table.model.rowCount() == 6)
    qtbot.wait(50)
    reads = []
    real = QPalette.text

    def counting(palette, *args):  # noqa: ANN001, ANN002, ANN202
        reads.append(args)
        return real(palette, *args)

    monkeypatch.setattr(QPalette, "text", counting)
    delegate = table.view.itemDelegate()
    assert isinstance(delegate, StateDelegate)
    viewport = table.view.viewport()
    before = viewport.grab().toImage()  # a whole paint of the table, every visible cell
    monkeypatch.setattr(QPalette, "text", real)
    assert len(reads) <= 1  # the old code read it for each of the ~40 cells painted (now: once, or not again while the look is the same)
    assert not delegate.painting  # ... and only while the table paints
    delegate._pixmaps = {}  # noqa: SLF001 - every cell drawn anew, its colour read from its own option
    monkeypatch.setattr(delegate, "begin_paint", lambda: None)
    assert viewport.grab().toImage() == before  # drawn the same


def test_the_measure_at_a_runs_end_does_not_measure_again_the_texts_it_measured_as_they_arrived(qtbot, monkeypatch):
    from PySide6.QtGui import QFontMetrics

    form, view = shown_catalog(qtbot, height=900)
    table = view.field("/items")
    rows = CATALOG.output["items"][:30]
    form.begin_run()
    view.signals.flush()
    for i, row in enumerate(rows):  # rows arrive and settle in view, each cell measured as it is read
        form.apply_many([(f"/items/{i}", FieldState.PROVISIONAL, row)])
        view.signals.flush()
        qtbot.wait(5)  # the table follows its newest row
        form.apply_many([(f"/items/{i}", FieldState.SETTLED, row)])
        view.signals.flush()
    qtbot.waitUntil(lambda: table.model.rowCount() == len(rows))
    measured: list[str] = []
    real = QFontMetrics.horizontalAdvance

    def counting(metrics, text, *args):  # noqa: ANN001, ANN002, ANN202
        measured.append(text)
        return real(metrics, text, *args)

    monkeypatch.setattr(QFontMetrics, "horizontalAdvance", counting)
    form.commit()
    view.signals.flush()
    table._measure()  # noqa: SLF001 - what the end of the run runs on the next turn
    texts = {table.model.cached_text(r, c) or table.model.cell(r, c)[0] for r in range(len(rows))
             for c in range(table.model.columnCount())}
    titles = {word for spec in table.spec.children for word in (spec.label, *spec.label.split())}
    values = [t for t in measured if t in texts and t not in titles]
    # the old code measured every cell's text again (30 rows x 8 columns); now none
    assert values == [] and len(texts) > 100
    assert table._needs and all(need[2] > 0 for need in table._needs)  # noqa: SLF001 - and every column is measured


def test_the_column_texts_a_measure_reads_are_the_forms_display_read_without_its_lookups(qtbot, monkeypatch):
    """The measure at a run's end reads every cell's text: each row's value once, the cell's inside
    it, the same text `FormModel.display` gives, without a spec lookup or a whole pointer per cell."""
    form, view = shown_catalog(qtbot, height=900)
    model = view.field("/items").model
    rows = CATALOG.output["items"][:40]
    form.begin_run()
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, row) for i, row in enumerate(rows[:30])])
    form.apply_many([("/items/30", FieldState.PENDING, {}), ("/items/30/name", FieldState.PROVISIONAL, rows[30]["name"][:5])])
    view.signals.flush()
    model._insert_rows(31)  # noqa: SLF001 - rows below the view are inserted a few times a second
    expected = [[form.display(model.cell_pointer(r, c)) for r in range(model.rowCount())] for c in range(model.columnCount())]
    assert any(t.endswith("…") for column in expected for t in column)
    looked_up = []
    monkeypatch.setattr(type(form), "display", lambda self, p: looked_up.append(p) or "")
    monkeypatch.setattr(type(form), "spec_for", lambda self, p: looked_up.append(p))
    assert [model.column_texts(c) for c in range(model.columnCount())] == expected
    assert looked_up == []
