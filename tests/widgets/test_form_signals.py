"""FormSignals: at most one `updated` per frame, and no frame of delay after a quiet one."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QApplication

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.schemas import schema_model
from livefill.widgets.form_signals import FormSignals


def _signals(qtbot, frame_ms: int = 40, **kwargs):
    form = FormModel(schema_model("invoice"))
    signals = FormSignals(form, frame_ms=frame_ms, **kwargs)
    seen: list[tuple[float, set[str]]] = []
    signals.updated.connect(lambda pointers, _reset: seen.append((time.monotonic(), set(pointers))))
    form.begin_run()  # emitted at once (a run began)
    assert len(seen) == 1
    seen.clear()
    return form, signals, seen


def test_a_change_after_a_quiet_frame_is_emitted_at_once(qtbot, timing):
    form, signals, seen = _signals(qtbot)
    time.sleep(0.05)  # more than a frame since the last emission
    t0 = time.monotonic()
    form.apply("/customer_name", FieldState.PROVISIONAL, "M")
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=1000)
    assert seen[0][1] == {"/customer_name", ""}
    timing.record("a change after a quiet frame: emitted (the next loop pass, not a 40 ms frame later)", seen[0][0] - t0, budget=0.03)


def test_changes_within_a_frame_are_emitted_once_at_its_end(qtbot):
    form, signals, seen = _signals(qtbot)
    time.sleep(0.05)
    form.apply("/customer_name", FieldState.PROVISIONAL, "M")
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=1000)
    first = seen[0][0]
    for text in ("Ma", "Mar", "Mart"):
        form.apply("/customer_name", FieldState.PROVISIONAL, text)
        QApplication.processEvents()
    form.apply("/amount", FieldState.PENDING)
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=1000)
    assert seen[1][0] - first >= 0.039  # one frame after the last emission
    assert seen[1][1] >= {"/customer_name", "/amount"}
    QApplication.processEvents()
    assert len(seen) == 2


def test_a_value_that_settles_within_a_frame_is_emitted_in_the_next_turn(qtbot, timing):
    # Byte-to-pixel: the settling byte is the moment the demo is about; it does not wait for the
    # frame's end as growth does.
    form, signals, seen = _signals(qtbot, frame_ms=200)
    time.sleep(0.21)
    form.apply("/customer_name", FieldState.PROVISIONAL, "Mart")
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=1000)
    t0 = time.monotonic()
    form.apply("/customer_name", FieldState.SETTLED, "Martinez SA")
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=1000)
    timing.record("a settled value: emitted (not at the 200 ms frame's end)", seen[1][0] - t0, budget=0.1)
    assert "/customer_name" in seen[1][1]


def test_values_that_settle_within_one_frame_are_emitted_once_at_its_end(qtbot):
    # At 1,000 tokens/s values settle a hundred times a second or more: each emission repaints
    # the form, so settles wait for the end of the display frame (here a long one: 2 s after the
    # emission begin_run made) and go out together, not one repaint each.
    form, signals, seen = _signals(qtbot, frame_ms=2000, settle_ms=2000)
    for pointer, value in (("/customer_name", "Martinez SA"), ("/amount", 1200), ("/currency", "EUR")):
        form.apply(pointer, FieldState.SETTLED, value)
        QApplication.processEvents()
    assert seen == []
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=5000)
    assert seen[0][1] >= {"/customer_name", "/amount", "/currency"}


def test_an_invalid_value_is_final_too_and_growth_still_waits_for_the_frame(qtbot, timing):
    form, signals, seen = _signals(qtbot, frame_ms=200)
    time.sleep(0.21)
    form.apply("/customer_name", FieldState.PROVISIONAL, "M")
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=1000)
    t0 = time.monotonic()
    form.apply("/customer_name", FieldState.PROVISIONAL, "Ma")  # growth: at the frame's end
    form.apply("/amount", FieldState.INVALID, -1, "must be positive")  # final: next turn
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=1000)
    assert seen[1][1] >= {"/customer_name", "/amount"}
    timing.record("an invalid value: emitted (not at the 200 ms frame's end)", seen[1][0] - t0, budget=0.1)


def test_form_updates_say_whether_a_value_reached_its_final_state():
    form = FormModel(schema_model("invoice"))
    updates = []
    form.subscribe(updates.append)
    form.begin_run()
    form.apply_many([("/customer_name", FieldState.PROVISIONAL, "M")])
    form.apply_many([("/customer_name", FieldState.SETTLED, "Max"), ("/amount", FieldState.PROVISIONAL, 1)])
    form.apply_many([("/amount", FieldState.INVALID, -1, "negative")])
    assert [u.settled for u in updates[1:]] == [False, True, True]
