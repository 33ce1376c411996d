"""The Anthropic Messages wire: `POST /v1/messages`, SSE with `event:` + `data:` lines.

Default mode sends the tool input in short buffered chunks (several pieces per
`input_json_delta`); with `anthropic-beta: fine-grained-tool-streaming-2025-05-14`, or
`"eager_input_streaming": true` on the tool, every piece goes out on its own. A request without
tools gets the JSON as a text block (`text_delta`s).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from livefill.demo.protocol import FaultName
from livefill.demo.generation import coalesce
from livefill.demo.wires import (
    ServerError,
    BadRequest,
    ParsedRequest,
    Refusal,
    StopKind,
    Tokens,
    dumps,
    last_user_message,
    new_id,
    require_object,
    sse,
    text_of,
)

FINE_GRAINED_BETA = "fine-grained-tool-streaming-2025-05-14"
PING = sse('{"type": "ping"}', "ping")  # the real API writes this one with a space


class AnthropicStream:
    """Frames of one streamed Messages response."""

    pings_while_streaming = True

    def __init__(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> None:
        self.request = request
        self.tool_name = tool_name
        self.input_tokens = input_tokens
        self.seed = seed
        self.message_id = new_id("msg_01")
        self.tool_id = new_id("toolu_01")

    def preamble(self) -> list[bytes]:
        message = {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.request.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 1},
        }
        if self.request.as_text:
            block: dict[str, Any] = {"type": "text", "text": ""}
        else:
            block = {"type": "tool_use", "id": self.tool_id, "name": self.tool_name, "input": {}}
        frames = [
            sse(dumps({"type": "message_start", "message": message}), "message_start"),
            sse(dumps({"type": "content_block_start", "index": 0, "content_block": block}), "content_block_start"),
            PING,
        ]
        if not self.request.as_text:
            frames.append(self._delta(""))  # the first input_json_delta is often empty
        return frames

    def _delta(self, text: str) -> bytes:
        if self.request.as_text:
            delta = {"type": "text_delta", "text": text}
        else:
            delta = {"type": "input_json_delta", "partial_json": text}
        return sse(dumps({"type": "content_block_delta", "index": 0, "delta": delta}), "content_block_delta")

    def token_frames(self, pieces: Sequence[str]) -> Iterator[Tokens]:
        if self.request.fine_grained or self.request.as_text:
            for piece in pieces:
                yield Tokens(data=self._delta(piece), count=1)
        else:
            for chunk in coalesce(pieces, self.seed):
                yield Tokens(data=self._delta("".join(chunk)), count=len(chunk))

    def finish(self, stop: StopKind, text: str, tokens: int) -> list[bytes]:
        if stop is StopKind.LENGTH:
            reason = "max_tokens"
        else:
            reason = "end_turn" if self.request.as_text else "tool_use"
        return [
            sse(dumps({"type": "content_block_stop", "index": 0}), "content_block_stop"),
            sse(
                dumps(
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": reason, "stop_sequence": None},
                        "usage": {"output_tokens": tokens},
                    }
                ),
                "message_delta",
            ),
            sse(dumps({"type": "message_stop"}), "message_stop"),
        ]

    def error_frame(self) -> bytes:
        return sse(dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}), "error")

    def keepalive(self) -> bytes | None:
        return PING


#: The HTTP faults as the Messages API answers them: status, error type, message ({model}).
REFUSALS: dict[FaultName, tuple[int, str, str]] = {
    FaultName.HTTP_400: (
        400,
        "invalid_request_error",
        "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12.",
    ),
    FaultName.HTTP_401: (401, "authentication_error", "invalid x-api-key"),
    FaultName.HTTP_403: (403, "permission_error", "Your API key does not have permission to use the specified resource."),
    FaultName.HTTP_404: (404, "not_found_error", "model: {model}"),
    FaultName.HTTP_429: (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50,000 input tokens per minute.",
    ),
    FaultName.HTTP_500: (500, "api_error", "Internal server error"),
    FaultName.HTTP_503: (503, "api_error", "Service unavailable"),
    FaultName.OVERLOADED: (529, "overloaded_error", "Overloaded"),
}


class AnthropicWire:
    """Request parsing and error shape of the Messages API."""

    name = "anthropic"
    content_type = "text/event-stream; charset=utf-8"
    server_error = ServerError(status=529, kind="overloaded_error", message="Overloaded")

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest:
        body = require_object(body)
        user = last_user_message(body, "messages: field required")
        tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)]
        names = tuple(str(t.get("name", "")) for t in tools)
        choice = body.get("tool_choice")
        forced = None
        if isinstance(choice, Mapping) and choice.get("type") == "tool":
            forced = str(choice.get("name", "")) or None
            if forced not in names:
                raise BadRequest(f"tool_choice: tool {forced!r} is not in tools")
        elif len(names) == 1:
            forced = names[0]
        betas = ",".join(headers.get("anthropic-beta", "").split())
        eager = any(t.get("eager_input_streaming") is True for t in tools if forced is None or t.get("name") == forced)
        return ParsedRequest(
            user_text=text_of(user.get("content")),
            model=str(body.get("model") or "claude-demo"),
            stream=bool(body.get("stream", False)),
            tool_name=forced,
            tool_names=names,
            as_text=not tools,
            fine_grained=FINE_GRAINED_BETA in betas.split(",") or eager,
        )

    def encode(self, body: Any) -> bytes:
        return dumps(body).encode()

    def error_body(self, kind: str, message: str, request_id: str) -> Any:
        return {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}

    def refusal(self, fault: FaultName, model: str, request_id: str) -> Refusal:
        status, kind, message = REFUSALS[fault]
        body = self.error_body(kind, message.format(model=model), request_id)
        return Refusal(status=status, body=body, headers=Refusal.headers_for(status))

    def response_headers(self, request_id: str) -> list[tuple[str, str]]:
        return [("request-id", request_id), ("anthropic-organization-id", "demo")]

    def open_stream(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> AnthropicStream:
        return AnthropicStream(request, tool_name=tool_name, input_tokens=input_tokens, seed=seed)

    def complete(
        self, request: ParsedRequest, *, tool_name: str, text: str, stop: StopKind, tokens: int, input_tokens: int
    ) -> Any:
        if request.as_text:
            block: dict[str, Any] = {"type": "text", "text": text}
            reason = "end_turn"
        else:
            try:
                value = json.loads(text)
            except ValueError:
                value = {}  # a cut-off or broken tool input has no parsed value
            block = {"type": "tool_use", "id": new_id("toolu_01"), "name": tool_name, "input": value}
            reason = "tool_use"
        if stop is StopKind.LENGTH:
            reason = "max_tokens"
        return {
            "id": new_id("msg_01"),
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": [block],
            "stop_reason": reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": tokens},
        }
