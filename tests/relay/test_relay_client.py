"""The relay client (livefill/relay/client.py): every client rule of docs/relay-v1.md, sans-IO and over loopback.

The bad bodies are served by a tiny starlette app on 127.0.0.1 (real sockets, streamed in pieces),
so the whole path — httpx streaming, the strict framer, the record union, the rules — is tested.
"""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route

from livefill.errors import ProtocolError, RunFailure, StreamTimeout, Truncated, UpstreamError, UsageError, ValidationFailed
from livefill.relay.assembler import RecordAssembler
from livefill.relay.client import open_relay
from livefill.relay.reader import RecordReader, failure_from_record
from livefill.relay.records import CompleteRecord, ErrorRecord, FieldRecord, ItemRecord, StartRecord
from tests.relay.test_relay_support import LoopbackServer


def line(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


START = line({"seq": 0, "type": "start", "v": 1, "run": "run_1", "schema": "invoice", "provider": "anthropic"})
FIELD = line({"seq": 1, "type": "field", "pointer": "/customer_name", "value": "Martinez SA"})
ITEM = line({"seq": 2, "type": "item", "pointer": "/line_items", "index": 0, "value": {"sku": "A-1", "qty": 2}})
COMPLETE = line({"seq": 3, "type": "complete", "fields": 2})
GOOD = START + FIELD + ITEM + COMPLETE


def seqd(n: int, obj: dict) -> bytes:
    return line({"seq": n, **obj})


BREACHES: dict[str, tuple[bytes, type[Exception], str]] = {
    # name: (body, exception, a word the message must contain)
    "blank_line": (START + b"\n" + FIELD + ITEM + COMPLETE, ProtocolError, "blank"),
    "whitespace_line": (START + b"  \n" + FIELD, ProtocolError, "blank"),
    "seq_gap": (START + FIELD + seqd(3, {"type": "complete", "fields": 1}), ProtocolError, "seq"),
    "seq_not_from_zero": (line({"seq": 1, "type": "start", "v": 1, "run": "r", "schema": "invoice", "provider": "p"}), ProtocolError, "seq"),
    "seq_repeated": (START + FIELD + seqd(1, {"type": "complete", "fields": 1}), ProtocolError, "seq"),
    "first_not_start": (seqd(0, {"type": "field", "pointer": "/customer_name", "value": "x"}), ProtocolError, "start"),
    "second_start": (START + line({"seq": 1, "type": "start", "v": 1, "run": "r", "schema": "invoice", "provider": "p"}), ProtocolError, "start"),
    "record_after_terminal": (GOOD + seqd(4, {"type": "field", "pointer": "/paid", "value": True}), ProtocolError, "terminal"),
    "second_terminal": (GOOD + seqd(4, {"type": "complete", "fields": 2}), ProtocolError, "terminal"),
    "bytes_after_terminal": (GOOD + b" ", ProtocolError, "terminal"),
    "oversize_line": (START + seqd(1, {"type": "field", "pointer": "/notes", "value": "x" * 20000}) + COMPLETE, ProtocolError, "longer"),
    "eof_without_terminal": (START + FIELD + ITEM, Truncated, "terminal"),
    "empty_body": (b"", Truncated, "before any record"),
    "last_line_without_newline": (GOOD[:-1], ProtocolError, "newline"),
    "unknown_type": (START + seqd(1, {"type": "patch", "pointer": "/amount", "value": 1}), ProtocolError, "patch"),
    "extra_field": (START + seqd(1, {"type": "field", "pointer": "/amount", "value": 1, "provisional": True}), ProtocolError, "record"),
    "missing_field": (START + seqd(1, {"type": "item", "pointer": "/line_items", "value": 1}), ProtocolError, "record"),
    "not_json": (START + b"{seq: 1}\n", ProtocolError, "record"),
    "bad_utf8": (START + b'{"seq":1,"type":"field","pointer":"/notes","value":"\xff"}\n', ProtocolError, "UTF-8"),
    "unknown_pointer": (START + seqd(1, {"type": "field", "pointer": "/bogus", "value": 1}), ProtocolError, "/bogus"),
    "pointer_inside_item": (START + seqd(1, {"type": "field", "pointer": "/line_items/0/qty", "value": 1}), ProtocolError, "/line_items/0/qty"),
    "item_for_a_scalar": (START + seqd(1, {"type": "item", "pointer": "/amount", "index": 0, "value": 1}), ProtocolError, "/amount"),
    "item_inside_leaf": (START + seqd(1, {"type": "field", "pointer": "/notes/x", "value": 1}), ProtocolError, "/notes/x"),
    "field_at_root": (START + seqd(1, {"type": "field", "pointer": "", "value": {}}), ProtocolError, "root"),
    "delta_in_settled_mode": (START + seqd(1, {"type": "delta", "pointer": "/notes", "text": "Pay"}), ProtocolError, "settled"),
    "wrong_schema": (line({"seq": 0, "type": "start", "v": 1, "run": "r", "schema": "weather", "provider": "p"}), ProtocolError, "schema"),
    "bad_version": (line({"seq": 0, "type": "start", "v": 2, "run": "r", "schema": "invoice", "provider": "p"}), ProtocolError, "record"),
    "bool_seq": (line({"seq": False, "type": "start", "v": 1, "run": "r", "schema": "invoice", "provider": "p"}), ProtocolError, "record"),
    "unknown_error_code": (START + seqd(1, {"type": "error", "code": "oops", "message": "m"}), ProtocolError, "record"),
    "item_skips_an_index": (START + seqd(1, {"type": "item", "pointer": "/line_items", "index": 1, "value": {}}), ProtocolError, "index 1 where 0"),
    "item_sent_twice": (
        START + seqd(1, {"type": "item", "pointer": "/line_items", "index": 0, "value": {}})
        + seqd(2, {"type": "item", "pointer": "/line_items", "index": 0, "value": {}}),
        ProtocolError, "index 0 where 1",
    ),
    "field_sent_twice": (
        START + seqd(1, {"type": "field", "pointer": "/amount", "value": 1}) + seqd(2, {"type": "field", "pointer": "/amount", "value": 2}),
        ProtocolError, "already sent",
    ),
    "item_after_the_whole_array": (
        START + seqd(1, {"type": "field", "pointer": "/line_items", "value": []})
        + seqd(2, {"type": "item", "pointer": "/line_items", "index": 0, "value": {}}),
        ProtocolError, "already sent whole",
    ),
}


def read_all(body: bytes, cuts: list[int], **kw) -> list:
    reader = RecordReader(schema_name="invoice", mode="settled", **kw)
    out = []
    start = 0
    for stop in sorted(set(cuts)) + [len(body)]:
        out += reader.feed(body[start:stop])
        start = stop
    return out + reader.close()


# --- sans-IO ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("cutting", ["whole", "byte_by_byte", "random"])
def test_reader_yields_the_records_of_a_good_body_however_it_is_cut(cutting):
    cuts = {"whole": [], "byte_by_byte": list(range(1, len(GOOD))), "random": random.Random(7).sample(range(1, len(GOOD)), 15)}[cutting]
    records = read_all(GOOD, cuts)
    assert [type(r) for r in records] == [StartRecord, FieldRecord, ItemRecord, CompleteRecord]
    assembler = RecordAssembler()
    for r in records:
        assembler.apply(r)
    assert assembler.value == {"customer_name": "Martinez SA", "line_items": [{"sku": "A-1", "qty": 2}]}


def test_reader_holds_the_terminal_back_until_eof():
    reader = RecordReader(schema_name="invoice")
    assert [r.type for r in reader.feed(GOOD)] == ["start", "field", "item"]
    assert reader.seen_terminal
    (terminal,) = reader.close()
    assert isinstance(terminal, CompleteRecord) and terminal.fields == 2
    with pytest.raises(UsageError):
        reader.feed(b"x")


@pytest.mark.parametrize("name", list(BREACHES))
@pytest.mark.parametrize("cutting", ["whole", "byte_by_byte"])
def test_reader_raises_on_every_breach(name, cutting):
    body, exc, word = BREACHES[name]
    cuts = list(range(1, len(body))) if cutting == "byte_by_byte" else []
    with pytest.raises(exc) as info:
        read_all(body, cuts)
    assert word.lower() in str(info.value).lower()


@pytest.mark.parametrize("cutting", ["whole", "byte_by_byte"])
def test_keepalive_spaces_before_a_record_are_read_and_a_body_of_them_alone_ends_truncated(cutting):
    # The relay writes a space while its upstream writes a long value (docs/relay-v1.md, keep-alive).
    spaced = GOOD.replace(b'{"seq":1', b'   {"seq":1').replace(b'{"seq":3', b' {"seq":3')
    cuts = list(range(1, len(spaced))) if cutting == "byte_by_byte" else []
    assert [r.type for r in read_all(spaced, cuts)] == ["start", "field", "item", "complete"]
    cut = GOOD[: GOOD.index(b'{"seq":2')] + b"    "  # the relay went away while a value was written
    with pytest.raises(Truncated, match="without a terminal record"):
        read_all(cut, list(range(1, len(cut))) if cutting == "byte_by_byte" else [])
    with pytest.raises(ProtocolError, match="after the terminal"):
        read_all(GOOD + b" ", [])  # nothing, not even a keep-alive, follows the terminal
    with pytest.raises(ProtocolError, match="no newline"):
        read_all(GOOD[: GOOD.index(b'{"seq":2')] + b'  {"seq":2', [])  # a record cut is not a keep-alive


def test_keepalives_count_neither_toward_the_line_limit_nor_the_records_span():
    # The relay checks a record's line against the limit, then writes keep-alives before it: the
    # client cut a record of exactly 16,384 bytes that three spaces preceded; and the inspector
    # marked the spaces as the record's bytes.
    from livefill.relay.records import MAX_LINE_BYTES

    value = "y" * 100
    probe = seqd(1, {"type": "field", "pointer": "/notes", "value": value})
    value = "y" * (100 + MAX_LINE_BYTES - (len(probe) - 1))
    big = seqd(1, {"type": "field", "pointer": "/notes", "value": value})
    assert len(big) - 1 == MAX_LINE_BYTES
    frames = []

    class Tap:
        def on_frame(self, frame):  # noqa: ANN001, ANN202
            frames.append(frame)

        def on_event(self, event):  # noqa: ANN001, ANN202
            pass

    reader = RecordReader(schema_name="invoice", mode="settled", tap=Tap())
    body = START + b"   " + big
    records = reader.feed(body)
    assert [r.type for r in records] == ["start", "field"] and records[1].value == value
    assert frames[1].start == len(START) + 3 and frames[1].text.startswith('{"seq":1')  # the record, not the spaces


def test_crlf_line_endings_and_u2028_inside_a_value_are_fine():
    body = GOOD.replace(b"\n", b"\r\n").replace(b"Martinez SA", "Mart\u2028nez".encode())
    records = read_all(body, [])
    assert records[1].value == "Mart\u2028nez"


def test_hybrid_deltas_are_checked_against_prose_fields():
    delta = seqd(1, {"type": "delta", "pointer": "/notes", "text": "Pay"})
    reader = RecordReader(schema_name="invoice", mode="hybrid")
    assert [r.type for r in reader.feed(START + delta)] == ["start", "delta"]
    bad = RecordReader(schema_name="invoice", mode="hybrid")
    with pytest.raises(ProtocolError, match="prose"):
        bad.feed(START + seqd(1, {"type": "delta", "pointer": "/customer_name", "text": "M"}))


def test_error_records_map_to_run_failures():
    rec = ErrorRecord(seq=3, code="validation_failed", message="bad amount", pointer="/amount")
    failure = failure_from_record(rec)
    assert isinstance(failure, ValidationFailed) and failure.pointer == "/amount" and failure.record is rec
    assert failure.code == "validation_failed" and "bad amount" in failure.message
    for code in ("upstream_error", "truncated", "protocol_error", "cancelled", "timeout"):
        f = failure_from_record(ErrorRecord(seq=1, code=code, message="m"))
        assert isinstance(f, RunFailure) and f.code == code


def test_tap_sees_frames_and_records():
    seen = []

    class Tap:
        def on_read(self, data):
            seen.append(("read", data))

        def on_frame(self, frame):
            seen.append((frame.kind, frame.text))

        def on_event(self, event):
            seen.append(("event", event.type))

    read_all(GOOD, [], tap=Tap())
    assert [k for k, _ in seen if k == "ndjson"] == ["ndjson"] * 4
    assert [v for k, v in seen if k == "event"] == ["start", "field", "item", "complete"]


# --- over loopback ---------------------------------------------------------------------------------


async def _fake_extract(request: Request):
    body = await request.json()
    case = body.get("case", "good")
    if request.headers.get("authorization") != "Bearer tok":
        return JSONResponse({"error": {"type": "unauthorized", "message": "send Authorization"}}, status_code=401)
    if case == "html":
        return PlainTextResponse("hello")
    if case == "error_record":
        payload = START + seqd(1, {"type": "error", "code": "validation_failed", "message": "amount: bad", "pointer": "/amount"})
    elif case == "stall":
        async def stall():
            yield START
            await asyncio.sleep(5)

        return StreamingResponse(stall(), media_type="application/x-ndjson")
    elif case == "keepalives":  # a long value being written upstream: spaces, then the rest
        async def alive():
            yield GOOD[: GOOD.index(b'{"seq":1')]
            for _ in range(8):
                await asyncio.sleep(0.1)
                yield b" "
            yield GOOD[GOOD.index(b'{"seq":1'):]

        return StreamingResponse(alive(), media_type="application/x-ndjson")
    elif case == "good":
        payload = GOOD
    else:
        payload = BREACHES[case][0]

    async def pieces():
        for i in range(0, len(payload), 7):  # several network writes, cut anywhere
            yield payload[i : i + 7]
            await asyncio.sleep(0)

    return StreamingResponse(pieces(), media_type="application/x-ndjson")


@pytest.fixture(scope="module")
def fake_relay():
    with LoopbackServer(Starlette(routes=[Route("/relay/v1/extract", _fake_extract, methods=["POST"])])) as srv:
        yield srv


def body(case: str) -> dict:
    return {"schema": "invoice", "document": "x", "case": case}


async def collect(url: str, case: str, token: str = "tok", **kw) -> list:
    async with open_relay(url, token, body(case), **kw) as records:
        return [r async for r in records]


async def test_open_relay_yields_typed_records(fake_relay):
    records = await collect(fake_relay.url, "good")
    assert [type(r) for r in records] == [StartRecord, FieldRecord, ItemRecord, CompleteRecord]


@pytest.mark.parametrize(
    "case",
    ["blank_line", "seq_gap", "record_after_terminal", "oversize_line", "eof_without_terminal", "unknown_pointer",
     "unknown_type", "last_line_without_newline", "bytes_after_terminal", "first_not_start"],
)
async def test_open_relay_raises_on_rule_breaches_over_real_sockets(fake_relay, case):
    _, exc, word = BREACHES[case]
    with pytest.raises(exc) as info:
        await collect(fake_relay.url, case)
    assert word.lower() in str(info.value).lower()


async def test_open_relay_raises_the_error_record_as_a_run_failure(fake_relay):
    with pytest.raises(ValidationFailed) as info:
        await collect(fake_relay.url, "error_record")
    assert info.value.pointer == "/amount" and info.value.record.code == "validation_failed"


async def test_open_relay_without_the_token_gets_upstream_error_401(fake_relay):
    with pytest.raises(UpstreamError) as info:
        await collect(fake_relay.url, "good", token="wrong")
    assert info.value.status == 401 and "Authorization" in str(info.value)


async def test_open_relay_refuses_a_non_ndjson_answer(fake_relay):
    with pytest.raises(ProtocolError, match="content-type"):
        await collect(fake_relay.url, "html")


async def test_open_relay_idle_backstop_is_a_stream_timeout(fake_relay):
    with pytest.raises(StreamTimeout):
        await collect(fake_relay.url, "stall", idle_timeout=0.3)


async def test_open_relay_keepalives_keep_the_idle_watch_from_firing(fake_relay):
    # 0.8 s without a record, a space every 0.1 s: with a 0.3 s limit the run goes on.
    records = await collect(fake_relay.url, "keepalives", idle_timeout=0.3)
    assert [r.type for r in records] == ["start", "field", "item", "complete"]


async def test_open_relay_connection_refused_is_connection_lost():
    from livefill.errors import ConnectionLost

    with pytest.raises(ConnectionLost):
        await collect("http://127.0.0.1:9", "good", timeout=2.0)
