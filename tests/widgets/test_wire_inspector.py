"""widgets/wire_inspector*.py: bytes as they arrived, read boundaries, frames, field highlighting."""

from __future__ import annotations

import json
import random

import pytest

from livefill.wire.events import ArgsDelta
from livefill.extraction.scenarios import get_scenario
from livefill.recording.wiretap import WireRecorder
from tests.recording.test_wiretap import anthropic_wire, play, random_cuts, split_text, text_frame
from livefill.widgets.wire_inspector import WireInspector
from livefill.widgets.wire_inspector_bytes import MARK, parse_rendered, render_bytes
from livefill.widgets.wire_inspector_slicing import SlicingControl, parse_slicing

# every kind of byte the renderer treats specially, UTF-8 characters of 2, 3 and 4 bytes, the
# view's own glyphs as content, and bytes that are not UTF-8 at all
NASTY = (
    "plain ascii \\ back\\slash\r\n\ttab ┃ mark ↵ newline glyph ⟨0a⟩ fake escape é ß € 😀 \u2028 \x00\x1b\x7f end\n"
).encode() + bytes([0xC3, 0x28, 0xFF, 0xE2, 0x82])


def _feed_reads(rec: WireRecorder, data: bytes, cuts: list[int]) -> list[int]:
    bounds = sorted({c for c in cuts if 0 < c < len(data)}) + [len(data)]
    pos, starts = 0, []
    for b in bounds:
        starts.append(pos)
        rec.on_read(data[pos:b])
        pos = b
    return starts


@pytest.mark.parametrize("mode", ["text", "hex"])
def test_render_and_parse_are_inverse(mode):
    rng = random.Random(1)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(40))) + NASTY[: rng.randrange(len(NASTY))]
        text, pos = render_bytes(data, mode, positions=True)
        assert parse_rendered(text, mode) == data
        assert len(pos) == len(data) + 1 and pos[-1] == len(text) + sum(1 for c in text if ord(c) > 0xFFFF)
        assert MARK not in text


@pytest.mark.parametrize("mode", ["text", "hex"])
def test_byte_view_equals_the_bytes_fed_with_every_boundary_where_it_was(qtbot, mode):
    rng = random.Random(7)
    data = NASTY * 20 + bytes(rng.randrange(256) for _ in range(3000))
    rec = WireRecorder()
    starts = _feed_reads(rec, data, random_cuts(len(data), rng, most=37))
    w = WireInspector(recorder=rec)
    qtbot.addWidget(w)
    w.mode_combo.setCurrentIndex(w.mode_combo.findData(mode))
    w.refresh()
    assert w.byte_view.shown_bytes() == data
    assert w.byte_view.boundary_offsets() == starts == rec.boundaries()
    # appended later, in small batches, like the poll timer does
    more = NASTY * 3
    more_starts = _feed_reads(rec, more, [5, 9, 60, 61])
    w.refresh()
    assert w.byte_view.shown_bytes() == data + more
    assert w.byte_view.boundary_offsets() == starts + [len(data) + s for s in more_starts]


def test_a_character_cut_by_a_read_boundary_shows_its_bytes_on_both_sides(qtbot):
    rec = WireRecorder()
    euro = "€".encode()
    rec.on_read(b"a" + euro[:1])
    rec.on_read(euro[1:] + b"b")
    w = WireInspector(recorder=rec)
    qtbot.addWidget(w)
    assert w.byte_view.toPlainText() == f"{MARK}a⟨e2⟩{MARK}⟨82⟩⟨ac⟩b"


def _invoice_inspector(qtbot, rng_seed: int = 3):
    sc = get_scenario("invoice")
    rng = random.Random(rng_seed)
    wire = anthropic_wire(split_text(sc.output_text, rng, most=5))
    rec = WireRecorder()
    play(rec, wire, random_cuts(len(wire.data), rng, most=70))
    w = WireInspector(recorder=rec)
    qtbot.addWidget(w)
    return w, rec, wire


def _highlighted_bytes(w: WireInspector) -> bytes:
    text = w.byte_view.toPlainText()
    return b"".join(parse_rendered(text[a:b], w.byte_view.mode) for a, b in w.byte_view.highlighted_ranges())


@pytest.mark.parametrize(
    ("pointer", "carried"),
    [
        ("/amount", b"1200"),
        ("/customer_name", b'\\"Martinez SA\\"'),
        ("/line_items/1/qty", b"2"),
        ("/paid", b"false"),
    ],
)
def test_selecting_a_field_highlights_the_bytes_that_carried_its_value(qtbot, pointer, carried):
    w, rec, wire = _invoice_inspector(qtbot)
    w.select_pointer(pointer)
    assert _highlighted_bytes(w) == carried
    loc = rec.locate(pointer)
    assert b"".join(wire.data[s.start : s.end] for s in loc.spans) == carried
    assert pointer in w.value_label.text() and "complete" in w.value_label.text()


def test_the_field_combo_lists_the_pointers_and_selecting_one_emits(qtbot):
    w, rec, _ = _invoice_inspector(qtbot)
    w.list_fields()  # the list is brought up to date as it opens (or takes the focus), not every tick
    items = [w.field_combo.itemData(i) for i in range(w.field_combo.count())]
    assert "/customer_name" in items and "/line_items/2/unit_price" in items
    with qtbot.waitSignal(w.pointerSelected) as sig:
        w.field_combo.activated.emit(items.index("/amount"))
    assert sig.args == ["/amount"]
    assert _highlighted_bytes(w) == b"1200"


def test_hex_mode_highlights_the_same_bytes(qtbot):
    w, _, _ = _invoice_inspector(qtbot)
    w.select_pointer("/amount")
    w.mode_combo.setCurrentIndex(w.mode_combo.findData("hex"))
    assert w.byte_view.mode == "hex"
    assert _highlighted_bytes(w) == b"1200"


def test_frames_and_their_deltas_are_listed_and_a_row_outlines_its_bytes(qtbot):
    w, rec, wire = _invoice_inspector(qtbot)
    model = w.frame_model
    assert model.rowCount() == len(rec.frames()) + len(rec.events())
    row = model.row_of_frame(3)
    assert model.row_info(row)[:2] == (True, 3)
    delta_row = row + 1
    is_frame, ev_index, frame = model.row_info(delta_row)
    assert not is_frame and frame == 3
    assert model.index(delta_row, 3).data().strip() == "↳ ArgsDelta"
    start, end = model.span(row)
    assert wire.data[start:end].startswith(b"event: content_block_delta")
    w.frame_table.selectRow(row)
    sel = w.byte_view.extraSelections()
    assert sel, "the frame's bytes are outlined"
    text = w.byte_view.toPlainText()
    outlined = b"".join(parse_rendered(text[s.cursor.selectionStart() : s.cursor.selectionEnd()]) for s in sel)
    assert outlined == wire.data[start:end]
    # a delta's row stands for the delta's own bytes: its text as the frame's JSON string holds it
    d_start, d_end = model.span(delta_row)
    assert start < d_start < d_end < end
    delta = rec.event(ev_index).event
    assert json.loads(b'"' + wire.data[d_start:d_end] + b'"') == delta.text


def test_the_slicing_knob_emits_the_header_value(qtbot):
    w = WireInspector()
    qtbot.addWidget(w)
    seen: list[str] = []
    w.slicingChanged.connect(seen.append)
    knob: SlicingControl = w.slicing
    knob._buttons["bytes"].click()
    knob._number.setValue(12)
    knob._buttons["coalesce"].click()
    knob._buttons["event"].click()
    assert seen == ["7", "12", "coalesce:50", "event"]
    w.set_slicing("coalesce:20")
    assert seen[-1] == "event" and w.slicing_value() == "coalesce:20"
    assert parse_slicing("5") == ("bytes", 5)
    with pytest.raises(ValueError):
        parse_slicing("sometimes")


def test_no_recorder_says_so_and_a_new_recorder_starts_over(qtbot):
    w = WireInspector()
    qtbot.addWidget(w)
    assert "Start" in w.stats_label.text()
    rec = WireRecorder()
    rec.on_read(b"hello")
    w.set_recorder(rec)
    assert w.byte_view.shown_bytes() == b"hello"
    w.set_recorder(WireRecorder())
    assert w.byte_view.shown_bytes() == b"" and w.frame_model.rowCount() == 0


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.slow
def test_memory_stays_bounded_on_a_50_mb_stream_at_max_speed(qtbot):
    """50 MB of synthetic NDJSON reads, polled the way the timer polls: everything stays bounded."""
    ceiling = 2 * 1024 * 1024
    rec = WireRecorder(max_bytes=ceiling)
    w = WireInspector(recorder=rec, view_limit=128 * 1024, max_rows=2000)
    qtbot.addWidget(w)
    line = b'{"model":"m","message":{"role":"assistant","content":"%06d"},"done":false}\n'
    batch_lines = 2000
    rss_before = _rss()
    fed = 0
    n = 0
    worst_cost = worst_chars = worst_rows = 0
    while fed < 50 * 1024 * 1024:
        batch = b"".join(line % (n + i) for i in range(batch_lines))
        for pos in range(0, len(batch), 16384):
            rec.on_read(batch[pos : pos + 16384])
        for i in range(0, batch_lines, 8):  # a frame (and its delta) per 8 lines keeps this quick
            text = (line % (n + i)).decode().rstrip("\n")
            rec.on_frame(text_frame("ndjson", text, fed + i * len(text) + i, ("/message/content",)))
            rec.on_event(ArgsDelta(text=f"{n + i}, "))
        n += batch_lines
        fed += len(batch)
        w.refresh()
        worst_cost = max(worst_cost, rec.cost)
        worst_chars = max(worst_chars, w.byte_view.document().characterCount())
        worst_rows = max(worst_rows, w.frame_model.rowCount())
    grown = _rss() - rss_before
    assert rec.total_bytes == fed >= 50 * 1024 * 1024
    assert worst_cost <= ceiling
    assert worst_chars <= 2 * 128 * 1024  # ASCII renders 1:1 plus one mark per read
    assert worst_rows <= 2000
    assert grown < 100 * 1024 * 1024, f"RSS grew {grown / 2**20:.0f} MB"
    assert "dropped the first" in w.stats_label.text()
    assert w.byte_view.shown_bytes() == rec.bytes_view()[-len(w.byte_view.shown_bytes()) :]


@pytest.mark.slow
async def test_catalog_at_max_speed_through_the_demo_provider_stays_under_the_ceiling(qtbot, demo_server):
    from livefill.wire.providers import open_stream
    from livefill.wire.providers.request import ExtractionRequest
    from livefill.extraction.schemas import resolve_schema

    sc = get_scenario("catalog")
    ceiling = 256 * 1024
    rec = WireRecorder(max_bytes=ceiling)
    w = WireInspector(recorder=rec)
    qtbot.addWidget(w)
    request = ExtractionRequest(
        provider="openai-chat", base_url=demo_server.url, schema=resolve_schema(sc.schema_name),
        document=sc.document, demo_headers={"x-demo-scenario": "catalog", "x-demo-speed": "0"},
    )
    worst = 0
    count = 0
    async with open_stream(request, tap=rec) as stream:
        async for _ in stream:
            count += 1
            worst = max(worst, rec.cost)
            if count % 200 == 0:
                w.refresh()
    w.refresh()
    assert worst <= ceiling and rec.dropped.any and rec.total_bytes > ceiling
    assert w.byte_view.shown_bytes() == rec.bytes_view()[-len(w.byte_view.shown_bytes()) :]
    assert "dropped the first" in w.stats_label.text()
