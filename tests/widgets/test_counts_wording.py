"""A count printed with its unit says "1 byte", never "1 bytes" (issue 26, item 11)."""

from __future__ import annotations

import io

from livefill.cli.extract_output import LiveTable
from livefill.embedded.client import server_note
from livefill.recording.wiretap import WireRecorder
from livefill.widgets.wire_inspector import WireInspector
from livefill.widgets.wire_inspector_slicing import SlicingControl
from livefill.wording import plural, unit
from tests.widgets.test_wire_inspector import _invoice_inspector


def test_plural_and_unit():
    assert [plural(n, "byte") for n in (0, 1, 2, 1234)] == ["0 bytes", "1 byte", "2 bytes", "1,234 bytes"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"
    assert unit(1, "field") == "field" and unit(0, "field") == "fields"


def test_the_inspector_says_1_byte_in_1_piece_for_a_one_byte_value(qtbot):
    w, rec, _ = _invoice_inspector(qtbot)
    w.select_pointer("/line_items/1/qty")  # "2": one byte
    assert len(rec.locate("/line_items/1/qty").spans) == 1
    text = w.value_label.text()
    assert "/line_items/1/qty: 1 byte on the wire in 1 piece" in text, text
    w.select_pointer("/amount")  # "1200"
    assert "4 bytes on the wire" in w.value_label.text()


def test_the_inspector_counts_one_read_frame_and_event_in_the_singular(qtbot):
    rec = WireRecorder()
    rec.on_read(b"x")
    w = WireInspector(recorder=rec)
    qtbot.addWidget(w)
    w.refresh()
    text = w.stats_label.text()
    assert text.startswith("1 read · 1 B · 0 frames · 0 events"), text


def test_the_slicing_knob_says_byte_for_one(qtbot):
    knob = SlicingControl()
    qtbot.addWidget(knob)
    knob.set_value("1")
    assert knob._unit.text() == "byte"
    knob._number.setValue(2)
    assert knob._unit.text() == "bytes" and knob.value() == "2"
    knob._number.setValue(1)
    assert knob._unit.text() == "byte"


def test_the_servers_note_and_the_terminal_progress_say_token_and_field_for_one():
    assert server_note({"tokens_sent": 1, "tokens_total": 1, "finished": True}) == "server finished: 1 of 1 token"
    assert server_note({"tokens_sent": 3, "tokens_total": 9, "disconnected": True}) == "server stopped after 3 of 9 tokens"
    table = LiveTable(io.StringIO(), tty=False, expected=1)
    assert table.progress_line().startswith("0/1 field settled · ")
    assert LiveTable(io.StringIO(), tty=False, expected=2).progress_line().startswith("0/2 fields settled · ")
