"""The official SDKs, pointed at the demo provider over a real loopback socket, read every wire.

anthropic (`messages.stream` -> `get_final_message()`), openai (chat `get_final_completion()`,
responses `get_final_response()`) and ollama (`chat(..., stream=True)`) must assemble every
scenario's output exactly, and the faults must surface as each SDK's own behaviour.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic
import httpx
import httpx2
import ollama
import openai
import pytest

from livefill.extraction.scenarios import SCENARIO_NAMES, Scenario, get_scenario

FINE_GRAINED = {"anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}


def _entry(server: Any, request_id: str) -> dict[str, Any]:
    found = [e for e in server.requests() if e["id"] == request_id]
    assert len(found) == 1, request_id
    return found[0]


def _anthropic_tool(s: Scenario, **extra: Any) -> dict[str, Any]:
    return {"name": s.tool_name, "description": f"Record the {s.schema_name}", "input_schema": s.json_schema(), **extra}


@pytest.fixture(autouse=True)
def _no_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)


# --- anthropic -----------------------------------------------------------------------------------


async def _anthropic_stream(
    client: anthropic.AsyncAnthropic, s: Scenario, *, headers: dict[str, str] | None = None, **tool_extra: Any
) -> tuple[Any, int, str]:
    async with client.messages.stream(
        model="claude-demo",
        max_tokens=16000,
        messages=[{"role": "user", "content": s.document}],
        tools=[_anthropic_tool(s, **tool_extra)],
        tool_choice={"type": "tool", "name": s.tool_name},
        extra_headers=headers or {},
    ) as stream:
        deltas = 0
        async for event in stream:
            if event.type == "content_block_delta":
                deltas += 1
        message = await stream.get_final_message()
        request_id = stream.response.headers["request-id"]
    return message, deltas, request_id


@pytest.mark.parametrize("name", SCENARIO_NAMES)
async def test_anthropic_sdk_assembles_every_scenario(demo_server: Any, name: str) -> None:
    s = get_scenario(name)
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="sk-demo-bearer", max_retries=0)
    default, default_deltas, default_id = await _anthropic_stream(client, s)
    fine, fine_deltas, fine_id = await _anthropic_stream(client, s, headers=FINE_GRAINED)
    for message in (default, fine):
        assert message.stop_reason == "tool_use"
        assert len(message.content) == 1
        block = message.content[0]
        assert block.type == "tool_use" and block.name == s.tool_name
        assert block.input == s.output
    # Fine-grained sends raw pieces, default mode buffers them into fewer, longer chunks.
    if name != "weather":
        assert fine_deltas > default_deltas
    entries = _entry(demo_server, default_id), _entry(demo_server, fine_id)
    assert [e["fine_grained"] for e in entries] == [False, True]
    assert all(e["auth"] == "bearer" and e["scenario"] == name and e["finished"] for e in entries)
    assert all(e["tokens_sent"] == e["tokens_total"] > 0 for e in entries)


async def test_anthropic_eager_input_streaming_tool_is_fine_grained(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    message, deltas, request_id = await _anthropic_stream(client, s, eager_input_streaming=True)
    assert message.content[0].input == s.output
    assert _entry(demo_server, request_id)["fine_grained"] is True
    assert deltas == _entry(demo_server, request_id)["tokens_total"] + 1  # + the leading empty delta


async def test_anthropic_sdk_with_x_api_key(demo_server: Any) -> None:
    s = get_scenario("multilingual")
    client = anthropic.AsyncAnthropic(
        base_url=demo_server.url, api_key=None, default_headers={"x-api-key": "sk-demo-x-api-key"}, max_retries=0
    )
    message, _, request_id = await _anthropic_stream(client, s)
    assert message.content[0].input == s.output
    assert _entry(demo_server, request_id)["auth"] == "x-api-key"
    # No credential ever reaches the log.
    assert "sk-demo" not in json.dumps(demo_server.requests())


async def test_raw_request_with_x_api_key(demo_server: Any) -> None:
    s = get_scenario("weather")
    body = {
        "model": "claude-demo",
        "max_tokens": 100,
        "stream": True,
        "messages": [{"role": "user", "content": [{"type": "text", "text": s.document}]}],
        "tools": [_anthropic_tool(s)],
    }
    headers = {"x-api-key": "sk-demo-raw", "anthropic-version": "2023-06-01"}
    async with httpx.AsyncClient() as client:
        response = await client.post(demo_server.url + "/v1/messages", json=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["request-id"].startswith("req_")
    assert _entry(demo_server, response.headers["request-id"])["auth"] == "x-api-key"
    partial = "".join(
        json.loads(line[6:])["delta"]["partial_json"]
        for line in response.text.split("\n")
        if line.startswith("data: ") and '"input_json_delta"' in line
    )
    assert json.loads(partial) == s.output


async def test_anthropic_non_stream(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    message = await client.messages.create(
        model="claude-demo",
        max_tokens=4000,
        messages=[{"role": "user", "content": s.document}],
        tools=[_anthropic_tool(s)],
        tool_choice={"type": "tool", "name": s.tool_name},
    )
    assert message.stop_reason == "tool_use"
    assert message.content[0].input == s.output


async def test_anthropic_without_tools_streams_text(demo_server: Any) -> None:
    s = get_scenario("ticket")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    async with client.messages.stream(
        model="claude-demo", max_tokens=4000, messages=[{"role": "user", "content": s.document}]
    ) as stream:
        message = await stream.get_final_message()
    assert message.stop_reason == "end_turn"
    assert json.loads(message.content[0].text) == s.output


async def test_anthropic_max_tokens_fault(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    message, _, request_id = await _anthropic_stream(client, s, headers={"x-demo-fault": "max_tokens@0.4"})
    assert message.stop_reason == "max_tokens"
    assert message.content[0].input != s.output
    entry = _entry(demo_server, request_id)
    assert entry["fault"] == "max_tokens@0.4" and entry["tokens_sent"] == entry["fault_at"] < entry["tokens_total"]


async def test_anthropic_error_fault_raises_api_status_error(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as info:
        await _anthropic_stream(client, s, headers={"x-demo-fault": "error@0.5"})
    assert "overloaded_error" in str(info.value)


async def test_anthropic_disconnect_fault_is_a_read_error(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    before = len(demo_server.requests())
    # The SDK reads the stream with httpx2 and lets its read error through: a broken chunked body.
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        await _anthropic_stream(client, s, headers={"x-demo-fault": "disconnect@0.5", **FINE_GRAINED})
    entry = demo_server.requests()[before]
    assert entry["aborted"] and not entry["finished"] and not entry["disconnected"]


async def test_anthropic_invalid_value_and_malformed(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    message, _, _ = await _anthropic_stream(client, s, headers={"x-demo-fault": "invalid_value"})
    assert message.content[0].input == {**s.output, "amount": "twelve hundred"}
    # Malformed JSON: the SDK's partial parser (jiter, partial mode) does not raise on a missing
    # comma; it silently keeps only what came before the break. The result is visibly incomplete.
    message, _, request_id = await _anthropic_stream(
        client, s, headers={"x-demo-fault": "malformed@0.5", **FINE_GRAINED}
    )
    assert message.stop_reason == "tool_use"
    assert message.content[0].input != s.output
    assert set(message.content[0].input) < set(s.output)
    assert _entry(demo_server, request_id)["finished"]


# --- openai chat ---------------------------------------------------------------------------------


def _openai(server: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="sk-demo-openai", max_retries=0)


def _chat_tool(s: Scenario) -> dict[str, Any]:
    return {"type": "function", "function": {"name": s.tool_name, "parameters": s.json_schema()}}


@pytest.mark.parametrize("name", SCENARIO_NAMES)
async def test_openai_chat_stream_assembles_every_scenario(demo_server: Any, name: str) -> None:
    s = get_scenario(name)
    async with _openai(demo_server).chat.completions.stream(
        model="gpt-demo",
        messages=[{"role": "system", "content": "Extract."}, {"role": "user", "content": s.document}],
        tools=[_chat_tool(s)],
        tool_choice={"type": "function", "function": {"name": s.tool_name}},
        stream_options={"include_usage": True},
    ) as stream:
        completion = await stream.get_final_completion()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.function.name == s.tool_name
    assert json.loads(call.function.arguments) == s.output
    assert completion.usage is not None and completion.usage.completion_tokens > 0


async def test_openai_chat_json_schema_content(demo_server: Any) -> None:
    s = get_scenario("multilingual")
    async with _openai(demo_server).chat.completions.stream(
        model="gpt-demo",
        messages=[{"role": "user", "content": s.document}],
        response_format={"type": "json_schema", "json_schema": {"name": s.schema_name, "schema": s.json_schema()}},
    ) as stream:
        completion = await stream.get_final_completion()
    assert completion.choices[0].finish_reason == "stop"
    assert json.loads(completion.choices[0].message.content) == s.output


async def test_openai_chat_faults(demo_server: Any) -> None:
    s = get_scenario("invoice")
    kwargs: dict[str, Any] = {
        "model": "gpt-demo",
        "messages": [{"role": "user", "content": s.document}],
        "tools": [_chat_tool(s)],
    }
    with pytest.raises(openai.LengthFinishReasonError):
        async with _openai(demo_server).chat.completions.stream(
            **kwargs, extra_headers={"x-demo-fault": "max_tokens"}
        ) as stream:
            await stream.get_final_completion()
    with pytest.raises(openai.APIError, match="server had an error"):
        async with _openai(demo_server).chat.completions.stream(
            **kwargs, extra_headers={"x-demo-fault": "error@0.3"}
        ) as stream:
            await stream.get_final_completion()
    with pytest.raises(openai.APIConnectionError) as info:
        async with _openai(demo_server).chat.completions.stream(
            **kwargs, extra_headers={"x-demo-fault": "disconnect@0.3"}
        ) as stream:
            await stream.get_final_completion()
    assert isinstance(info.value.__cause__, httpx2.RemoteProtocolError)


async def test_openai_chat_non_stream(demo_server: Any) -> None:
    s = get_scenario("weather")
    completion = await _openai(demo_server).chat.completions.create(
        model="gpt-demo", messages=[{"role": "user", "content": s.document}], tools=[_chat_tool(s)]
    )
    assert json.loads(completion.choices[0].message.tool_calls[0].function.arguments) == s.output


# --- openai responses ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCENARIO_NAMES)
async def test_openai_responses_stream_assembles_every_scenario(demo_server: Any, name: str) -> None:
    s = get_scenario(name)
    async with _openai(demo_server).responses.stream(
        model="gpt-demo",
        input=[{"role": "user", "content": s.document}],
        tools=[{"type": "function", "name": s.tool_name, "parameters": s.json_schema(), "strict": False}],
        tool_choice={"type": "function", "name": s.tool_name},
    ) as stream:
        response = await stream.get_final_response()
    assert response.status == "completed"
    call = response.output[0]
    assert call.type == "function_call" and call.name == s.tool_name
    assert json.loads(call.arguments) == s.output


@pytest.mark.parametrize("name", ["invoice", "multilingual"])
async def test_openai_responses_text_format(demo_server: Any, name: str) -> None:
    s = get_scenario(name)
    async with _openai(demo_server).responses.stream(
        model="gpt-demo",
        input=s.document,
        text={"format": {"type": "json_schema", "name": s.schema_name, "schema": s.json_schema(), "strict": False}},
    ) as stream:
        response = await stream.get_final_response()
    assert json.loads(response.output_text) == s.output


async def test_openai_responses_faults(demo_server: Any) -> None:
    s = get_scenario("invoice")
    kwargs: dict[str, Any] = {
        "model": "gpt-demo",
        "input": s.document,
        "tools": [{"type": "function", "name": s.tool_name, "parameters": s.json_schema(), "strict": False}],
    }
    events: list[str] = []
    with pytest.raises(RuntimeError, match="response.completed"):
        async with _openai(demo_server).responses.stream(**kwargs, extra_headers={"x-demo-fault": "error"}) as stream:
            async for event in stream:
                events.append(event.type)
            await stream.get_final_response()
    assert events[-1] == "error"
    events.clear()
    async with _openai(demo_server).responses.stream(**kwargs, extra_headers={"x-demo-fault": "max_tokens"}) as stream:
        async for event in stream:
            events.append(event.type)
    assert events[-1] == "response.incomplete"


# --- ollama --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCENARIO_NAMES)
async def test_ollama_chat_stream_assembles_every_scenario(demo_server: Any, name: str) -> None:
    s = get_scenario(name)
    client = ollama.AsyncClient(host=demo_server.url)
    parts = []
    async for part in await client.chat(
        model="llama3.2", messages=[{"role": "user", "content": s.document}], format=s.json_schema(), stream=True
    ):
        parts.append(part)
    assert parts[-1].done and parts[-1].done_reason == "stop"
    assert not any(p.done for p in parts[:-1])
    assert json.loads("".join(p.message.content or "" for p in parts)) == s.output


async def test_ollama_generate_and_non_stream(demo_server: Any) -> None:
    s = get_scenario("multilingual")
    client = ollama.AsyncClient(host=demo_server.url)
    text = ""
    async for part in await client.generate(model="llama3.2", prompt=s.document, format=s.json_schema(), stream=True):
        text += part.response or ""
    assert json.loads(text) == s.output
    whole = await client.chat(model="llama3.2", messages=[{"role": "user", "content": s.document}], format="json")
    assert json.loads(whole.message.content) == s.output


async def test_ollama_faults(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = ollama.AsyncClient(host=demo_server.url, headers={"x-demo-fault": "max_tokens@0.5"})
    parts = [p async for p in await client.chat(model="m", messages=[{"role": "user", "content": s.document}], stream=True)]
    assert parts[-1].done_reason == "length"
    client = ollama.AsyncClient(host=demo_server.url, headers={"x-demo-fault": "error"})
    with pytest.raises(ollama.ResponseError):
        async for _ in await client.chat(model="m", messages=[{"role": "user", "content": s.document}], stream=True):
            pass
    client = ollama.AsyncClient(host=demo_server.url, headers={"x-demo-fault": "disconnect"})
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        async for _ in await client.chat(model="m", messages=[{"role": "user", "content": s.document}], stream=True):
            pass
    client = ollama.AsyncClient(host=demo_server.url, headers={"x-demo-fault": "blank_line"})
    with pytest.raises(json.JSONDecodeError):
        async for _ in await client.chat(model="m", messages=[{"role": "user", "content": s.document}], stream=True):
            pass


def test_environment_is_clean() -> None:
    assert "ANTHROPIC_API_KEY" not in os.environ


async def test_the_tool_call_carries_the_forced_tool_name(demo_server: Any) -> None:
    s = get_scenario("invoice")
    client = anthropic.AsyncAnthropic(base_url=demo_server.url, api_key="k", max_retries=0)
    tools = [
        {"name": "lookup_customer", "input_schema": {"type": "object"}},
        {"name": "extract_fields", "input_schema": s.json_schema()},
    ]
    message = await client.messages.create(
        model="claude-demo",
        max_tokens=4000,
        messages=[{"role": "user", "content": s.document}],
        tools=tools,
        tool_choice={"type": "tool", "name": "extract_fields"},
    )
    assert message.content[0].name == "extract_fields" and message.content[0].input == s.output
    completion = await _openai(demo_server).chat.completions.create(
        model="gpt-demo",
        messages=[{"role": "user", "content": s.document}],
        tools=[{"type": "function", "function": {"name": "only_tool", "parameters": s.json_schema()}}],
    )
    assert completion.choices[0].message.tool_calls[0].function.name == "only_tool"
