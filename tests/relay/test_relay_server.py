"""The relay over real loopback sockets: POST /relay/v1/extract -> the demo provider -> records.

Two relays are used: the one mounted in the embedded server (`demo_server`, the product path)
and one of our own (`own_relay`: `create_relay_app` on its own uvicorn, with a small idle limit
and an upstream tap, its demo upstream being `demo_server`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import httpx
import pytest

from livefill.errors import ProtocolError, RunFailure, StreamTimeout, Truncated, UpstreamError, ValidationFailed
from livefill.wire.events import ArgsDelta
from livefill.relay.assembler import RecordAssembler
from livefill.relay.client import open_relay
from livefill.relay.records import CompleteRecord, DeltaRecord, FieldRecord, ItemRecord, StartRecord
from livefill.extraction.scenarios import load_scenarios, value_spans
from livefill.relay.app import create_relay_app
from tests.relay.test_relay_support import LoopbackServer

SCENARIOS = load_scenarios()
PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "ollama"]
_seeds = itertools.count(910_000)


#: One sequence for everything the order test sees, in both threads (the relay's upstream tap and
#: the client): `next()` on it is atomic, so its numbers give the order in which things happened,
#: with no clock compared across threads.
ORDER = itertools.count()


class UpstreamRecorder:
    """WireTap on the relay's upstream stream: each ArgsDelta, in the order it was decoded."""

    def __init__(self) -> None:
        self.deltas: list[tuple[int, str]] = []

    def on_read(self, data: bytes) -> None:
        pass

    def on_frame(self, frame: Any) -> None:
        pass

    def on_event(self, event: Any) -> None:
        if isinstance(event, ArgsDelta):
            self.deltas.append((next(ORDER), event.text))


TAPS: dict[str, UpstreamRecorder] = {}


@pytest.fixture(scope="module")
def own_relay(demo_server):
    app = create_relay_app(
        token="own-token",
        demo_base_url=demo_server.url,
        idle_timeout=0.5,
        upstream_tap=lambda run_id: TAPS.setdefault(run_id, UpstreamRecorder()),
    )
    with LoopbackServer(app) as srv:
        yield srv


async def run_relay(url: str, token: str, body: dict, **kw) -> list[Any]:
    async with open_relay(url, token, body, **kw) as records:
        return [r async for r in records]


def rebuild(records: list[Any]) -> Any:
    assembler = RecordAssembler()
    for r in records:
        assembler.apply(r)
    return assembler.value


def log_entry(server, seed: int) -> dict:
    """The demo provider's log entry of the upstream request made with `seed`."""
    matches = [e for e in server.requests() if e.get("knobs", {}).get("seed") == seed]
    assert len(matches) == 1, matches
    return matches[0]


# --- every scenario x every upstream wire ---------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_every_scenario_over_every_wire_rebuilds_the_output_exactly(demo_server, name, provider):
    # hybrid mode also with the byte stream cut into 13-byte writes (characters and events split
    # anywhere); the 20 KB catalog has no prose and would spend its time in the demo's slicing
    passes = [("settled", "event")] + ([("hybrid", "13")] if name != "catalog" else [])
    for mode, slicing in passes:
        body = {"scenario": name, "provider": provider, "mode": mode, "demo": {"slice": slicing}}
        records = await run_relay(demo_server.url, demo_server.relay_token, body)
        assert isinstance(records[0], StartRecord) and records[0].provider == provider
        assert records[0].schema_name == SCENARIOS[name].schema_name
        assert [r.seq for r in records] == list(range(len(records)))
        assert isinstance(records[-1], CompleteRecord)
        assert records[-1].fields == sum(isinstance(r, (FieldRecord, ItemRecord)) for r in records)
        assert rebuild(records) == SCENARIOS[name].output
        if mode == "settled":
            assert not any(isinstance(r, DeltaRecord) for r in records)


async def test_schema_and_document_body_finds_the_scenario_by_its_document(demo_server):
    sc = SCENARIOS["ticket"]
    body = {"schema": "ticket", "document": sc.document, "provider": "openai-chat"}
    records = await run_relay(demo_server.url, demo_server.relay_token, body)
    assert rebuild(records) == sc.output


async def test_hybrid_sends_prose_deltas_before_the_settled_field(demo_server):
    body = {"scenario": "invoice", "provider": "anthropic", "mode": "hybrid", "demo": {"slice": "3"}}
    records = await run_relay(demo_server.url, demo_server.relay_token, body)
    deltas = [r for r in records if isinstance(r, DeltaRecord)]
    assert deltas and {d.pointer for d in deltas} == {"/notes"}
    notes = next(r for r in records if isinstance(r, FieldRecord) and r.pointer == "/notes")
    assert notes.value.startswith("".join(d.text for d in deltas)) and deltas[-1].seq < notes.seq


# --- a record never leaves before its settling byte ---------------------------------------------------


@pytest.mark.slow
async def test_no_record_leaves_before_the_upstream_delta_that_settles_it(own_relay):
    """Slow demo speed; the client's receipt of each record against the relay's upstream deltas,
    in one order shared by both threads."""
    sc = SCENARIOS["invoice"]
    text = sc.output_text
    spans = value_spans(text)
    received: list[tuple[int, Any]] = []
    body = {"scenario": "invoice", "provider": "openai-chat", "demo": {"speed": 80, "seed": next(_seeds)}}
    async with open_relay(own_relay.url, "own-token", body) as records:
        async for record in records:
            received.append((next(ORDER), record))
    assert isinstance(received[-1][1], CompleteRecord)
    tap = TAPS[received[0][1].run]
    assert "".join(t for _, t in tap.deltas) == text
    ends = list(itertools.accumulate(len(t) for _, t in tap.deltas))
    settled = 0
    for at, record in received:
        if not isinstance(record, (FieldRecord, ItemRecord)):
            continue
        pointer = f"{record.pointer}/{record.index}" if isinstance(record, ItemRecord) else record.pointer
        start, end = spans[pointer]
        settle = end if text[start] in "-0123456789" else end - 1
        k = next(i for i, e in enumerate(ends) if e > settle)  # the delta holding the settling char
        assert at > tap.deltas[k][0], (pointer, "received before the upstream delta that settles it")
        settled += 1
    assert settled == 11


# --- faults -----------------------------------------------------------------------------------------


FAULTS = {
    # fault: (exception, code, pointer)
    "max_tokens": (Truncated, "truncated", None),
    "error": (UpstreamError, "upstream_error", None),
    "disconnect": (RunFailure, None, None),
    "invalid_value": (ValidationFailed, "validation_failed", "/amount"),
    "malformed": (RunFailure, "protocol_error", None),
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_each_fault_gives_its_terminal_error_and_no_complete(demo_server, fault, provider):
    exc, code, pointer = FAULTS[fault]
    seen: list[Any] = []
    body = {"scenario": "invoice", "provider": provider, "demo": {"fault": fault}}
    with pytest.raises(exc) as info:
        async with open_relay(demo_server.url, demo_server.relay_token, body) as records:
            async for record in records:
                seen.append(record)
    failure = info.value
    assert isinstance(failure, RunFailure) and failure.record.type == "error"
    if code is not None:
        assert failure.code == code
    else:  # a connection cut mid-body: the transport's own code (ConnectionLost), never complete
        assert failure.code in ("protocol_error", "truncated")
    assert failure.pointer == pointer
    assert not any(isinstance(r, CompleteRecord) for r in seen)
    if fault == "invalid_value":  # the bad value itself never left the relay
        assert all(r.pointer != "/amount" for r in seen if isinstance(r, FieldRecord))
    assert failure.record.seq == len(seen)


@pytest.mark.parametrize("fault", ["stall", "stall_silent"])
async def test_a_stalled_upstream_ends_with_timeout(own_relay, fault):
    body = {"scenario": "weather", "provider": "anthropic", "demo": {"fault": f"{fault}@0.5"}}
    with pytest.raises(StreamTimeout) as info:
        await run_relay(own_relay.url, "own-token", body)
    assert info.value.code == "timeout"


@pytest.mark.parametrize(("fault", "said"), [("stall", "only keep-alives for 0.4 s"), ("stall_silent", "nothing arrived for 0.4 s")])
async def test_a_client_with_a_shorter_idle_limit_hears_which_silence_it_was(demo_server, fault, said, timing):
    # The relay watched its upstream for its own 20 s: a client giving up at 3 s heard only
    # "relay: nothing arrived for 3.45 s", whichever silence it was.
    body = {"scenario": "weather", "provider": "anthropic", "demo": {"fault": f"{fault}@0.5"}, "idle_timeout": 0.4}
    started = time.monotonic()
    with pytest.raises(StreamTimeout) as info:
        await run_relay(demo_server.url, demo_server.relay_token, body, idle_timeout=5)
    # "... for 0.4 s": the relay's limit fired, not its own 20 s nor the client's 5 s
    assert said in str(info.value) and info.value.code == "timeout", str(info.value)
    timing.record(f"a relay client told of a {fault} (relay limit 0.4 s)", time.monotonic() - started, budget=4.0)


async def test_blank_line_from_ollama_is_a_protocol_error(demo_server):
    body = {"scenario": "weather", "provider": "ollama", "demo": {"fault": "blank_line"}}
    with pytest.raises(RunFailure) as info:
        await run_relay(demo_server.url, demo_server.relay_token, body)
    assert info.value.code == "protocol_error"


async def test_a_failing_value_cancels_upstream(demo_server):
    seed = next(_seeds)
    body = {"scenario": "catalog", "provider": "anthropic", "demo": {"fault": "invalid_value", "speed": 400, "seed": seed}}
    with pytest.raises(ValidationFailed) as info:
        await run_relay(demo_server.url, demo_server.relay_token, body)
    assert info.value.pointer == "/items/3/price"
    entry = await _wait_for(lambda: log_entry(demo_server, seed), lambda e: e["disconnected"])
    assert entry["disconnected"] and not entry["finished"]
    assert entry["tokens_sent"] < entry["tokens_total"]


async def test_live_upstream_without_a_key_is_an_upstream_error_record(demo_server):
    app = create_relay_app(token="t", env={})
    with LoopbackServer(app) as srv:
        with pytest.raises(UpstreamError) as info:
            await run_relay(srv.url, "t", {"scenario": "weather", "provider": "openai-chat", "upstream": "live"})
    assert "OPENAI_API_KEY" in str(info.value) and info.value.record.code == "upstream_error"


async def test_a_standalone_relay_without_a_demo_url_says_so(demo_server):
    with LoopbackServer(create_relay_app(token="t")) as srv:
        with pytest.raises(UpstreamError) as info:
            await run_relay(srv.url, "t", {"scenario": "weather"})
    assert "LIVEFILL_RELAY_DEMO_URL" in str(info.value)


async def test_live_upstream_uses_the_configured_base_url_and_key(demo_server):
    # The "live" path with the demo provider standing in for the real API: same code, real HTTP.
    env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": demo_server.url}
    with LoopbackServer(create_relay_app(token="t", env=env)) as srv:
        records = await run_relay(srv.url, "t", {"scenario": "weather", "provider": "anthropic", "upstream": "live"})
    assert rebuild(records) == SCENARIOS["weather"].output


# --- cancel --------------------------------------------------------------------------------------------


async def _wait_for(get, ok, limit: float = 20.0):
    """`get()` once `ok` holds for it (returned as is after `limit` s, for the caller to judge)."""
    deadline = time.monotonic() + limit
    while True:
        value = get()
        if ok(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.005)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_closing_the_relay_client_disconnects_upstream_at_once(demo_server, provider):
    """Real sockets end to end: client -> relay -> demo provider, the upstream silent after half
    the output. Nothing is ever written again on either leg, so a relay or an upstream that saw
    the close only at its next write would never see it: the close itself must travel (well
    within the relay's own 20 s idle limit)."""
    seed = next(_seeds)
    body = {"scenario": "invoice", "provider": provider, "demo": {"seed": seed, "fault": "stall_silent@0.5"}}
    async with open_relay(demo_server.url, demo_server.relay_token, body) as records:
        async for record in records:
            if isinstance(record, FieldRecord):
                break
        stalled = await _wait_for(lambda: log_entry(demo_server, seed), lambda e: e["tokens_sent"] == e["fault_at"])
        closed_at = time.time()
    entry = await _wait_for(lambda: log_entry(demo_server, seed), lambda e: e["disconnected"], limit=10.0)
    assert entry["disconnected"] and not entry["finished"], entry
    assert entry["tokens_sent"] == stalled["fault_at"]  # generation was parked at the stall
    latency = entry["disconnected_at"] - closed_at
    print(f"{provider}: upstream disconnect seen {latency * 1000:.1f} ms after the client closed")


async def test_relay_that_finished_normally_does_not_count_as_disconnected(demo_server):
    seed = next(_seeds)
    body = {"scenario": "weather", "provider": "anthropic", "demo": {"seed": seed}}
    await run_relay(demo_server.url, demo_server.relay_token, body)
    entry = await _wait_for(lambda: log_entry(demo_server, seed), lambda e: e["finished"])
    assert entry["finished"] and not entry["disconnected"]


# --- HTTP surface ----------------------------------------------------------------------------------------


async def test_headers_and_one_record_per_line(demo_server):
    async with httpx.AsyncClient() as client:
        async with client.stream(
            "POST",
            demo_server.url + "/relay/v1/extract",
            json={"scenario": "weather", "provider": "ollama"},
            headers={"authorization": f"Bearer {demo_server.relay_token}"},
        ) as response:
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers.get("transfer-encoding") == "chunked"
    lines = raw.split(b"\n")
    assert lines[-1] == b"" and all(lines[:-1])
    assert lines[0].startswith(b'{"seq":0,"type":"start","v":1,')
    assert lines[1] == b'{"seq":1,"type":"field","pointer":"/city","value":"Lisbon"}' or b'"/city"' in lines[1]
    assert lines[-2].startswith(b'{"seq":2,"type":"complete"')


@pytest.mark.parametrize("auth", [None, "Bearer wrong", "Basic abc", "bearer"])
async def test_401_without_the_token(demo_server, auth):
    headers = {"authorization": auth} if auth else {}
    async with httpx.AsyncClient() as client:
        response = await client.post(demo_server.url + "/relay/v1/extract", json={"scenario": "weather"}, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "unauthorized"
    assert demo_server.relay_token not in response.text


@pytest.mark.parametrize(
    ("payload", "word"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "object"),
        (b'{"scenario": "nope"}', "unknown scenario"),
        (b'{"schema": "nope", "document": "x"}', "unknown schema"),
        (b'{"scenario": "weather", "provider": "gemini"}', "provider"),
        (b'{"scenario": "weather", "mode": "partial"}', "mode"),
        (b'{"scenario": "weather", "upstream": "cloud"}', "upstream"),
        (b'{"scenario": "weather", "schema": "weather", "document": "x"}', "either"),
        (b'{"schema": "weather"}', "either"),
        (b'{}', "either"),
        (b'{"scenario": "weather", "colour": "red"}', "colour"),
        (b'{"scenario": "weather", "demo": {"fault": "gremlins"}}', "fault"),
        (b'{"scenario": "weather", "demo": {"slice": "sideways"}}', "slice"),
        (b'{"scenario": "weather", "demo": {"speed": -1}}', "speed"),
        (b'{"scenario": "weather", "upstream": "live", "demo": {"speed": 1}}', "demo"),
        (b'{"scenario": "weather", "provider": "anthropic", "demo": {"fault": "blank_line"}}', "only to the Ollama wire"),
        (b'{"scenario": "weather", "provider": "openai-compatible", "demo": {"fault": "blank_line@0.2"}}', "demo.fault"),
        (b'{"scenario": "weather", "idle_timeout": 0}', "idle_timeout"),
        (b'{"scenario": "weather", "idle_timeout": 3601}', "idle_timeout"),
        (b'{"scenario": "weather", "idle_timeout": "soon"}', "idle_timeout"),
    ],
)
async def test_400_with_a_clear_json_error_for_a_bad_body(demo_server, payload, word):
    async with httpx.AsyncClient() as client:
        response = await client.post(
            demo_server.url + "/relay/v1/extract",
            content=payload,
            headers={"authorization": f"Bearer {demo_server.relay_token}", "content-type": "application/json"},
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request" and word.lower() in error["message"].lower(), error


async def test_open_relay_reports_a_400_as_upstream_error_with_the_message(demo_server):
    with pytest.raises(UpstreamError) as info:
        await run_relay(demo_server.url, demo_server.relay_token, {"scenario": "nope"})
    assert info.value.status == 400 and "unknown scenario" in str(info.value)


def test_create_relay_app_reads_its_settings_from_the_environment(monkeypatch):
    from livefill.errors import UsageError
    from livefill.relay.settings import RelaySettings

    monkeypatch.delenv("LIVEFILL_RELAY_TOKEN", raising=False)
    with pytest.raises(UsageError, match="LIVEFILL_RELAY_TOKEN"):
        create_relay_app()
    settings = RelaySettings.from_env({"LIVEFILL_RELAY_TOKEN": "x", "LIVEFILL_RELAY_DEMO_URL": "http://127.0.0.1:1", "LIVEFILL_RELAY_IDLE_TIMEOUT": "3"})
    assert (settings.token, settings.demo_base_url, settings.idle_timeout) == ("x", "http://127.0.0.1:1", 3.0)


def test_protocol_error_is_importable_for_callers():
    assert issubclass(ProtocolError, ValueError)
