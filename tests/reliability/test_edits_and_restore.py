"""Nothing the user has is lost by a run: an edit still being typed when the keyboard starts the
run, and the form's own marks, come back exactly when the run ends without a result."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.json_doc import MISSING
from livefill.session.run_status import Phase
from livefill.extraction.schemas import schema_model
from tests.session.test_run import INVOICE, Script, complete, make_run
from tests.gui.conftest import arun, wait_until

S = FieldState


def finished(window):
    return lambda: (
        not window.controller.active
        and window.controller.last_status is not None
        and window.controller.last_status.phase.final
    )


def field_look(window, pointer):
    widget = window.field(pointer)
    return widget.property("displayValue"), widget.property("state"), widget.toolTip()


# -- the core: begin_run / restore ------------------------------------------------------------


def test_restore_gives_back_an_invalid_mark_that_begin_run_cleared():
    form = FormModel(schema_model("invoice"))
    form.set_value("/amount", 12)
    form.begin_run()
    form.restore(invalid={"/amount": "an earlier mark"})
    before = (form.committed, form.states(), form.reason("/amount"))
    form.begin_run()
    assert form.state("/amount") is S.EMPTY  # the run starts on an empty draft
    form.apply("", S.PROVISIONAL, {})
    form.apply("/amount", S.SETTLED, 99)
    form.restore()
    assert (form.committed, form.states(), form.reason("/amount")) == before
    assert form.state("/amount") is S.INVALID and form.reason("/amount") == "an earlier mark"


async def test_a_failed_validation_does_not_mark_the_users_restored_field():
    form = FormModel(schema_model("invoice"))
    form.set_value("/customer_name", "Kept SA")
    form.set_value("/amount", 42.5)
    form.set_value("/notes", "x", invalid_reason="the user's own mark")
    before = (form.committed, form.states(), {p: form.reason(p) for p in form.states()})
    run = make_run(form, "blocking", Script(complete(INVOICE.invalid_output_text)))
    status = await run.run()
    assert status.phase is Phase.FAILED and status.error_code == "validation_failed"
    assert status.pointer == "/amount" and "twelve hundred" in status.reason  # the error is in the status
    assert (form.committed, form.states(), {p: form.reason(p) for p in form.states()}) == before
    assert form.state("/amount") is S.SETTLED and form.reason("/amount") is None


# -- the window: keyboard Start, then Esc ------------------------------------------------------


@pytest.mark.parametrize(
    ("pointer", "typed", "value", "shown"),
    [("/amount", "42.5", 42.5, "42.50"), ("/notes", "Typed by hand", "Typed by hand", "Typed by hand")],
)
def test_an_edit_in_progress_survives_keyboard_start_and_esc(make_window, qloop, qtbot, pointer, typed, value, shown):
    window = make_window(speed=20, provider="anthropic", mode="partial")
    window.activateWindow()
    editor = window.field(pointer).editor
    editor.setFocus()
    qtbot.keyClicks(editor, typed)
    assert window.form.value(pointer) is MISSING  # still only in the editor: the cursor is in the field

    async def scenario():
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        await wait_until(lambda: window.controller.active, timeout=5)
        qtbot.keyClick(window, Qt.Key.Key_Escape)
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.STOPPED, window.controller.last_status.reason
    assert window.form.value(pointer) == value
    assert window.form.state(pointer) is S.SETTLED
    window.form_view.signals.flush()
    assert window.field(pointer).property("displayValue") == shown
    assert window.history.read() == []


def test_a_failed_validation_restores_the_typed_amount_exactly(make_window, qloop, qtbot):
    window = make_window(provider="anthropic", mode="partial")
    editor = window.field("/amount").editor
    editor.setFocus()
    qtbot.keyClicks(editor, "42.5")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # confirmed by the user
    window.form_view.signals.flush()
    assert window.form.value("/amount") == 42.5
    before = field_look(window, "/amount"), window.form.states(), window.form.committed
    window.set_fault("invalid_value")

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    status = window.controller.last_status
    assert status.phase is Phase.FAILED and status.error_code == "validation_failed", status.reason
    window.form_view.signals.flush()
    assert (field_look(window, "/amount"), window.form.states(), window.form.committed) == before
    assert "twelve hundred" not in window.field("/amount").toolTip()
    assert "validation failed at /amount" in window.status_line.text()  # the error is said where it belongs
    assert "failed" in window.run_log.lines()[-1]


def test_a_table_cell_being_edited_survives_keyboard_start_and_esc(make_window, qloop, qtbot):
    window = make_window(speed=20, provider="anthropic", mode="partial")
    window.form.load({"line_items": [{"sku": "A-1", "description": "old", "qty": 1, "unit_price": 2.0}]})
    window.form_view.signals.flush()
    window.activateWindow()
    view = window.field("/line_items").view
    index = view.model().index(0, 1)
    assert window.field("/line_items").model.cell_pointer(0, 1) == "/line_items/0/description"
    view.setFocus()
    view.setCurrentIndex(index)
    view.edit(index)
    assert view.state() is QAbstractItemView.State.EditingState
    cell = view.viewport().findChild(QLineEdit)
    cell.selectAll()
    qtbot.keyClicks(cell, "typed in the cell")
    assert window.form.value("/line_items/0/description") == "old"  # still only in the cell editor

    async def scenario():
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        await wait_until(lambda: window.controller.active, timeout=5)
        qtbot.keyClick(window, Qt.Key.Key_Escape)
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.STOPPED, window.controller.last_status.reason
    assert window.form.value("/line_items/0/description") == "typed in the cell"
