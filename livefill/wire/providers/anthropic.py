"""Anthropic Messages streaming vocabulary: SSE events -> unified stream events (sans-IO).

How this works
--------------
The stream is a fixed sequence (docs/wires.md):

    message_start, (content_block_start, content_block_delta*, content_block_stop)*,
    message_delta, message_stop            with `ping` allowed anywhere, `error` ending it early.

`_TRANSITIONS` is that sequence as a table: (state, event type) -> next state. Anything not in
the table is a protocol error, as is an SSE `event:` name that differs from the payload's
`type`, a block index out of order, or a delta type that does not belong to its block. Block
indices count 0, 1, 2 ... Tool blocks' `input_json_delta` fragments become `ArgsDelta` (index =
block index) and their `content_block_stop` a `BlockStop`; text blocks' `text_delta` become
`TextDelta`; thinking blocks are skipped. `message_delta` carries the stop reason, which
`message_stop` (the terminal) reports as `Stop`. `error` becomes `ProviderError` and ends the stream.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from livefill.errors import ProtocolError, Truncated
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, StreamEvent, TextDelta
from livefill.wire.providers.base import load_object, need_int, need_object, need_str, opt_str, stop_reason
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.sse import ServerSentEvent

__all__ = ["FINE_GRAINED_BETA", "STOP_REASONS", "AnthropicDecoder", "message_params", "request_headers"]

FINE_GRAINED_BETA = "fine-grained-tool-streaming-2025-05-14"

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.COMPLETE,
    "tool_use": StopReason.COMPLETE,
    "stop_sequence": StopReason.COMPLETE,
    "max_tokens": StopReason.LENGTH,
    "model_context_window_exceeded": StopReason.LENGTH,
    "refusal": StopReason.REFUSAL,
    "pause_turn": StopReason.OTHER,
}


class _State(Enum):
    START = "start"  # nothing yet: message_start must come first
    MESSAGE = "message"  # between content blocks
    BLOCK = "block"  # inside a content block
    ENDING = "ending"  # message_delta gave the stop reason; message_stop must follow
    DONE = "done"  # message_stop or error arrived: nothing may follow


_S = _State
_TRANSITIONS: dict[tuple[_State, str], _State] = {
    (_S.START, "message_start"): _S.MESSAGE,
    (_S.MESSAGE, "content_block_start"): _S.BLOCK,
    (_S.BLOCK, "content_block_delta"): _S.BLOCK,
    (_S.BLOCK, "content_block_stop"): _S.MESSAGE,
    (_S.MESSAGE, "message_delta"): _S.ENDING,
    (_S.ENDING, "message_delta"): _S.ENDING,
    (_S.ENDING, "message_stop"): _S.DONE,
    **{(s, "ping"): s for s in (_S.START, _S.MESSAGE, _S.BLOCK, _S.ENDING)},
    **{(s, "error"): _S.DONE for s in (_S.START, _S.MESSAGE, _S.BLOCK, _S.ENDING)},
}

_KNOWN = frozenset(kind for _, kind in _TRANSITIONS)

# content block type -> the delta types it may carry
_BLOCK_DELTAS: dict[str, frozenset[str]] = {
    "tool_use": frozenset({"input_json_delta"}),
    "text": frozenset({"text_delta", "citations_delta"}),
    "thinking": frozenset({"thinking_delta", "signature_delta"}),
    "redacted_thinking": frozenset(),
}


class AnthropicDecoder:
    """Decode one Anthropic Messages stream: `feed(ServerSentEvent) -> list[StreamEvent]`.

    `finished` turns true at `message_stop` or `error`. `close()` raises `livefill.errors.Truncated`
    if the stream ended before either; vocabulary breaches raise `livefill.errors.ProtocolError`.
    """

    def __init__(self) -> None:
        self._state = _State.START
        self._next_index = 0
        self._block_type = ""
        self._raw_stop: str | None = None
        self.finished = False
        self.carriers: list[str | None] = []  # per ArgsDelta of the last feed: where its text sat

    def feed(self, frame: ServerSentEvent) -> list[StreamEvent]:
        self.carriers = []
        data = load_object(frame.data, f"Anthropic {frame.event!r} event data")
        kind = need_str(data, "type", "Anthropic event")
        if frame.event != kind:
            raise ProtocolError(f"Anthropic SSE event {frame.event!r} carries a {kind!r} payload")
        nxt = _TRANSITIONS.get((self._state, kind))
        if nxt is None:
            if kind not in _KNOWN:
                raise ProtocolError(f"unknown Anthropic event type {kind!r}")
            raise ProtocolError(f"Anthropic {kind!r} event is not allowed {self._where()}")
        events = getattr(self, "_on_" + kind)(data)
        self._state = nxt
        self.finished = nxt is _State.DONE
        return events

    def close(self) -> list[StreamEvent]:
        if not self.finished:
            raise Truncated(f"the Anthropic stream ended {self._where()}, before message_stop")
        return []

    # -- one handler per event type ---------------------------------------------------------

    def _where(self) -> str:
        return {
            _State.START: "before message_start",
            _State.MESSAGE: "between content blocks",
            _State.BLOCK: f"inside content block {self._next_index - 1}",
            _State.ENDING: "after message_delta",
            _State.DONE: "after the end of the stream",
        }[self._state]

    def _on_message_start(self, data: dict[str, Any]) -> list[StreamEvent]:
        message = need_object(data, "message", "message_start")
        if message.get("role", "assistant") != "assistant":
            raise ProtocolError("message_start: role is not 'assistant'")
        return []

    def _on_content_block_start(self, data: dict[str, Any]) -> list[StreamEvent]:
        index = need_int(data, "index", "content_block_start")
        if index != self._next_index:
            raise ProtocolError(f"content_block_start index {index}, expected {self._next_index}")
        block = need_object(data, "content_block", "content_block_start")
        block_type = need_str(block, "type", "content_block")
        if block_type not in _BLOCK_DELTAS:
            raise ProtocolError(f"unknown Anthropic content block type {block_type!r}")
        if block_type == "tool_use":
            need_str(block, "name", "tool_use block")
        self._block_type = block_type
        self._next_index += 1
        return []

    def _open_index(self, data: dict[str, Any], what: str) -> int:
        index = need_int(data, "index", what)
        if index != self._next_index - 1:
            raise ProtocolError(f"{what} for block {index}, but block {self._next_index - 1} is open")
        return index

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        index = self._open_index(data, "content_block_delta")
        delta = need_object(data, "delta", "content_block_delta")
        delta_type = need_str(delta, "type", "content_block_delta delta")
        if delta_type not in _BLOCK_DELTAS[self._block_type]:
            raise ProtocolError(f"{delta_type!r} inside a {self._block_type!r} block")
        if delta_type == "input_json_delta":
            text = need_str(delta, "partial_json", "input_json_delta")
            if not text:
                return []
            self.carriers.append("/delta/partial_json")
            return [ArgsDelta(text=text, index=index)]
        if delta_type == "text_delta":
            text = need_str(delta, "text", "text_delta")
            return [TextDelta(text=text, index=index)] if text else []
        return []  # citations, thinking, signatures: nothing the form shows

    def _on_content_block_stop(self, data: dict[str, Any]) -> list[StreamEvent]:
        index = self._open_index(data, "content_block_stop")
        return [BlockStop(index=index)] if self._block_type == "tool_use" else []

    def _on_message_delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        delta = need_object(data, "delta", "message_delta")
        raw = opt_str(delta, "stop_reason", "message_delta")
        if raw is None:
            raise ProtocolError("message_delta without a stop_reason")
        self._raw_stop = raw
        return []

    def _on_message_stop(self, data: dict[str, Any]) -> list[StreamEvent]:
        raw = self._raw_stop or ""
        return [Stop(reason=stop_reason(STOP_REASONS, raw), raw=raw)]

    def _on_ping(self, data: dict[str, Any]) -> list[StreamEvent]:
        return [KeepAlive()]

    def _on_error(self, data: dict[str, Any]) -> list[StreamEvent]:
        error = need_object(data, "error", "error event")
        return [
            ProviderError(
                kind=opt_str(error, "type", "error event") or "error",
                message=opt_str(error, "message", "error event") or "",
            )
        ]


def message_params(request: ExtractionRequest) -> dict[str, Any]:
    """The Messages API body for `request`: one forced tool whose input schema is the schema
    (`tool_choice` of type `tool`), the model the user chose (else DEFAULT_MODELS), streamed.
    Fine-grained tool streaming is the beta header (`request_headers`), not a body field."""
    tool: dict[str, Any] = {
        "name": request.tool_name,
        "description": f"Record the {request.schema_name} extracted from the document.",
        "input_schema": request.json_schema(),
    }
    return {
        "model": request.model_name,
        "max_tokens": request.output_limit,
        "messages": [{"role": "user", "content": request.prompt()}],
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": request.tool_name},
        "stream": True,
    }


def request_headers(request: ExtractionRequest) -> dict[str, str]:
    """Extra headers: the demo knobs and, for fine-grained streaming, the beta header."""
    headers = dict(request.demo_headers)
    if request.fine_grained:
        headers["anthropic-beta"] = FINE_GRAINED_BETA
    return headers
