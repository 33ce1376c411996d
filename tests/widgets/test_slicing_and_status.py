"""The slicing knob renders and edits a session's setting; the status line's compare summary."""

from __future__ import annotations

import collections

from PySide6.QtCore import QEvent, QObject, Qt

from livefill.extraction.modes import Mode
from livefill.session.run_status import Phase, RunStatus
from livefill.session.session import Session
from livefill.widgets.status_line import StatusLine, compare_text
from livefill.widgets.wire_inspector_slicing import SlicingControl


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


class _Counter(QObject):
    """Counts the events of `kinds` each watched widget receives."""

    def __init__(self, kinds: set[QEvent.Type]) -> None:
        super().__init__()
        self.kinds = kinds
        self.seen: collections.Counter[tuple[str, QEvent.Type]] = collections.Counter()

    def eventFilter(self, obj, event):  # noqa: ANN001, N802 - Qt override
        if event.type() in self.kinds:
            self.seen[(obj.objectName(), event.type())] += 1
        return False


def test_a_streaming_status_repaints_the_line_alone_and_asks_no_layout_again(qtbot):
    # The status line changes text once a frame while a run streams. Through QLabel.setText that
    # asked every layout up to the window again (QMainWindow then re-lays its toolbars, making
    # animation objects) and, the label being transparent, repainted what is behind it.
    from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

    from livefill.gui.theme import stylesheet

    QApplication.instance().setStyleSheet(stylesheet("light"))
    try:
        outer = QWidget()
        outer.setObjectName("outer")
        panel = QWidget(outer)
        panel.setObjectName("panel")
        QVBoxLayout(outer).addWidget(panel)
        line = StatusLine()
        QVBoxLayout(panel).addWidget(line)
        qtbot.addWidget(outer)
        outer.resize(600, 80)
        outer.show()
        qtbot.waitExposed(outer)
        line.show_status(status(Phase.STREAMING, 1))
        qtbot.wait(50)
        counter = _Counter({QEvent.Type.LayoutRequest, QEvent.Type.Paint})
        for widget in (outer, panel, line):
            widget.installEventFilter(counter)
        for deltas in range(2, 12):
            line.show_status(status(Phase.STREAMING, deltas))
            qtbot.wait(20)
        assert "11 deltas" in line.text()
        assert counter.seen[("statusLine", QEvent.Type.Paint)] >= 5  # it shows each text ...
        assert counter.seen[("outer", QEvent.Type.LayoutRequest)] == 0  # ... without a new layout
        assert counter.seen[("panel", QEvent.Type.LayoutRequest)] == 0
        assert counter.seen[("panel", QEvent.Type.Paint)] == counter.seen[("outer", QEvent.Type.Paint)] == 0
        line.show_status(status(Phase.COMMITTED, 11))  # a new phase repolishes: still opaque after it
        qtbot.wait(20)
        assert line.testAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
    finally:
        QApplication.instance().setStyleSheet("")


def test_a_long_status_is_elided_and_whole_in_the_tooltip(qtbot):
    line = StatusLine()
    qtbot.addWidget(line)
    line.resize(600, 24)
    line.show()
    long = RunStatus(run_id="r", mode=Mode.PARTIAL, phase=Phase.FAILED, reason="connection lost: " + "x " * 400)
    line.show_status(long)
    assert line.elided() and line.text() in line.toolTip() and "deltas:" in line.toolTip()
    line.show_status(status(Phase.COMMITTED, 3))
    assert not line.elided() and line.toolTip().startswith("deltas:")


def test_a_long_document_name_ends_in_an_ellipsis_and_is_whole_in_its_tooltip(qtbot):
    # It was cut mid-letter with no mark ("Scenario document: invoice — Invoice fror").
    from livefill.widgets.document_bar import DocumentBar

    bar = DocumentBar()
    qtbot.addWidget(bar)
    bar.resize(420, 30)
    bar.show()
    name = "invoice — Invoice from a supplier with a rather long title indeed"
    bar.show_document(name, "1.3 KB · ≈359 tokens", own=False)
    qtbot.waitExposed(bar)
    label = bar.name_label
    assert label.text() == f"Scenario document: {name}" == bar.name_text()
    assert label.elided() and name in label.toolTip()
    assert label.font().bold()
