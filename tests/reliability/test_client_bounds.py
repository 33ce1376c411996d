"""The clients' bounds against a hostile server on loopback: a huge error body, a gzip bomb, a
relay sending endless valid records, a relay trickling bytes with no record. Each ends in a clear
typed error while the client's own memory (tracemalloc peak) stays far below what was sent.

The server is a raw asyncio one (no framework) so it can send exactly the hostile bytes.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from livefill.errors import ProtocolError, ProviderUnavailable, StreamTimeout
from livefill.wire.providers.transport import open_httpx
from livefill.relay.client import open_relay

MB = 1024 * 1024
PEAK_LIMIT = 50 * MB

Writer = Callable[[asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def hostile(respond: Writer) -> AsyncIterator[str]:
    """A loopback HTTP/1.1 server: reads one request (headers and body), then runs `respond`."""

    handlers: set[asyncio.Task] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for raw in head.split(b"\r\n"):
                name, _, value = raw.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            await respond(writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            handlers.discard(task)
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await server.wait_closed()


def head(status: str, ctype: str, extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ntransfer-encoding: chunked\r\n{extra}\r\n".encode()


async def chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(b"%x\r\n" % len(data) + data + b"\r\n")
    await writer.drain()


async def read_to_end(url: str) -> None:
    stream = await open_httpx(url + "/v1/x", body={"model": "m"}, headers={}, expect=None, what="test")
    try:
        while await stream.read() is not None:
            pass
    finally:
        await stream.aclose()


@asynccontextmanager
async def measured() -> AsyncIterator[list[int]]:
    """Yields [peak]: the tracemalloc peak of the block, in bytes."""
    tracemalloc.start()
    out: list[int] = []
    try:
        yield out
    finally:
        out.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


async def test_a_100_mb_error_body_is_read_only_64_kb():
    sent = [0]

    async def respond(writer):
        writer.write(head("500 Internal Server Error", "text/plain"))
        piece = b"x" * 65536
        for _ in range(100 * MB // len(piece)):
            await chunk(writer, piece)
            sent[0] += len(piece)

    async with hostile(respond) as url, measured() as peak:
        with pytest.raises(ProviderUnavailable) as info:
            await read_to_end(url)
    assert "had a server error (500" in str(info.value)
    assert len(str(info.value)) < 400
    assert peak[0] < PEAK_LIMIT
    assert sent[0] < 20 * MB  # the client closed the connection; the server stopped early


_ZEROS = b"\0" * MB


def gzip_bomb(megabytes: int) -> bytes:
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(pack.compress(_ZEROS) for _ in range(megabytes)) + pack.flush()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    data = gzip_bomb(300)
    assert len(data) < 400_000  # ~300 KB on the wire, 300 MB decoded
    return data


async def serve_bomb(bomb: bytes, ctype: str) -> Writer:
    async def respond(writer):
        writer.write(head("200 OK", ctype, "content-encoding: gzip\r\n"))
        for start in range(0, len(bomb), 65536):
            await chunk(writer, bomb[start : start + 65536])
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    return respond


async def test_a_gzip_bomb_stops_at_the_decoded_cap(bomb):
    async with hostile(await serve_bomb(bomb, "text/event-stream")) as url, measured() as peak:
        with pytest.raises(ProtocolError) as info:
            await read_to_end(url)
    host = url.removeprefix("http://")
    assert f"{host} sent more than 64 MB in one response" in str(info.value)
    assert peak[0] < PEAK_LIMIT, f"peak {peak[0] / MB:.1f} MB"


async def test_a_small_compressed_body_is_decoded_whole():
    text = b"".join(b"data: {\"n\": %d}\n\n" % i for i in range(20000))
    packed = gzip_bomb_text(text)
    got = bytearray()

    async def respond(writer):
        writer.write(head("200 OK", "text/event-stream", "content-encoding: gzip\r\n"))
        await chunk(writer, packed)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with hostile(respond) as url:
        stream = await open_httpx(url + "/v1/x", body={"model": "m"}, headers={}, expect=None, what="test")
        try:
            while (data := await stream.read()) is not None:
                got += data
        finally:
            await stream.aclose()
    assert bytes(got) == text


def gzip_bomb_text(text: bytes) -> bytes:
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    return pack.compress(text) + pack.flush()


def record(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


START = {"type": "start", "v": 1, "run": "run_1", "schema": "invoice", "provider": "anthropic"}
BODY = {"schema": "invoice", "document": "x", "mode": "settled"}


async def collect(url: str, **kw) -> int:
    n = 0
    async with open_relay(url, "t", BODY, **kw) as stream:
        async for _ in stream:
            n += 1
    return n


FILLER = record({"seq": 1, "type": "field", "pointer": "/notes", "value": "y" * 5000})


@pytest.mark.slow
async def test_a_relay_sending_100_000_valid_items_is_cut_off_at_the_record_cap(timing):
    sent = [0]

    async def respond(writer):
        writer.write(head("200 OK", "application/x-ndjson"))
        await chunk(writer, record({"seq": 0, **START}))
        batch = []
        for i in range(100_000):
            batch.append(record({"seq": i + 1, "type": "item", "pointer": "/line_items", "index": i, "value": {"sku": "A-1", "qty": 2}}))
            if len(batch) == 500:
                await chunk(writer, b"".join(batch))
                sent[0] += len(batch)
                batch = []

    async with hostile(respond) as url, measured() as peak:
        began = time.monotonic()
        with pytest.raises(ProtocolError) as info:
            await collect(url)
    assert str(info.value) == "the relay sent more than 20000 records in one response"
    took = time.monotonic() - began
    assert peak[0] < PEAK_LIMIT, f"peak {peak[0] / MB:.1f} MB"
    assert sent[0] < 100_000  # cut off: the relay had not sent them all
    timing.record("a client cut off at the record cap (20,000 of 100,000 records)", took, budget=20.0)


async def test_a_relay_record_cap_is_configurable():
    async def respond(writer):
        writer.write(head("200 OK", "application/x-ndjson"))
        body = record({"seq": 0, **START}) + b"".join(
            record({"seq": i + 1, "type": "item", "pointer": "/line_items", "index": i, "value": {"sku": "A", "qty": 1}}) for i in range(50)
        )
        await chunk(writer, body)
        await asyncio.sleep(5)

    async with hostile(respond) as url:
        with pytest.raises(ProtocolError, match="more than 10 records"):
            await collect(url, max_records=10)


async def test_a_compressed_relay_body_stops_at_the_decoded_cap():
    """Valid records, 8 KB each, gzip-compressed to a few KB: the byte cap ends it before the
    record cap does."""
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [pack.compress(record({"seq": 0, **START}))]
    for i in range(2000):
        item = {"seq": i + 1, "type": "item", "pointer": "/line_items", "index": i, "value": {"sku": "A" * 8000, "qty": 1}}
        parts.append(pack.compress(record(item)))
    packed = b"".join(parts) + pack.flush()
    assert len(packed) < 1 * MB

    async def respond(writer):
        writer.write(head("200 OK", "application/x-ndjson", "content-encoding: gzip\r\n"))
        for start in range(0, len(packed), 65536):
            await chunk(writer, packed[start : start + 65536])
        await asyncio.sleep(5)

    async with hostile(respond) as url, measured() as peak:
        with pytest.raises(ProtocolError) as info:
            await collect(url, body_limit=8 * MB)
    host = url.removeprefix("http://")
    assert str(info.value) == f"{host} sent more than 8 MB in one response"
    assert peak[0] < PEAK_LIMIT


async def test_a_relay_sending_only_keepalives_is_held_no_longer_than_the_keepalive_span(timing):
    # Keep-alive spaces (docs/relay-v1.md) keep a run going while the relay's upstream writes a long
    # value; a relay that sends nothing else may not hold the client past the span.
    sent = [0]

    async def respond(writer):
        writer.write(head("200 OK", "application/x-ndjson"))
        await chunk(writer, record({"seq": 0, **START}))
        for _ in range(400):
            await chunk(writer, b" ")
            sent[0] += 1
            await asyncio.sleep(0.05)

    async with hostile(respond) as url:
        began = time.monotonic()
        with pytest.raises(StreamTimeout) as info:
            await collect(url, idle_timeout=0.5, keepalive_span=1.5)
        took = time.monotonic() - began
    # "only keep-alives": the span (1.5 s of them) ran out, then the idle limit, while spaces kept
    # coming (not "nothing arrived"); and the client left before the relay's 400 spaces (20 s) ended
    assert "only keep-alives" in str(info.value)
    assert sent[0] < 400
    timing.record("a client held by keep-alives only (span 1.5 s + idle 0.5 s)", took, budget=3.0)


async def test_a_relay_trickling_a_byte_every_50_ms_times_out_on_the_idle_rule(timing):
    trickled = [0]

    async def respond(writer):
        writer.write(head("200 OK", "application/x-ndjson"))
        await chunk(writer, record({"seq": 0, **START}))
        for byte in FILLER:
            await chunk(writer, bytes([byte]))
            trickled[0] += 1
            await asyncio.sleep(0.05)

    async with hostile(respond) as url:
        began = time.monotonic()
        with pytest.raises(StreamTimeout) as info:
            await collect(url, idle_timeout=1.0)
        took = time.monotonic() - began
    assert "relay" in str(info.value)
    assert trickled[0] < len(FILLER)  # the client left long before the record was whole (250 s)
    timing.record("a client given a byte every 50 ms of one record (idle limit 1 s)", took, budget=1.5)
