"""The demo provider refuses a chat request with no user message in each wire's own error shape."""

from __future__ import annotations

import httpx
import pytest

from livefill.demo.wires.models import ANTHROPIC_MODELS, OLLAMA_MODELS, OPENAI_MODELS
from livefill.wire.providers.spec import PROVIDER_SPECS


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/v1/messages", {"model": "m", "max_tokens": 10}, "messages: field required"),
        ("/v1/messages", {"model": "m", "max_tokens": 10, "messages": [{"role": "assistant", "content": "x"}]},
         "messages: at least one user message is required"),
        ("/v1/chat/completions", {"model": "m", "messages": []}, "Missing required parameter: 'messages'."),
        ("/v1/chat/completions", {"model": "m", "messages": [{"role": "system", "content": "x"}]},
         "messages: at least one user message is required"),
    ],
)
async def test_a_request_without_a_user_message_is_refused(demo_server, path, body, message) -> None:
    async with httpx.AsyncClient() as client:
        r = await client.post(demo_server.url + path, json=body, headers={"authorization": "Bearer k"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["message"] == message
    assert error["type"] == "invalid_request_error"


def test_a_log_entry_as_a_dict_is_every_field_copied():
    from dataclasses import asdict

    from livefill.demo.request_log import LogEntry

    entry = LogEntry(id="req_1", path="/v1/messages", wire="anthropic", started_at=1.0, knobs={"speed": 5.0}, sent_ms=[1.5])
    out = entry.as_dict()
    assert out == asdict(entry)
    out["knobs"]["speed"] = 0
    out["sent_ms"].append(2.0)
    assert entry.knobs == {"speed": 5.0} and entry.sent_ms == [1.5]  # a copy: the log is not changed through it


def test_each_model_list_begins_with_the_providers_default_model():
    assert ANTHROPIC_MODELS[0][0] == PROVIDER_SPECS["anthropic"].default_model
    assert OPENAI_MODELS[0] == PROVIDER_SPECS["openai-chat"].default_model == PROVIDER_SPECS["openai-responses"].default_model
    assert OLLAMA_MODELS[0] == f"{PROVIDER_SPECS['ollama'].default_model}:latest"
