"""The OpenAI Chat Completions wire: `POST /v1/chat/completions`, SSE with `data:` lines only.

A forced (or only) function tool streams as `tool_calls[0].function.arguments` fragments; with
`response_format: {"type": "json_schema"}`, or no tools, the JSON streams as `content`. The stream
ends with `data: [DONE]`. Keep-alives are SSE comment lines (`: keep-alive`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from livefill.demo.protocol import FaultName
from livefill.demo.wires import (
    SERVER_ERROR,
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

DONE = b"data: [DONE]\n\n"
KEEPALIVE = b": keep-alive\n\n"


class ChatStream:
    """Frames of one streamed chat completion."""

    pings_while_streaming = False

    def __init__(self, request: ParsedRequest, *, tool_name: str, input_tokens: int) -> None:
        self.request = request
        self.tool_name = tool_name
        self.input_tokens = input_tokens
        self.id = new_id("chatcmpl-", 29)
        self.call_id = new_id("call_")
        self.created = int(time.time())

    def _chunk(self, delta: Mapping[str, Any], finish_reason: str | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.request.model,
            "system_fingerprint": "fp_demo",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if self.request.include_usage:
            chunk["usage"] = None
        return sse(dumps(chunk))

    def preamble(self) -> list[bytes]:
        if self.request.as_text:
            delta: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
        else:
            delta = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": self.call_id,
                        "type": "function",
                        "function": {"name": self.tool_name, "arguments": ""},
                    }
                ],
                "refusal": None,
            }
        return [self._chunk(delta)]

    def token_frames(self, pieces: Sequence[str]) -> Iterator[Tokens]:
        for piece in pieces:
            if self.request.as_text:
                delta: dict[str, Any] = {"content": piece}
            else:
                delta = {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
            yield Tokens(data=self._chunk(delta), count=1)

    def finish(self, stop: StopKind, text: str, tokens: int) -> list[bytes]:
        if stop is StopKind.LENGTH:
            reason = "length"
        else:
            reason = "stop" if self.request.as_text else "tool_calls"
        frames = [self._chunk({}, reason)]
        if self.request.include_usage:
            usage = {
                "prompt_tokens": self.input_tokens,
                "completion_tokens": tokens,
                "total_tokens": self.input_tokens + tokens,
            }
            frames.append(
                sse(
                    dumps(
                        {
                            "id": self.id,
                            "object": "chat.completion.chunk",
                            "created": self.created,
                            "model": self.request.model,
                            "system_fingerprint": "fp_demo",
                            "choices": [],
                            "usage": usage,
                        }
                    )
                )
            )
        frames.append(DONE)
        return frames

    def error_frame(self) -> bytes:
        return sse(
            dumps(
                {
                    "error": {
                        "message": "The server had an error while processing your request. Sorry about that!",
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                }
            )
        )

    def keepalive(self) -> bytes | None:
        return KEEPALIVE


def openai_error(kind: str, message: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


#: The HTTP faults as the OpenAI APIs answer them: status, type, code, param, message ({model}).
OPENAI_REFUSALS: dict[FaultName, tuple[int, str, str | None, str | None, str]] = {
    FaultName.HTTP_400: (
        400,
        "invalid_request_error",
        "invalid_function_parameters",
        "tools[0].function.parameters",
        "Invalid schema for function 'record': 'additionalProperties' is required to be supplied and to be false.",
    ),
    FaultName.HTTP_401: (
        401,
        "invalid_request_error",
        "invalid_api_key",
        None,
        "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
    ),
    FaultName.HTTP_403: (
        403,
        "invalid_request_error",
        None,
        None,
        "You have insufficient permissions for this operation. Missing scopes: model.request.",
    ),
    FaultName.HTTP_404: (
        404,
        "invalid_request_error",
        "model_not_found",
        None,
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    FaultName.HTTP_429: (
        429,
        "tokens",
        "rate_limit_exceeded",
        None,
        "Rate limit reached for {model} on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. "
        "Please try again in 20s.",
    ),
    FaultName.HTTP_500: (
        500,
        "server_error",
        None,
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    FaultName.HTTP_503: (503, "server_error", None, None, "Service Unavailable"),
    FaultName.OVERLOADED: (503, "server_error", None, None, "The engine is currently overloaded, please try again later"),
}


def openai_refusal(fault: FaultName, model: str) -> Refusal:
    """An HTTP fault in the OpenAI error shape (Chat Completions and Responses alike)."""
    status, kind, code, param, message = OPENAI_REFUSALS[fault]
    return Refusal(status=status, body=openai_error(kind, message.format(model=model), code, param), headers=Refusal.headers_for(status))


class ChatWire:
    """Request parsing and error shape of Chat Completions."""

    name = "openai-chat"
    content_type = "text/event-stream; charset=utf-8"
    server_error = SERVER_ERROR

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest:
        body = require_object(body)
        user = last_user_message(body, "Missing required parameter: 'messages'.")
        tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)]
        names = tuple(
            str((t.get("function") or {}).get("name", "")) for t in tools if isinstance(t.get("function"), Mapping)
        )
        choice = body.get("tool_choice")
        forced = None
        if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
            forced = str(choice["function"].get("name", "")) or None
            if forced not in names:
                raise BadRequest(f"Invalid value for 'tool_choice': function {forced!r} is not in tools.")
        elif len(names) == 1 and choice != "none":
            forced = names[0]
        response_format = body.get("response_format")
        json_text = isinstance(response_format, Mapping) and response_format.get("type") in ("json_schema", "json_object")
        options = body.get("stream_options")
        return ParsedRequest(
            user_text=text_of(user.get("content")),
            model=str(body.get("model") or "gpt-demo"),
            stream=bool(body.get("stream", False)),
            tool_name=forced,
            tool_names=names,
            as_text=json_text or not names or choice == "none",
            include_usage=isinstance(options, Mapping) and bool(options.get("include_usage")),
        )

    def encode(self, body: Any) -> bytes:
        return dumps(body).encode()

    def error_body(self, kind: str, message: str, request_id: str) -> Any:
        return openai_error(kind, message)

    def refusal(self, fault: FaultName, model: str, request_id: str) -> Refusal:
        return openai_refusal(fault, model)

    def response_headers(self, request_id: str) -> list[tuple[str, str]]:
        return [("x-request-id", request_id), ("openai-processing-ms", "1")]

    def open_stream(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> ChatStream:
        return ChatStream(request, tool_name=tool_name, input_tokens=input_tokens)

    def complete(
        self, request: ParsedRequest, *, tool_name: str, text: str, stop: StopKind, tokens: int, input_tokens: int
    ) -> Any:
        if request.as_text:
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
            reason = "stop"
        else:
            message = {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {"id": new_id("call_"), "type": "function", "function": {"name": tool_name, "arguments": text}}
                ],
            }
            reason = "tool_calls"
        if stop is StopKind.LENGTH:
            reason = "length"
        return {
            "id": new_id("chatcmpl-", 29),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "system_fingerprint": "fp_demo",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reason}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": tokens, "total_tokens": input_tokens + tokens},
        }
