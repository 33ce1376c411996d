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
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from core.errors import ProtocolError, Truncated
from core.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, StreamEvent, TextDelta
from core.providers.base import load_object, need_int, need_list, need_object, need_str, opt_str, stop_reason
from core.providers.request import ExtractionRequest
from core.sse import ServerSentEvent

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

    def __init__(self) -> None:
        self._state = _State.START
        self._calls: list[str] = []  # function name per tool-call index
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
            events.append(Stop(reason=stop_reason(STOP_REASONS, raw), raw=raw))
        return events

    def _delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        content = opt_str(delta, "content", "delta")
        if content:
            events.append(TextDelta(text=content))
        refusal = opt_str(delta, "refusal", "delta")
        if refusal:
            events.append(TextDelta(text=refusal))
        calls = delta.get("tool_calls")
        if calls is None:
            return events
        if not isinstance(calls, list):
            raise ProtocolError("delta.tool_calls is not a list")
        for position, call in enumerate(calls):
            if not isinstance(call, dict):
                raise ProtocolError("a tool_calls entry is not an object")
            index = need_int(call, "index", "tool call")
            function = call.get("function") or {}
            if not isinstance(function, dict):
                raise ProtocolError("tool call 'function' is not an object")
            name = opt_str(function, "name", "tool call function")
            if index == len(self._calls):
                if not name or not opt_str(call, "id", "tool call"):
                    raise ProtocolError(f"the first fragment of tool call {index} lacks its id or name")
                self._calls.append(name)
            elif index > len(self._calls) or index < 0:
                raise ProtocolError(f"tool call index {index} out of order (have {len(self._calls)})")
            elif name and name != self._calls[index]:
                raise ProtocolError(f"tool call {index} changed its name to {name!r}")
            arguments = opt_str(function, "arguments", "tool call function")
            if arguments:
                self.carriers.append(f"/choices/0/delta/tool_calls/{position}/function/arguments")
                events.append(ArgsDelta(text=arguments, index=index))
        return events


def chat_body(request: ExtractionRequest) -> dict[str, Any]:
    """The Chat Completions body for `request`: one function tool, forced, streamed."""
    return {
        "model": request.model_name,
        "messages": [{"role": "user", "content": request.prompt()}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": request.tool_name,
                    "description": f"Record the {request.schema_name} extracted from the document.",
                    "parameters": request.json_schema(),
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": request.tool_name}},
        "stream": True,
        "stream_options": {"include_usage": True},
    }
