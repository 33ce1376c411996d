"""The sans-IO vocabulary decoders in livefill/wire/providers/, fed hand-written frames from docs/wires.md.

Each wire: a whole stream (fed through its real framer, whole and byte by byte), every fault
shape (max_tokens / length, error event, EOF without terminal), and the vocabulary breaches that
must raise ProtocolError.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from livefill.errors import ProtocolError, Truncated
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, TextDelta
from livefill.wire.ndjson import NDJSONFramer
from livefill.wire.providers.anthropic import AnthropicDecoder
from livefill.wire.providers.ollama import OllamaDecoder
from livefill.wire.providers.openai_chat import ChatDecoder
from livefill.wire.providers.openai_responses import ResponsesDecoder
from livefill.wire.providers.raw import RawDecoder, RawFramer
from livefill.wire.sse import ServerSentEvent, SSEDecoder

DOC = '{"customer_name":"Martinez SA","amount":1200,"notes":"a\\u2028b"}'
PIECES = ["", '{"customer_', 'name":"Martinez', ' SA","amount":12', '00,"notes":"a\\u2028b"}']


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def sse_bytes(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else compact(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def run_sse(decoder_factory, raw: bytes, *, bytewise: bool = False, close: bool = True) -> list:
    sse, dec = SSEDecoder(), decoder_factory()
    chunks = [raw[i : i + 1] for i in range(len(raw))] if bytewise else [raw]
    events: list = []
    for chunk in chunks:
        for frame in sse.feed(chunk):
            events += dec.feed(frame)
    for frame in sse.close():
        events += dec.feed(frame)
    if close:
        events += dec.close()
    return events


def args_text(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, ArgsDelta))


# =============================================================================================
# Anthropic


def anthropic_events(pieces=PIECES, stop_reason="tool_use", text_first: bool = False) -> list[tuple[str, Any]]:
    ev: list[tuple[str, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
                    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 377, "output_tokens": 1},
                },
            },
        )
    ]
    index = 0
    if text_first:
        ev += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Sure."}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        index = 1
    ev.append(
        (
            "content_block_start",
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": "toolu_1", "name": "record_invoice", "input": {}}},
        )
    )
    ev.append(("ping", '{"type": "ping"}'))
    for p in pieces:
        ev.append(
            ("content_block_delta",
             {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}})
        )
    ev.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    ev.append(
        ("message_delta",
         {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 65}})
    )
    ev.append(("message_stop", {"type": "message_stop"}))
    return ev


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_anthropic_wire_md_stream(bytewise: bool) -> None:
    events = run_sse(AnthropicDecoder, sse_bytes(anthropic_events()), bytewise=bytewise)
    assert events[0] == KeepAlive()
    assert [e for e in events if isinstance(e, ArgsDelta)] == [ArgsDelta(text=p, index=0) for p in PIECES if p]
    assert json.loads(args_text(events)) == json.loads(DOC)
    assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="tool_use")]


def test_anthropic_text_block_before_tool_block() -> None:
    events = run_sse(AnthropicDecoder, sse_bytes(anthropic_events(text_first=True)))
    assert events[0] == TextDelta(text="Sure.", index=0)
    assert all(e.index == 1 for e in events if isinstance(e, ArgsDelta))
    assert [e for e in events if isinstance(e, BlockStop)] == [BlockStop(index=1)]  # no BlockStop for prose


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("max_tokens", StopReason.LENGTH), ("end_turn", StopReason.COMPLETE), ("stop_sequence", StopReason.COMPLETE),
     ("refusal", StopReason.REFUSAL), ("pause_turn", StopReason.OTHER), ("something_new", StopReason.OTHER)],
)
def test_anthropic_stop_reasons_are_normalised_and_raw_kept(raw: str, reason: StopReason) -> None:
    events = run_sse(AnthropicDecoder, sse_bytes(anthropic_events(PIECES[:3], stop_reason=raw)))
    assert events[-1] == Stop(reason=reason, raw=raw)


def test_anthropic_error_event_mid_stream() -> None:
    ev = anthropic_events()[:5] + [
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    ]
    dec = AnthropicDecoder()
    events = run_sse(lambda: dec, sse_bytes(ev))
    assert events[-1] == ProviderError(kind="overloaded_error", message="Overloaded")
    assert dec.finished


@pytest.mark.parametrize("cut", [0, 1, 2, 5, 8, 9, 10], ids=lambda n: f"after-{n}-events")
def test_anthropic_eof_without_message_stop_is_truncated(cut: int) -> None:
    raw = sse_bytes(anthropic_events()[:cut])
    with pytest.raises(Truncated):
        run_sse(AnthropicDecoder, raw)


def test_anthropic_last_event_without_its_blank_line_is_truncated() -> None:
    raw = sse_bytes(anthropic_events())[:-1]  # message_stop lost its blank line
    with pytest.raises(Truncated):
        run_sse(AnthropicDecoder, raw)


def _mutate(index: int, value: tuple[str, Any] | None) -> list[tuple[str, Any]]:
    ev = anthropic_events()
    if value is None:
        del ev[index]
    else:
        ev[index] = value
    return ev


@pytest.mark.parametrize(
    "events",
    [
        pytest.param(anthropic_events()[1:], id="no-message_start"),
        pytest.param(_mutate(0, ("message_stop", anthropic_events()[0][1])), id="event-name-differs-from-type"),
        pytest.param(_mutate(2, ("ping", "not json")), id="data-not-json"),
        pytest.param(_mutate(2, ("ping", "[1]")), id="data-not-object"),
        pytest.param(_mutate(2, ("mystery", {"type": "mystery"})), id="unknown-event-type"),
        pytest.param(_mutate(1, ("content_block_start", {"type": "content_block_start", "index": 1,
                                                          "content_block": {"type": "tool_use", "name": "x"}})),
                     id="block-index-skips"),
        pytest.param(_mutate(1, ("content_block_start", {"type": "content_block_start", "index": 0,
                                                          "content_block": {"type": "image"}})),
                     id="unknown-block-type"),
        pytest.param(_mutate(4, ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                                          "delta": {"type": "input_json_delta", "partial_json": "x"}})),
                     id="delta-for-a-block-not-open"),
        pytest.param(_mutate(4, ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                          "delta": {"type": "text_delta", "text": "x"}})),
                     id="text-delta-in-tool-block"),
        pytest.param(_mutate(4, ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                          "delta": {"type": "input_json_delta", "partial_json": 5}})),
                     id="partial-json-not-a-string"),
        pytest.param(_mutate(-3, None), id="message_delta-inside-block"),
        pytest.param(_mutate(-2, None), id="message_stop-without-message_delta"),
        pytest.param(_mutate(-2, ("message_delta", {"type": "message_delta", "delta": {"stop_reason": None}})),
                     id="message_delta-without-stop_reason"),
        pytest.param(anthropic_events() + [("ping", {"type": "ping"})], id="after-message_stop"),
        pytest.param(anthropic_events()[:3] + [("content_block_stop", {"type": "content_block_stop", "index": 0})] * 2,
                     id="block-stopped-twice"),
    ],
)
def test_anthropic_vocabulary_breaches_are_protocol_errors(events: list[tuple[str, Any]]) -> None:
    with pytest.raises(ProtocolError):
        run_sse(AnthropicDecoder, sse_bytes(events))


# =============================================================================================
# OpenAI Chat Completions

CHUNK = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1727346176, "model": "gpt-4o"}


def chat_chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {**CHUNK, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def chat_events(pieces=PIECES, finish="tool_calls", usage=True, done=True) -> list[tuple[None, Any]]:
    u = {"usage": None} if usage else {}
    ev: list[tuple[None, Any]] = [
        (None, chat_chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "record_invoice", "arguments": ""}}]}, **u))
    ]
    ev += [(None, chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}, **u)) for p in pieces]
    ev.append((None, chat_chunk({}, finish, **u)))
    if usage:
        ev.append((None, {**CHUNK, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}}))
    if done:
        ev.append((None, "[DONE]"))
    return ev


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
@pytest.mark.parametrize("usage", [True, False], ids=["include_usage", "no-usage"])
def test_chat_wire_md_stream(bytewise: bool, usage: bool) -> None:
    dec = ChatDecoder()
    events = run_sse(lambda: dec, sse_bytes(chat_events(usage=usage)), bytewise=bytewise)
    assert json.loads(args_text(events)) == json.loads(DOC)
    assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="tool_calls")]
    assert dec.finished


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("length", StopReason.LENGTH), ("stop", StopReason.COMPLETE), ("content_filter", StopReason.REFUSAL),
     ("brand_new", StopReason.OTHER)],
)
def test_chat_finish_reasons(raw: str, reason: StopReason) -> None:
    events = run_sse(ChatDecoder, sse_bytes(chat_events(PIECES[:2], finish=raw)))
    assert Stop(reason=reason, raw=raw) in events


def test_chat_content_is_prose_and_two_tool_calls_each_get_a_block_stop() -> None:
    ev = [
        (None, chat_chunk({"role": "assistant", "content": "Let me"})),
        (None, chat_chunk({"tool_calls": [{"index": 0, "id": "c0", "type": "function", "function": {"name": "a", "arguments": "{}"}}]})),
        (None, chat_chunk({"tool_calls": [{"index": 1, "id": "c1", "type": "function", "function": {"name": "b", "arguments": "[1"}}]})),
        (None, chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": "]"}}]})),
        (None, chat_chunk({}, "tool_calls")),
        (None, "[DONE]"),
    ]
    events = run_sse(ChatDecoder, sse_bytes(ev))
    assert events == [
        TextDelta(text="Let me"), ArgsDelta(text="{}", index=0), ArgsDelta(text="[1", index=1),
        ArgsDelta(text="]", index=1), BlockStop(index=0), BlockStop(index=1),
        Stop(reason=StopReason.COMPLETE, raw="tool_calls"),
    ]


def test_chat_content_free_chunk_before_the_finish_is_a_keepalive() -> None:
    ev = [(None, {**CHUNK, "choices": [], "prompt_filter_results": []})] + chat_events()
    assert run_sse(ChatDecoder, sse_bytes(ev))[0] == KeepAlive()


def test_chat_error_payload_mid_stream() -> None:
    ev = chat_events()[:3] + [(None, {"error": {"message": "The server had an error", "type": "server_error"}})]
    events = run_sse(ChatDecoder, sse_bytes(ev))
    assert events[-1] == ProviderError(kind="server_error", message="The server had an error")


@pytest.mark.parametrize("cut", [0, 1, 3, 6, 7, 8], ids=lambda n: f"after-{n}-events")
def test_chat_eof_without_done_is_truncated(cut: int) -> None:
    with pytest.raises(Truncated):
        run_sse(ChatDecoder, sse_bytes(chat_events()[:cut]))


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([(None, "[DONE]")], id="done-before-finish"),
        pytest.param(chat_events()[:3] + [(None, "[DONE]")], id="done-without-finish"),
        pytest.param(chat_events(usage=False, done=False) + [(None, chat_chunk({"content": "x"}))], id="chunk-after-finish"),
        pytest.param(chat_events() + [(None, "[DONE]")], id="after-done"),
        pytest.param([("completion", chat_chunk({}))], id="named-event"),
        pytest.param([(None, {**chat_chunk({}), "object": "chat.completion"})], id="wrong-object"),
        pytest.param([(None, {**CHUNK, "choices": [{"index": 0, "delta": {}}, {"index": 1, "delta": {}}]})], id="two-choices"),
        pytest.param([(None, {**CHUNK, "choices": [{"index": 1, "delta": {}, "finish_reason": None}]})], id="choice-index-1"),
        pytest.param([(None, chat_chunk({"tool_calls": [{"index": 1, "id": "c", "function": {"name": "f"}}]}))], id="call-index-skips"),
        pytest.param([(None, chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}))], id="first-fragment-without-name"),
        pytest.param(chat_events()[:1] + [(None, chat_chunk({"tool_calls": [{"index": 0, "function": {"name": "other"}}]}))],
                     id="call-renamed"),
        pytest.param([(None, chat_chunk({"content": 5}))], id="content-not-string"),
        pytest.param([(None, "{not json")], id="not-json"),
        pytest.param([(None, {**CHUNK})], id="no-choices"),
    ],
)
def test_chat_vocabulary_breaches_are_protocol_errors(events: list) -> None:
    with pytest.raises(ProtocolError):
        run_sse(ChatDecoder, sse_bytes(events))


# =============================================================================================
# OpenAI Responses


def responses_events(pieces=PIECES, *, function_call: bool = False, terminal: dict | None = None) -> list[tuple[str, Any]]:
    seq = iter(range(1000))
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    ev: list[dict[str, Any]] = [
        {"type": "response.created", "response": resp},
        {"type": "response.in_progress", "response": resp},
    ]
    whole = "".join(pieces)
    if function_call:
        ev.append({"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "record_invoice", "arguments": "",
            "status": "in_progress"}})
        ev += [{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": p}
               for p in pieces]
        ev.append({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": whole})
        ev.append({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call"}})
    else:
        part = {"type": "output_text", "text": "", "annotations": []}
        ev.append({"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}})
        ev.append({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part})
        ev += [{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                "delta": p, "logprobs": []} for p in pieces]
        ev.append({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                   "text": whole, "logprobs": []})
        ev.append({"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                   "part": {**part, "text": whole}})
        ev.append({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message"}})
    ev.append(terminal or {"type": "response.completed", "response": {**resp, "status": "completed"}})
    return [(e["type"], {**e, "sequence_number": next(seq)}) for e in ev]


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
@pytest.mark.parametrize("function_call", [False, True], ids=["json_schema-text", "function_call"])
def test_responses_wire_md_stream(bytewise: bool, function_call: bool) -> None:
    events = run_sse(ResponsesDecoder, sse_bytes(responses_events(function_call=function_call)), bytewise=bytewise)
    assert json.loads(args_text(events)) == json.loads(DOC)
    assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="completed")]
    assert events[:2] == [KeepAlive(), KeepAlive()]


def test_responses_text_is_prose_without_json_mode() -> None:
    events = run_sse(lambda: ResponsesDecoder(json_mode=False), sse_bytes(responses_events(["Hello", " there"])))
    assert [e for e in events if not isinstance(e, KeepAlive)] == [
        TextDelta(text="Hello"), TextDelta(text=" there"), Stop(reason=StopReason.COMPLETE, raw="completed")]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("max_output_tokens", StopReason.LENGTH), ("content_filter", StopReason.REFUSAL), ("other_thing", StopReason.OTHER)],
)
def test_responses_incomplete_is_a_stop_with_its_reason(reason: str, expected: StopReason) -> None:
    terminal = {"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": reason}}}
    events = run_sse(ResponsesDecoder, sse_bytes(responses_events(PIECES[:3], terminal=terminal)))
    assert events[-1] == Stop(reason=expected, raw=reason)


def test_responses_error_event_and_failed_response() -> None:
    ev = responses_events()[:6]
    err = [("error", {"type": "error", "code": "server_error", "message": "boom", "sequence_number": 6})]
    assert run_sse(ResponsesDecoder, sse_bytes(ev + err))[-1] == ProviderError(kind="server_error", message="boom")
    failed = [("response.failed", {"type": "response.failed", "sequence_number": 6,
                                   "response": {"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "slow"}}})]
    assert run_sse(ResponsesDecoder, sse_bytes(ev + failed))[-1] == ProviderError(kind="rate_limit_exceeded", message="slow")


@pytest.mark.parametrize("cut", [0, 1, 4, 8, 11], ids=lambda n: f"after-{n}-events")
def test_responses_eof_without_terminal_is_truncated(cut: int) -> None:
    with pytest.raises(Truncated):
        run_sse(ResponsesDecoder, sse_bytes(responses_events()[:cut]))


def _rmut(index: int, **changes: Any) -> list[tuple[str, Any]]:
    ev = responses_events()
    name, data = ev[index]
    data = {**data, **changes}
    ev[index] = (data["type"], data)
    return ev


@pytest.mark.parametrize(
    "events",
    [
        pytest.param(responses_events()[1:], id="no-response.created"),
        pytest.param(_rmut(3, sequence_number=2), id="sequence-number-repeats"),
        pytest.param(_rmut(5, sequence_number=1), id="sequence-number-falls"),
        pytest.param(_rmut(1, type="response.brand_new"), id="unknown-type"),
        pytest.param([("response.in_progress", responses_events()[0][1])], id="event-name-differs-from-type"),
        pytest.param(_rmut(9, text="something else"), id="done-text-differs-from-deltas"),
        pytest.param(_rmut(5, output_index=3), id="delta-for-unknown-item"),
        pytest.param(_rmut(2, output_index=1), id="item-index-skips"),
        pytest.param([e for i, e in enumerate(responses_events()) if i != 3], id="text-before-content-part"),
        pytest.param(responses_events() + [("response.completed", {"type": "response.completed", "sequence_number": 99,
                                                                    "response": {}})], id="after-completed"),
        pytest.param(_rmut(5, type="response.function_call_arguments.delta"), id="arguments-delta-for-message-item"),
        pytest.param(_rmut(0, sequence_number="0"), id="sequence-number-not-int"),
    ],
)
def test_responses_vocabulary_breaches_are_protocol_errors(events: list) -> None:
    with pytest.raises(ProtocolError):
        run_sse(ResponsesDecoder, sse_bytes(events))


# =============================================================================================
# Ollama

OLLAMA_PIECES = ['{"cust', 'omer_name":"Mart\u2028inez"', ',"amount":12', "00}"]


def ollama_lines(pieces=OLLAMA_PIECES, done_reason: str | None = "stop", endpoint: str = "chat") -> list[str]:
    def line(text: str, done: bool, **extra: Any) -> str:
        body: dict[str, Any] = {"model": "llama3.2", "created_at": "2025-07-07T20:22:19.1Z"}
        if endpoint == "chat":
            body["message"] = {"role": "assistant", "content": text}
        else:
            body["response"] = text
        return compact({**body, "done": done, **extra})

    out = [line(p, False) for p in pieces]
    extra = {"done_reason": done_reason} if done_reason is not None else {}
    out.append(line("", True, eval_count=184, **extra))
    return out


def run_ndjson(decoder, raw: bytes, *, bytewise: bool = False) -> list:
    framer = NDJSONFramer()
    chunks = [raw[i : i + 1] for i in range(len(raw))] if bytewise else [raw]
    events: list = []
    for chunk in chunks:
        for line in framer.feed(chunk):
            events += decoder.feed(line)
    for line in framer.close():
        events += decoder.feed(line)
    return events + decoder.close()


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
@pytest.mark.parametrize("endpoint", ["chat", "generate"])
def test_ollama_wire_md_stream_with_a_raw_u2028_inside_a_line(bytewise: bool, endpoint: str) -> None:
    raw = "".join(x + "\n" for x in ollama_lines(endpoint=endpoint)).encode()
    assert "\u2028".encode() in raw  # a raw U+2028 on the wire: only \n may split
    events = run_ndjson(OllamaDecoder(endpoint=endpoint), raw, bytewise=bytewise)
    assert [e.text for e in events if isinstance(e, ArgsDelta)] == OLLAMA_PIECES
    assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="stop")]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("length", StopReason.LENGTH), ("stop", StopReason.COMPLETE), (None, StopReason.COMPLETE), ("load", StopReason.OTHER)],
)
def test_ollama_done_reasons(raw: str | None, reason: StopReason) -> None:
    events = run_ndjson(OllamaDecoder(), "\n".join(ollama_lines(done_reason=raw)).encode())
    assert events[-1] == Stop(reason=reason, raw=raw or "")


def test_ollama_error_line_mid_stream() -> None:
    dec = OllamaDecoder()
    events = run_ndjson(dec, ("\n".join(ollama_lines()[:2]) + '\n{"error":"model runner crashed"}\n').encode())
    assert events[-1] == ProviderError(kind="ollama_error", message="model runner crashed")
    assert dec.finished


def test_ollama_eof_without_done_line_is_truncated() -> None:
    with pytest.raises(Truncated):
        run_ndjson(OllamaDecoder(), "\n".join(ollama_lines()[:-1]).encode())
    with pytest.raises(Truncated):
        run_ndjson(OllamaDecoder(), b"")


@pytest.mark.parametrize(
    "lines",
    [
        pytest.param(ollama_lines() + [ollama_lines()[0]], id="after-done"),
        pytest.param(["[1,2]"], id="not-an-object"),
        pytest.param(["{oops"], id="not-json"),
        pytest.param(['{"message":{"content":"x"}}'], id="no-done"),
        pytest.param(['{"message":{"content":"x"},"done":"no"}'], id="done-not-bool"),
        pytest.param(['{"done":false}'], id="no-message"),
        pytest.param(['{"message":{"content":7},"done":false}'], id="content-not-string"),
    ],
)
def test_ollama_vocabulary_breaches_are_protocol_errors(lines: list[str]) -> None:
    with pytest.raises(ProtocolError):
        run_ndjson(OllamaDecoder(), "".join(x + "\n" for x in lines).encode())


# =============================================================================================
# Unframed


def run_raw(chunks: list[bytes]) -> list:
    framer, dec = RawFramer(), RawDecoder()
    events: list = []
    for c in chunks:
        for text in framer.feed(c):
            events += dec.feed(text)
    framer.close()
    return events + dec.close()


def test_raw_every_chunk_is_an_args_delta_and_eof_is_the_terminal() -> None:
    data = DOC.replace("Martinez", "Martínez 😀").encode()
    for chunks in ([data], [data[i : i + 1] for i in range(len(data))], [data[:7], data[7:9], data[9:]]):
        events = run_raw(chunks)
        assert json.loads(args_text(events)) == json.loads(data)
        assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="eof")]


def test_raw_invalid_utf8_and_eof_inside_a_character_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError):
        run_raw([b'{"a":"\xff"}'])
    with pytest.raises(ProtocolError):
        run_raw([b'{"a":"\xe2\x82'])


def test_decoders_reject_frames_after_close_or_terminal() -> None:
    dec = RawDecoder()
    dec.close()
    with pytest.raises(ProtocolError):
        dec.feed("x")
    anth = AnthropicDecoder()
    for name, data in anthropic_events():
        anth.feed(ServerSentEvent(event=name, data=data if isinstance(data, str) else compact(data)))
    assert anth.finished and anth.close() == []


# ---------------------------------------------------------------------------------------------
# Real OpenAI-compatible servers (docs/wires.md: llama-cpp-python 0.3.36's server, as recorded)

LLAMA_CHUNK = {"id": "chatcmpl-7b1c", "object": "chat.completion.chunk", "created": 1764500000, "model": "smollm2"}


def llama_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {**LLAMA_CHUNK, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def llama_tool_events(pieces=PIECES, name: str = "record_invoice") -> list[tuple[None, Any]]:
    """A llama-cpp-python tool stream: explicit nulls first; then every chunk repeats the call's id
    and name, in `tool_calls[0]` and in the legacy `function_call`; the last piece is ""; the
    finish chunk has `tool_calls: null`."""
    ev: list[tuple[None, Any]] = [
        (None, llama_chunk({"role": "assistant", "content": None, "function_call": None, "tool_calls": None}))
    ]
    for piece in [*pieces, ""]:
        ev.append((None, llama_chunk({
            "role": None, "content": None,
            "function_call": {"name": name, "arguments": piece},
            "tool_calls": [{"index": 0, "id": "call__0_record_invoice_cmpl-7b1c", "type": "function",
                            "function": {"name": name, "arguments": piece}}],
        })))
    ev.append((None, llama_chunk({"role": None, "content": None, "function_call": None, "tool_calls": None}, "tool_calls")))
    ev.append((None, "[DONE]"))
    return ev


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_llama_cpp_repeated_id_and_name_and_legacy_function_call_are_ignored(bytewise: bool) -> None:
    events = run_sse(ChatDecoder, sse_bytes(llama_tool_events()), bytewise=bytewise)
    # The arguments once each (not doubled by function_call), one call, no name glued to itself.
    assert args_text(events) == "".join(PIECES)
    assert json.loads(args_text(events)) == json.loads(DOC)
    assert {e.index for e in events if isinstance(e, ArgsDelta)} == {0}
    assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="tool_calls")]


def test_llama_cpp_carriers_point_into_tool_calls_not_function_call() -> None:
    frames = SSEDecoder().feed(sse_bytes(llama_tool_events()))
    assert _check_carriers(ChatDecoder(), frames, lambda f: f.data) == len([p for p in PIECES if p])
    dec = ChatDecoder()
    for frame in frames[:3]:
        dec.feed(frame)
    assert dec.carriers == ["/choices/0/delta/tool_calls/0/function/arguments"]


def test_a_repeated_name_that_changes_is_still_a_protocol_error() -> None:
    ev = llama_tool_events()
    ev[3] = (None, llama_chunk({"tool_calls": [{"index": 0, "id": "x", "function": {"name": "other", "arguments": "1"}}]}))
    with pytest.raises(ProtocolError, match="changed its name"):
        run_sse(ChatDecoder, sse_bytes(ev))


def test_a_server_that_sends_only_the_legacy_function_call_is_read_as_call_0() -> None:
    ev: list[tuple[None, Any]] = [(None, llama_chunk({"role": "assistant", "content": None}))]
    ev += [(None, llama_chunk({"function_call": {"name": "record_invoice", "arguments": p}})) for p in PIECES]
    ev += [(None, llama_chunk({}, "function_call")), (None, "[DONE]")]
    events = run_sse(ChatDecoder, sse_bytes(ev))
    assert json.loads(args_text(events)) == json.loads(DOC)
    assert events[-2:] == [BlockStop(index=0), Stop(reason=StopReason.COMPLETE, raw="function_call")]


def json_content_events(pieces=PIECES, finish: str = "stop") -> list[tuple[None, Any]]:
    """Structured output as message text (response_format json_schema / json_object), llama-style:
    explicit nulls first, one piece per chunk, then `delta: {}` with the finish reason."""
    ev: list[tuple[None, Any]] = [
        (None, llama_chunk({"role": "assistant", "content": None, "function_call": None, "tool_calls": None}))
    ]
    ev += [(None, llama_chunk({"content": p})) for p in pieces]
    ev += [(None, llama_chunk({}, finish)), (None, "[DONE]")]
    return ev


@pytest.mark.parametrize("bytewise", [False, True], ids=["whole", "bytewise"])
def test_json_mode_content_streams_exactly_like_tool_arguments(bytewise: bool) -> None:
    as_content = run_sse(lambda: ChatDecoder(json_mode=True), sse_bytes(json_content_events()), bytewise=bytewise)
    as_tool = run_sse(ChatDecoder, sse_bytes(chat_events(usage=False)), bytewise=bytewise)
    # the same ArgsDeltas and the same BlockStop, in the same order
    assert as_content[:-1] == as_tool[:-1]
    assert as_content[-1] == Stop(reason=StopReason.COMPLETE, raw="stop")
    assert not [e for e in as_content if isinstance(e, TextDelta)]


def test_json_mode_length_stop_and_carriers() -> None:
    events = run_sse(lambda: ChatDecoder(json_mode=True), sse_bytes(json_content_events(PIECES[:3], "length")))
    assert events[-1] == Stop(reason=StopReason.LENGTH, raw="length")
    frames = SSEDecoder().feed(sse_bytes(json_content_events()))
    assert _check_carriers(ChatDecoder(json_mode=True), frames, lambda f: f.data) == len([p for p in PIECES if p])


def test_content_without_json_mode_is_prose() -> None:
    events = run_sse(ChatDecoder, sse_bytes(json_content_events()))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "".join(PIECES)
    assert not [e for e in events if isinstance(e, (ArgsDelta, BlockStop))]


def test_a_tool_call_in_a_json_mode_stream_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="structured-output"):
        run_sse(lambda: ChatDecoder(json_mode=True), sse_bytes(chat_events()))


# =============================================================================================
# Carriers: where each ArgsDelta's text sat in its frame (what the wire inspector maps to bytes)


def _at(obj: Any, pointer: str) -> Any:
    from livefill.extraction.pointer import parse

    for token in parse(pointer):
        obj = obj[int(token)] if isinstance(obj, list) else obj[token]
    return obj


def _check_carriers(dec: Any, frames: list[Any], payload_of) -> int:
    seen = 0
    for frame in frames:
        events = dec.feed(frame)
        deltas = [e for e in events if isinstance(e, ArgsDelta)]
        assert len(dec.carriers) == len(deltas)
        for delta, carrier in zip(deltas, dec.carriers):
            payload = payload_of(frame)
            assert (payload if carrier is None else _at(json.loads(payload), carrier)) == delta.text
            seen += 1
    return seen


@pytest.mark.parametrize(
    ("factory", "events"),
    [
        (AnthropicDecoder, lambda: anthropic_events()),
        (ChatDecoder, lambda: chat_events()),
        (ResponsesDecoder, lambda: responses_events()),
        (lambda: ResponsesDecoder(), lambda: responses_events(function_call=True)),
    ],
    ids=["anthropic", "openai-chat", "openai-responses", "responses-function-call"],
)
def test_sse_decoders_name_the_string_that_carried_each_delta(factory, events) -> None:
    frames = SSEDecoder().feed(sse_bytes(events()))
    assert _check_carriers(factory(), frames, lambda f: f.data) >= 3


def test_chat_carriers_follow_the_position_in_tool_calls_not_the_call_index() -> None:
    ev = [
        (None, chat_chunk({"tool_calls": [
            {"index": 0, "id": "c0", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"index": 1, "id": "c1", "type": "function", "function": {"name": "b", "arguments": "[1"}}]})),
        (None, chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": "]"}}]})),
    ]
    dec = ChatDecoder()
    frames = SSEDecoder().feed(sse_bytes(ev))
    assert _check_carriers(dec, frames, lambda f: f.data) == 3
    assert dec.carriers == ["/choices/0/delta/tool_calls/0/function/arguments"]


@pytest.mark.parametrize("endpoint", ["chat", "generate"])
def test_ollama_and_raw_decoders_name_their_carriers(endpoint: str) -> None:
    lines = NDJSONFramer().feed("".join(line + "\n" for line in ollama_lines(endpoint=endpoint)).encode())
    assert _check_carriers(OllamaDecoder(endpoint=endpoint), lines, str) >= 3
    pieces = RawFramer().feed(DOC.encode())
    dec = RawDecoder()
    assert _check_carriers(dec, pieces, str) == 1 and dec.carriers == [None]
    assert type(dec.feed(pieces[0])[0].text) is str


def test_responses_text_beside_a_function_call_is_prose_when_the_tool_carries_the_json() -> None:
    from livefill.wire.providers import _WIRES
    from livefill.wire.providers.request import ExtractionRequest
    from livefill.extraction.schemas import resolve_schema

    def decoder(structured: str) -> Any:
        request = ExtractionRequest(provider="openai-responses", base_url="http://127.0.0.1:9",
                                    schema=resolve_schema("invoice"), document="", structured=structured)
        return _WIRES["openai-responses"].decoder(request)

    assert decoder("tools").json_mode is False
    assert decoder("json_schema").json_mode is True
    events = run_sse(lambda: decoder("tools"), sse_bytes(responses_events(function_call=True)))
    assert json.loads(args_text(events)) == json.loads(DOC)
