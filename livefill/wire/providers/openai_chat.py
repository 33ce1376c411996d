"""OpenAI Chat Completions streaming vocabulary: SSE `data:` chunks -> unified stream events (sans-IO).

How this works
--------------
Every SSE event is a `data:` line with no `event:` name. Each payload is classified into one
frame kind, and `_TRANSITIONS` says which kind may follow which:

    chunk   a `chat.completion.chunk` with one choice and no finish_reason
    finish  the same with a finish_reason (`stop`, `length`, `tool_calls`, `content_filter`)
    empty   a chunk with `"choices": []`: a content-free chunk such as Azure's filter results
            (-> KeepAlive), or the include_usage totals after the finish (-> nothing)
    done    the literal `[DONE]`, the terminal; it must follow a finish
    error   `{"error": {...}}` -> ProviderError, ends the stream

Tool-call fragments carry `index`; the first fragment of a call has its id and function name,
later ones only `arguments` text, which becomes `ArgsDelta(index=<tool call index>)`. `content`
text becomes `TextDelta`. The finish chunk yields a `BlockStop` per tool call, then `Stop`.

Real servers are looser than OpenAI (docs/wires.md, llama.cpp): llama-cpp-python repeats `id`
and `name` in every fragment and sends the legacy `function_call` beside `tool_calls`. A call's
name and id are taken from its first fragment and repeats are ignored (a *different* name is a
protocol error); `function_call` is ignored once `tool_calls` has been seen, and read as call 0
only from a server that sends nothing else. Explicit nulls (`"tool_calls": null`) mean absent.

With `json_mode=True` (structured output through `response_format` json_schema / json_object)
the JSON arrives as `delta.content`: it becomes `ArgsDelta(index=0)` exactly as tool arguments
would, closed by a `BlockStop(0)` at the finish; a tool call in such a stream is a protocol error.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from livefill.errors import ProtocolError, Truncated
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, StreamEvent, TextDelta
from livefill.wire.providers.base import load_object, need_int, need_list, need_object, need_str, opt_str, stop_reason
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.strict_schema import openai_subset, strict_json_schema
from livefill.wire.sse import ServerSentEvent

__all__ = ["STOP_REASONS", "ChatDecoder", "chat_body"]

STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.COMPLETE,
    "tool_calls": StopReason.COMPLETE,
    "function_call": StopReason.COMPLETE,
    "length": StopReason.LENGTH,
    "content_filter": StopReason.REFUSAL,
}


class _State(Enum):
    START = "start"  # no chunk yet
    STREAMING = "streaming"  # chunks arriving, no finish_reason yet
    FINISHED = "finished"  # the finish chunk arrived; only content-free chunks and [DONE] may follow
    DONE = "done"  # [DONE] or an error arrived: nothing may follow


_S = _State
_LIVE = (_S.START, _S.STREAMING, _S.FINISHED)
_TRANSITIONS: dict[tuple[_State, str], _State] = {
    (_S.START, "chunk"): _S.STREAMING,
    (_S.STREAMING, "chunk"): _S.STREAMING,
    (_S.START, "finish"): _S.FINISHED,
    (_S.STREAMING, "finish"): _S.FINISHED,
    **{(s, "empty"): s for s in _LIVE},
    (_S.FINISHED, "done"): _S.DONE,
    **{(s, "error"): _S.DONE for s in _LIVE},
}


class ChatDecoder:
    """Decode one Chat Completions stream: `feed(ServerSentEvent) -> list[StreamEvent]`.

    `finished` turns true at `[DONE]` or an error payload; `close()` raises `Truncated` before that.
    """

    def __init__(self, *, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self._state = _State.START
        self._calls: list[str] = []  # function name per tool-call index
        self._tool_calls_seen = False  # `tool_calls` arrived: the legacy `function_call` is ignored
        self._content_seen = False  # json_mode: content arrived (the document's block is open)
        self.finished = False
        self.carriers: list[str | None] = []  # per ArgsDelta of the last feed: where its text sat

    def feed(self, frame: ServerSentEvent) -> list[StreamEvent]:
        self.carriers = []
        if frame.event != "message":
            raise ProtocolError(f"unexpected SSE event name {frame.event!r} in a Chat Completions stream")
        data: dict[str, Any] | None = None
        if frame.data == "[DONE]":
            kind = "done"
        else:
            data = load_object(frame.data, "Chat Completions chunk")
            kind = self._classify(data)
        nxt = _TRANSITIONS.get((self._state, kind))
        if nxt is None:
            raise ProtocolError(f"Chat Completions {kind!r} frame is not allowed in state {self._state.value!r}")
        events = self._events(kind, data)
        self._state = nxt
        self.finished = nxt is _State.DONE
        return events

    def close(self) -> list[StreamEvent]:
        if not self.finished:
            raise Truncated(f"the Chat Completions stream ended ({self._state.value}) before [DONE]")
        return []

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _classify(data: dict[str, Any]) -> str:
        if data.get("error") is not None:
            return "error"
        if need_str(data, "object", "chunk") != "chat.completion.chunk":
            raise ProtocolError(f"chunk object is {data['object']!r}, not 'chat.completion.chunk'")
        choices = need_list(data, "choices", "chunk")
        if not choices:
            return "empty"
        if len(choices) != 1 or not isinstance(choices[0], dict) or need_int(choices[0], "index", "choice") != 0:
            raise ProtocolError("a chunk must carry exactly one choice, index 0")
        return "chunk" if choices[0].get("finish_reason") is None else "finish"

    def _events(self, kind: str, data: dict[str, Any] | None) -> list[StreamEvent]:
        if kind == "done":
            return []
        assert data is not None
        if kind == "error":
            error = data["error"]
            if isinstance(error, str):
                return [ProviderError(kind="error", message=error)]
            if not isinstance(error, dict):
                raise ProtocolError("'error' is neither an object nor a string")
            kind_text = opt_str(error, "type", "error") or str(error.get("code") or "error")
            return [ProviderError(kind=kind_text, message=opt_str(error, "message", "error") or "")]
        if kind == "empty":  # content-free; after the finish it says nothing (Stop stays the last event)
            return [KeepAlive()] if self._state is not _State.FINISHED else []
        choice = data["choices"][0]
        events = self._delta(need_object(choice, "delta", "choice"))
        if kind == "finish":
            raw = need_str(choice, "finish_reason", "choice")
            events += [BlockStop(index=i) for i in range(len(self._calls))]
            if self.json_mode and self._content_seen:
                events.append(BlockStop(index=0))
            events.append(Stop(reason=stop_reason(STOP_REASONS, raw), raw=raw))
        return events

    def _delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        content = opt_str(delta, "content", "delta")
        if content:
            if self.json_mode:
                self._content_seen = True
                self.carriers.append("/choices/0/delta/content")
                events.append(ArgsDelta(text=content, index=0))
            else:
                events.append(TextDelta(text=content))
        refusal = opt_str(delta, "refusal", "delta")
        if refusal:
            events.append(TextDelta(text=refusal))
        calls = delta.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise ProtocolError("delta.tool_calls is not a list")
            self._tool_calls_seen = True
            for position, call in enumerate(calls):
                if not isinstance(call, dict):
                    raise ProtocolError("a tool_calls entry is not an object")
                function = call.get("function") or {}
                if not isinstance(function, dict):
                    raise ProtocolError("tool call 'function' is not an object")
                index = need_int(call, "index", "tool call")
                carrier = f"/choices/0/delta/tool_calls/{position}/function/arguments"
                events += self._call(index, opt_str(call, "id", "tool call"), function, carrier)
            return events
        legacy = delta.get("function_call")
        if legacy is not None and not self._tool_calls_seen:
            if not isinstance(legacy, dict):
                raise ProtocolError("delta.function_call is not an object")
            call_id = "function_call" if not self._calls else None
            events += self._call(0, call_id, legacy, "/choices/0/delta/function_call/arguments")
        return events

    def _call(self, index: int, call_id: str | None, function: dict[str, Any], carrier: str) -> list[StreamEvent]:
        """One fragment of tool call `index`: its name and id count only in its first fragment."""
        if self.json_mode:
            raise ProtocolError("a tool call in a structured-output (json_schema / json_object) stream")
        name = opt_str(function, "name", "tool call function")
        if index == len(self._calls):
            if not name or not call_id:
                raise ProtocolError(f"the first fragment of tool call {index} lacks its id or name")
            self._calls.append(name)
        elif index > len(self._calls) or index < 0:
            raise ProtocolError(f"tool call index {index} out of order (have {len(self._calls)})")
        elif name and name != self._calls[index]:
            raise ProtocolError(f"tool call {index} changed its name to {name!r}")
        arguments = opt_str(function, "arguments", "tool call function")
        if not arguments:
            return []
        self.carriers.append(carrier)
        return [ArgsDelta(text=arguments, index=index)]


def chat_body(request: ExtractionRequest) -> dict[str, Any]:
    """The Chat Completions body for `request`, structure forced as `request.structured` says:

    tools        one function tool with `strict: true` and the strict schema, forced by name
                 (only a *named* tool_choice forces it on llama.cpp; "required" does not)
    json_schema  `response_format: {"type": "json_schema", "json_schema": {name, schema, strict}}`
    json_object  `response_format: {"type": "json_object", "schema": ...}` (llama.cpp, vLLM ...)

    OpenAI's own API gets the strict schema without the keywords it does not support
    (`openai_subset`); OpenAI-compatible servers get all of it, and `max_tokens` (a llama.cpp server otherwise writes until
    its context is full).
    """
    body: dict[str, Any] = {
        "model": request.model_name,
        "messages": [{"role": "user", "content": request.prompt()}],
    }
    strict = strict_json_schema(request.json_schema())
    if request.provider == "openai-chat":  # OpenAI's own API: only the keywords it supports
        strict = openai_subset(strict)
    if request.structured == "tools":
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": request.tool_name,
                    "description": f"Record the {request.schema_name} extracted from the document.",
                    "parameters": strict,
                    "strict": True,
                },
            }
        ]
        body["tool_choice"] = {"type": "function", "function": {"name": request.tool_name}}
    elif request.structured == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.tool_name,
                "schema": strict,
                "strict": True,
            },
        }
    else:
        body["response_format"] = {"type": "json_object", "schema": request.json_schema()}
    if request.provider == "openai-compatible":
        body["max_tokens"] = request.output_limit
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return body
