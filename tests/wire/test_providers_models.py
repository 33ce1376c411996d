"""livefill.wire.providers.models.list_models against the demo provider over loopback, whose model lists
the official clients (anthropic, openai, ollama) parse as their own; errors arrive typed."""

from __future__ import annotations

import socket

import anthropic
import ollama
import openai
import pytest

from livefill.errors import ConnectionLost, UpstreamError, UsageError
from livefill.wire.providers import models as models_module
from livefill.wire.providers.models import list_models
from livefill.demo.wires.models import ANTHROPIC_MODELS, OLLAMA_MODELS, OPENAI_MODELS


async def test_anthropic_model_list_in_its_own_shape(demo_server) -> None:
    names = await list_models("anthropic", demo_server.url, "sk-ant-fake")
    assert names == [m for m, _ in ANTHROPIC_MODELS]


async def test_anthropic_model_list_follows_pages(demo_server, monkeypatch) -> None:
    monkeypatch.setattr(models_module, "_PAGE_LIMIT", 2)
    assert await list_models("anthropic", demo_server.url, "sk-ant-fake") == [m for m, _ in ANTHROPIC_MODELS]


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "openai-compatible"])
async def test_openai_model_lists(demo_server, provider: str) -> None:
    assert await list_models(provider, demo_server.url, "sk-fake") == list(OPENAI_MODELS)
    assert await list_models(provider, demo_server.url + "/v1/", "") == list(OPENAI_MODELS)  # no key, base with /v1


async def test_ollama_tags_with_ollama_host_from_the_environment(demo_server, monkeypatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", demo_server.url.removeprefix("http://"))  # host:port, no scheme
    assert await list_models("ollama", "", "") == list(OLLAMA_MODELS)


async def test_the_official_clients_parse_the_demo_lists(demo_server) -> None:
    async with anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0) as client:
        page = await client.models.list(limit=2)
        ids = [m.id async for m in page]  # the SDK follows has_more / last_id itself
    assert ids == [m for m, _ in ANTHROPIC_MODELS]
    async with openai.AsyncOpenAI(base_url=demo_server.url + "/v1", api_key="k", max_retries=0) as client:
        assert [m.id async for m in client.models.list()] == list(OPENAI_MODELS)
    listed = await ollama.AsyncClient(host=demo_server.url).list()
    assert [m.model for m in listed.models] == list(OLLAMA_MODELS)


async def test_an_error_status_is_a_typed_upstream_error(demo_server) -> None:
    with pytest.raises(UpstreamError) as info:
        await list_models("openai-compatible", demo_server.url + "/nowhere", "sk-unique-Q7vX2")
    assert info.value.status == 404
    assert "sk-unique-Q7vX2" not in str(info.value)


async def test_a_refused_key_names_the_host_masks_the_key_and_reads_retry_after() -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from livefill.errors import KeyRefused, RateLimited
    from tests.relay.test_relay_support import LoopbackServer

    key = "sk-unique-echoed-Zq81"

    async def models(request):  # a provider that echoes the key it refuses, then rate-limits
        if request.headers.get("x-api-key") == key:
            body = {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {key}"}}
            return JSONResponse(body, status_code=401)
        return JSONResponse({"error": {"message": "slow down", "type": "rate_limit"}}, status_code=429,
                            headers={"retry-after": "7"})

    server = LoopbackServer(Starlette(routes=[Route("/v1/models", models)]))
    server.start()
    try:
        with pytest.raises(KeyRefused) as refused:
            await list_models("anthropic", server.url, key)
        with pytest.raises(RateLimited) as limited:
            await list_models("openai-compatible", server.url, "")
    finally:
        server.stop()
    assert str(refused.value).startswith("check the API key: 127.0.0.1")  # (a server of its own: named)
    assert key not in str(refused.value) and "***" in str(refused.value)
    assert limited.value.retry_after == 7


async def test_nothing_listening_is_connection_lost() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectionLost):
        await list_models("ollama", f"http://127.0.0.1:{port}", "")


async def test_the_raw_wire_and_unknown_providers_have_no_list() -> None:
    with pytest.raises(UsageError):
        await list_models("raw", "http://127.0.0.1:9", "")
    with pytest.raises(UsageError):
        await list_models("gemini", "http://127.0.0.1:9", "")
    with pytest.raises(UsageError):
        await list_models("openai-compatible", "", "")  # a compatible server has no default address


@pytest.mark.parametrize(
    "value",
    ["", "example.com", "example.com:1234", ":8080", "https://ex.com", "http://ex.com/path/", "[::1]:9",
     "HTTP://h", "https://ex.com:1/a/b/", "[fe80::1]", "localhost:11500"],
)
def test_ollama_host_is_read_as_the_ollama_client_reads_it(value: str) -> None:
    from ollama._client import _parse_host

    from livefill.wire.providers.base_urls import ollama_base_url

    assert ollama_base_url({"OLLAMA_HOST": value}) == _parse_host(value)


def test_ollama_host_listen_addresses_are_reached_on_loopback() -> None:
    from livefill.wire.providers.base_urls import ollama_base_url

    assert ollama_base_url({"OLLAMA_HOST": "0.0.0.0"}) == "http://127.0.0.1:11434"
    assert ollama_base_url({}) == "http://127.0.0.1:11434"


def test_live_base_urls_follow_the_vendors_variables() -> None:
    from livefill.wire.providers.base_urls import live_base_url

    assert live_base_url("anthropic", {}) == "https://api.anthropic.com"
    assert live_base_url("anthropic", {"ANTHROPIC_BASE_URL": "http://gw:1"}) == "http://gw:1"
    assert live_base_url("openai-responses", {"OPENAI_BASE_URL": "http://gw:2/v1"}) == "http://gw:2/v1"
    assert live_base_url("ollama", {"OLLAMA_HOST": "box:7"}) == "http://box:7"
    with pytest.raises(UsageError):
        live_base_url("openai-compatible", {})
