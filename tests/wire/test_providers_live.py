"""open_stream against the demo provider over a real loopback socket: every provider x scenario
rebuilds the scenario's output exactly under each network slicing, every fault surfaces as its
typed error, and leaving the stream early is a real cancel the server sees.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from typing import Any

import httpx
import pytest

from livefill.errors import ConnectionLost, ProtocolError, StreamTimeout, Truncated, UpstreamError
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, Stop, StopReason, StreamEvent
from livefill.wire.providers import open_stream
from livefill.wire.providers.request import PROVIDERS, ExtractionRequest
from livefill.extraction.schemas import resolve_schema
from livefill.extraction.scenarios import load_scenarios
from livefill.wire.taps import WireFrame

SCENARIOS = load_scenarios()
SLICES = ["event", "7", "coalesce:20"]
STREAMING_WIRES = [p for p in PROVIDERS if p != "raw"]
# The catalog is ~200 KB of frames on the chatty wires: cut into 7-byte writes that is ~300,000
# socket writes (about 10 s each). The other scenarios cover 7-byte slicing on those wires; the
# catalog gets it on the two wires where it is cheap (openai-compatible speaks openai-chat's wire).
SLOW = {("catalog", "7", p) for p in ("openai-chat", "openai-compatible", "openai-responses", "ollama")}


class Tap:
    """A WireTap that keeps everything it is shown."""

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


def make_request(server: Any, provider: str, scenario: str = "invoice", **knobs: str) -> ExtractionRequest:
    s = SCENARIOS[scenario]
    headers = {f"x-demo-{k.replace('_', '-')}": v for k, v in knobs.items()}
    headers.setdefault("x-demo-scenario", scenario)
    return ExtractionRequest(
        provider=provider, base_url=server.url, schema=resolve_schema(s.schema_name), document=s.document, demo_headers=headers
    )


async def collect(request: ExtractionRequest, *, tap: Tap | None = None, idle_timeout: float | None = 20.0) -> list[StreamEvent]:
    async with open_stream(request, tap=tap, idle_timeout=idle_timeout) as events:
        return [e async for e in events]


def args_text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ArgsDelta))


async def log_entry(server: Any, request_id: str | None = None) -> dict[str, Any]:
    async with httpx.AsyncClient(trust_env=False) as client:
        entries = (await client.get(server.url + "/_demo/requests")).json()
    if request_id is None:
        return entries[-1]
    return next(e for e in entries if e["id"] == request_id)


# =============================================================================================
# Every provider x scenario x slicing rebuilds the scenario's output exactly


@pytest.mark.parametrize("slicing", SLICES)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_every_provider_and_scenario_rebuilds_the_output(demo_server, provider: str, scenario: str, slicing: str) -> None:
    if (scenario, slicing, provider) in SLOW:
        slicing = "61"
    tap = Tap()
    events = await collect(make_request(demo_server, provider, scenario, slice=slicing), tap=tap)
    assert json.loads(args_text(events)) == SCENARIOS[scenario].output
    assert args_text(events) == SCENARIOS[scenario].output_text
    content = [e for e in events if not isinstance(e, KeepAlive)]
    assert content[-1] == Stop(reason=StopReason.COMPLETE, raw=content[-1].raw)
    assert content[-2] == BlockStop(index=content[-2].index)
    assert tap.events == events  # the tap saw every event, in order (there was no ProviderError)
    assert tap.reads and all(tap.reads)
    assert {kind for kind, _ in tap.frames} == {"sse" if provider.startswith(("anthropic", "openai")) else
                                                 "ndjson" if provider == "ollama" else "raw"}
    entry = await log_entry(demo_server)
    assert entry["finished"] and not entry["disconnected"]
    assert entry["scenario"] == scenario


async def test_tap_reads_are_the_body_exactly(demo_server) -> None:
    """The bytes the tap sees re-frame into exactly the frames it was shown."""
    from livefill.wire.sse import SSEDecoder

    tap = Tap()
    await collect(make_request(demo_server, "anthropic", "multilingual", slice="7"), tap=tap)
    decoder = SSEDecoder()
    reframed = decoder.feed(b"".join(tap.reads))
    assert [f"event: {e.event}\ndata: {e.data}" for e in reframed] == [text for _, text in tap.frames]
    # each frame's byte span is where it lies in those bytes
    assert [(e.start, e.end) for e in reframed] == tap.spans
    body = b"".join(tap.reads)
    assert all(body[s:e].startswith(b"event: ") and body[e : e + 1] == b"\n" for s, e in tap.spans)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_scenario_is_found_from_the_prompt_without_the_scenario_knob(demo_server, provider: str) -> None:
    s = SCENARIOS["weather"]
    request = ExtractionRequest(provider=provider, base_url=demo_server.url, schema=resolve_schema(s.schema_name), document=s.document)
    events = await collect(request)
    assert json.loads(args_text(events)) == s.output
    assert (await log_entry(demo_server))["scenario"] == "weather"


@pytest.mark.parametrize("fine_grained", [False, True])
async def test_anthropic_request_shape_and_fine_grained_header(demo_server, fine_grained: bool) -> None:
    s = SCENARIOS["invoice"]
    request = ExtractionRequest(
        provider="anthropic", base_url=demo_server.url, schema=resolve_schema("invoice"), document=s.document,
        model="claude-test", fine_grained=fine_grained,
    )
    events = await collect(request)
    assert json.loads(args_text(events)) == s.output
    entry = await log_entry(demo_server)
    assert entry["fine_grained"] is fine_grained
    assert entry["model"] == "claude-test"
    assert entry["path"] == "/v1/messages"
    assert entry["auth"] in ("bearer", "x-api-key")


# =============================================================================================
# Faults

LENGTH_RAW = {"anthropic": "max_tokens", "openai-chat": "length", "openai-compatible": "length", "openai-responses": "max_output_tokens", "ollama": "length"}


@pytest.mark.parametrize("provider", STREAMING_WIRES)
async def test_max_tokens_is_a_length_stop_with_the_json_cut_off(demo_server, provider: str) -> None:
    events = await collect(make_request(demo_server, provider, "invoice", fault="max_tokens@0.5"))
    assert events[-1] == Stop(reason=StopReason.LENGTH, raw=LENGTH_RAW[provider])
    text = args_text(events)
    assert SCENARIOS["invoice"].output_text.startswith(text) and text != SCENARIOS["invoice"].output_text


async def test_raw_wire_cannot_tell_a_cut_off_body_from_a_finished_one(demo_server) -> None:
    events = await collect(make_request(demo_server, "raw", "invoice", fault="max_tokens@0.5"))
    assert events[-1] == Stop(reason=StopReason.COMPLETE, raw="eof")
    assert SCENARIOS["invoice"].output_text.startswith(args_text(events))
    assert args_text(events) != SCENARIOS["invoice"].output_text


@pytest.mark.parametrize("provider", STREAMING_WIRES)
async def test_error_event_mid_stream_is_an_upstream_error_after_the_events_before_it(demo_server, provider: str) -> None:
    tap = Tap()
    got: list[StreamEvent] = []
    with pytest.raises(UpstreamError) as info:
        async with open_stream(make_request(demo_server, provider, "ticket", fault="error@0.5"), tap=tap) as events:
            async for event in events:
                got.append(event)
    assert info.value.status is None and info.value.kind
    assert SCENARIOS["ticket"].output_text.startswith(args_text(got)) and args_text(got)
    assert type(tap.events[-1]).__name__ == "ProviderError"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_disconnect_is_connection_lost_or_truncated(demo_server, provider: str) -> None:
    with pytest.raises((ConnectionLost, Truncated)):
        await collect(make_request(demo_server, provider, "invoice", fault="disconnect@0.4"))


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", ["stall", "stall_silent"])
async def test_stall_is_a_stream_timeout(demo_server, provider: str, fault: str) -> None:
    request = make_request(demo_server, provider, "weather", fault=f"{fault}@0.5", ping="0.05")
    got: list[StreamEvent] = []
    with pytest.raises(StreamTimeout):
        async with open_stream(request, idle_timeout=0.25) as events:
            async for event in events:
                got.append(event)
    assert SCENARIOS["weather"].output_text.startswith(args_text(got))
    entry = await wait_for_disconnect(demo_server, (await log_entry(demo_server))["id"])
    assert entry["disconnected"] and not entry["finished"]  # the timeout closed the request for real


async def test_pings_during_a_stall_are_keepalives_that_do_not_reset_the_idle_clock(demo_server) -> None:
    request = make_request(demo_server, "anthropic", "weather", fault="stall@0.5", ping="0.05")
    got: list[StreamEvent] = []
    with pytest.raises(StreamTimeout):
        async with open_stream(request, idle_timeout=0.5) as events:
            async for event in events:
                got.append(event)
    last_content = max(i for i, e in enumerate(got) if not isinstance(e, KeepAlive))
    assert sum(isinstance(e, KeepAlive) for e in got[last_content:]) >= 3  # pings kept coming


@pytest.mark.slow
async def test_a_slow_consumer_is_not_idle(demo_server) -> None:
    """Time the consumer spends between events does not count towards the idle limit."""
    events: list[StreamEvent] = []
    async with open_stream(make_request(demo_server, "openai-chat", "weather"), idle_timeout=0.5) as stream:
        async for event in stream:
            events.append(event)
            if len(events) <= 3:
                await asyncio.sleep(0.8)  # far longer than the idle limit, with the rest already sent
    assert json.loads(args_text(events)) == SCENARIOS["weather"].output


async def test_invalid_value_fault_streams_the_invalid_text(demo_server) -> None:
    events = await collect(make_request(demo_server, "openai-responses", "invoice", fault="invalid_value"))
    assert args_text(events) == SCENARIOS["invoice"].invalid_output_text
    assert events[-1].reason is StopReason.COMPLETE


async def test_ollama_blank_line_is_a_protocol_error(demo_server) -> None:
    with pytest.raises(ProtocolError):
        await collect(make_request(demo_server, "ollama", "invoice", fault="blank_line@0.5"))


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_http_error_status_is_an_upstream_error_with_the_status(demo_server, provider: str) -> None:
    s = SCENARIOS["invoice"]
    request = ExtractionRequest(
        provider=provider, base_url=demo_server.url, schema=resolve_schema(s.schema_name), document=s.document,
        demo_headers={"x-demo-scenario": "no-such-scenario"},
    )
    with pytest.raises(UpstreamError) as info:
        await collect(request)
    assert info.value.status == 400
    assert "no-such-scenario" in info.value.message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_connection_refused_is_connection_lost(provider: str) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        request = ExtractionRequest(
            provider=provider, base_url=f"http://127.0.0.1:{port}", schema=resolve_schema("weather"), document="x"
        )
        with pytest.raises(ConnectionLost):
            await collect(request)


# =============================================================================================
# Leaving early is a real cancel


async def wait_for_disconnect(server: Any, request_id: str, limit: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + limit
    while True:
        entry = await log_entry(server, request_id)
        if entry["disconnected"] or time.monotonic() > deadline:
            return entry
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_leaving_the_context_mid_stream_is_seen_by_the_server(demo_server, provider: str) -> None:
    request = make_request(demo_server, provider, "catalog", speed="200")
    async with open_stream(request) as events:
        async for event in events:
            if isinstance(event, ArgsDelta):
                break
        entry = await log_entry(demo_server)
        assert not entry["finished"] and not entry["disconnected"]
    entry = await wait_for_disconnect(demo_server, entry["id"])
    assert entry["disconnected"] and not entry["finished"]
    assert entry["tokens_sent"] < entry["tokens_total"]


async def test_cancelling_the_reading_task_is_a_cancel_not_a_timeout(demo_server) -> None:
    request = make_request(demo_server, "anthropic", "weather", fault="stall_silent@0.5")
    started = asyncio.Event()

    async def consume() -> None:
        async with open_stream(request, idle_timeout=30.0) as events:
            async for _ in events:
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.sleep(0.05)
    entry = await log_entry(demo_server)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await wait_for_disconnect(demo_server, entry["id"]))["disconnected"]


async def test_leaving_right_after_stop_is_not_a_disconnect(demo_server) -> None:
    async with open_stream(make_request(demo_server, "openai-chat", "weather")) as events:
        async for event in events:
            if isinstance(event, Stop):
                break
    entry = await log_entry(demo_server)
    assert entry["finished"] and not entry["disconnected"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_leaving_early_leaves_no_generator_for_the_garbage_collector(demo_server, provider: str) -> None:
    """Under a loop with no asyncgen hooks (qasync installs none), an async generator abandoned
    mid-body is finalised by the garbage collector outside any task and complains; the stream must
    unwind every generator of the HTTP stack itself when it is closed early."""
    unraisable: list[str] = []
    old_unraisable, old_hooks = sys.unraisablehook, sys.get_asyncgen_hooks()
    sys.unraisablehook = lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value} in {u.object!r}")
    sys.set_asyncgen_hooks(firstiter=None, finalizer=None)
    try:
        async with open_stream(make_request(demo_server, provider, "catalog", speed="200")) as events:
            async for event in events:
                if isinstance(event, ArgsDelta):
                    break
        gc.collect()
    finally:
        sys.set_asyncgen_hooks(*old_hooks)
        sys.unraisablehook = old_unraisable
    assert unraisable == []
