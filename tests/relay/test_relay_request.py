"""The relay request body (livefill.relay.request): one model the client sends and the relay reads."""

from __future__ import annotations

import inspect
import json

import pytest

from livefill.defaults import IDLE_TIMEOUT
from livefill.errors import ProtocolError, UsageError
from livefill.relay.client import open_relay
from livefill.relay.records import relay_backstop
from livefill.relay.request import RELAY_MODES, RELAY_PROVIDERS, BadRequest, ExtractRequest, parse_request
from livefill.wire.providers.spec import PROVIDER_SPECS


def test_the_providers_and_modes_are_the_tables():
    assert RELAY_PROVIDERS == ("anthropic", "openai-chat", "openai-responses", "openai-compatible", "ollama")
    assert set(RELAY_PROVIDERS) <= set(PROVIDER_SPECS)
    assert RELAY_MODES == ("settled", "hybrid")


@pytest.mark.parametrize(
    "fields",
    [
        {"scenario": "invoice"},
        {"scenario": "weather", "provider": "openai-chat", "demo": {"speed": 0, "seed": 3, "tag": "t"}},
        {"schema": "invoice", "document": "d", "upstream": "live", "model": "m", "structured": "tools"},
        {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}, "document": "d", "mode": "hybrid"},
        {"scenario": "ticket", "provider": "anthropic", "fine_grained": True, "idle_timeout": 2.5},
        {"scenario": "invoice", "provider": "openai-compatible", "upstream": "live", "base_url": "http://127.0.0.1:1"},
    ],
)
def test_what_a_client_sends_the_relay_reads_back_the_same(fields):
    request = ExtractRequest.build(**fields)
    body = request.to_json()
    assert parse_request(json.dumps(body).encode()) == request


def test_the_body_says_provider_upstream_and_mode_and_nothing_left_at_its_default():
    body = ExtractRequest.build(scenario="invoice").to_json()
    assert body == {"provider": "anthropic", "upstream": "demo", "mode": "settled", "scenario": "invoice"}
    body = ExtractRequest.build(scenario="invoice", demo={"speed": 0}).to_json()
    assert body["demo"] == {"speed": 0}


def test_a_client_that_builds_a_bad_request_hears_what_the_relay_would_say():
    with pytest.raises(UsageError, match="anthropic cannot force structure with 'json_schema'; choose tools"):
        ExtractRequest.build(scenario="invoice", structured="json_schema")
    with pytest.raises(BadRequest, match="anthropic cannot force structure with 'json_schema'; choose tools"):
        parse_request(b'{"scenario": "invoice", "structured": "json_schema"}')


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"[1]", "must be a JSON object"),
        (b"{", "not JSON"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"scenario": "a", "schema_name": "invoice"}', "schema_name: Extra inputs"),
        (b'{"scenario": "a", "provider": "raw"}', "provider: Input should be"),
        (b'{"scenario": "a", "document": "d"}', "not both"),
        (b'{"schema": "invoice"}', 'both "schema" and "document"'),
        (b'{"scenario": "a", "upstream": "live", "demo": {}}', '"demo" knobs apply only'),
        (b'{"scenario": "a", "base_url": "http://x"}', '"base_url" applies only'),
        (b'{"scenario": "a", "upstream": "live", "provider": "openai-compatible"}', "needs its"),
        (b'{"scenario": "a", "demo": {"colour": "red"}}', "demo.colour"),
    ],
)
def test_a_bad_body_is_refused_with_its_reason(raw, says):
    with pytest.raises(BadRequest, match=says) as caught:
        parse_request(raw)
    assert isinstance(caught.value, ProtocolError)


def test_the_relay_backstop_waits_past_the_relays_verdict_and_is_the_clients_default():
    assert relay_backstop(20.0) == 20.0 + 3.0 + 5.0
    assert relay_backstop(2.0) == pytest.approx(2.0 + 0.3 + 0.5)
    default = inspect.signature(open_relay).parameters["idle_timeout"].default
    assert default == relay_backstop(IDLE_TIMEOUT) > IDLE_TIMEOUT
