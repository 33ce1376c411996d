"""Saying what is happening, on the real window: the legend, the user's own values told apart from
extracted ones, Clear and its undo, "not run yet" in the compare table, and a clock that ticks
through a stall."""

from __future__ import annotations

import pytest

import asyncio
import re

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from livefill.session.app_settings import MemoryStore
from livefill.extraction.form import FieldState, Origin
from livefill.session.run_status import Phase
from livefill.gui.window_menus import LEGEND_KEY
from tests.gui.conftest import arun, wait_until
from livefill.widgets.field_base import MARKERS, USER_MARKER
from livefill.widgets.legend import ENTRIES


def type_into(qtbot, window, pointer: str, text: str) -> None:
    editor = window.field(pointer).editor
    editor.setFocus()
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    window.form_view.signals.flush()


def shown(window) -> dict:
    """What every field of the single form shows: (state, origin, marker text)."""
    window.form_view.signals.flush()
    return {p: (w.property("state"), w.property("origin"), w.marker.text()) for p, w in window.form_view.fields.items()}


def test_the_legend_explains_every_marker_hides_and_the_choice_is_remembered(make_window):
    store = MemoryStore()
    window = make_window(store=store)
    legend = window.legend
    assert legend.isVisible() and window.legend_action.isChecked()
    for marker in (*MARKERS.values(), USER_MARKER):  # every marker a field can show is explained
        assert not marker or marker in legend.text()
    assert [m.text() for m in legend.markers] == [e[0] for e in ENTRIES]
    assert legend.markers[0].property("state") == "settled" and legend.markers[-1].property("origin") == "user"
    window.mode_combo.setCurrentIndex(window.mode_combo.findData("naive"))
    assert window.session.single.mode.value == "naive"
    assert legend.no_marks.isVisible() and not legend.entries.isVisible()  # no marks to explain
    window.mode_combo.setCurrentIndex(window.mode_combo.findData("partial"))
    assert legend.entries.isVisible() and not legend.no_marks.isVisible()
    legend.hide_button.click()
    assert not legend.isVisible() and not window.legend_action.isChecked()
    assert store.value(LEGEND_KEY) == "hidden"
    again = make_window(store=store)  # the next launch
    assert not again.legend.isVisible() and not again.legend_action.isChecked()
    again.legend_action.trigger()  # View ▸ Legend
    assert again.legend.isVisible() and store.value(LEGEND_KEY) == "shown"


def test_a_typed_value_is_marked_as_the_users_and_comes_back_so_after_a_stop(make_window, qloop, qtbot):
    window = make_window(speed=40)
    type_into(qtbot, window, "/customer_name", "Typed GmbH")
    assert window.form.origin("/customer_name") is Origin.USER
    state, origin, marker = shown(window)["/customer_name"]
    assert (state, origin, marker) == ("settled", "user", USER_MARKER)  # not the settled check
    before = shown(window)

    async def stopped():
        window.start()
        await wait_until(lambda: window.controller.run is not None and window.controller.run.status.deltas_received > 5)
        window.stop_button.click()
        await wait_until(lambda: not window.active)

    arun(qloop, stopped())
    assert window.controller.run.status.phase is Phase.STOPPED
    assert shown(window) == before  # exactly as before Start, origin included

    async def committed():
        window.start()
        await wait_until(lambda: not window.active and window.controller.run.status.phase.final, timeout=30)

    window.session.replace(speed=0)
    arun(qloop, committed())
    assert window.controller.run.status.phase is Phase.COMMITTED
    after = shown(window)
    assert after["/customer_name"] == ("settled", "extracted", "✓ right")  # committed: scored against the expected answer
    assert all(origin == "extracted" for _state, origin, _m in after.values() if origin)


def test_clear_form_and_undo_from_the_keyboard_restore_values_marks_and_origins(make_window, qloop, qtbot):
    window = make_window()
    window.form.load({"customer_name": "From a run", "amount": 12})
    type_into(qtbot, window, "/invoice_number", "INV-1")
    window.form.set_value("/currency", "XXX", invalid_reason="not a currency")
    before = (window.form.document, window.form.states(), window.form.origins(), shown(window))
    assert not window.undo_clear_action.isEnabled()
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)  # shortcuts go to the active window
    editor = window.field("/invoice_number").editor
    editor.setFocus()  # the shortcut works with the cursor in a field
    QTest.keyClick(editor, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.form.document == {} and window.form.states() == {}
    assert all(state == "empty" and not marker for state, _o, marker in shown(window).values())
    assert window.undo_clear_action.isEnabled() and window.undo_clear_action.text() == "Undo clear form"
    assert editor.hasFocus()  # the cursor is still in the emptied field: Ctrl+Z there is Undo clear
    QTest.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert (window.form.document, window.form.states(), window.form.origins(), shown(window)) == before
    assert shown(window)["/currency"][2] == MARKERS[FieldState.INVALID]
    assert not window.undo_clear_action.isEnabled()


def test_clear_all_lanes_in_compare_and_undo(make_window, qloop):
    window = make_window(compare=["naive", "partial"], speed=0)
    view = window.compare_view
    assert window.clear_action.text() == "Clear all lanes"

    async def run():
        window.start()
        await wait_until(lambda: not window.active and all(s is not None and s.phase.final for s in window.last_statuses()),
                         timeout=30)
        await view.wait()

    arun(qloop, run())
    before = [(lane.form.document, lane.form.states()) for lane in view.lanes]
    assert all(doc for doc, _ in before)
    window.clear_action.trigger()
    assert all(lane.form.document == {} for lane in view.lanes)
    for lane in view.lanes:
        lane.form_view.signals.flush()
        assert set(lane.field_states().values()) == {"empty"}
    window.undo_clear_action.trigger()
    assert [(lane.form.document, lane.form.states()) for lane in view.lanes] == before
    window.set_compare(False)
    assert window.clear_action.text() == "Clear form"


def test_the_compare_table_says_not_run_yet_until_a_lane_starts(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"], speed=0)
    table = window.compare_view.metrics_table
    assert [table.cell_text("outcome", i) for i in range(3)] == ["— not run yet"] * 3

    async def run():
        window.start()
        await wait_until(lambda: all(s is not None and s.phase.final for s in window.last_statuses()), timeout=30)
        await window.compare_view.wait()
        await wait_until(lambda: all(table.cell_text("outcome", i).startswith("committed") for i in range(3)))

    arun(qloop, run())
    assert "not run yet" not in " ".join(table.cell_text("outcome", i) for i in range(3))


@pytest.mark.slow  # real seconds of streaming; CI runs it
def test_the_elapsed_clock_ticks_while_nothing_arrives(make_window, qloop):
    window = make_window(speed=200, fault="stall_silent@0.3", idle_timeout=30)

    def figures():
        text = window.status_line.text()
        return re.search(r"(\d+) deltas?", text), float(re.search(r"([\d.]+) s$", text).group(1))

    async def scenario():
        window.start()
        await wait_until(lambda: window.controller.run is not None and window.controller.run.status.deltas_received > 3)
        while True:  # the stall: no delta for a while; then the clock must move on its own
            deltas = window.controller.run.status.deltas_received
            await asyncio.sleep(0.4)
            if window.controller.run.status.deltas_received == deltas:
                break
        count, first = figures()
        await asyncio.sleep(0.6)
        count_later, later = figures()
        window.stop_button.click()
        await wait_until(lambda: not window.active)
        return count.group(0), first, count_later.group(0), later

    count, first, count_later, later = arun(qloop, scenario())
    assert count == count_later  # no content arrived...
    assert later - first >= 0.4  # ...and the clock moved anyway


@pytest.mark.slow  # real seconds of streaming; CI runs it
def test_each_stall_says_what_happened(make_window, qloop):
    said = {}
    for fault in ("stall@0.3", "stall_silent@0.3"):
        window = make_window(fault=fault, idle_timeout=2)

        async def run(window=window):
            window.start()
            await wait_until(lambda: not window.active and window.controller.run.status.phase.final, timeout=20)

        arun(qloop, run())
        assert window.controller.run.status.phase is Phase.FAILED
        said[fault] = window.status_line.text()
    assert "only keep-alives for 2 s, no content" in said["stall@0.3"]  # pings kept coming
    assert "nothing arrived for 2 s" in said["stall_silent@0.3"]  # nothing at all was sent
    assert "keep-alives" not in said["stall_silent@0.3"]


def test_the_timeline_shows_every_container_settled_after_a_committed_run(make_window, qloop):
    window = make_window(speed=0)
    window.timeline_action.trigger()
    view = window.timeline_dock.view

    async def run():
        window.start()
        await wait_until(lambda: not window.active and window.controller.run.status.phase.final, timeout=30)

    arun(qloop, run())
    assert window.controller.run.status.phase is Phase.COMMITTED
    model = view.model
    assert model is window.session.single_feed.model
    for pointer in ("", "/line_items", "/line_items/0", "/line_items/1", "/line_items/2", "/notes"):
        assert pointer in model.fields, pointer
        bar = model.bar("single", pointer)
        assert bar is not None and bar.settled is not None, pointer  # a row, and it settled
        assert view.bar_rect(pointer, "single") is not None  # drawn



def _recording_step(done: list[str]):  # noqa: ANN202 - a QUndoCommand class
    """An undo step that writes "redo" / "undo" into `done` when taken."""
    from PySide6.QtGui import QUndoCommand

    class Step(QUndoCommand):
        def redo(self) -> None:
            done.append("redo")

        def undo(self) -> None:
            done.append("undo")

    return Step

def test_one_undo_for_clears_and_the_undo_stack_the_latest_step_first(make_window):
    from PySide6.QtGui import QAction, QKeySequence

    window = make_window()
    undo_keys = QKeySequence(QKeySequence.StandardKey.Undo)
    bound = [a for a in window.findChildren(QAction) if undo_keys in a.shortcuts()]
    assert bound == [window.undo_action]  # two actions on Ctrl+Z would make Qt run neither

    window.form.load({"customer_name": "Kept"})
    window.clear_action.trigger()
    assert window.undo_action.text() == "Undo clear form" and window.undo_action.isEnabled()

    done: list[str] = []
    Step = _recording_step(done)

    window.undo_stack.push(Step("open a past run"))  # a later step: undone first
    assert window.undo_action.text() == "Undo open a past run"
    window.undo_action.trigger()
    assert done == ["redo", "undo"] and window.form.document == {}  # the step undone, not the clear
    assert window.undo_action.text() == "Undo clear form"  # the clear is still there to undo
    window.undo_action.trigger()
    assert window.form.document == {"customer_name": "Kept"}
    window.redo_action.trigger()  # redo the clear: the form shows what the clear left
    assert window.form.document == {}
    window.undo_action.trigger()
    assert window.form.document == {"customer_name": "Kept"}


def test_clear_open_into_form_then_undo_twice_gives_back_the_typed_values(make_window, qloop, qtbot, tmp_path):
    """Clear, then a past run opened into the form, then Undo twice: the opened run, then the clear,
    are undone; nothing typed is lost (the clear's values used to be dropped by the open)."""
    window = make_window()
    type_into(qtbot, window, "/customer_name", "Ms Typed")
    typed = (window.form.document, window.form.states(), window.form.origins())
    window.clear_action.trigger()
    empty = window.form.snapshot()
    window.form.load({"customer_name": "From history"})  # what Open into form does to the form, as a step:
    from livefill.gui.open_run import OpenRunCommand

    settings = {"scenario": window.session.settings.scenario}
    window.undo_stack.push(OpenRunCommand(window.session, "Open run", settings, settings, window.form, empty,
                                          window.form.snapshot(), say=window.say))
    window.undo_action.trigger()
    assert window.form.document == {}
    window.undo_action.trigger()
    assert (window.form.document, window.form.states(), window.form.origins()) == typed


def test_a_value_still_being_typed_is_cleared_and_put_back(make_window, qtbot):
    window = make_window()
    editor = window.field("/customer_name").editor
    editor.setFocus()
    editor.selectAll()
    qtbot.keyClicks(editor, "ACME typed")  # no Return, the cursor stays in the field
    window.clear_action.trigger()
    assert window.form.document == {}
    window.undo_action.trigger()
    window.form_view.signals.flush()
    assert window.form.document == {"customer_name": "ACME typed"}
    assert window.field("/customer_name").property("displayValue") == "ACME typed"


def test_undo_keys_in_a_field_with_nothing_to_undo_go_to_the_window(make_window):
    window = make_window()
    done: list[str] = []
    Step = _recording_step(done)

    window.undo_stack.push(Step("open a past run"))
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)
    editor = window.field("/customer_name").editor
    editor.setFocus()
    QTest.keyClick(editor, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert done == ["redo", "undo"]
    from PySide6.QtGui import QKeySequence

    redo = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)[0][0]  # the platform's Redo (Ctrl+Y here)
    QTest.keyClick(editor, redo.key(), redo.keyboardModifiers())
    assert done == ["redo", "undo", "redo"]


def test_the_undo_keys_filter_sits_on_the_focused_field_not_on_the_application(make_window, monkeypatch):
    """On the application a Python filter runs for every event of every object (~1,500 a second
    while a run streams); Qt asks only the focused widget about a shortcut's key."""
    import livefill.gui.form_undo as form_undo
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    seen: list[QObject] = []
    real = form_undo._FieldKeys.eventFilter

    def counting(self, watched, event):  # noqa: ANN001
        if event.type() == QEvent.Type.User:
            seen.append(watched)
        return real(self, watched, event)

    monkeypatch.setattr(form_undo._FieldKeys, "eventFilter", counting)
    window = make_window()
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)
    editor = window.field("/customer_name").editor
    other = window.field("/invoice_number").editor
    editor.setFocus()
    plain = QObject()

    def poke() -> list[QObject]:
        seen.clear()
        for receiver in (plain, window, editor, other):
            QApplication.sendEvent(receiver, QEvent(QEvent.Type.User))
        return list(seen)

    assert poke() == []  # no step to take: no filter anywhere
    window.undo_stack.push(_recording_step([])("a step"))
    assert poke() == [editor]  # the focused field only
    other.setFocus()
    assert poke() == [other]  # it follows the focus
    window.undo_stack.clear()
    assert poke() == []
