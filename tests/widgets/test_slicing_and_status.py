"""The slicing knob renders and edits a session's setting; the status line's compare summary."""

from __future__ import annotations

from core.modes import Mode
from core.run_status import Phase, RunStatus
from core.session import Session
from widgets.status_line import StatusLine, compare_text
from widgets.wire_inspector_slicing import SlicingControl


def status(phase: Phase, deltas: int = 0, mode: Mode = Mode.PARTIAL, records: int = 0) -> RunStatus:
    return RunStatus(run_id="r", mode=mode, phase=phase, deltas_received=deltas, records_received=records)


def test_the_knob_shows_the_session_setting_and_sends_the_users_choice(qtbot):
    session = Session()
    knob = SlicingControl()
    qtbot.addWidget(knob)
    knob.bind(session)
    assert knob.value() == "event"
    session.replace(slicing="coalesce:20")
    assert knob.value() == "coalesce:20"
    knob._buttons["bytes"].click()  # the user picks "N bytes" (the last number shown for it: 7)
    assert session.settings.slicing == "7"
    knob._number.setValue(11)
    assert session.settings.slicing == "11"
    knob._buttons["event"].click()
    assert session.settings.slicing == "event"


def test_compare_text_names_every_lane_and_the_overall_phase():
    text, phase = compare_text([("naive", None), ("partial", None)])
    assert text == "compare · 2 lanes  ·  naive: ready  ·  partial: ready" and phase == "ready"
    text, phase = compare_text([("naive", status(Phase.COMMITTED, 41)), ("partial", status(Phase.STREAMING, 9)),
                                ("settled", status(Phase.COMMITTED, mode=Mode.SETTLED, records=13))], seed=7)
    assert "naive: ✓ committed (41 deltas)" in text and "partial: ▶ streaming (9 deltas)" in text
    assert "settled: ✓ committed (13 records)" in text and "tokens" not in text
    assert text.endswith("seed 7") and phase == "streaming"
    assert compare_text([("a", status(Phase.COMMITTED)), ("b", status(Phase.FAILED))])[1] == "failed"
    assert compare_text([("a", status(Phase.COMMITTED)), ("b", status(Phase.STOPPED))])[1] == "stopped"
    assert compare_text([("a", status(Phase.COMMITTED)), ("b", status(Phase.COMMITTED))])[1] == "committed"


def test_the_status_line_shows_the_compare_summary(qtbot):
    line = StatusLine()
    qtbot.addWidget(line)
    line.show_compare([("naive", status(Phase.FAILED, 3)), ("settled", None)])
    assert line.property("phase") == "failed" and "naive: ✗ failed" in line.text()
    line.show_status(None)
    assert line.property("phase") == "ready"
