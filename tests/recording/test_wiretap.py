"""livefill/recording/wiretap.py: the bounded wire recorder behind the wire inspector."""

from __future__ import annotations

import json
import random
import tracemalloc
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.wire.taps import WireFrame
from livefill.recording.wiretap import ByteSpan, WireRecorder
from tests.extraction.json_spans import reference_spans as value_spans

# A document with escapes, non-ASCII, a U+2028, characters Go escapes, nesting and every scalar.
TRICKY = (
    '{"name": "Lucía \\"Lu\\" Martínez", "note": "a<b & c>d \u2028 end \\u00e9", "n": -12.5e3,'
    ' "ok": true, "nothing": null, "tags": ["x", "y/z", "😀"], "a~b/c": {"deep": [1, [2, {}], []]},'
    ' "empty": ""}'
)

GO = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _clock(step: float = 0.001):
    t = [0.0]

    def clock() -> float:
        t[0] += step
        return t[0]

    return clock


@dataclass
class Wire:
    data: bytes
    frames: list[tuple[int, WireFrame, list[Any]]]  # (offset once its bytes are in, frame, events)


def text_frame(kind: str, text: str, start: int, carriers: tuple[str | None, ...] = ()) -> WireFrame:
    end = start + len(text.encode())
    return WireFrame(
        kind=kind, text=text, start=start, end=end, payload=text, segments=((0, start),), carriers=carriers
    )


def anthropic_wire(pieces: list[str], *, escaping: str = "json") -> Wire:
    """The SSE bytes of an Anthropic tool stream whose input_json_delta pieces are `pieces`."""
    out = bytearray()
    frames: list[tuple[int, WireFrame, list[Any]]] = []

    def emit(event: str, payload: dict, events: list[Any]) -> None:
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=escaping == "ascii")
        if escaping == "go":
            for ch, rep in GO.items():
                data = data.replace(ch, rep)
        start = len(out)
        raw = f"event: {event}\ndata: {data}\n\n".encode()
        out.extend(raw)
        carriers = tuple("/delta/partial_json" for e in events if isinstance(e, ArgsDelta))
        frame = WireFrame(
            kind="sse", text=f"event: {event}\ndata: {data}", start=start, end=len(out) - 1, payload=data,
            segments=((0, start + len(f"event: {event}\ndata: ".encode())),), carriers=carriers,
        )
        frames.append((len(out), frame, events))

    emit("message_start", {"type": "message_start", "message": {"id": "msg_1"}}, [])
    emit("content_block_start", {"type": "content_block_start", "index": 0}, [])
    for p in pieces:
        delta = {"type": "input_json_delta", "partial_json": p}
        emit("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta},
             [ArgsDelta(text=p)])
    emit("content_block_stop", {"type": "content_block_stop", "index": 0}, [BlockStop()])
    emit("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
         [Stop(reason=StopReason.COMPLETE, raw="tool_use")])
    return Wire(bytes(out), frames)


def ndjson_wire(pieces: list[str]) -> Wire:
    """Ollama-style NDJSON: each piece inside message.content, Go escaping."""
    out = bytearray()
    frames = []
    for p in pieces:
        line = json.dumps({"model": "m", "message": {"role": "assistant", "content": p}, "done": False},
                          separators=(",", ":"), ensure_ascii=False)
        for ch, rep in GO.items():
            line = line.replace(ch, rep)
        frame = text_frame("ndjson", line, len(out), ("/message/content",))
        out.extend(line.encode() + b"\n")
        frames.append((len(out), frame, [ArgsDelta(text=p)]))
    return Wire(bytes(out), frames)


def raw_chunks(pieces: list[str]) -> Wire:
    out = bytearray()
    frames = []
    for p in pieces:
        frame = text_frame("raw", p, len(out), (None,))
        out.extend(p.encode())
        frames.append((len(out), frame, [ArgsDelta(text=p)]))
    return Wire(bytes(out), frames)


def play(rec: WireRecorder, wire: Wire, cuts: list[int]) -> list[bytes]:
    """Feed `wire` as a transport would: reads cut at `cuts`, each frame once its bytes are in."""
    reads = []
    bounds = sorted({c for c in cuts if 0 < c < len(wire.data)}) + [len(wire.data)]
    pos = 0
    fi = 0
    for b in bounds:
        chunk = wire.data[pos:b]
        reads.append(chunk)
        rec.on_read(chunk)
        pos = b
        while fi < len(wire.frames) and wire.frames[fi][0] <= pos:
            _, frame, events = wire.frames[fi]
            rec.on_frame(frame)
            for e in events:
                rec.on_event(e)
            fi += 1
    return reads


def split_text(text: str, rng: random.Random, most: int = 7) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, most)
        pieces.append(text[i : i + n])
        i += n
    return pieces


def random_cuts(n: int, rng: random.Random, most: int = 60) -> list[int]:
    cuts, pos = [], 0
    while pos < n:
        pos += rng.randint(1, most)
        cuts.append(pos)
    return cuts


def value_bytes(rec: WireRecorder, wire: Wire, pointer: str) -> bytes:
    loc = rec.locate(pointer)
    assert loc is not None, pointer
    return b"".join(wire.data[s.start : s.end] for s in loc.spans)


# --- bytes and boundaries ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000), st.lists(st.integers(0, 3000), max_size=40))
def test_bytes_view_is_exactly_the_bytes_fed_and_every_boundary_is_kept(data, cuts):
    rec = WireRecorder(clock=_clock())
    bounds = sorted({c for c in cuts if 0 < c < len(data)}) + [len(data)]
    pos, reads = 0, []
    for b in bounds:
        rec.on_read(data[pos:b])
        reads.append((pos, data[pos:b]))
        pos = b
    assert rec.bytes_view() == data
    assert rec.boundaries() == [p for p, _ in reads]
    assert [r.data for r in rec.reads()] == [d for _, d in reads]
    assert rec.total_bytes == len(data) and rec.first_offset == 0
    assert not rec.dropped.any


def test_reads_keep_their_arrival_times_relative_to_t0():
    rec = WireRecorder(clock=_clock(0.25), t0=0.0)
    rec.on_read(b"ab")
    rec.on_read(b"cd")
    assert [r.t for r in rec.reads()] == [0.25, 0.5]
    assert [r.offset for r in rec.reads()] == [0, 2]
    assert rec.read_at(3).index == 1 and rec.read_at(1).index == 0 and rec.read_at(4) is None


def test_reads_since_an_index_is_what_a_viewer_appends():
    rec = WireRecorder()
    for i in range(5):
        rec.on_read(bytes([65 + i]))
    assert [r.data for r in rec.reads(since=3)] == [b"D", b"E"]
    assert rec.next_read == 5 and rec.reads(since=5) == []


# --- frames and events -------------------------------------------------------------------------


def test_each_sse_frame_keeps_the_byte_span_its_framer_reported():
    rng = random.Random(3)
    wire = anthropic_wire(split_text(TRICKY, rng))
    rec = WireRecorder()
    play(rec, wire, random_cuts(len(wire.data), rng))
    frames = rec.frames()
    assert len(frames) == len(wire.frames)
    prev_end = 0
    for f, (end, frame, _) in zip(frames, wire.frames):
        assert (f.start, f.end, f.text, f.wire) == (frame.start, frame.end, frame.text, frame)
        assert f.end == end - 1  # the frame ends before its blank line
        chunk = wire.data[f.start : f.end]
        assert chunk.startswith(b"event: ") and chunk.endswith(frame.payload.encode() + b"\n")
        assert f.start == prev_end + (1 if prev_end else 0)
        assert rec.frame_at(f.start) is f and rec.frame_at(f.end - 1) is f
        prev_end = f.end
    assert rec.frame_at(frames[0].end) is None  # the blank line belongs to no frame


def test_events_are_attributed_to_the_frame_that_carried_them():
    wire = anthropic_wire(["{\"a\"", ": 1}"])
    rec = WireRecorder()
    play(rec, wire, [7, 90, 200])
    evs = rec.events()
    assert [type(e.event).__name__ for e in evs] == ["ArgsDelta", "ArgsDelta", "BlockStop", "Stop"]
    assert [e.frame for e in evs] == [2, 3, 4, 5]
    assert [e.event for e in rec.events_of_frame(3)] == [ArgsDelta(text=": 1}")]
    assert rec.frame_at(rec.frame(3).start + 5).index == 3


def test_a_delta_whose_frame_names_no_carrier_maps_to_its_whole_frame():
    rec = WireRecorder()
    body = b'data: {"x":"{\\"a\\": 1}"}\n\n'
    rec.on_read(body)
    rec.on_frame(WireFrame(kind="sse", text=body[:-2].decode(), start=0, end=len(body) - 1,
                           payload=body[6:-2].decode(), segments=((0, 6),)))
    rec.on_event(ArgsDelta(text='{"a": 1}'))
    loc = rec.locate("/a")
    assert loc.spans == (ByteSpan(start=0, end=len(body) - 1),) and loc.complete


def test_a_carrier_that_does_not_hold_the_delta_maps_to_its_whole_frame():
    rec = WireRecorder()
    line = '{"message":{"content":"other"}}'
    rec.on_read(line.encode() + b"\n")
    rec.on_frame(text_frame("ndjson", line, 0, ("/message/content",)))
    rec.on_event(ArgsDelta(text='{"a": 1}'))
    assert rec.locate("/a").spans == (ByteSpan(start=0, end=len(line)),)


# --- values -> bytes ---------------------------------------------------------------------------


def _unescape(b: bytes) -> str:
    return json.loads(b'"' + b + b'"')


@pytest.mark.parametrize("escaping", ["json", "ascii", "go"])
def test_every_pointer_maps_to_exactly_the_bytes_that_carried_its_value(escaping):
    rng = random.Random(11)
    spans = value_spans(TRICKY)
    wire = anthropic_wire(split_text(TRICKY, rng), escaping=escaping)
    rec = WireRecorder()
    play(rec, wire, random_cuts(len(wire.data), rng))
    assert set(rec.pointers()) == set(spans) - {""}
    for pointer, (s, e) in spans.items():
        loc = rec.locate(pointer)
        assert loc.chars == (s, e) and loc.complete and not loc.partly_dropped
        assert _unescape(value_bytes(rec, wire, pointer)) == TRICKY[s:e], pointer
        assert all(sp.start < sp.end for sp in loc.spans)


def test_ndjson_go_escaped_values_map_exactly():
    rng = random.Random(5)
    wire = ndjson_wire(split_text(TRICKY, rng, most=4))
    rec = WireRecorder()
    play(rec, wire, random_cuts(len(wire.data), rng, most=25))
    for pointer, (s, e) in value_spans(TRICKY).items():
        assert _unescape(value_bytes(rec, wire, pointer)) == TRICKY[s:e], pointer


def test_raw_chunks_map_to_the_utf8_bytes_of_the_value():
    rng = random.Random(9)
    wire = raw_chunks(split_text(TRICKY, rng))
    rec = WireRecorder()
    play(rec, wire, [f[0] for f in wire.frames])
    for pointer, (s, e) in value_spans(TRICKY).items():
        assert value_bytes(rec, wire, pointer).decode() == TRICKY[s:e], pointer


def test_the_invoice_amount_is_carried_by_the_bytes_1200():
    sc = get_scenario("invoice")
    rng = random.Random(1)
    wire = anthropic_wire(split_text(sc.output_text, rng, most=3))
    rec = WireRecorder()
    play(rec, wire, random_cuts(len(wire.data), rng))
    assert value_bytes(rec, wire, "/amount") == b"1200"
    assert value_bytes(rec, wire, "/customer_name") == b'\\"Martinez SA\\"'
    loc = rec.locate("/customer_name")
    assert len(loc.spans) >= 2  # "Martinez SA" came in several deltas, so in several frames


def test_a_value_still_arriving_is_located_up_to_the_last_byte():
    wire = anthropic_wire(['{"name": "Mar', "tin"])
    rec = WireRecorder()
    play(rec, wire, [])
    loc = rec.locate("/name")
    assert loc.chars == (9, None) and not loc.complete
    assert _unescape(value_bytes(rec, wire, "/name")) == '"Martin'
    assert rec.locate("/nope") is None


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_offset_index_agrees_with_a_whole_document_scan_under_any_cutting(data):
    name = data.draw(st.sampled_from(["invoice", "tricky"]))
    text = get_scenario("invoice").output_text if name == "invoice" else TRICKY
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(text) - 1), max_size=30))))
    pieces = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    rec = WireRecorder()
    rec.on_read(b"x")
    rec.on_frame(text_frame("raw", "x", 0))
    for p in pieces:
        rec.on_event(ArgsDelta(text=p))
    want = value_spans(text)
    for pointer, span in want.items():
        assert rec.locate(pointer).chars == span
    assert rec.document() == (len(text), True)


def test_relay_records_map_pointers_to_their_frames():
    @dataclass(frozen=True)
    class Field:
        pointer: str
        value: Any
        type: str = "field"

    @dataclass(frozen=True)
    class Item:
        pointer: str
        index: int
        value: Any
        type: str = "item"

    lines = [
        ('{"seq":0,"type":"start"}', None),
        ('{"seq":1,"type":"field","pointer":"/amount","value":1200}', Field("/amount", 1200)),
        ('{"seq":2,"type":"item","pointer":"/line_items","index":0,"value":{"sku":"A"}}',
         Item("/line_items", 0, {"sku": "A"})),
    ]
    rec = WireRecorder()
    body = b"".join(t.encode() + b"\n" for t, _ in lines)
    rec.on_read(body)
    at = 0
    for text, ev in lines:
        rec.on_frame(text_frame("ndjson", text, at))
        at += len(text) + 1
        if ev is not None:
            rec.on_event(ev)
    amount = rec.locate("/amount")
    assert body[amount.spans[0].start : amount.spans[0].end] == lines[1][0].encode()
    sku = rec.locate("/line_items/0/sku")
    assert body[sku.spans[0].start : sku.spans[0].end] == lines[2][0].encode()
    assert rec.locate("/line_items").spans == sku.spans
    assert "/line_items/0" in rec.pointers()


# --- the ceiling ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_ceiling_holds_under_a_long_stream_and_says_what_was_dropped():
    ceiling = 512 * 1024
    rec = WireRecorder(max_bytes=ceiling)
    rng = random.Random(2)
    fed = bytearray()
    frames = 0
    worst = 0
    line = b'{"model":"m","message":{"role":"assistant","content":"%d"},"done":false}\n'
    n = 0
    while len(fed) < 10 * 1024 * 1024:
        batch = b"".join(line % (n + i) for i in range(40))
        pos = 0
        while pos < len(batch):
            k = rng.randint(200, 3000)
            rec.on_read(batch[pos : pos + k])
            pos += k
        for i in range(40):
            text = (line % (n + i)).decode().rstrip("\n")
            rec.on_frame(text_frame("ndjson", text, len(fed), ("/message/content",)))
            fed.extend(line % (n + i))
            rec.on_event(ArgsDelta(text=str(n + i)))
            frames += 1
        n += 40
        worst = max(worst, rec.cost)
    assert worst <= ceiling
    report = rec.dropped
    view = rec.bytes_view()
    assert report.any and report.bytes > 9 * 1024 * 1024
    assert report.bytes + len(view) == len(fed) == rec.total_bytes
    assert view == bytes(fed[report.bytes :]) and rec.first_offset == report.bytes
    assert report.frames + len(rec.frames()) == frames
    assert report.events + len(rec.events()) == frames
    assert rec.boundaries()[0] == rec.first_offset
    assert "dropped the first" in report.describe() and f"{rec.first_offset:,}" in report.describe()
    # retained frames lie in retained bytes, retained events belong to retained frames
    assert all(f.end > rec.first_offset for f in rec.frames())
    assert all(e.frame >= rec.first_frame for e in rec.events())


def test_a_pointer_whose_bytes_were_dropped_says_so():
    rec = WireRecorder(max_bytes=64 * 1024)
    head = '{"first": "' + "a" * 10 + '", "items": ['
    rec.on_read(head.encode())
    rec.on_frame(text_frame("raw", head, 0, (None,)))
    rec.on_event(ArgsDelta(text=head))
    at = len(head)
    for i in range(3000):
        piece = f'{i}, '
        rec.on_read(piece.encode())
        rec.on_frame(text_frame("raw", piece, at, (None,)))
        at += len(piece)
        rec.on_event(ArgsDelta(text=piece))
    loc = rec.locate("/items")
    assert loc is not None and loc.partly_dropped and not loc.complete
    assert loc.spans and loc.spans[0].start >= rec.first_offset
    assert rec.locate("/first") is None or rec.locate("/first").partly_dropped
    assert rec.cost <= rec.max_bytes


def test_one_read_larger_than_the_ceiling_keeps_its_tail():
    rec = WireRecorder(max_bytes=64 * 1024)
    data = bytes(range(256)) * 1024  # 256 KiB in one read
    rec.on_read(data)
    view = rec.bytes_view()
    assert 0 < len(view) < 64 * 1024 and data.endswith(view)
    assert rec.first_offset == len(data) - len(view) and rec.cost <= rec.max_bytes


@pytest.mark.slow
def test_cost_estimate_covers_real_memory():
    """The estimate is an upper bound of what tracemalloc sees the recorder hold."""
    rng = random.Random(4)
    sc = get_scenario("invoice")
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        rec = WireRecorder(max_bytes=1024 * 1024)
        for _ in range(10):
            wire = anthropic_wire(split_text(sc.output_text, rng, most=4))
            play(rec, wire, random_cuts(len(wire.data), rng, most=30))
            del wire  # what the recorder does not hold goes away
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert rec.dropped.any
    assert held <= rec.max_bytes, (held, rec.cost)
    assert rec.cost <= rec.max_bytes


def test_bad_ceiling_is_a_usage_error():
    with pytest.raises(ValueError):
        WireRecorder(max_bytes=0)


# --- over the real wires of the demo provider (loopback) ------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "ollama", "raw"])
@pytest.mark.parametrize("slicing", ["event", "7"])
async def test_demo_wires_map_every_value_to_its_exact_bytes(demo_server, provider, slicing):
    from livefill.wire.providers import open_stream
    from livefill.wire.providers.request import ExtractionRequest
    from livefill.extraction.schemas import resolve_schema

    scenario = "multilingual" if slicing == "7" else "invoice"
    sc = get_scenario(scenario)
    request = ExtractionRequest(
        provider=provider, base_url=demo_server.url, schema=resolve_schema(sc.schema_name), document=sc.document,
        demo_headers={"x-demo-scenario": scenario, "x-demo-slice": slicing},
    )
    rec = WireRecorder()
    async with open_stream(request, tap=rec) as stream:
        async for _ in stream:
            pass
    doc = "".join(e.event.text for e in rec.events() if isinstance(e.event, ArgsDelta))
    assert json.loads(doc) == sc.output
    wire = rec.bytes_view()
    for pointer, (s, e) in value_spans(doc).items():
        loc = rec.locate(pointer)
        carried = b"".join(wire[sp.start : sp.end] for sp in loc.spans)
        text = carried.decode() if provider == "raw" else _unescape(carried)
        assert text == doc[s:e], pointer


def test_event_span_is_the_delta_text_in_its_frame():
    wire = anthropic_wire(['{"a": "x\\"y"', "}"])
    rec = WireRecorder()
    play(rec, wire, [10])
    first = rec.events()[0]
    span = rec.event_span(first)
    assert wire.data[span.start : span.end] == b'{\\"a\\": \\"x\\\\\\"y\\"'
    stop = rec.events()[-1]
    assert rec.event_span(stop) == rec.frame(stop.frame).span


# --- every scenario x every wire: the located bytes give back every settled field exactly --------


def _pointer_value(doc: Any, pointer: str) -> Any:
    from livefill.extraction.pointer import parse

    for token in parse(pointer):
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def _decode_piece(provider: str, piece: bytes) -> str:
    """A located piece of bytes read back by the wire's own rules: UTF-8 (the SSE data line or the
    NDJSON line), then, since every one of these wires carries a delta as a JSON string, that
    string's escapes."""
    return json.loads('"' + piece.decode("utf-8") + '"')


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "ollama"])
@pytest.mark.parametrize(
    "scenario",
    [pytest.param(n, marks=pytest.mark.slow) if n == "catalog" else n for n in sorted(SCENARIO_NAMES)],
)
async def test_every_settled_field_of_every_scenario_is_given_back_by_its_located_bytes(
    demo_server, scenario, provider
):
    from livefill.wire.providers import open_stream
    from livefill.wire.providers.request import ExtractionRequest
    from livefill.extraction.schemas import resolve_schema

    sc = get_scenario(scenario)
    request = ExtractionRequest(
        provider=provider, base_url=demo_server.url, schema=resolve_schema(sc.schema_name), document=sc.document,
        demo_headers={"x-demo-scenario": scenario, "x-demo-slice": "61"},  # reads cut anywhere
    )
    rec = WireRecorder(max_bytes=64 * 1024 * 1024)
    async with open_stream(request, tap=rec) as stream:
        async for _ in stream:
            pass
    assert not rec.dropped.any
    wire = rec.bytes_view()
    deltas = [e for e in rec.events() if isinstance(e.event, ArgsDelta)]
    assert deltas and all(e.carried for e in deltas)  # every delta's frame said where it sits
    doc = "".join(e.event.text for e in deltas)
    assert json.loads(doc) == sc.output
    spans = value_spans(doc)
    assert set(rec.pointers()) == set(spans) - {""}
    for pointer, (s, e) in spans.items():
        if not pointer:
            continue
        loc = rec.locate(pointer)
        assert loc.complete and not loc.partly_dropped and loc.chars == (s, e), pointer
        # each piece lies inside one frame, within the bytes that carried that frame's delta
        for sp in loc.spans:
            frame = rec.frame_at(sp.start)
            assert frame is not None and frame.start <= sp.start < sp.end <= frame.end, pointer
        text = "".join(_decode_piece(provider, wire[sp.start : sp.end]) for sp in loc.spans)
        assert text == doc[s:e], pointer  # the field's raw JSON text, exactly
        assert json.loads(text) == _pointer_value(sc.output, pointer)  # and so its value
