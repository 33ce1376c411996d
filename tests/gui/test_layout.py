"""Layout: the window fits 1,280 × 720 and 1,024 × 768 whatever runs, fails, is added or docked.

Each test drives the real window (offscreen) and measures it: its width after a failed compare
run, the lanes' modes and widths after "+ lane", the splitter sizes after a compare round trip, the
lanes' form heights with the docks open, which toolbar items are shown, the catalog table's titles
and scrolling, and how the source document is laid out.
"""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QLineEdit, QStyle, QStyleOptionComboBox, QToolButton

from livefill.extraction.modes import Mode
from livefill.session.run_status import Phase
from livefill.gui.compare_view import LANE_MIN_WIDTH, next_mode
from tests.gui.conftest import arun, wait_until
from livefill.widgets.elided_label import ElidedLabel
from livefill.widgets.source_view import MIN_SCALE, SourceView, font_size, is_prose
from tests.widgets.test_source_wrap import breaks_at_words
from livefill.widgets.value_tips import cut_text

LONG = ("connection lost: Anthropic Messages: peer closed connection without sending complete message body "
        "(incomplete chunked read) — server still sending: 106 of 213 tokens")


def settle(rounds: int = 8) -> None:
    app = QApplication.instance()
    for _ in range(rounds):
        app.processEvents()


def sized(window, width: int, height: int) -> None:
    window.resize(width, height)
    settle()


def extension_shown(window) -> bool:
    ext = window.run_toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
    return ext is not None and ext.isVisible()


# -- long text never widens the window ---------------------------------------------------------


def test_elided_label_asks_for_little_width_and_keeps_the_whole_text_in_its_tooltip(qtbot):
    label = ElidedLabel(max_lines=2)
    qtbot.addWidget(label)
    label.setText(LONG)
    assert label.minimumSizeHint().width() < 100
    label.resize(200, label.heightForWidth(200))
    label.show()
    settle()
    assert label.elided() and label.toolTip() == LONG and label.text() == LONG
    assert label.heightForWidth(200) == 2 * label.fontMetrics().lineSpacing()
    label.resize(3000, 40)
    settle()
    assert not label.elided() and label.toolTip() == ""


@pytest.mark.slow  # real seconds of streaming; CI runs it
@pytest.mark.parametrize("fault", ["disconnect", "invalid_value"])
def test_a_failed_compare_run_never_widens_the_window(make_window, qloop, fault):
    window = make_window(compare=["naive", "partial", "settled"], fault=fault, speed=0)
    sized(window, 1280, 720)

    async def scenario():
        window.start()
        await wait_until(lambda: not window.active, timeout=30)
        await window.wait_runs()

    arun(qloop, scenario())
    settle()
    statuses = window.last_statuses()
    assert any(s is not None and s.phase is Phase.FAILED for s in statuses), statuses
    assert window.width() == 1280 and window.minimumSizeHint().width() <= 1024
    view = window.compare_view
    right = max(lane.mapTo(window, QPoint(lane.width(), 0)).x() for lane in view.lanes)
    assert right <= window.width()  # the settled lane and its close button stay on screen
    for lane in view.lanes:
        shown = lane.status_label
        if shown.elided():
            assert shown.toolTip().startswith(shown.text())
        assert lane.header.outcome_label.minimumSizeHint().width() < 100
        assert lane.form_view.verticalScrollBar().value() == 0  # a short table's rows do not scroll the form away


# -- "+ lane" ----------------------------------------------------------------------------------


def test_next_mode_is_the_first_not_shown():
    assert next_mode([Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED]) is Mode.HYBRID
    assert next_mode([Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED, Mode.HYBRID]) is Mode.BLOCKING
    assert next_mode(list(Mode)) is Mode.PARTIAL


def test_added_lanes_take_new_modes_share_the_width_and_are_counted(make_window):
    window = make_window(compare=["naive", "partial", "settled"])
    sized(window, 1024, 768)
    view = window.compare_view
    view.add_button.click()
    assert "4 lanes" in window.status_line.text()
    view.add_button.click()
    settle()
    assert [lane.mode for lane in view.lanes] == [Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED, Mode.HYBRID, Mode.BLOCKING]
    assert [lane.title for lane in view.lanes] == ["naive", "partial", "settled", "hybrid", "blocking"]
    assert "5 lanes" in window.status_line.text() and "3 lanes" not in window.status_line.text()
    assert window.width() == 1024  # the window did not grow
    assert all(lane.width() >= LANE_MIN_WIDTH for lane in view.lanes)
    bar = view.lane_scroll.horizontalScrollBar()
    assert bar.maximum() > 0  # five lanes do not fit 1,024 px: they scroll sideways, none is cut off
    assert view.splitter.width() == bar.maximum() + view.lane_scroll.viewport().width()
    sized(window, 1920, 768)
    assert view.lane_scroll.horizontalScrollBar().maximum() == 0  # they fit: they share the width
    widths = [lane.width() for lane in view.lanes]
    assert max(widths) - min(widths) <= 2


# -- leaving compare gives back the single view ----------------------------------------------------


@pytest.mark.parametrize("lanes_added", [0, 2])
def test_leaving_compare_gives_back_the_single_view_exactly(make_window, lanes_added):
    window = make_window()
    sized(window, 1280, 720)
    before = (window.top_splitter.sizes(), window.source_pane.width(), window.size().toTuple())
    for _ in range(2):
        window.compare_action.trigger()
        settle()
        for _ in range(lanes_added):
            window.compare_view.add_button.click()
        settle()
        window.compare_action.trigger()
        settle()
        assert not window.comparing
        after = (window.top_splitter.sizes(), window.source_pane.width(), window.size().toTuple())
        assert after == before


# -- docks, small screens ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_docks_leave_the_lanes_usable_on_small_screens(make_window, size):
    window = make_window(compare=["naive", "partial", "settled"])
    sized(window, *size)
    window.inspector_dock.show()
    window.timeline_dock.show()
    sized(window, *size)
    assert window.size().toTuple() == size
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 700  # fits a 768-px projector, docks open
    for lane in window.compare_view.lanes:
        assert lane.form_view.viewport().height() >= 120, lane.form_view.viewport().height()  # about four fields
    assert window.inspector_dock.height() <= size[1] // 3


def test_single_view_with_docks_fits_and_keeps_the_form(make_window):
    window = make_window()
    sized(window, 1024, 768)
    window.inspector_dock.show()
    window.timeline_dock.show()
    sized(window, 1024, 768)
    assert window.size().toTuple() == (1024, 768)
    assert window.minimumSizeHint().height() <= 700
    assert window.form_view.viewport().height() >= 250


def test_presentation_fits_small_screens(make_window):
    window = make_window(compare=["naive", "partial", "settled"])
    window.toggle_presentation()
    settle()
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 720
    # the document wraps at words (it was unwrapped, its lines cut at the pane's edge)
    assert window.source_view.lineWrapMode() == SourceView.LineWrapMode.WidgetWidth
    window.toggle_presentation()


# -- the toolbar ------------------------------------------------------------------------------


def test_toolbar_fits_1280_whatever_fault_is_chosen(make_window):
    window = make_window()
    sized(window, 1280, 720)
    bar = window.run_toolbar
    assert not extension_shown(window)
    assert window.save_picture_button.isVisible() and window.compare_action.isVisible()
    width = window.faults_button.width()
    for name in ("disconnect", "invalid_value", "stall_silent"):
        window.set_fault(name)
        settle()
        assert window.faults_button.width() == width  # a chosen fault never widens the button
        assert not extension_shown(window), name
        assert bar.widgetForAction(window.compare_action).isVisible()
    assert window.faults_button.text().count("▾") == 1 and "menu-indicator" in window.faults_button.styleSheet()
    assert window.settings_button.text().count("▾") == 1 and "menu-indicator" in window.settings_button.styleSheet()



def test_every_speed_is_shown_whole_in_its_box(make_window):
    # "as fast as possible" was cut to "as fast as possibl" at 1280 px.
    window = make_window()
    sized(window, 1280, 720)
    combo = window.speed_combo
    room = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, _combo_option(combo), QStyle.SubControl.SC_ComboBoxEditField, combo)
    for index in range(combo.count()):
        assert combo.fontMetrics().horizontalAdvance(combo.itemText(index)) <= room.width(), combo.itemText(index)
    assert not extension_shown(window)


def _combo_option(combo):  # noqa: ANN001, ANN202
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    return option


def test_start_and_stop_are_never_in_the_overflow(make_window):
    window = make_window()
    sized(window, 946, 600)
    bar = window.run_toolbar
    for button in (window.start_button, window.stop_button):
        assert button.isVisible()
        assert button.mapTo(bar, QPoint(button.width(), 0)).x() <= bar.width()


# -- the catalog table ------------------------------------------------------------------------


@pytest.mark.slow  # real seconds of streaming; CI runs it
def test_catalog_titles_wrap_and_the_written_row_stays_in_view(make_window, qloop):
    window = make_window(scenario="catalog", speed=1000)
    sized(window, 1280, 720)
    table = window.field("/items")
    header = table.view.horizontalHeader()
    fm = header.fontMetrics()
    for column, spec in enumerate(table.spec.children):
        longest_word = max(fm.horizontalAdvance(w) for w in spec.label.split())
        assert longest_word <= header.sectionSize(column) - 8, spec.label  # wraps at words, never cut mid-word
    assert header.minimumHeight() >= 2 * fm.lineSpacing()
    samples: list[bool] = []

    def newest_row_shown() -> bool:
        view, model = table.view, table.model
        rows = model.rowCount()
        return any(view.viewport().rect().intersects(view.visualRect(model.index(r, 0))) for r in (rows - 1, rows - 2) if r >= 0)

    async def scenario():
        window.start()
        while window.active:
            if table.model.rowCount() > 10:
                samples.append(newest_row_shown())
            await asyncio.sleep(0.02)
        await window.wait_runs()

    arun(qloop, scenario())
    settle()
    assert table.model.rowCount() > 50
    assert len(samples) >= 3 and sum(samples) >= 0.8 * len(samples), samples  # the table follows the row being written
    assert newest_row_shown()


def test_a_value_cut_short_is_whole_in_its_tooltip(qtbot):
    edit = QLineEdit("Martinez SA — a much longer customer name")
    edit.setObjectName("fieldEditor")
    qtbot.addWidget(edit)
    edit.resize(60, 24)
    edit.show()
    assert cut_text(edit, QPoint(5, 5)) == edit.text()
    edit.resize(2000, 24)
    assert cut_text(edit, QPoint(5, 5)) is None


# -- the source document ----------------------------------------------------------------------


def _one_line_per_block(view: SourceView, longest: int | None = None) -> bool:
    """Every block (of at most `longest` characters) laid out on one line."""
    block = view.document().firstBlock()
    while block.isValid():
        short = longest is None or len(block.text()) <= longest
        if short and block.layout() is not None and block.layout().lineCount() > 1:
            return False
        block = block.next()
    return True


def test_source_document_lines_are_never_broken_raggedly(make_window):
    # (the rows of its table stay whole lines where 80 columns fit; longer lines wrap at words,
    # tests/widgets/test_source_wrap.py: they were unwrapped, cut at the pane's edge)
    window = make_window(scenario="invoice")
    sized(window, 1280, 720)
    view = window.source_view
    assert view.lineWrapMode() == SourceView.LineWrapMode.WidgetWidth and not view.prose
    assert _one_line_per_block(view, longest=80) and breaks_at_words(view)
    base = font_size(view.font())
    assert base * MIN_SCALE - 1 <= font_size(view.text_font()) <= base
    # a wide pane: 80 columns fit in the widget's own size
    window.top_splitter.setSizes([900, 380])
    settle()
    width = view.viewport().width()
    from PySide6.QtGui import QFontMetricsF

    assert QFontMetricsF(view.text_font()).horizontalAdvance("M" * 80) <= width
    # presentation mode: bigger type, still one line per line
    window.toggle_presentation()
    settle()
    assert view.horizontalScrollBar().maximum() == 0 and breaks_at_words(view)
    window.toggle_presentation()


def test_prose_wraps():
    assert is_prose("word " * 40 + "\n" + "more " * 40)
    assert not is_prose("  1. FUR-1000-OA    Natural oak side table\n     42 × 54 × 41 cm · EUR 181.50\n")


# -- values in narrow lanes --------------------------------------------------------------------


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_narrow_lanes_put_labels_over_whole_values(make_window, size):
    window = make_window(compare=["naive", "partial", "settled", "hybrid"])
    sized(window, *size)
    for lane in window.compare_view.lanes:
        lane.form.load({"customer_name": "Martinez SA", "invoice_number": "NW-2024-0417"})
    window.refresh_now()
    settle()
    for lane in window.compare_view.lanes:
        for pointer in ("/customer_name", "/invoice_number"):
            field = lane.field(pointer)
            assert field.label_above  # four lanes are narrow: the label goes over the value
            assert field.editor.text() and cut_text(field.editor, QPoint(2, 2)) is None, (lane.name, pointer, field.editor.width())
        assert lane.form_view.horizontalScrollBar().maximum() == 0  # the form never scrolls sideways in its lane


def test_wide_lanes_keep_labels_beside_values_and_presentation_restores_them(make_window):
    window = make_window(compare=["naive", "partial"])
    sized(window, 1920, 1000)
    field = window.compare_view.lane(1).field("/customer_name")
    assert not field.label_above and field.label.width() == field.property("labelWidth")
    sized(window, 600, 700)
    assert field.label_above
    sized(window, 1920, 1000)
    assert not field.label_above and field.label.width() == field.property("labelWidth")


def test_presentation_keeps_the_compare_shortcut_and_gives_the_toolbar_back(make_window):
    window = make_window()
    sized(window, 1280, 720)
    bar = window.run_toolbar
    before = bar.actions()
    window.toggle_presentation()
    settle()
    assert window.compare_action not in bar.actions() and window.compare_action.isVisible()
    assert window.compare_action in window.actions()  # its window-level copy: Ctrl+K still works
    window.compare_action.trigger()
    assert window.comparing
    window.compare_action.trigger()
    window.toggle_presentation()
    settle()
    assert bar.actions() == before


def test_a_prose_document_wraps_and_a_columned_one_fits_or_wraps_at_words(qtbot):
    view = SourceView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    view.show_document("word " * 60 + "\n" + "more words " * 30)
    assert view.prose and view.lineWrapMode() == SourceView.LineWrapMode.WidgetWidth and breaks_at_words(view)
    columned = "\n".join(f"  {i:>3}. SKU-{i:04d}    a product with a name    EUR {i * 3.5:8.2f}    in stock   " for i in range(30))
    view.show_document(columned)
    settle()
    assert not view.prose and _one_line_per_block(view)
    base = font_size(view.font())
    view.resize(200, 300)  # far too narrow for 80 columns: the smallest size, then lines wrap at words
    settle()
    assert abs(font_size(view.text_font()) - base * MIN_SCALE) <= 1 and view.horizontalScrollBar().maximum() == 0
    assert not _one_line_per_block(view) and breaks_at_words(view)
    view.resize(2000, 300)  # wide: the widget's own size, nothing to scroll
    settle()
    assert font_size(view.text_font()) == base and view.horizontalScrollBar().maximum() == 0


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_the_inspector_shows_a_picked_fields_bytes_and_summary_without_scrolling(make_window, qloop, size):
    from livefill.session.session import SINGLE

    window = make_window()
    sized(window, *size)

    async def scenario():
        window.start()
        await wait_until(lambda: not window.active, timeout=30)
        await window.wait_runs()

    arun(qloop, scenario())
    window.inspector_dock.show()
    sized(window, *size)
    window.inspector_dock.show_field(SINGLE, "/amount")
    settle()
    area = window.inspector_dock.widget()
    seen = area.viewport().rect()
    inspector = window.inspector_dock.inspector
    line = inspector.value_label
    assert line.text().startswith("/amount: ")
    top_left = line.mapTo(area.viewport(), QPoint(0, 0))
    assert seen.contains(top_left) and top_left.y() + line.height() <= seen.height(), (top_left, seen)
    view = inspector.byte_view
    cursor = view.highlighted_ranges()
    assert cursor, "the amount's bytes are highlighted"
    caret = view.cursorRect()  # the view scrolled its first highlighted piece into its viewport
    at = view.viewport().mapTo(area.viewport(), caret.center())
    assert seen.contains(at), (at, seen)
