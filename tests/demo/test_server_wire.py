"""The demo provider over raw loopback sockets: exact bytes, write boundaries, knobs, faults, the
request log, cancel detection, refusals, and the embedded runner's lifecycle."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anthropic
import httpx
import pytest

from livefill.errors import UsageError
from livefill.extraction.scenarios import get_scenario
from livefill.demo.knobs import DemoDefaults
from livefill.embedded.server import EmbeddedServer

FINE_GRAINED = {"anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}


# --- a tiny raw HTTP/1.1 client that keeps every read and every chunk --------------------------


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    chunks: list[bytes]  # the chunked-encoding chunks = the server's writes
    reads: list[tuple[float, bytes]] = field(default_factory=list)  # (monotonic time, bytes) per read
    complete: bool = True  # the terminating zero-size chunk arrived

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def _parse_chunks(data: bytes) -> tuple[list[bytes], bool]:
    chunks: list[bytes] = []
    pos = 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            return chunks, False
        size = int(data[pos:end].split(b";")[0], 16)
        if size == 0:
            return chunks, True
        start = end + 2
        chunk = data[start : start + size]
        if len(chunk) < size:
            chunks.append(chunk)
            return chunks, False
        chunks.append(chunk)
        pos = start + size + 2


def _request_bytes(url: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    host = urlsplit(url).netloc
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Connection: close", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _open(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    return await asyncio.open_connection(parts.hostname, parts.port)


async def raw_post(url: str, path: str, body: Any, headers: dict[str, str] | None = None) -> RawResponse:
    """POST, read to EOF keeping each read, and split the chunked body into the server's writes."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": "application/json", **(headers or {})}
    reader, writer = await _open(url)
    writer.write(_request_bytes(url, path, payload, headers))
    await writer.drain()
    data = b""
    reads: list[tuple[float, bytes]] = []
    while True:
        chunk = await asyncio.wait_for(reader.read(65536), timeout=30)
        if not chunk:
            break
        reads.append((time.monotonic(), chunk))
        data += chunk
    writer.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    hdrs = {}
    for line in header_lines:
        k, _, v = line.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if hdrs.get("transfer-encoding") == "chunked":
        chunks, complete = _parse_chunks(rest)
    else:
        chunks, complete = [rest], True
    return RawResponse(int(status_line.split()[1]), hdrs, chunks, reads, complete)


def _anthropic_body(name: str, **extra: Any) -> dict[str, Any]:
    s = get_scenario(name)
    return {
        "model": "claude-demo",
        "max_tokens": 16000,
        "stream": True,
        "messages": [{"role": "user", "content": s.document}],
        "tools": [{"name": s.tool_name, "input_schema": s.json_schema()}],
        "tool_choice": {"type": "tool", "name": s.tool_name},
        **extra,
    }


def _sse_events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        events.append((lines.get("event", "message"), json.loads(lines["data"])))
    return events


async def _log(server: EmbeddedServer, request_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        entries = (await client.get(server.url + "/_demo/requests")).json()
    return next(e for e in entries if e["id"] == request_id)


# Waits are on a condition, with a limit generous enough for a loaded machine: a test that passes
# returns as soon as the condition holds, and only a broken server ever waits the whole limit.
PATIENCE = 20.0


async def _until(get: Any, ok: Any, what: str, limit: float = PATIENCE) -> Any:
    deadline = time.monotonic() + limit
    while True:
        value = get()
        if ok(value):
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {value}"
        await asyncio.sleep(0.01)


async def _wait_for(server: EmbeddedServer, request_id: str, key: str) -> dict[str, Any]:
    """The log entry of `request_id` once its `key` is truthy."""

    def get() -> dict[str, Any] | None:
        return next((e for e in server.requests() if e["id"] == request_id), None)

    return await _until(get, lambda e: e is not None and e[key], f"{request_id} {key}")


def _tag() -> str:
    """A tag no other request of the session carries (the request log is shared)."""
    return f"test-{uuid.uuid4().hex[:12]}"


def _tagged(server: EmbeddedServer, tag: str) -> dict[str, Any] | None:
    """The log entry of the request sent with `x-demo-tag: tag` (None: not logged yet)."""
    return next((e for e in server.requests() if e["tag"] == tag), None)


async def _entry_tagged(server: EmbeddedServer, tag: str, ok: Any = lambda e: True, what: str = "") -> dict[str, Any]:
    """The log entry of the request tagged `tag`, once it is logged and `ok(entry)` holds."""
    return await _until(lambda: _tagged(server, tag), lambda e: e is not None and ok(e), what or f"the request {tag}")


# --- exact bytes and headers ---------------------------------------------------------------------


async def test_anthropic_frames_and_headers(demo_server: EmbeddedServer) -> None:
    r = await raw_post(demo_server.url, "/v1/messages", _anthropic_body("invoice"), {"x-api-key": "k"})
    assert r.status == 200 and r.complete
    assert r.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["request-id"].startswith("req_")
    assert r.headers["transfer-encoding"] == "chunked"
    # Default slicing: one write per event, each a whole event with LF endings.
    for chunk in r.chunks:
        assert chunk.endswith(b"\n\n") and chunk.count(b"\n\n") == 1 and b"\r" not in chunk
    events = _sse_events(r.body)
    kinds = [kind for kind, _ in events]
    assert kinds[:4] == ["message_start", "content_block_start", "ping", "content_block_delta"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert all(kind == data["type"] for kind, data in events)
    assert r.chunks[2] == b'event: ping\ndata: {"type": "ping"}\n\n'
    deltas = [d["delta"]["partial_json"] for k, d in events if k == "content_block_delta"]
    assert deltas[0] == ""
    assert json.loads("".join(deltas)) == get_scenario("invoice").output
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


async def test_openai_chat_frames(demo_server: EmbeddedServer) -> None:
    s = get_scenario("weather")
    body = {
        "model": "gpt-demo",
        "stream": True,
        "messages": [{"role": "user", "content": s.document}],
        "tools": [{"type": "function", "function": {"name": s.tool_name, "parameters": s.json_schema()}}],
    }
    r = await raw_post(demo_server.url, "/v1/chat/completions", body, {"authorization": "Bearer k"})
    assert r.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert r.chunks[-1] == b"data: [DONE]\n\n"
    chunks = [json.loads(c[6:]) for c in r.chunks[:-1]]
    assert all(set(c) >= {"id", "object", "created", "model", "choices"} for c in chunks)
    first = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
    assert first["id"].startswith("call_") and first["function"] == {"name": s.tool_name, "arguments": ""}
    assert all("id" not in c["choices"][0]["delta"].get("tool_calls", [{}])[0] for c in chunks[1:])
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}


async def test_ollama_lines_escape_u2028_like_go(demo_server: EmbeddedServer) -> None:
    s = get_scenario("multilingual")
    body = {"model": "llama3.2", "messages": [{"role": "user", "content": s.document}], "format": s.json_schema()}
    r = await raw_post(demo_server.url, "/api/chat", body)
    assert r.headers["content-type"] == "application/x-ndjson"
    assert "\u2028".encode() not in r.body and b"\\u2028" in r.body
    assert b"&" not in r.body and b"\\u0026" in r.body
    lines = r.body.split(b"\n")
    assert lines[-1] == b"" and all(lines[:-1])
    objects = [json.loads(line) for line in lines[:-1]]
    assert json.loads("".join(o["message"]["content"] for o in objects)) == s.output
    assert objects[-1]["done"] is True and objects[-1]["done_reason"] == "stop"
    # The SSE wires carry the raw character (SSE lines end only at CR / LF).
    sse = await raw_post(demo_server.url, "/v1/messages", _anthropic_body("multilingual"))
    assert "\u2028".encode() in sse.body


async def test_raw_wire_is_the_document_alone(demo_server: EmbeddedServer) -> None:
    s = get_scenario("invoice")
    r = await raw_post(demo_server.url, "/raw/v1/extract", s.document.encode(), {"content-type": "text/plain"})
    assert r.status == 200 and r.complete
    assert r.body.decode() == s.output_text
    assert len(r.chunks) == (await _log(demo_server, r.headers["x-request-id"]))["tokens_total"]


# --- slicing -------------------------------------------------------------------------------------


async def test_byte_slicing_cuts_writes_anywhere(demo_server: EmbeddedServer) -> None:
    r = await raw_post(demo_server.url, "/v1/messages", _anthropic_body("multilingual"), {"x-demo-slice": "5"})
    assert r.complete
    assert all(len(c) == 5 for c in r.chunks[:-1]) and 0 < len(r.chunks[-1]) <= 5
    # Writes split events and UTF-8 characters, yet the stream is the same as with event slicing.
    assert any(not c.endswith(b"\n\n") for c in r.chunks)
    assert any(_splits_utf8(c) for c in r.chunks)
    deltas = [d["delta"]["partial_json"] for k, d in _sse_events(r.body) if k == "content_block_delta"]
    assert json.loads("".join(deltas)) == get_scenario("multilingual").output


def _splits_utf8(chunk: bytes) -> bool:
    try:
        chunk.decode()
    except UnicodeDecodeError:
        return True
    return False


@pytest.mark.slow  # a real-time stream: separate reads need real gaps between the writes
async def test_byte_slices_arrive_as_separate_reads_at_low_speed(demo_server: EmbeddedServer) -> None:
    s = get_scenario("weather")
    r = await raw_post(
        demo_server.url,
        "/raw/v1/extract",
        s.document.encode(),
        {"x-demo-slice": "4", "x-demo-speed": "10", "x-demo-seed": "7"},
    )
    assert r.body.decode() == s.output_text
    assert [len(c) for c in r.chunks] == [4, 4, 4, 4, 1]
    # Four writes, one per token 100 ms apart (the 1-byte remainder goes with the last one): each
    # arrives in a read of its own (the head may share the first), where a loopback response
    # written at once arrives in a single read.
    assert len(r.reads) >= 4, [data for _, data in r.reads]
    whole = await raw_post(demo_server.url, "/raw/v1/extract", s.document.encode(), {"x-demo-slice": "4"})
    assert whole.body == r.body and [len(c) for c in whole.chunks] == [4, 4, 4, 4, 1]


async def test_coalesce_gathers_writes(demo_server: EmbeddedServer) -> None:
    s = get_scenario("invoice")
    headers = {"x-demo-slice": "coalesce:40", "x-demo-speed": "500"}
    r = await raw_post(demo_server.url, "/raw/v1/extract", s.document.encode(), headers)
    assert r.body.decode() == s.output_text
    tokens = (await _log(demo_server, r.headers["x-request-id"]))["tokens_total"]
    assert 1 < len(r.chunks) < tokens / 4


# --- the request log and the scenario list -------------------------------------------------------


async def test_request_log_fields(demo_server: EmbeddedServer) -> None:
    tag = f"lane-2 {_tag()}"
    r = await raw_post(
        demo_server.url,
        "/v1/messages",
        _anthropic_body("ticket"),
        {"authorization": "Bearer sk-secret-value", "x-demo-fault": "max_tokens@0.25", "x-demo-tag": tag},
    )
    async with httpx.AsyncClient() as client:
        response = await client.get(demo_server.url + "/_demo/requests")
    assert response.headers["content-type"].startswith("application/json")
    entries = response.json()
    assert [e["started_at"] for e in entries] == sorted(e["started_at"] for e in entries)
    (entry,) = [e for e in entries if e["tag"] == tag]  # found by its tag: the log is the session's
    assert entry["id"] == r.headers["request-id"]
    required = {"id", "path", "scenario", "tokens_total", "tokens_sent", "started_at", "finished", "disconnected"}
    assert required | {"disconnected_at", "fault"} <= set(entry)
    assert entry["path"] == "/v1/messages" and entry["scenario"] == "ticket" and entry["auth"] == "bearer"
    assert entry["fault"] == "max_tokens@0.25"
    assert entry["tag"] == tag
    assert entry["tokens_sent"] == entry["fault_at"] == round(0.25 * entry["tokens_total"])
    assert entry["finished"] is True and entry["disconnected"] is False and entry["disconnected_at"] is None
    assert "sk-secret-value" not in response.text


async def test_scenarios_endpoint(demo_server: EmbeddedServer) -> None:
    async with httpx.AsyncClient() as client:
        listed = (await client.get(demo_server.url + "/_demo/scenarios")).json()
    assert [s["name"] for s in listed] == ["invoice", "weather", "ticket", "multilingual", "catalog"]
    for item in listed:
        s = get_scenario(item["name"])
        assert {"name", "title", "document", "schema", "output"} <= set(item)
        assert item["document"] == s.document and item["output"] == s.output
        assert item["schema"] == s.json_schema()


# --- refusals ------------------------------------------------------------------------------------


async def test_unknown_document_gets_each_providers_400(demo_server: EmbeddedServer) -> None:
    text = "Please extract the fields from this letter about a garden party."
    async with httpx.AsyncClient(base_url=demo_server.url) as client:
        a = await client.post(
            "/v1/messages",
            json={"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": text}]},
        )
        o = await client.post(
            "/v1/chat/completions", json={"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}
        )
        r = await client.post("/v1/responses", json={"model": "m", "stream": True, "input": text})
        l = await client.post("/api/chat", json={"model": "m", "messages": [{"role": "user", "content": text}]})
        raw = await client.post("/raw/v1/extract", content=text.encode())
    assert {x.status_code for x in (a, o, r, l, raw)} == {400}
    assert a.json()["type"] == "error" and a.json()["error"]["type"] == "invalid_request_error"
    assert o.json()["error"]["type"] == "invalid_request_error" and r.json()["error"]["type"] == "invalid_request_error"
    messages = [a.json()["error"]["message"], o.json()["error"]["message"], l.json()["error"], raw.json()["error"]["message"]]
    for message in messages:
        assert "bundled scenarios" in message and "live provider extracts any document" in message
    # The SDK surfaces it as its own BadRequestError.
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="bundled scenarios"):
        await client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": text}])


async def test_bad_knobs_and_inapplicable_faults_are_refused(demo_server: EmbeddedServer) -> None:
    body = _anthropic_body("invoice")
    for headers in (
        {"x-demo-scenario": "nope"},
        {"x-demo-speed": "fast"},
        {"x-demo-slice": "0"},
        {"x-demo-fault": "explode"},
        {"x-demo-fault": "blank_line"},  # Ollama only
    ):
        r = await raw_post(demo_server.url, "/v1/messages", body, headers)
        assert r.status == 400, headers
        assert json.loads(r.body)["error"]["type"] == "invalid_request_error"
    r = await raw_post(demo_server.url, "/raw/v1/extract", b"x", {"x-demo-fault": "error", "x-demo-scenario": "weather"})
    assert r.status == 400


async def test_scenario_matched_by_header_or_document(demo_server: EmbeddedServer) -> None:
    by_header = await raw_post(
        demo_server.url, "/raw/v1/extract", b"anything at all", {"x-demo-scenario": "weather"}
    )
    assert by_header.body.decode() == get_scenario("weather").output_text
    by_document = await raw_post(demo_server.url, "/raw/v1/extract", {"document": get_scenario("ticket").document})
    assert by_document.body.decode() == get_scenario("ticket").output_text


# --- faults on the wire --------------------------------------------------------------------------


async def test_disconnect_fault_breaks_the_body_mid_event(demo_server: EmbeddedServer) -> None:
    r = await raw_post(demo_server.url, "/v1/messages", _anthropic_body("invoice"), {"x-demo-fault": "disconnect@0.5"})
    assert r.status == 200 and not r.complete
    assert not r.body.endswith(b"\n\n")
    assert r.body.rsplit(b"\n\n", 1)[1].startswith(b"event: content_block_delta\ndata: {")
    entry = await _log(demo_server, r.headers["request-id"])
    assert entry["aborted"] and not entry["finished"] and entry["outcome"] == "aborted"


async def test_error_frames(demo_server: EmbeddedServer) -> None:
    r = await raw_post(demo_server.url, "/v1/messages", _anthropic_body("invoice"), {"x-demo-fault": "error@0.2"})
    assert r.complete and r.chunks[-1] == (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    s = get_scenario("invoice")
    body = {"model": "m", "stream": True, "input": s.document}
    r = await raw_post(demo_server.url, "/v1/responses", body, {"x-demo-fault": "error"})
    kind, data = _sse_events(r.chunks[-1])[0]
    assert kind == "error" and data["type"] == "error" and data["code"] == "server_error"
    assert data["sequence_number"] == len(r.chunks) - 1
    body = {"model": "m", "messages": [{"role": "user", "content": s.document}]}
    r = await raw_post(demo_server.url, "/api/chat", body, {"x-demo-fault": "error@0"})
    assert r.body.count(b"\n") == 1 and set(json.loads(r.body)) == {"error"}


class _OpenStream:
    """A request whose response is read by hand, as far as a test wants, over a raw socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tag: str) -> None:
        self.reader, self.writer, self.tag = reader, writer, tag
        self.received = b""

    @classmethod
    async def open(cls, url: str, path: str, body: Any, headers: dict[str, str]) -> _OpenStream:
        tag = _tag()
        reader, writer = await _open(url)
        payload = json.dumps(body).encode()
        headers = {"content-type": "application/json", "x-demo-tag": tag, **headers}
        writer.write(_request_bytes(url, path, payload, headers))
        await writer.drain()
        return cls(reader, writer, tag)

    async def read_until(self, done: Any, limit: float = PATIENCE) -> None:
        while not done(self.received):
            chunk = await asyncio.wait_for(self.reader.read(65536), timeout=limit)
            assert chunk, f"the response ended early: {self.received[-300:]!r}"
            self.received += chunk

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()  # the socket is really closed (not merely scheduled to close)


def _pings_after_content(received: bytes) -> int:
    return received.rsplit(b"content_block_delta", 1)[-1].count(b"event: ping")


async def test_stall_keeps_pinging_and_stall_silent_does_not(demo_server: EmbeddedServer) -> None:
    """Two stalled streams side by side; the pinging one is the clock that the silent one is
    checked against (both ping intervals run on the server's one event loop)."""
    headers = {"x-demo-ping": "0.05"}
    pinging = await _OpenStream.open(demo_server.url, "/v1/messages", _anthropic_body("weather"),
                                     {**headers, "x-demo-fault": "stall@0.5"})
    silent = await _OpenStream.open(demo_server.url, "/v1/messages", _anthropic_body("weather"),
                                    {**headers, "x-demo-fault": "stall_silent@0.5"})
    # The pinging stream: content up to the cut, then pings and nothing else.
    await pinging.read_until(lambda received: _pings_after_content(received) >= 3)
    # The silent stream has reached its stall: every token before the cut has been written.
    stalled = await _entry_tagged(demo_server, silent.tag, lambda e: e["fault_at"] is not None
                                  and e["tokens_sent"] == e["fault_at"], "the silent stall")
    # Three more pings on the other stream: two ping intervals at least have passed since then.
    clock = await _entry_tagged(demo_server, pinging.tag)
    await _entry_tagged(demo_server, pinging.tag, lambda e: e["writes"] >= clock["writes"] + 3, "three more pings")
    after = _tagged(demo_server, silent.tag)
    assert after["writes"] == stalled["writes"] and after["bytes_sent"] == stalled["bytes_sent"]
    await silent.read_until(lambda received: received.count(b"content_block_delta") > 1)
    assert _pings_after_content(silent.received) == 0
    for stream in (pinging, silent):
        assert b"message_stop" not in stream.received
        await stream.close()
        entry = await _entry_tagged(demo_server, stream.tag, lambda e: e["disconnected"], "the disconnect")
        assert entry["disconnected"] and not entry["finished"]


# --- cancel is observed --------------------------------------------------------------------------


@pytest.mark.slow
async def test_disconnect_is_seen_at_once_at_one_token_per_second(demo_server: EmbeddedServer) -> None:
    """At 1 token/s the next token is a second away; the disconnect must not wait for it."""
    headers = {"x-demo-speed": "1", "x-demo-ttft": "0", **FINE_GRAINED}
    stream = await _OpenStream.open(demo_server.url, "/v1/messages", _anthropic_body("invoice"), headers)
    await stream.read_until(lambda received: received.count(b"content_block_delta") >= 2)  # "", then token 1
    closed_at = time.time()
    await stream.close()
    request_id = stream.received.split(b"request-id: ", 1)[1].split(b"\r\n", 1)[0].decode()
    entry = await _wait_for(demo_server, request_id, "disconnected")
    assert entry["disconnected"] is True and entry["finished"] is False
    # Order on the server's own clock: the disconnect was seen before the next token was due, and
    # no token was produced after the close.
    next_token_due = entry["first_token_at"] + 1.0
    assert entry["disconnected_at"] < next_token_due
    assert entry["tokens_sent"] == 1 and entry["last_token_at"] == entry["first_token_at"]
    print(f"disconnect seen {(entry['disconnected_at'] - closed_at) * 1000:.1f} ms after the close")
    # Once the next token's due time has passed, still nothing was produced: generation stopped.
    await _until(time.time, lambda now: now > next_token_due + 0.2, "the next token's due time")
    assert (await _log(demo_server, request_id))["tokens_sent"] == 1


async def test_completed_responses_are_not_marked_disconnected(demo_server: EmbeddedServer) -> None:
    async with httpx.AsyncClient(base_url=demo_server.url) as client:
        ids = []
        for _ in range(3):
            r = await client.post("/v1/messages", json=_anthropic_body("weather"))
            ids.append(r.headers["request-id"])
    await asyncio.sleep(0.05)
    for request_id in ids:
        entry = await _log(demo_server, request_id)
        assert entry["finished"] and not entry["disconnected"]


# --- the embedded runner -------------------------------------------------------------------------


def test_embedded_server_lifecycle() -> None:
    server = EmbeddedServer(defaults=DemoDefaults(speed=0, ttft_ms=0), relay_token="tok")
    url = server.start()
    assert url.startswith("http://127.0.0.1:") and server.url == url and server.relay_token == "tok"
    assert server.start() == url  # idempotent
    # Listening as soon as start() returned.
    assert httpx.get(url + "/_demo/scenarios").status_code == 200
    # A stalled stream in progress does not keep stop() waiting.
    with httpx.Client() as client, client.stream(
        "POST", url + "/raw/v1/extract", content=b"x", headers={"x-demo-scenario": "invoice", "x-demo-fault": "stall_silent"}
    ) as response:
        assert response.status_code == 200
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 5
        body = response.read()
    assert len(body) < len(get_scenario("invoice").output_text)
    server.stop()  # idempotent
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/_demo/scenarios")
    with pytest.raises(UsageError):
        server.start()


def test_embedded_server_context_manager_and_defaults() -> None:
    with EmbeddedServer() as server:
        assert server.running
        r = httpx.post(server.url + "/raw/v1/extract", content=b"x", headers={"x-demo-scenario": "weather"})
        entry = server.requests()[-1]
    assert r.text == get_scenario("weather").output_text
    assert entry["knobs"]["speed"] == 30.0  # a real model's pace by default
    assert not server.running


async def test_pings_while_streaming_only_on_anthropic(demo_server: EmbeddedServer) -> None:
    knobs = {"x-demo-speed": "40", "x-demo-ping": "0.05", "x-demo-scenario": "weather", "x-demo-ttft": "150"}
    r = await raw_post(demo_server.url, "/v1/messages", _anthropic_body("weather"), knobs)
    kinds = [k for k, _ in _sse_events(r.body)]
    first_delta = kinds.index("content_block_delta")
    assert kinds[first_delta:].count("ping") >= 2  # pings keep coming while the model "thinks"
    s = get_scenario("weather")
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": s.document}]}
    r = await raw_post(demo_server.url, "/v1/chat/completions", body, knobs)
    assert b": keep-alive" not in r.body  # OpenAI sends no keep-alive while content streams
    assert json.loads("".join(json.loads(c[6:])["choices"][0]["delta"].get("content") or "" for c in r.chunks[:-2])) == s.output


async def test_openai_stall_sends_sse_comments(demo_server: EmbeddedServer) -> None:
    s = get_scenario("invoice")
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": s.document}]}
    stream = await _OpenStream.open(demo_server.url, "/v1/chat/completions", body,
                                    {"x-demo-fault": "stall@0.3", "x-demo-ping": "0.05"})
    await stream.read_until(lambda received: received.count(b": keep-alive\n\n") >= 3)
    await stream.close()
    assert b"[DONE]" not in stream.received


async def test_non_stream_request_sees_the_disconnect_too(demo_server: EmbeddedServer) -> None:
    s = get_scenario("invoice")
    body = {**_anthropic_body("invoice"), "stream": False}
    headers = {"x-demo-speed": "5"}  # the whole answer takes ~40 s
    stream = await _OpenStream.open(demo_server.url, "/v1/messages", body, headers)
    # The server has the request and its response is waiting (and watching for a disconnect).
    logged = await _entry_tagged(demo_server, stream.tag, lambda e: e["outcome"] == "streaming")
    await stream.close()
    entry = await _wait_for(demo_server, logged["id"], "disconnected")
    assert entry["disconnected"] and not entry["finished"] and entry["scenario"] == s.name
    assert not entry["stream"]
