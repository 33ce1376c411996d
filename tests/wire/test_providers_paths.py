"""Every live provider path, over real loopback sockets, against the demo provider addressed by
base URL with a fake key, exactly as a live provider would be (no demo knobs, no scenario name:
the demo provider recognises the document). Each structured-output choice; Ollama found through
OLLAMA_HOST; settled and hybrid runs through the embedded relay with the key handed over
loopback; the key arriving upstream (by its fingerprint in the demo request log) and never
echoed by the relay.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
from typing import Any

import httpx
import pytest

from livefill.errors import UpstreamError, UsageError
from livefill.wire.events import ArgsDelta
from livefill.extraction.form import FormModel
from livefill.wire.providers import open_stream
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.ollama import chat_body as ollama_body
from livefill.wire.providers.openai_chat import chat_body
from livefill.wire.providers.request import STRUCTURED_CHOICES
from livefill.wire.providers.strict_schema import strict_json_schema
from livefill.relay.client import open_relay
from livefill.extraction.modes import Mode
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import resolve_schema, schema_model
from livefill.relay.app import _is_loopback_peer, create_relay_app
from livefill.session.settings import RunSettings
from tests.relay.test_relay_support import LoopbackServer

LIVE = ["anthropic", "openai-chat", "openai-responses", "openai-compatible", "ollama"]
PATHS = [(p, s) for p in LIVE for s in STRUCTURED_CHOICES[p]]


def fake_key() -> str:
    return "sk-livefill-test-" + secrets.token_hex(12)


def fingerprint(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


class Tap:
    """Everything the run read, and its events."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.events: list[Any] = []

    def on_read(self, data: bytes) -> None:
        self.data += data

    def on_frame(self, frame: Any) -> None:
        pass

    def on_event(self, event: Any) -> None:
        self.events.append(event)


def live_config(url: str, provider: str, *, mode: str = "partial", scenario: str = "invoice", **kw: Any) -> RunConfig:
    sc = get_scenario(scenario)
    return RunConfig(
        mode=Mode(mode), provider=provider, base_url=url, schema_name=sc.schema_name, document=sc.document,
        demo=None, label=f"live {provider}", **kw,
    )


def entries_with(server: Any, key: str) -> list[dict[str, Any]]:
    return [e for e in server.requests() if e.get("auth_sha256") == fingerprint(key)]


# --- partial runs on every provider path --------------------------------------------------------------


@pytest.mark.parametrize(("provider", "structured"), PATHS, ids=[f"{p}-{s}" for p, s in PATHS])
async def test_a_partial_run_commits_through_every_live_path(demo_server, provider: str, structured: str) -> None:
    key = fake_key()
    form = FormModel(schema_model("invoice"))
    tap = Tap()
    run = Run(form, live_config(demo_server.url, provider, api_key=key, structured=structured), tap=tap)
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == get_scenario("invoice").output
    (entry,) = entries_with(demo_server, key)  # the fake key arrived, as the credential
    assert entry["finished"] and entry["scenario"] == "invoice"
    assert entry["auth"] in (("x-api-key", "bearer") if provider == "anthropic" else ("bearer",))
    deltas = [e for e in tap.events if isinstance(e, ArgsDelta)]
    assert len(deltas) > 3  # streamed in pieces, not in one go
    wire = tap.data.decode()
    if provider in ("openai-chat", "openai-compatible"):
        # json_schema / json_object stream the JSON as message content; tools as arguments
        assert ('"tool_calls"' in wire) is (structured == "tools")
    if provider == "openai-responses":
        assert ("response.function_call_arguments.delta" in wire) is (structured == "tools")


async def test_a_compatible_server_without_a_key_gets_no_authorization_header(demo_server) -> None:
    tag = secrets.token_hex(6)
    request = ExtractionRequest(
        provider="openai-compatible", base_url=demo_server.url + "/v1", schema=resolve_schema("weather"),
        document=get_scenario("weather").document, api_key="", structured="json_object",
        demo_headers={"x-demo-tag": tag},
    )
    async with open_stream(request) as events:
        text = "".join([e.text async for e in events if isinstance(e, ArgsDelta)])
    assert json.loads(text) == get_scenario("weather").output
    (entry,) = [e for e in demo_server.requests() if e.get("tag") == tag]
    assert entry["auth"] is None and entry["auth_sha256"] is None and entry["model"] == "default"


async def test_ollama_is_found_through_ollama_host(demo_server, monkeypatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", demo_server.url.removeprefix("http://"))
    form = FormModel(schema_model("ticket"))
    status = await Run(form, live_config("", "ollama", scenario="ticket", api_key="ollama")).run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == get_scenario("ticket").output


@pytest.fixture(scope="module")
def slow_server():
    """A demo provider whose default speed is slow enough to stop mid-stream (a live run sends no knobs)."""
    from livefill.demo.knobs import DemoDefaults
    from livefill.embedded.server import EmbeddedServer

    server = EmbeddedServer(defaults=DemoDefaults(speed=60.0, ttft_ms=0.0))
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("structured", ["tools", "json_object"])
async def test_stop_on_a_compatible_server_is_a_real_cancel(slow_server, structured: str) -> None:
    key = fake_key()
    form = FormModel(schema_model("invoice"))
    before = form.committed
    run = Run(form, live_config(slow_server.url, "openai-compatible", api_key=key, structured=structured))
    task = asyncio.ensure_future(run.run())
    deadline = asyncio.get_running_loop().time() + 10
    while run.status.tokens_received < 5 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert run.phase is Phase.STREAMING and run.stop()
    status = await task
    assert status.phase is Phase.STOPPED and form.committed == before
    for _ in range(500):
        (entry,) = entries_with(slow_server, key)
        if entry["disconnected"]:
            break
        await asyncio.sleep(0.01)
    assert entry["disconnected"] and not entry["finished"] and entry["tokens_sent"] < entry["tokens_total"]


async def test_a_compatible_path_without_a_base_url_fails_with_a_clear_reason() -> None:
    form = FormModel(schema_model("weather"))
    status = await Run(form, live_config("", "openai-compatible", scenario="weather")).run()
    assert status.phase is Phase.FAILED and "needs a base URL" in status.reason


# --- request shapes ---------------------------------------------------------------------------------------


def req(provider: str, structured: str = "tools", **kw: Any) -> ExtractionRequest:
    return ExtractionRequest(provider=provider, base_url="http://127.0.0.1:9", schema=resolve_schema("invoice"),
                             document="DOC", structured=structured, **kw)


def test_compatible_request_shapes_for_each_structured_choice() -> None:
    strict = strict_json_schema(schema_model("invoice").model_json_schema())
    tools = chat_body(req("openai-compatible"))
    assert tools["tools"][0]["function"]["strict"] is True and tools["tools"][0]["function"]["parameters"] == strict
    assert tools["tool_choice"] == {"type": "function", "function": {"name": "record_invoice"}}  # named, not "required"
    assert tools["max_tokens"] == 4096 and "response_format" not in tools
    js = chat_body(req("openai-compatible", "json_schema", max_tokens=300))
    assert js["response_format"] == {"type": "json_schema",
                                     "json_schema": {"name": "record_invoice", "schema": strict, "strict": True}}
    assert js["max_tokens"] == 300 and "tools" not in js and "tool_choice" not in js
    jo = chat_body(req("openai-compatible", "json_object"))
    assert jo["response_format"] == {"type": "json_object", "schema": schema_model("invoice").model_json_schema()}
    assert "tools" not in jo


def test_ollama_json_object_asks_for_json_with_the_schema_in_the_prompt() -> None:
    body = ollama_body(req("ollama", "json_object"))
    assert body["format"] == "json" and '"line_items"' in body["messages"][0]["content"]


@pytest.mark.parametrize(("provider", "structured"), [("anthropic", "json_schema"), ("openai-responses", "json_object")])
def test_a_structured_choice_a_provider_cannot_honour_is_refused(provider: str, structured: str) -> None:
    with pytest.raises(UsageError, match="cannot force structure"):
        req(provider, structured)
    with pytest.raises(ValueError):
        RunSettings(structured="xml")


def test_the_key_is_never_in_a_repr() -> None:
    key = fake_key()
    assert key not in repr(req("openai-compatible", api_key=key))


# --- settled and hybrid through the relay ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "structured", "mode"),
    [("openai-compatible", "tools", "settled"), ("openai-compatible", "json_object", "settled"),
     ("anthropic", "tools", "settled"), ("openai-chat", "json_schema", "settled"), ("openai-chat", "tools", "hybrid"),
     ("openai-responses", "json_schema", "hybrid"), ("openai-responses", "tools", "settled"), ("ollama", "tools", "hybrid")],
)
async def test_settled_and_hybrid_through_the_embedded_relay_hand_the_key_over_loopback(
    demo_server, caplog, provider: str, structured: str, mode: str
) -> None:
    caplog.set_level(logging.DEBUG)
    key = fake_key()
    form = FormModel(schema_model("invoice"))
    tap = Tap()
    config = live_config(
        demo_server.url, provider, mode=mode, api_key=key, structured=structured,
        relay_url=demo_server.url, relay_embedded=True, relay_token=demo_server.relay_token,
    )
    status = await Run(form, config, tap=tap).run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == get_scenario("invoice").output
    (entry,) = entries_with(demo_server, key)  # the relay sent the app's key upstream
    assert entry["finished"]
    assert key not in tap.data.decode()  # the relay never echoes it
    assert key not in caplog.text


async def test_a_relay_that_is_not_the_embedded_one_gets_no_key(demo_server) -> None:
    key = fake_key()
    form = FormModel(schema_model("weather"))
    config = live_config(
        demo_server.url, "openai-compatible", mode="settled", scenario="weather", api_key=key,
        relay_url=demo_server.url, relay_embedded=False, relay_token=demo_server.relay_token,
    )
    status = await Run(form, config).run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert entries_with(demo_server, key) == []  # a compatible server asked without the key


async def test_a_standalone_relay_refuses_a_handed_key(demo_server) -> None:
    body = {"schema": "weather", "document": get_scenario("weather").document, "provider": "openai-compatible",
            "upstream": "live", "base_url": demo_server.url}
    with LoopbackServer(create_relay_app(token="t", env={})) as srv:
        with pytest.raises(UpstreamError) as info:
            async with open_relay(srv.url, "t", body, upstream_key=fake_key()) as records:
                [r async for r in records]
    assert info.value.status == 403 and "embedded relay" in str(info.value)


async def test_a_key_is_never_handed_to_a_relay_off_this_machine() -> None:
    with pytest.raises(UsageError):
        async with open_relay("https://relay.example.com", "t", {"scenario": "weather"}, upstream_key="k"):
            pass


def test_only_a_loopback_peer_counts() -> None:
    assert _is_loopback_peer({"client": ("127.0.0.1", 5000)})
    assert _is_loopback_peer({"client": ("::1", 5000)})
    assert not _is_loopback_peer({"client": ("10.0.0.7", 5000)})
    assert not _is_loopback_peer({"client": ("127.example.com", 5000)})
    assert not _is_loopback_peer({})


async def test_a_relay_never_sends_its_own_key_to_an_address_the_client_names(demo_server) -> None:
    env = {"OPENAI_API_KEY": "sk-relay-own", "OPENAI_BASE_URL": "https://api.openai.com/v1"}
    body = {"scenario": "weather", "provider": "openai-chat", "upstream": "live", "base_url": demo_server.url}
    with LoopbackServer(create_relay_app(token="t", env=env)) as srv:
        async with httpx.AsyncClient() as client:
            answer = await client.post(srv.url + "/relay/v1/extract", json=body, headers={"authorization": "Bearer t"})
    assert answer.status_code == 400
    assert "OPENAI_API_KEY only to https://api.openai.com/v1" in answer.json()["error"]["message"]
    assert not [e for e in demo_server.requests() if e.get("auth_sha256") == fingerprint("sk-relay-own")]


async def test_the_relay_checks_the_live_fields(demo_server) -> None:
    cases = [
        ({"scenario": "weather", "provider": "openai-compatible", "upstream": "live"}, "base_url"),
        ({"scenario": "weather", "provider": "anthropic", "structured": "json_object"}, "cannot force structure"),
        ({"scenario": "weather", "base_url": "http://x"}, "base_url"),
    ]
    async with httpx.AsyncClient() as client:
        for body, words in cases:
            answer = await client.post(demo_server.url + "/relay/v1/extract", json=body,
                                       headers={"authorization": f"Bearer {demo_server.relay_token}"})
            assert answer.status_code == 400 and words in answer.json()["error"]["message"], answer.text


async def test_a_live_settled_run_without_a_relay_address_never_posts_to_the_provider(demo_server) -> None:
    key = fake_key()
    form = FormModel(schema_model("weather"))
    config = live_config(demo_server.url, "openai-chat", mode="settled", scenario="weather", api_key=key,
                         relay_token=demo_server.relay_token)
    status = await Run(form, config).run()
    assert status.phase is Phase.FAILED and "relay_url" in status.reason
    assert entries_with(demo_server, key) == []


@pytest.mark.parametrize(
    ("url", "local"),
    [("http://127.0.0.1:5", True), ("http://127.3.4.5", True), ("http://[::1]:3", True), ("http://localhost:9", True),
     ("http://LOCALHOST", True), ("http://127.example.com", False), ("https://api.openai.com", False),
     ("http://10.0.0.1", False), ("not a url", False), ("http://[::1", False)],
)
def test_loopback_urls(url: str, local: bool) -> None:
    from livefill.loopback import is_loopback_url

    assert is_loopback_url(url) is local


def test_the_settings_reach_the_run_config() -> None:
    from livefill.session.session import Session

    settings = RunSettings(provider="openai-compatible", base_url="http://127.0.0.1:8080/v1", structured="json_object",
                           relay_url="http://127.0.0.1:5", relay_embedded=True, fine_grained=True)
    config = Session(settings).run_config()
    assert (config.provider, config.base_url, config.structured) == ("openai-compatible", "http://127.0.0.1:8080/v1", "json_object")
    assert (config.relay_url, config.relay_embedded, config.fine_grained) == ("http://127.0.0.1:5", True, True)
