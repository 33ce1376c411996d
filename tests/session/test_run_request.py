"""livefill/session/run_request.py and run_config.py: what a run sends, built from its config alone."""

from __future__ import annotations

import json

import pytest

from livefill.defaults import IDLE_TIMEOUT
from livefill.demo.protocol import DemoKnobs
from livefill.errors import InputError, UsageError
from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.extraction.readers import ReaderOptions
from livefill.extraction.schemas import resolve_schema, schema_model
from livefill.relay.request import ExtractRequest, parse_request
from livefill.session.failure_reasons import describe_failure
from livefill.session.run import Run
from livefill.session.run_config import RunConfig, relay_can_record, run_secrets
from livefill.relay.records import relay_backstop
from livefill.session.run_request import demo_scenario, provider_request, relay_request, run_schema
from livefill.session.run_status import Phase

PERSONS_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_a_config_gives_its_reader_options_and_its_idle_limit():
    cfg = RunConfig(mode=Mode.PARTIAL, show_provisional_strings=False, show_provisional_numbers=True)
    assert cfg.reader_options == ReaderOptions(show_provisional_strings=False, show_provisional_numbers=True)
    assert RunConfig(mode=Mode.PARTIAL).idle_timeout == IDLE_TIMEOUT
    assert RunConfig(mode=Mode.PARTIAL, idle_timeout=0).idle_limit is None
    assert RunConfig(mode=Mode.PARTIAL, idle_timeout=-1).idle_limit is None
    assert RunConfig(mode=Mode.PARTIAL, idle_timeout=2.5).idle_limit == 2.5


def test_a_demo_relay_request_names_the_scenario_and_tags_the_run():
    cfg = RunConfig(mode=Mode.SETTLED, demo=DemoKnobs(scenario="invoice", speed=0), base_url="http://127.0.0.1:1")
    schema = run_schema(cfg)
    request = relay_request(cfg, schema, demo_scenario(cfg, schema), "run_1")
    assert isinstance(request, ExtractRequest)
    body = request.to_json()
    assert body["provider"] == "anthropic" and body["upstream"] == "demo" and body["mode"] == "settled"
    assert body["scenario"] == "invoice" and "schema" not in body and "document" not in body
    assert body["demo"]["tag"] == "run_1"
    assert "idle_timeout" not in body and "structured" not in body and "fine_grained" not in body
    assert parse_request(json.dumps(body).encode()) == request  # the relay reads what was sent


def test_a_persons_schema_and_document_travel_inline():
    cfg = RunConfig(mode=Mode.HYBRID, demo=DemoKnobs(scenario="invoice"), schema_json=PERSONS_SCHEMA, document="Ann")
    schema = run_schema(cfg)
    assert demo_scenario(cfg, schema) is None  # the demo provider is sent what the run is about
    body = relay_request(cfg, schema, None, "run_2").to_json()
    assert body["schema"] == dict(schema.schema_json) and body["document"] == "Ann" and "scenario" not in body


def test_only_an_idle_limit_shorter_than_a_relays_own_is_sent():
    schema = resolve_schema("invoice")
    for idle, sent in ((IDLE_TIMEOUT / 4, IDLE_TIMEOUT / 4), (IDLE_TIMEOUT, None), (7200.0, None), (0, None)):
        cfg = RunConfig(mode=Mode.SETTLED, demo=DemoKnobs(), schema_name="invoice", idle_timeout=idle)
        assert relay_request(cfg, schema, None, "r").to_json().get("idle_timeout") == sent, idle


def test_a_live_relay_run_needs_the_relays_address_and_keeps_its_base_url():
    schema = resolve_schema("invoice")
    live = RunConfig(mode=Mode.SETTLED, provider="openai-chat", base_url="https://example.test/v1", api_key="sk-x")
    with pytest.raises(UsageError, match="relay's address"):
        relay_request(live, schema, None, "r")
    body = relay_request(RunConfig(**{**_fields(live), "relay_url": "http://127.0.0.1:9"}), schema, None, "r").to_json()
    assert body["upstream"] == "live" and body["base_url"] == "https://example.test/v1" and "demo" not in body


def test_a_request_no_relay_would_take_is_refused_before_it_is_sent_and_said_as_the_relay_would():
    cfg = RunConfig(mode=Mode.SETTLED, demo=DemoKnobs(), provider="anthropic", structured="json_schema")
    with pytest.raises(InputError, match="anthropic cannot force structure") as info:
        relay_request(cfg, resolve_schema("invoice"), None, "r")
    assert describe_failure(info.value) == (str(info.value), None)  # a sentence, not an internal error


async def test_a_run_the_relay_would_refuse_fails_with_the_reason_and_restores_the_form():
    form = FormModel(schema_model("invoice"))
    cfg = RunConfig(mode=Mode.SETTLED, demo=DemoKnobs(scenario="invoice"), provider="raw", base_url="http://127.0.0.1:9")
    status = await Run(form, cfg).run()
    assert status.phase is Phase.FAILED and "provider" in status.reason and "internal error" not in status.reason


def test_a_provider_request_carries_the_demo_knobs_and_the_tag():
    cfg = RunConfig(mode=Mode.PARTIAL, demo=DemoKnobs(scenario="invoice", seed=7), base_url="http://127.0.0.1:1")
    schema = run_schema(cfg)
    request = provider_request(cfg, schema, demo_scenario(cfg, schema), "run_3")
    assert request.demo_headers["x-demo-tag"] == "run_3" and request.demo_headers["x-demo-seed"] == "7"
    assert provider_request(RunConfig(mode=Mode.PARTIAL, schema_name="invoice"), schema, None, "r").demo_headers == {}


def test_the_relay_backstop_waits_past_the_relays_verdict():
    assert relay_backstop(20.0) == 20.0 + 3.0 + 5.0
    assert relay_backstop(2.0) == pytest.approx(2.0 + 0.3 + 0.5)


def test_only_the_embedded_relay_over_loopback_records_and_no_placeholder_is_a_secret():
    demo = RunConfig(mode=Mode.SETTLED, demo=DemoKnobs(), base_url="http://127.0.0.1:5")
    assert relay_can_record(demo)
    assert not relay_can_record(RunConfig(mode=Mode.SETTLED, demo=DemoKnobs(), base_url="https://relay.example"))
    assert not relay_can_record(RunConfig(mode=Mode.SETTLED, relay_url="http://127.0.0.1:5"))  # not the app's own
    assert run_secrets(demo) == []
    assert run_secrets(RunConfig(mode=Mode.PARTIAL, api_key="sk-1", relay_token="tok")) == ["sk-1", "tok"]


def _fields(cfg: RunConfig) -> dict:
    return {name: getattr(cfg, name) for name in RunConfig.__dataclass_fields__}
