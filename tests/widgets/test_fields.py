"""Field widgets: the `state` / `displayValue` properties, markers, tooltips, tables, chips, edits."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from PySide6.QtCore import QEvent, QEventLoop, QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QColor, QRegion
from PySide6.QtWidgets import QAbstractItemView, QApplication, QWidget

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.schemas import SCHEMAS
from tests.widgets.conftest import STYLE
from tests.widgets.shown import shown_catalog
from livefill.widgets.field_base import MARKERS
from livefill.widgets.form_view import FormView
from livefill.widgets.table_model import STATE_ROLE

S = FieldState


@pytest.fixture
def view(qtbot):
    form = FormModel(SCHEMAS["invoice"])
    view = FormView(form)
    qtbot.addWidget(view)
    return view


def write_row(form, view, i: int) -> None:  # noqa: ANN001
    """A run writes row `i` of the catalog's items (its sku, still growing); the view hears at once."""
    form.apply_many([(f"/items/{i}/sku", S.PROVISIONAL, f"A-{i}")])
    view.signals.flush()


@contextmanager
def cell_reads(model):  # noqa: ANN001, ANN201
    """The (row, column) of every cell the table model reads from the form inside the block."""
    reads: list[tuple[int, int]] = []
    real = model.cell

    def counting(row, column):  # noqa: ANN001, ANN202
        reads.append((row, column))
        return real(row, column)

    model.cell = counting
    try:
        yield reads
    finally:
        model.cell = real


def props(view, pointer):
    view.signals.flush()
    w = view.field(pointer)
    return w.property("state"), w.property("displayValue"), w.marker.text()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_schema_field_gets_a_named_widget(qtbot, name):
    form = FormModel(SCHEMAS[name])
    view = FormView(form)
    qtbot.addWidget(view)
    for spec in form.fields:
        widget = view.findChild(QWidget, f"field:{spec.pointer}")
        assert widget is not None and widget.property("state") == "empty"


def test_string_field_goes_pending_provisional_settled(view):
    form = view.form
    form.begin_run()
    form.apply("/customer_name", S.PENDING)
    state, shown, marker = props(view, "/customer_name")
    assert (state, shown) == ("pending", "") and "waiting" in marker
    assert view.field("/customer_name").editor.placeholderText()
    form.apply("/customer_name", S.PROVISIONAL, "Mar")
    assert props(view, "/customer_name") == ("provisional", "Mar…", "… still arriving")
    assert view.field("/customer_name").editor.text() == "Mar…"
    form.apply("/customer_name", S.SETTLED, "Martinez SA")
    assert props(view, "/customer_name") == ("settled", "Martinez SA", "✓")
    assert view.field("/customer_name").property("flash") == "on"  # the short highlight
    assert view.field("/customer_name").editor.isReadOnly()
    form.restore()
    assert props(view, "/customer_name") == ("empty", "", "")
    assert not view.field("/customer_name").editor.isReadOnly()


def test_state_property_reaches_the_children_qss_keys_on(view):
    form = view.form
    form.begin_run()
    form.apply("/amount", S.PROVISIONAL, 12)
    view.signals.flush()
    w = view.field("/amount")
    assert {w.property("state"), w.label.property("state"), w.editor.property("state"), w.marker.property("state")} == {"provisional"}
    assert w.editor.alignment() & Qt.AlignmentFlag.AlignRight


def test_invalid_shows_the_reason_as_tooltip(view):
    form = view.form
    form.begin_run()
    form.restore(invalid={"/amount": "validation failed at /amount: Input should be a valid number"})
    state, _shown, marker = props(view, "/amount")
    assert state == "invalid" and "invalid" in marker
    assert "Input should be a valid number" in view.field("/amount").toolTip()


def test_table_rows_appear_as_items_start_and_cells_carry_states(view):
    form = view.form
    table = view.field("/line_items")
    model = table.model
    form.begin_run()
    form.apply("/line_items", S.PROVISIONAL, [])
    view.signals.flush()
    assert model.rowCount() == 0
    form.apply("/line_items/0", S.PROVISIONAL, {})
    form.apply("/line_items/0/sku", S.PROVISIONAL, "DSK")
    view.signals.flush()
    assert model.rowCount() == 1
    assert model.data(model.index(0, 0), STATE_ROLE) == "provisional"
    assert model.data(model.index(0, 0)) == "DSK…"
    assert model.data(model.index(0, 2), STATE_ROLE) == "empty"
    form.apply("/line_items/0/sku", S.SETTLED, "DSK-140")
    form.apply("/line_items/1", S.SETTLED, {"sku": "B", "description": "d", "qty": 1, "unit_price": 2.0})
    view.signals.flush()
    assert model.rowCount() == 2
    assert model.data(model.index(0, 0), STATE_ROLE) == "settled"
    assert [model.data(model.index(1, c), STATE_ROLE) for c in range(4)] == ["settled"] * 4
    assert model.data(model.index(1, 3)) == "2.00"
    assert table.property("state") == "provisional"
    table.view.grab()  # the delegate paints every state without error


def test_a_pending_table_that_holds_settled_rows_says_more_are_to_come_not_waiting(view):
    """Settled mode leaves a container PENDING (it never shows provisional values) while its rows
    arrive settled: the table said "◌ waiting" (no value yet) over rows of values."""
    from livefill.widgets.field_base import FILLING_MARKER

    form = view.form
    form.begin_run()
    form.apply_many([("/customer_name", S.SETTLED, "ACME")], parent_state=S.PENDING)  # the relay's reader
    assert props(view, "/line_items")[2] == ""  # nothing of it yet
    row = {"sku": "B", "description": "d", "qty": 1, "unit_price": 2.0}
    form.apply_many([("/line_items/0", S.SETTLED, row)], parent_state=S.PENDING)  # an `item` record
    state, _text, marker = props(view, "/line_items")
    assert (state, marker) == ("pending", FILLING_MARKER)
    form.apply_many([("/line_items/1", S.SETTLED, row)], parent_state=S.PENDING)
    assert props(view, "/line_items")[2] == FILLING_MARKER
    form.apply("/line_items", S.SETTLED, [row, row])
    assert props(view, "/line_items")[2] == MARKERS[S.SETTLED]


def test_chips_for_scalar_arrays_carry_element_states(qtbot):
    form = FormModel(SCHEMAS["ticket"])
    view = FormView(form)
    qtbot.addWidget(view)
    form.begin_run()
    form.apply("/tags", S.PROVISIONAL, [])
    form.apply("/tags/0", S.SETTLED, "billing")
    form.apply("/tags/1", S.PROVISIONAL, "refu")
    view.signals.flush()
    chips = view.field("/tags")
    assert [chips.chip(i).text() for i in range(2)] == ["billing", "refu…"]
    assert [chips.chip(i).property("state") for i in range(2)] == ["settled", "provisional"]
    form.apply("/category", S.SETTLED, "billing")
    view.signals.flush()
    assert view.field("/category").chip.text() == "billing"


def test_prose_grows_with_its_text(qtbot):
    form = FormModel(SCHEMAS["ticket"])
    view = FormView(form)
    qtbot.addWidget(view)
    view.resize(600, 800)
    view.show()
    form.begin_run()
    form.apply("/summary", S.PROVISIONAL, "short")
    view.signals.flush()
    small = view.field("/summary").editor.height()
    form.apply("/summary", S.PROVISIONAL, "word " * 400)
    view.signals.flush()
    assert view.field("/summary").editor.height() > small
    assert view.field("/summary").property("displayValue").endswith("…")


def test_prose_fits_its_text_again_when_its_width_changes(qtbot):
    # Its height was fitted only when the text changed: text that arrived while the lane was
    # narrow kept the extra wrapped line after the lane widened, and the rows below it sat lower
    # than in the other compare lanes (tests/gui/test_compare_alignment.py, one run in six).
    form = FormModel(SCHEMAS["ticket"])
    view = FormView(form)
    qtbot.addWidget(view)
    view.resize(300, 800)
    view.show()
    form.begin_run()
    form.apply("/summary", S.SETTLED, "word " * 40)
    view.signals.flush()
    QApplication.processEvents()
    narrow = view.field("/summary").editor.height()
    view.resize(1400, 800)
    qtbot.waitUntil(lambda: view.field("/summary").editor.height() < narrow, timeout=2000)
    wide = view.field("/summary").editor.height()
    view.resize(300, 800)
    qtbot.waitUntil(lambda: view.field("/summary").editor.height() == narrow, timeout=2000)
    assert wide < narrow


def test_user_edits_go_to_the_model(view, qtbot):
    amount = view.field("/amount").editor
    qtbot.keyClicks(amount, "1,200")
    amount.editingFinished.emit()
    assert view.form.committed == {"amount": 1200}
    amount.clear()
    qtbot.keyClicks(amount, "lots")
    amount.editingFinished.emit()
    assert view.form.state("/amount") is S.INVALID
    assert props(view, "/amount")[0] == "invalid"
    view.field("/paid").editor.click()
    assert view.form.committed["paid"] is True


def test_naive_form_shows_no_state_markers(qtbot):
    form = FormModel(SCHEMAS["invoice"], marking=False)
    view = FormView(form)
    qtbot.addWidget(view)
    assert view.findChild(QWidget, "naiveBanner") is not None
    form.begin_run()
    form.apply("/customer_name", S.SETTLED, "Mar")
    state, shown, marker = props(view, "/customer_name")
    assert (state, shown, marker) == ("settled", "Mar", "")


def test_status_line_and_run_log_text(qtbot):
    from livefill.extraction.modes import Mode
    from livefill.session.run_status import Phase, RunStatus
    from livefill.widgets.run_log import RunLog
    from livefill.widgets.status_line import StatusLine

    line = StatusLine()
    log = RunLog()
    qtbot.addWidget(line)
    qtbot.addWidget(log)
    status = RunStatus(run_id="r", mode=Mode.PARTIAL, phase=Phase.STOPPED, reason="stopped by the user — server stopped after 37 of 120 tokens",
                       bytes_received=2048, deltas_received=14, stop_reason=None, elapsed=1.25)
    line.show_status(status)
    # not "stopped — stopped by the user — …": a reason that begins with the phase's word stands alone
    assert line.text().startswith("■ stopped by the user — server stopped after 37 of 120 tokens")
    assert "2.0 KB" in line.text() and "14 deltas" in line.text()
    assert line.text().count("tokens") == 1  # only the server's count is called tokens
    assert line.property("phase") == "stopped"
    log.add_run(status, "invoice · anthropic")
    assert "→ ■ stopped by the user — server stopped after 37 of 120 tokens" in log.lines()[0]
    assert "(14 deltas, 2.0 KB, 1.2 s)" in log.lines()[0] and log.lines()[0].count("tokens") == 1


def test_catalog_table_keeps_its_text_columns_readable(qtbot):
    _form, view = shown_catalog(qtbot, 720, 600)
    table = view.field("/items").view
    header = table.horizontalHeader()
    labels = [table.model().headerData(c, Qt.Orientation.Horizontal) for c in range(header.count())]
    numeric = [c for c, label in enumerate(labels) if "Dimensions" in str(label) or label == "Price"]
    assert numeric and all(header.sectionSize(c) <= 110 for c in numeric)
    sku = labels.index("Sku")
    assert header.sectionSize(sku) >= 60, f"sku column squeezed to {header.sectionSize(sku)} px"



def test_a_narrow_table_keeps_its_text_columns_readable_and_scrolls_sideways(qtbot):
    # In a compare lane the catalog table is ~500 px wide: the fixed columns took 422 px and the
    # text columns (sku, name, tags) were squeezed to 26 px slivers that showed no value. No text
    # column goes under 72 px now; the table scrolls sideways, made taller by its scroll bar so that
    # its rows stay whole.
    form, view = shown_catalog(qtbot, 540, 700)
    form.begin_run()
    form.apply_many([(f"/items/{i}/sku", S.PROVISIONAL, f"SKU-{i}") for i in range(3)])
    view.signals.flush()
    table = view.field("/items").view
    qtbot.waitUntil(lambda: table.model().rowCount() == 3)
    header = table.horizontalHeader()
    labels = [table.model().headerData(c, Qt.Orientation.Horizontal) for c in range(header.count())]
    sizes = dict(zip(labels, map(header.sectionSize, range(header.count()))))
    # (the text columns at least 72 px; since columns are sized by what they hold, the others as
    # wide as their values and their title's longest word, which may be less)
    assert min(sizes[label] for label in ("Sku", "Name", "Tags")) >= 72, sizes
    words = header.fontMetrics()
    assert all(sizes[label] >= max(words.horizontalAdvance(w) for w in str(label).split()) for label in labels), sizes
    bar = table.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)  # wider than the table: it scrolls sideways
    qtbot.waitUntil(lambda: table.viewport().height() >= 3 * 24)  # three whole rows above the bar


def test_following_the_newest_row_keeps_the_sideways_scroll(qtbot):
    # A narrow table the user has scrolled sideways (to watch the dimensions) stays there while it
    # follows the row being written: each new row used to snap it back to the first column.
    form, view = shown_catalog(qtbot, 540, 700)
    form.begin_run()
    table = view.field("/items")
    for i in range(10):
        write_row(form, view, i)
        qtbot.wait(5)
    bar = table.view.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and table.model.rowCount() == 10)
    bar.setValue(bar.maximum())  # the user looks at the right-hand columns
    for i in range(10, 13):
        write_row(form, view, i)
        qtbot.wait(30)  # the view follows each new row
    assert table.view.rowAt(table.view.viewport().height() - 1) == 12  # it followed the newest row
    assert bar.value() == bar.maximum()  # and stayed where the user put it sideways



def test_a_table_the_user_scrolled_up_stays_there_while_rows_arrive_and_follows_again_at_the_bottom(qtbot):
    # Every new row used to pull the table back to the row being written within a loop turn, so
    # nobody could read the rows above while a run streamed.
    form, view, table = _following_table(qtbot, 12)
    bar = table.view.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0  # following: at the newest row
    bar.setValue(0)  # the user scrolls up to read the first rows
    for i in range(12, 16):
        write_row(form, view, i)
        qtbot.wait(20)
    qtbot.waitUntil(lambda: table.model.rowCount() == 16, timeout=3000)
    qtbot.wait(50)
    assert bar.value() == 0 and table.view.rowAt(0) == 0  # still reading the first rows
    bar.setValue(bar.maximum())  # back down to the newest row: the table follows again
    for i in range(16, 18):
        write_row(form, view, i)
        qtbot.wait(20)
    qtbot.waitUntil(lambda: table.view.rowAt(table.view.viewport().height() - 1) == 17, timeout=3000)
    bar.setValue(0)
    form.commit()  # the run ends while the user reads above: no jump to the last row either
    view.signals.flush()
    qtbot.wait(50)
    assert bar.value() == 0



def test_a_stopped_run_puts_the_table_back_where_the_user_was_reading_it(qtbot):
    # A Stop restores the rows the form held; the table used to stay where the run had taken it
    # (its last rows), not where the user had been reading the committed ones.
    form, view, table = _committed_rows(qtbot, 30, 700, "C")
    bar = table.view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 10)
    bar.setValue(7)  # reading rows 7 and on
    form.begin_run()
    view.signals.flush()
    for i in range(14):
        write_row(form, view, i)
        qtbot.wait(5)
    qtbot.waitUntil(lambda: table.view.rowAt(table.view.viewport().height() - 1) == 13)  # it followed the run
    form.restore()
    view.signals.flush()
    qtbot.waitUntil(lambda: bar.value() == 7, timeout=2000)
    assert table.model.cell(7, 0)[0] == "C-7"



def test_a_short_form_follows_its_table_until_the_user_scrolls_it_and_a_stop_scrolls_it_back(qtbot):
    # A short compare lane: the run scrolls the form down to the table it writes. The user who
    # scrolled the lane up to read a field was pulled back down by every new row; after a Stop the
    # restored form stayed scrolled part-way down.
    form, view = shown_catalog(qtbot, 900, 150)
    table = view.field("/items")
    lane = view.verticalScrollBar()
    assert lane.value() == 0 and lane.maximum() > 0  # even the empty form is taller than the lane
    form.begin_run()
    view.signals.flush()
    for i in range(12):
        write_row(form, view, i)
        qtbot.wait(10)
    qtbot.waitUntil(lambda: lane.value() > 0, timeout=2000)  # the table was brought into view
    lane.setValue(0)  # the user reads the fields above
    for i in range(12, 16):
        write_row(form, view, i)
        qtbot.wait(20)
    qtbot.wait(50)
    assert lane.value() == 0
    lane.setValue(lane.maximum())
    form.restore()
    view.signals.flush()
    qtbot.waitUntil(lambda: lane.value() == 0, timeout=2000)
    assert table.model.rowCount() == 0



def _one_turn() -> None:
    """One pass of the event loop, as the app's loop makes it."""
    loop = QEventLoop()
    QTimer.singleShot(0, loop.quit)
    loop.exec()


def test_a_fast_run_ends_with_its_table_at_the_newest_row(qtbot):
    # Rows written a few per loop turn, the last ones in the commit's turn: their follow was still
    # pending when the commit noted where the table stood, which then looked "scrolled up".
    form, view = shown_catalog(qtbot, 900, 700)
    qtbot.wait(50)
    table = view.field("/items")
    bar = table.view.verticalScrollBar()
    form.begin_run()
    view.signals.flush()
    for i in range(100):
        form.apply_many([(f"/items/{i}/sku", S.PROVISIONAL, f"A-{i}")])
        view.signals.flush()
        if i % 3 == 2:
            _one_turn()
    form.commit()
    view.signals.flush()
    qtbot.wait(200)
    assert bar.value() == bar.maximum() > 0


def test_a_stop_scrolls_the_form_back_even_when_the_run_had_made_it_shorter(qtbot):
    form, view, _table = _committed_rows(qtbot, 30, 150, "C")
    qtbot.wait(50)
    lane = view.verticalScrollBar()
    lane.setValue(lane.maximum())  # the user scrolled the short form down to its table
    before = lane.value()
    form.begin_run()  # the run empties the table: the form gets shorter
    view.signals.flush()
    for i in range(3):
        write_row(form, view, i)
        qtbot.wait(5)
    qtbot.wait(50)
    assert lane.maximum() < before
    form.restore()
    view.signals.flush()
    qtbot.waitUntil(lambda: lane.value() == before, timeout=2000)



def test_a_table_in_a_larger_font_shows_its_values_and_rows_whole_and_back_again(qtbot):
    # Presentation mode makes every font larger: the table kept 24 px rows and columns sized for
    # the small font (prices cut to "385.…", a 3-row table with a scroll bar), and after leaving it
    # a header two lines high.
    from livefill.gui.presentation import presentation_qss
    from livefill.widgets.state_delegate import GLYPH_SPACE

    form = FormModel(SCHEMAS["invoice"])
    form.load({"line_items": [{"sku": "DSK-140", "description": "Height-adjustable desk", "quantity": 2, "unit_price": 385.0},
                              {"sku": "CHR-22", "description": "Chair", "quantity": 2, "unit_price": 180.0},
                              {"sku": "LMP-07", "description": "Lamp", "quantity": 2, "unit_price": 35.0}]})
    view = FormView(form)
    qtbot.addWidget(view)
    view.resize(900, 900)
    view.show()
    qtbot.waitExposed(view)
    table = view.field("/line_items").view
    header_before, font_before = table.horizontalHeader().height(), table.fontMetrics().height()
    column = next(c for c, spec in enumerate(view.field("/line_items").spec.children) if spec.name == "unit_price")

    def whole() -> bool:
        room = table.columnWidth(column) - GLYPH_SPACE - 4
        fits = table.fontMetrics().horizontalAdvance("385.00") <= room
        return fits and table.rowHeight(0) >= table.fontMetrics().height() + 4 and table.verticalScrollBar().maximum() == 0

    view.setStyleSheet(presentation_qss(QApplication.font().pointSizeF()))
    qtbot.waitUntil(lambda: table.fontMetrics().height() > font_before and whole(), timeout=2000)
    view.setStyleSheet("")
    qtbot.waitUntil(lambda: table.horizontalHeader().height() == header_before and whole(), timeout=2000)


class _PaintedRegion(QObject):
    """Collects what a widget is asked to repaint."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.region = QRegion()
        widget.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.region += event.region()
        return False


def _on_screen_is_drawn_afresh(view: QWidget, part: QWidget) -> bool:
    """What the window shows of `part` (its backing store) is what drawing the window afresh gives.
    (Only `part`: elsewhere Qt itself may leave a pixel of a frame's corner as it was.)"""
    shown = QApplication.primaryScreen().grabWindow(view.winId()).toImage()
    fresh = view.grab().toImage().convertToFormat(shown.format())
    area = QRect(part.mapTo(view, QPoint(0, 0)), part.size())
    return shown.copy(area) == fresh.copy(area)


def _committed_rows(qtbot, rows: int, height: int, prefix: str):  # noqa: ANN001, ANN202
    """A catalog form 900 px wide and `height` high whose table holds `rows` committed rows (skus
    "<prefix>-0", ...): (form, view, the table field)."""
    form, view = shown_catalog(qtbot, 900, height)
    form.load({"items": [{"sku": f"{prefix}-{i}"} for i in range(rows)]})
    view.signals.flush()
    table = view.field("/items")
    qtbot.waitUntil(lambda: table.model.rowCount() == rows)
    return form, view, table

def _following_table(qtbot, rows: int, width: int = 900):  # noqa: ANN001, ANN202
    form, view = shown_catalog(qtbot, width, 700)
    form.begin_run()
    table = view.field("/items")
    for i in range(rows):
        write_row(form, view, i)
        qtbot.wait(5)
    qtbot.waitUntil(lambda: table.model.rowCount() == rows)
    qtbot.wait(50)  # the view has followed the newest row
    return form, view, table


def test_a_row_added_to_a_followed_table_repaints_that_row_not_the_rows_already_shown(qtbot):
    # Qt repaints the whole viewport after each row insertion: every visible cell (60-80 in the
    # catalog) for one new row, several times a second while a run is followed. The rows already
    # shown are moved on screen instead, and only the new row is drawn.
    form, view, table = _following_table(qtbot, 12)
    viewport = table.view.viewport()
    assert table.view.rowAt(0) > 0  # full: it has scrolled
    painted = _PaintedRegion(viewport)
    write_row(form, view, 12)
    qtbot.waitUntil(lambda: table.view.rowAt(viewport.height() - 1) == 12)
    qtbot.wait(30)
    row_height = table.view.rowHeight(12)
    box = painted.region.boundingRect()
    assert not box.isEmpty() and box.height() <= 2 * row_height + 2, (box, viewport.rect())
    assert _on_screen_is_drawn_afresh(view, table.view.viewport())


@pytest.mark.parametrize("case", ["following", "a burst", "growing", "scrolled up", "sideways", "new run"])
def test_a_table_whose_rows_stream_in_shows_what_drawing_it_afresh_shows(qtbot, case):
    # Moving the rows already shown instead of drawing them again must never leave a stale or
    # misplaced pixel: after rows arrive in every way a run brings them, the window shows exactly
    # what a fresh drawing of the form gives.
    form, view, table = _following_table(qtbot, 3 if case == "growing" else 10, 540 if case == "sideways" else 900)
    if case == "scrolled up":
        table.view.verticalScrollBar().setValue(0)
    if case == "sideways":
        bar = table.view.horizontalScrollBar()
        bar.setValue(bar.maximum() // 2)
    if case == "new run":  # the last run's rows go (the model is reset), a new one writes
        form.restore()
        form.begin_run()
    for i in range(table.model.rowCount() if case != "new run" else 0, 14):
        if case == "a burst":
            form.apply_many([(f"/items/{i}/sku", S.PROVISIONAL, f"A-{i}"), (f"/items/{i + 1}/sku", S.PROVISIONAL, "B")])
            view.signals.flush()
        else:
            write_row(form, view, i)
        form.apply_many([(f"/items/{i}/sku", S.SETTLED, f"A-{i}")])
        view.signals.flush()
        qtbot.wait(8)
    qtbot.wait(60)
    assert _on_screen_is_drawn_afresh(view, table.view.viewport())



def test_a_cell_changed_as_the_table_follows_a_new_row_is_drawn_where_it_now_is(qtbot):
    # In a narrow lane, scrolled by the pixel (the macOS style's way), Qt may run the pending
    # layout from the table's own paint event; a repaint asked for there is applied after the view
    # has scrolled to the new row, at the cell's old place: the settled cell kept its old text.
    def turn() -> None:  # one pass of the event loop, as the app's loop makes it
        loop = QEventLoop()
        QTimer.singleShot(0, loop.quit)
        loop.exec()

    form, view = shown_catalog(qtbot, 540, 700)
    qtbot.wait(50)
    table = view.field("/items")
    table.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    form.begin_run()
    for i in range(11):  # rows arrive quickly
        write_row(form, view, i)
    turn()
    write_row(form, view, 11)
    turn()
    form.apply_many([("/items/5/sku", S.SETTLED, "S-5"), ("/items/12/sku", S.PROVISIONAL, "A-12")])
    view.signals.flush()
    qtbot.wait(150)
    assert table.model.cell(5, 0)[0] == "S-5"
    assert _on_screen_is_drawn_afresh(view, table.view.viewport())


@pytest.mark.parametrize("header", ["a hidden column", "a moved column"])
def test_cells_changed_while_a_row_is_appended_are_drawn_with_columns_hidden_or_moved(qtbot, header):
    form, view, table = _following_table(qtbot, 12)
    if header == "a hidden column":
        table.view.hideColumn(0)
    else:
        table.view.horizontalHeader().moveSection(2, 7)
    qtbot.wait(50)
    write_row(form, view, 12)  # a row appended (its layout pending) and, in the same turn, a row on screen changes
    form.apply_many([("/items/11/sku", S.SETTLED, "Z"), ("/items/11/name", S.SETTLED, "NAME"),
                     ("/items/11/price", S.SETTLED, 99.5), ("/items/11/tags", S.SETTLED, ["t"])])
    view.signals.flush()
    qtbot.wait(100)
    assert _on_screen_is_drawn_afresh(view, table.view.viewport())


def test_a_cell_editor_stays_on_its_cell_when_a_row_is_added_below(qtbot):
    # Moving the pixels shown must not move the cell editors again: the layout has placed them.
    form, view, table = _committed_rows(qtbot, 12, 700, "A")
    table.view.scrollToBottom()
    qtbot.wait(30)
    index = table.model.index(11, 0)
    table.view.openPersistentEditor(index)
    editor = table.view.indexWidget(index)
    assert editor is not None
    top = table.view.verticalHeader().offset()
    form.set_value("/items/12/sku", "A-12")  # a row added at the end, the editor open above it
    view.signals.flush()
    qtbot.waitUntil(lambda: table.model.rowCount() == 13)
    qtbot.wait(30)
    assert table.view.verticalHeader().offset() != top  # the rows moved on screen (the case at stake)
    assert editor.geometry() == table.view.visualRect(index)
    assert _on_screen_is_drawn_afresh(view, table.view.viewport())


def test_a_table_cell_clipped_by_a_short_form_view_is_not_visible_for_byte_to_pixel(qtbot):
    # A short compare lane: the table's own viewport holds row 7, but the lane's visible part ends
    # above it; that cell will not be painted until the lane scrolls, so it is not on screen.
    form = FormModel(SCHEMAS["catalog"])
    view = FormView(form)
    qtbot.addWidget(view)
    form.begin_run()
    item = {"sku": "A-1", "name": "Lamp", "price": 1.0, "in_stock": True,
            "dimensions": {"width_cm": 1, "height_cm": 2, "depth_cm": 3}}
    form.apply_many([("/items", S.PROVISIONAL, [item] * 8)])
    view.signals.flush()
    table = view.field("/items")
    view.resize(600, 500)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: table.model.rowCount() == 8 and table.view.viewport().height() > 8 * 23)
    view.verticalScrollBar().setValue(0)
    qtbot.wait(20)

    def in_lane(widget, y):  # noqa: ANN001, ANN202 - a y of `widget` in the form view's viewport
        return view.viewport().mapFromGlobal(widget.mapToGlobal(QPoint(0, y))).y()

    row3 = table.view.visualRect(table.model.index(3, 0))
    view.resize(600, in_lane(table.view.viewport(), row3.bottom()) + 2 * view.frameWidth() + 2)
    qtbot.waitUntil(lambda: view.viewport().height() < in_lane(table.view.viewport(), row3.bottom()) + 6)
    view.verticalScrollBar().setValue(0)
    qtbot.wait(20)
    row7 = table.view.visualRect(table.model.index(7, 0))
    lane_bottom = view.viewport().height()
    assert table.view.viewport().rect().contains(row7)  # the table alone would call it visible
    assert in_lane(table.view.viewport(), row7.top()) > lane_bottom  # but the lane's visible part ends above it
    assert table._cell_visible(0, 0)  # noqa: SLF001
    assert not table._cell_visible(7, 0)  # noqa: SLF001
    view.ensureWidgetVisible(table.view, 0, 0)  # the lane scrolled to the table: now it is painted
    qtbot.wait(20)
    assert table._cell_visible(7, 0)  # noqa: SLF001


def test_the_cell_delegate_remembers_elided_texts_for_its_font_only(qtbot):
    # A table repaint asks every visible cell to elide its text again; the delegate remembers the
    # answers, and forgets them when the font changes (else a bigger font would overflow).
    from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter

    from livefill.widgets.state_delegate import StateDelegate

    delegate = StateDelegate()
    image = QImage(20, 20, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        text = "a description long enough to be cut " * 4
        small = QFont()
        small.setPointSize(9)
        fonts = delegate._fonts(small)
        painter.setFont(fonts[0])
        cut = delegate._elide(painter, text, 120, False)
        assert cut == QFontMetrics(fonts[0]).elidedText(text, Qt.TextElideMode.ElideRight, 120) and cut.endswith("…")
        assert delegate._elide(painter, text, 120, False) is cut  # remembered
        big = QFont(small)
        big.setPointSize(18)
        fonts = delegate._fonts(big)
        painter.setFont(fonts[0])
        again = delegate._elide(painter, text, 120, False)
        assert again == QFontMetrics(fonts[0]).elidedText(text, Qt.TextElideMode.ElideRight, 120)
        assert len(again) < len(cut)
    finally:
        painter.end()


def test_a_settling_table_reads_again_only_the_rows_in_view_and_the_rest_when_scrolled_to(qtbot):
    form, view = shown_catalog(qtbot)
    form.begin_run()
    items = [{"sku": f"A-{i}", "name": "Lamp", "price": 1.0, "in_stock": True,
              "dimensions": {"width_cm": 1, "height_cm": 2, "depth_cm": 3}} for i in range(100)]
    form.apply_many([("/items", S.PROVISIONAL, items)])
    view.signals.flush()
    table = view.field("/items")
    model = table.model
    qtbot.waitUntil(lambda: model.rowCount() == 100)
    qtbot.wait(30)
    assert model.cell(10, 0)[1] != "settled"
    first, last = table._shown_rows()  # noqa: SLF001
    assert 0 < last - first < 20 and first > 10  # the table follows the newest rows
    with cell_reads(model) as reads:
        form.apply_many([("/items", S.SETTLED, items)])  # the array's closing bracket: every row settles
        view.signals.flush()
    rows = [row for row, _column in reads]
    assert rows and min(rows) >= first and max(rows) <= last  # only the rows in view were read again
    table.view.scrollToTop()
    qtbot.wait(30)
    assert model.cell(0, 0) == ("A-0", "settled")  # a row out of view shows its new state
    assert model.cell(10, 0) == ("A-10", "settled")


def test_a_growing_cell_is_read_again_alone_and_a_change_above_or_inside_a_cell_reaches_it(qtbot):
    # Each update of a streaming table used to read every cell of the changed row from the form
    # again (eight reads for one growing name); now only the cells the change concerns: the cell's
    # own pointer, a container between it and its row, or a part of its value.
    form, view = shown_catalog(qtbot)
    form.begin_run()
    item = {"sku": "A-0", "name": "La", "price": 1.0, "in_stock": True, "tags": ["oak"],
            "dimensions": {"width_cm": 1, "height_cm": 2, "depth_cm": 3}}
    form.apply_many([("/items", S.PROVISIONAL, [item]), ("/items/0", S.PROVISIONAL, item),
                     ("/items/0/name", S.PROVISIONAL, "La"), ("/items/0/tags", S.PROVISIONAL, ["oak"]),
                     ("/items/0/dimensions", S.PROVISIONAL, item["dimensions"])])
    view.signals.flush()
    model = view.field("/items").model
    qtbot.waitUntil(lambda: model.rowCount() == 1)
    columns = {model.columns[c].pointer: c for c in range(model.columnCount())}
    for c in range(model.columnCount()):
        model.cell(0, c)  # every cell shown once (cached)
    with cell_reads(model) as reads:
        form.apply_many([("/items/0/name", S.PROVISIONAL, "Lamp")])
        view.signals.flush()
    assert reads == [(0, columns["/name"])]
    assert model.cell(0, columns["/name"]) == ("Lamp…", "provisional")

    form.apply_many([("/items/0/tags/1", S.PROVISIONAL, "li")])  # a part of the tags cell's value, alone
    view.signals.flush()
    assert model.cell(0, columns["/tags"])[0] == "oak, li"
    form.apply_many([("/items/0/dimensions", S.PROVISIONAL, {"width_cm": 5, "height_cm": 6, "depth_cm": 7})])
    view.signals.flush()  # the container above three cells, alone
    assert [model.cell(0, columns[f"/dimensions/{d}_cm"])[0] for d in ("width", "height", "depth")] == ["5", "6", "7"]


def test_an_array_written_whole_shows_its_new_cells(qtbot):
    # A write of the whole array (or of a container above it) reports only that pointer: every row's
    # cells are read again, not kept from before.
    form, view = shown_catalog(qtbot)
    form.begin_run()
    form.apply_many([("", S.PROVISIONAL, {}), ("/items", S.PROVISIONAL, [{"sku": "A"}, {"sku": "B"}])])
    view.signals.flush()
    model = view.field("/items").model
    qtbot.waitUntil(lambda: model.rowCount() == 2)
    assert model.cell(1, 0)[0] == "B"
    form.apply_many([("/items", S.PROVISIONAL, [{"sku": "A"}, {"sku": "C"}])])
    view.signals.flush()
    assert model.cell(1, 0)[0] == "C"
    form.apply_many([("", S.PROVISIONAL, {"items": [{"sku": "A"}, {"sku": "D"}]})])
    view.signals.flush()
    assert model.cell(1, 0)[0] == "D"


def test_the_row_being_written_is_shown_at_once_while_the_table_follows_it(qtbot):
    # Rows past the table's height used to be inserted twice a second: the row being written
    # then appeared late, its values already settled. While the view follows the newest row, a
    # new row is what the user looks at: it is inserted at once. Scrolled up to read, the rows
    # below are still inserted on the timer.
    form, view = shown_catalog(qtbot, 700, 700)
    form.begin_run()
    table = view.field("/items")
    model = table.model
    for i in range(20):
        write_row(form, view, i)
        qtbot.wait(5)
    qtbot.waitUntil(lambda: model.rowCount() == 20, timeout=2000)
    qtbot.wait(50)  # the view has scrolled to the newest row
    assert table._follows_newest()  # noqa: SLF001
    write_row(form, view, 20)
    assert model.rowCount() == 21  # at once, not on the 500 ms timer
    assert model.cell(20, 0) == ("A-20…", "provisional")  # shown (with its "…") while still being written

    qtbot.wait(50)  # the view follows it
    table.view.verticalScrollBar().setValue(0)  # then the user scrolls up to read
    qtbot.wait(20)
    assert not table._follows_newest()  # noqa: SLF001
    form.apply_many([("/items/21/sku", S.PROVISIONAL, "A-21")])
    view.signals.flush()
    assert model.rowCount() == 21  # below the view: on the timer
    qtbot.waitUntil(lambda: model.rowCount() == 22, timeout=2000)


def test_table_cells_drawn_from_remembered_pictures_look_exactly_as_drawn_anew(qtbot):
    # A following table moves every row up for each new row: the delegate keeps each cell's
    # picture and copies it. The copies must look exactly like cells drawn anew, and a cell whose
    # text or state changed must not be drawn from an old picture.
    form, view = shown_catalog(qtbot)
    form.begin_run()
    items = [{"sku": f"A-{i}", "name": "Lamp " * i, "price": 1.5 * i, "in_stock": i % 2 == 0} for i in range(6)]
    form.apply_many([("/items", S.PROVISIONAL, items)])
    form.apply_many([(f"/items/{i}/sku", S.SETTLED, f"A-{i}") for i in range(4)])
    view.signals.flush()
    table = view.field("/items").view
    qtbot.waitUntil(lambda: table.model().rowCount() == 6)
    table.selectionModel().select(table.model().index(2, 1), table.selectionModel().SelectionFlag.Select)
    qtbot.wait(20)
    delegate = table.itemDelegate()
    first = table.grab().toImage()  # drawn, and remembered
    assert delegate._pixmaps  # noqa: SLF001
    second = table.grab().toImage()  # copied

    class Forgetful(dict):
        def __setitem__(self, key, value) -> None:  # noqa: ANN001
            pass

    delegate._pixmaps = Forgetful()  # noqa: SLF001 - every cell drawn anew
    assert first == second == table.grab().toImage()
    delegate._pixmaps = {}  # noqa: SLF001
    table.grab()
    form.apply_many([("/items/4/sku", S.SETTLED, "A-4")])  # a cell's state changes
    view.signals.flush()
    qtbot.wait(20)
    assert table.grab().toImage() != first


def test_a_changed_table_cell_repaints_that_cell_alone_over_the_tables_own_background(qtbot):
    # Under a style sheet Qt leaves a table's viewport transparent, so each changed cell also
    # repainted the table's frame, the field, the form and its scroll area behind it (four paints
    # more per cell while the catalog streams). The viewport is opaque and paints its background.
    from PySide6.QtCore import QEvent, QObject

    form, view = shown_catalog(qtbot)
    table = view.field("/items")
    viewport = table.view.viewport()
    background = viewport.palette().color(viewport.backgroundRole())
    assert background.alpha() == 255
    image = view.grab().toImage()  # no rows yet: the viewport shows nothing but its background
    centre = viewport.mapTo(view, viewport.rect().center())
    assert image.pixelColor(centre) == background

    form.begin_run()
    form.apply_many([("/items/0/sku", S.PROVISIONAL, "A")])
    view.signals.flush()
    qtbot.waitUntil(lambda: table.model.rowCount() == 1)
    qtbot.wait(50)

    class Paints(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[QObject] = []

        def eventFilter(self, obj, event) -> bool:  # noqa: ANN001, N802
            if event.type() == QEvent.Type.Paint:
                self.seen.append(obj)
            return False

    paints = Paints()
    behind = [table.view, table, view.widget(), view.viewport()]
    for widget in (viewport, *behind):
        widget.installEventFilter(paints)
    form.apply_many([("/items/0/sku", S.PROVISIONAL, "AB")])  # the cell grows; the field's state stays
    view.signals.flush()
    qtbot.waitUntil(lambda: viewport in paints.seen)
    qtbot.wait(50)
    assert [w for w in paints.seen if w is not viewport] == []
    image = view.grab().toImage()
    below = viewport.mapTo(view, viewport.rect().bottomLeft() + QPoint(viewport.width() // 2, -1))
    assert image.pixelColor(below) == background  # under the last row: the table's background

    dark = STYLE.with_name("livefill-dark.qss").read_text(encoding="utf-8")
    view.setStyleSheet(dark)  # the theme changes: the background follows the style sheet
    qtbot.wait(20)
    assert viewport.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    assert view.grab().toImage().pixelColor(below) == QColor("#0d1117")  # QTableView#fieldTable's, dark
