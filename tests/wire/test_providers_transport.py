"""livefill/wire/providers: the request shapes, the foreign-exception boundary, and EventStream's rules
(events before a failure, Stop last, the idle clock), without the demo provider. A small
loopback server of our own covers what the demo provider never does (wrong content types,
error bodies, gzip, bytes after the terminal).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from livefill.errors import ConnectionLost, InputError, ProtocolError, ProviderHTTPError, StreamTimeout, Truncated, UpstreamError, UsageError
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, StreamEvent
from livefill.wire.providers import _WIRES, EventStream, open_stream
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.anthropic import FINE_GRAINED_BETA, message_params, request_headers
from livefill.wire.providers.ollama import chat_body as ollama_body
from livefill.wire.providers.openai_chat import chat_body
from livefill.wire.providers.openai_responses import responses_body
from livefill.wire.providers.raw import raw_body
from livefill.wire.providers.strict_schema import openai_subset, strict_json_schema
from livefill.wire.providers.http_failures import http_failure
from livefill.wire.providers.transport import translate_errors
from livefill.extraction.schemas import resolve_schema, schema_model
from livefill.wire.taps import WireFrame

# =============================================================================================
# Request shapes


def req(provider: str = "anthropic", **kw: Any) -> ExtractionRequest:
    return ExtractionRequest(provider=provider, base_url="http://127.0.0.1:9", schema=resolve_schema("invoice"), document="DOC", **kw)


def test_anthropic_messages_request_shape() -> None:
    params = message_params(req(model="m1"))
    assert params["model"] == "m1" and params["stream"] is True and params["max_tokens"] > 0
    assert params["tools"] == [
        {"name": "record_invoice", "description": params["tools"][0]["description"],
         "input_schema": schema_model("invoice").model_json_schema()}
    ]
    assert params["tool_choice"] == {"type": "tool", "name": "record_invoice"}
    assert params["messages"][0]["role"] == "user" and "DOC" in params["messages"][0]["content"]


def test_anthropic_fine_grained_adds_the_beta_header_and_demo_headers_pass_through() -> None:
    assert request_headers(req(demo_headers={"x-demo-speed": "0"})) == {"x-demo-speed": "0"}
    assert request_headers(req(fine_grained=True))["anthropic-beta"] == FINE_GRAINED_BETA


def test_openai_chat_request_shape() -> None:
    body = chat_body(req("openai-chat"))
    assert body["stream"] is True
    assert body["tools"] == [{"type": "function", "function": {
        "name": "record_invoice", "description": body["tools"][0]["function"]["description"],
        "parameters": openai_subset(strict_json_schema(schema_model("invoice").model_json_schema())), "strict": True}}]
    assert "response_format" not in body and "max_tokens" not in body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "record_invoice"}}


def test_openai_responses_request_shape() -> None:
    body = responses_body(req("openai-responses", structured="json_schema"))
    assert body["stream"] is True and "DOC" in body["input"][0]["content"]
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "record_invoice" and fmt["strict"] is True
    assert fmt["schema"] == openai_subset(strict_json_schema(schema_model("invoice").model_json_schema()))
    assert "tools" not in body


def test_openai_responses_function_tool_request_shape() -> None:
    body = responses_body(req("openai-responses"))
    assert "text" not in body
    assert body["tools"] == [{"type": "function", "name": "record_invoice",
                              "description": body["tools"][0]["description"],
                              "parameters": openai_subset(strict_json_schema(schema_model("invoice").model_json_schema())),
                              "strict": True}]
    assert body["tool_choice"] == {"type": "function", "name": "record_invoice"}


def test_ollama_and_raw_request_shapes() -> None:
    body = ollama_body(req("ollama"))
    assert body["format"] == schema_model("invoice").model_json_schema() and body["stream"] is True
    assert body["model"] == "llama3.2"
    assert raw_body(req("raw")) == {"schema": "invoice", "document": "DOC"}


def test_extraction_request_is_checked() -> None:
    with pytest.raises(UsageError):
        req("gemini")
    with pytest.raises(InputError):  # an unknown schema is refused where it is resolved, before a request
        resolve_schema("nope")
    with pytest.raises(UsageError):
        req(demo_headers={"authorization": "x"})
    assert req().tool_name == "record_invoice"


@pytest.mark.parametrize(
    ("base", "url"),
    [("http://h:1", "http://h:1/v1/chat/completions"), ("http://h:1/", "http://h:1/v1/chat/completions"),
     ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
     ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions")],
)
def test_urls_join_without_doubling(base: str, url: str) -> None:
    r = ExtractionRequest(provider="openai-chat", base_url=base, schema=resolve_schema("invoice"), document="")
    assert r.url("/v1/chat/completions") == url


# =============================================================================================
# The foreign-exception boundary

_R1 = httpx.Request("POST", "http://127.0.0.1:9/x")
_R2 = httpx2.Request("POST", "http://127.0.0.1:9/x")


def _status_error() -> anthropic.APIStatusError:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return anthropic.APIStatusError("Overloaded", response=httpx2.Response(529, json=body, request=_R2), body=body)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: httpx.ConnectError("refused", request=_R1), ConnectionLost),
        (lambda: httpx.ReadError("reset", request=_R1), ConnectionLost),
        (lambda: httpx.RemoteProtocolError("peer closed connection", request=_R1), ConnectionLost),
        (lambda: httpx.ReadTimeout("slow", request=_R1), StreamTimeout),
        (lambda: httpx.DecodingError("bad gzip", request=_R1), ProtocolError),
        (lambda: httpx.InvalidURL("nope"), UsageError),
        (lambda: httpx.UnsupportedProtocol("ftp", request=_R1), UsageError),
        (lambda: httpx.StreamClosed(), UsageError),
        (lambda: httpx.HTTPStatusError("500", request=_R1, response=httpx.Response(500, request=_R1)), UpstreamError),
        (lambda: httpx2.ReadError("reset", request=_R2), ConnectionLost),
        (lambda: httpx2.ReadTimeout("slow", request=_R2), StreamTimeout),
        (lambda: httpx2.RemoteProtocolError("incomplete chunked read", request=_R2), ConnectionLost),
        (lambda: ConnectionResetError(104, "reset"), ConnectionLost),
        (lambda: anthropic.APIConnectionError(request=_R2), ConnectionLost),
        (lambda: anthropic.APITimeoutError(request=_R2), StreamTimeout),
        (_status_error, UpstreamError),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_translate_errors_maps_foreign_exceptions(make, expected) -> None:
    exc = make()
    with pytest.raises(expected) as info:
        with translate_errors("op"):
            raise exc
    assert info.value.__cause__ is exc
    if isinstance(info.value, ProviderHTTPError):  # an error status names the host it came from
        assert "127.0.0.1:9" in str(info.value) and "\n" not in str(info.value)
    else:
        assert str(info.value).startswith("op: ")


def test_translate_errors_keeps_the_status_and_kind_of_an_sdk_status_error() -> None:
    with pytest.raises(UpstreamError) as info:
        with translate_errors("Anthropic Messages"):
            raise _status_error()
    assert (info.value.status, info.value.kind) == (529, "overloaded_error")
    assert "Overloaded" in info.value.message


def test_translate_errors_leaves_our_errors_and_plain_bugs_alone() -> None:
    with pytest.raises(Truncated):
        with translate_errors("op"):
            raise Truncated("x")
    with pytest.raises(KeyError):
        with translate_errors("op"):
            raise KeyError("a bug stays a bug")


@pytest.mark.parametrize(
    ("body", "kind", "text"),
    [
        (b'{"error":{"message":"Invalid key","type":"invalid_request_error"}}', "invalid_request_error", "Invalid key"),
        (b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', "overloaded_error", "Overloaded"),
        (b'{"error":"model \'llama9\' not found"}', "http_error", "model 'llama9' not found"),
        (b"<html>Bad Gateway</html>", "http_error", "<html>Bad Gateway</html>"),
        (b"", "http_error", "had a server error (502)"),
    ],
)
def test_http_failure_reads_each_providers_error_shape(body: bytes, kind: str, text: str) -> None:
    err = http_failure(502, body, url="op")
    assert (err.status, err.kind) == (502, kind)
    assert text in err.message


# =============================================================================================
# EventStream over a scripted body (no network)


class FakeBody:
    """A BodyStream stand-in: each item is bytes (returned), a float (sleep first), or an exception."""

    what = "fake"

    def __init__(self, script: list[Any]) -> None:
        self._script = list(script)
        self.closed = False

    async def read(self) -> bytes | None:
        while self._script:
            item = self._script.pop(0)
            if isinstance(item, float):
                await asyncio.sleep(item)
            elif isinstance(item, BaseException):
                raise item
            else:
                return item
        return None

    async def aclose(self) -> None:
        self.closed = True


class Tap:
    def __init__(self) -> None:
        self.reads: list[bytes] = []
        self.frames: list[tuple[str, str]] = []
        self.spans: list[tuple[int, int]] = []
        self.events: list[StreamEvent] = []

    def on_read(self, data: bytes) -> None:
        self.reads.append(data)

    def on_frame(self, frame: WireFrame) -> None:
        self.frames.append((frame.kind, frame.text))
        self.spans.append((frame.start, frame.end))

    def on_event(self, event: StreamEvent) -> None:
        self.events.append(event)


def chat_frame(obj: Any) -> bytes:
    return f"data: {obj if isinstance(obj, str) else json.dumps(obj)}\n\n".encode()


def chat_chunk(args: str | None = None, finish: str | None = None, first: bool = False) -> bytes:
    call: dict[str, Any] = {"index": 0, "function": {"arguments": args or ""}}
    if first:
        call.update(id="call_1", type="function")
        call["function"]["name"] = "record_invoice"
    delta = {"tool_calls": [call]} if args is not None or first else {}
    return chat_frame({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


GOOD_CHAT = [chat_chunk("", first=True), chat_chunk('{"a":'), chat_chunk("1}"), chat_chunk(finish="stop"), chat_frame("[DONE]")]


async def drain(stream: EventStream) -> tuple[list[StreamEvent], BaseException | None]:
    got: list[StreamEvent] = []
    try:
        async for event in stream:
            got.append(event)
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return got, exc
    return got, None


async def test_event_stream_yields_events_and_tells_the_tap_everything() -> None:
    tap = Tap()
    body = b"".join(GOOD_CHAT)
    stream = EventStream(FakeBody([body[:10], body[10:77], body[77:]]), _WIRES["openai-chat"], tap=tap, idle_timeout=5.0)
    got, error = await drain(stream)
    assert error is None and stream.finished
    assert got == [ArgsDelta(text='{"a":'), ArgsDelta(text="1}"), BlockStop(index=0),
                   Stop(reason=StopReason.COMPLETE, raw="stop")]
    assert tap.events == got
    assert b"".join(tap.reads) == body
    assert [t for _, t in tap.frames][-1] == "data: [DONE]"


async def test_events_before_an_error_frame_come_first_then_upstream_error() -> None:
    tap = Tap()
    err = chat_frame({"error": {"message": "boom", "type": "server_error"}})
    stream = EventStream(FakeBody([b"".join(GOOD_CHAT[:3]) + err]), _WIRES["openai-chat"], tap=tap, idle_timeout=5.0)
    got, error = await drain(stream)
    assert got == [ArgsDelta(text='{"a":'), ArgsDelta(text="1}")]
    assert isinstance(error, UpstreamError) and error.kind == "server_error" and "boom" in error.message
    assert tap.events[-1] == ProviderError(kind="server_error", message="boom")


async def test_events_before_a_protocol_error_in_the_same_read_come_first() -> None:
    stream = EventStream(FakeBody([b"".join(GOOD_CHAT[:3]) + b"data: {bad json\n\n"]), _WIRES["openai-chat"], tap=None, idle_timeout=5.0)
    got, error = await drain(stream)
    assert len(got) == 2 and isinstance(error, ProtocolError)


async def test_bytes_after_the_terminal_are_a_protocol_error() -> None:
    stream = EventStream(FakeBody([b"".join(GOOD_CHAT) + chat_frame("[DONE]")]), _WIRES["openai-chat"], tap=None, idle_timeout=5.0)
    got, error = await drain(stream)
    assert got[-1].reason is StopReason.COMPLETE and isinstance(error, ProtocolError)


async def test_eof_without_terminal_is_truncated_and_transport_errors_pass_as_raised() -> None:
    got, error = await drain(EventStream(FakeBody(GOOD_CHAT[:4]), _WIRES["openai-chat"], tap=None, idle_timeout=5.0))
    assert isinstance(got[-1], Stop) and isinstance(error, Truncated)  # no [DONE]
    got, error = await drain(
        EventStream(FakeBody([GOOD_CHAT[0], ConnectionLost("reset")]), _WIRES["openai-chat"], tap=None, idle_timeout=5.0)
    )
    assert got == [] and isinstance(error, ConnectionLost)


# The idle clock is the loop's: on `virtual_loop` time jumps from timer to timer, so these tests use
# realistic limits (seconds) at no real cost and can assert the exact moment a timeout fires.


def on_virtual_time(loop: asyncio.AbstractEventLoop, make: Any) -> Any:
    """Build the stream inside the loop (its watchdog takes the running loop) and drain it."""

    async def go() -> Any:
        return await drain(make())

    return loop.run_until_complete(go())


def test_the_virtual_clock_jumps_from_timer_to_timer_in_order(virtual_loop) -> None:
    order: list[tuple[str, float]] = []

    async def sleeper(name: str, delay: float) -> None:
        await asyncio.sleep(delay)
        order.append((name, virtual_loop.time()))

    started = time.monotonic()
    virtual_loop.run_until_complete(asyncio.gather(sleeper("hour", 3600.0), sleeper("five", 5.0), sleeper("now", 0.0)))
    assert order == [("now", 0.0), ("five", 5.0), ("hour", 3600.0)]
    assert time.monotonic() - started < 60  # an hour of timers, not an hour of waiting


KEEPALIVES = [b": ping\n\n", chat_frame({"object": "chat.completion.chunk", "choices": []})]


def test_only_keepalives_for_the_idle_limit_is_a_stream_timeout(virtual_loop) -> None:
    # Content at t=0, then every 3 s an SSE comment or an empty chunk (a KeepAlive event): the
    # limit (20 s) runs from the last content, whatever else arrives.
    pings = [x for i in range(20) for x in (3.0, KEEPALIVES[i % 2])]
    got, error = on_virtual_time(virtual_loop, lambda: EventStream(
        FakeBody([GOOD_CHAT[0], GOOD_CHAT[1], *pings]), _WIRES["openai-chat"], tap=None, idle_timeout=20.0))
    assert isinstance(error, StreamTimeout)
    assert "only keep-alives for 20 s, no content" in str(error)  # pings arrived: not a silent stream
    assert virtual_loop.time() == pytest.approx(20.0)
    assert got == [ArgsDelta(text='{"a":')] + [KeepAlive()] * 3  # the empty chunks at 6, 12 and 18 s


@pytest.mark.parametrize(("gap", "times_out"), [(14.999, False), (15.001, True)])
def test_the_limit_is_measured_between_content_events(virtual_loop, gap: float, times_out: bool) -> None:
    body = [GOOD_CHAT[0]] + [x for _ in range(12) for x in (gap, chat_chunk("1"))] + GOOD_CHAT[3:]
    got, error = on_virtual_time(virtual_loop, lambda: EventStream(
        FakeBody(body), _WIRES["openai-chat"], tap=None, idle_timeout=15.0))
    if times_out:  # the first gap is already too long: it fails 15 s after the tool call started
        assert isinstance(error, StreamTimeout) and got == [] and virtual_loop.time() == pytest.approx(15.0)
        assert "nothing arrived for 15 s" in str(error)  # nothing came at all: not "keep-alives"
    else:  # twelve gaps just inside the limit add up to far more than the limit: no timeout
        assert error is None and args_len(got) == 12 and virtual_loop.time() == pytest.approx(12 * gap)


def args_len(events: list[StreamEvent]) -> int:
    return sum(isinstance(e, ArgsDelta) for e in events)


def test_time_the_consumer_spends_is_not_idle_time(virtual_loop) -> None:
    async def consume() -> list[StreamEvent]:
        # Each read waits 1 s for the network (so a read can be cut by the watchdog's timer).
        body = [x for chunk in GOOD_CHAT for x in (1.0, chunk)]
        stream = EventStream(FakeBody(body), _WIRES["openai-chat"], tap=None, idle_timeout=10.0)
        got = []
        async for event in stream:
            got.append(event)
            await asyncio.sleep(60.0)  # the consumer is busy far longer than the limit
        return got

    got = virtual_loop.run_until_complete(consume())
    assert got[-1].reason is StopReason.COMPLETE
    assert virtual_loop.time() == pytest.approx(60.0 * len(got) + len(GOOD_CHAT))


def test_cancelling_a_blocked_read_is_a_cancel_not_a_timeout(virtual_loop) -> None:
    async def scenario() -> None:
        stream = EventStream(FakeBody([GOOD_CHAT[0], GOOD_CHAT[1], 30.0]), _WIRES["openai-chat"], tap=None, idle_timeout=10.0)
        task = asyncio.create_task(drain(stream))
        await asyncio.sleep(1.0)  # the read is blocked (the body waits 30 s), the limit is 9 s away
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    virtual_loop.run_until_complete(scenario())
    assert virtual_loop.time() == pytest.approx(1.0)


def test_a_timeout_inside_another_cancel_scope_stays_that_scopes(virtual_loop) -> None:
    # asyncio.timeout around our read: its expiry must surface as its TimeoutError, not ours.
    async def scenario() -> None:
        stream = EventStream(FakeBody([GOOD_CHAT[0], 30.0]), _WIRES["openai-chat"], tap=None, idle_timeout=10.0)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.0):
                await drain(stream)

    virtual_loop.run_until_complete(scenario())
    assert virtual_loop.time() == pytest.approx(1.0)


def test_our_timeout_and_an_outer_scope_expiring_later_stay_apart(virtual_loop) -> None:
    # The idle limit (10 s) fires first inside an outer 60 s scope: ours is StreamTimeout, and the
    # outer scope is not consumed by it.
    async def scenario() -> BaseException | None:
        stream = EventStream(FakeBody([GOOD_CHAT[0], 30.0]), _WIRES["openai-chat"], tap=None, idle_timeout=10.0)
        async with asyncio.timeout(60.0):
            _, error = await drain(stream)
            await asyncio.sleep(1.0)  # still inside the outer scope, which has not expired
        return error

    error = virtual_loop.run_until_complete(scenario())
    assert isinstance(error, StreamTimeout) and virtual_loop.time() == pytest.approx(11.0)


# =============================================================================================
# Our own loopback server: what the demo provider never sends


def _sse(frames: list[bytes]) -> Any:
    async def gen() -> Any:
        for f in frames:
            yield f

    return gen()


async def chat_route(request: Request) -> Response:
    mode = request.headers.get("x-demo-test")
    if mode == "text":
        return Response("hello", media_type="text/plain")
    if mode == "gzip":
        return Response(gzip.compress(b"".join(GOOD_CHAT)), media_type="text/event-stream",
                        headers={"content-encoding": "gzip"})
    if mode == "500":
        return JSONResponse({"error": {"message": "The server had an error", "type": "server_error"}}, status_code=500)
    if mode == "401":
        return JSONResponse({"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}, status_code=401)
    return StreamingResponse(_sse(GOOD_CHAT), media_type="text/event-stream")


async def ollama_route(request: Request) -> Response:
    if request.headers.get("x-demo-test") == "sse":
        return StreamingResponse(_sse(GOOD_CHAT), media_type="text/event-stream")
    return JSONResponse({"error": "model 'llama3.2' not found, try pulling it first"}, status_code=404)


async def messages_route(request: Request) -> Response:
    if request.headers.get("x-demo-test") == "json":
        return JSONResponse({"type": "message"})
    return JSONResponse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, status_code=529)


@pytest.fixture(scope="module")
def odd_server() -> Iterator[str]:
    app = Starlette(routes=[
        Route("/v1/chat/completions", chat_route, methods=["POST"]),
        Route("/api/chat", ollama_route, methods=["POST"]),
        Route("/v1/messages", messages_route, methods=["POST"]),
    ])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)
    sock.close()


def odd(url: str, provider: str, mode: str) -> ExtractionRequest:
    return ExtractionRequest(provider=provider, base_url=url, schema=resolve_schema("invoice"), document="x",
                             demo_headers={"x-demo-test": mode})


async def collect(request: ExtractionRequest) -> list[StreamEvent]:
    async with open_stream(request, idle_timeout=10.0) as events:
        return [e async for e in events]


async def test_wrong_content_type_is_a_protocol_error(odd_server: str) -> None:
    with pytest.raises(ProtocolError, match="content-type 'text/plain'"):
        await collect(odd(odd_server, "openai-chat", "text"))
    with pytest.raises(ProtocolError, match="text/event-stream.*expected application/x-ndjson"):
        await collect(odd(odd_server, "ollama", "sse"))
    with pytest.raises(ProtocolError, match="application/json"):
        await collect(odd(odd_server, "anthropic", "json"))


async def test_gzip_encoded_sse_is_decoded(odd_server: str) -> None:
    events = await collect(odd(odd_server, "openai-chat", "gzip"))
    assert "".join(e.text for e in events if isinstance(e, ArgsDelta)) == '{"a":1}'


@pytest.mark.parametrize(
    ("provider", "mode", "status", "kind", "text"),
    [
        ("openai-chat", "500", 500, "server_error", "The server had an error"),
        ("openai-chat", "401", 401, "invalid_request_error", "Incorrect API key"),
        ("ollama", "", 404, "http_error", "not found, try pulling it first"),
        ("anthropic", "", 529, "overloaded_error", "Overloaded"),
    ],
)
async def test_http_error_statuses_carry_status_kind_and_message(odd_server: str, provider, mode, status, kind, text) -> None:
    with pytest.raises(UpstreamError) as info:
        await collect(odd(odd_server, provider, mode))
    assert (info.value.status, info.value.kind) == (status, kind)
    assert text in info.value.message


def test_openai_gets_only_the_string_formats_it_accepts():
    schema = {"type": "object", "properties": {
        "email": {"type": "string", "format": "email"},
        "home": {"type": "string", "format": "uri"},
        "format": {"type": "string", "format": "phone"},  # a property named "format" is kept
    }}
    subset = openai_subset(schema)
    assert subset["properties"]["email"] == {"type": "string", "format": "email"}
    assert subset["properties"]["home"] == {"type": "string"}
    assert subset["properties"]["format"] == {"type": "string"}
    assert schema["properties"]["home"]["format"] == "uri"  # a copy: the schema itself is untouched
