"""The OpenAI Responses wire: `POST /v1/responses`, SSE with `event:` + `data:` lines.

Every payload carries `type` and an increasing `sequence_number` from 0. A function tool streams
as `response.function_call_arguments.delta`; structured output through `text.format` (type
`json_schema`), or a request without tools, streams as `response.output_text.delta`. The last event
is `response.completed` (or `response.incomplete` on a token limit); there is no `[DONE]`.
Keep-alives are SSE comment lines.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from livefill.demo.protocol import FaultName
from livefill.demo.wires import SERVER_ERROR, BadRequest, ParsedRequest, Refusal, StopKind, Tokens, dumps, new_id, require_object, sse, text_of
from livefill.demo.wires.openai_chat import KEEPALIVE, openai_error, openai_refusal


def _usage(input_tokens: int, tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + tokens,
    }


class _Ids:
    def __init__(self) -> None:
        self.response = new_id("resp_", 40)
        self.item = new_id("fc_", 40)
        self.message = new_id("msg_", 40)
        self.call = new_id("call_")
        self.created = int(time.time())


def _response(request: ParsedRequest, ids: _Ids, *, status: str, output: list[Any], usage: Any, tools: Any) -> dict:
    return {
        "id": ids.response,
        "object": "response",
        "created_at": ids.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": request.extra.get("instructions"),
        "max_output_tokens": request.extra.get("max_output_tokens"),
        "model": request.model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": request.extra.get("text") or {"format": {"type": "text"}},
        "tool_choice": request.extra.get("tool_choice", "auto"),
        "tools": tools,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


class ResponsesStream:
    """Frames of one streamed response."""

    pings_while_streaming = False

    def __init__(self, request: ParsedRequest, *, tool_name: str, input_tokens: int) -> None:
        self.request = request
        self.tool_name = tool_name
        self.input_tokens = input_tokens
        self.ids = _Ids()
        self.seq = 0
        self.tools = list(request.extra.get("tools") or [])

    def _event(self, kind: str, payload: dict[str, Any]) -> bytes:
        data = {"type": kind, **payload, "sequence_number": self.seq}
        self.seq += 1
        return sse(dumps(data), kind)

    def _item(self, *, status: str, text: str) -> dict[str, Any]:
        if self.request.as_text:
            content = [] if status == "in_progress" and not text else [self._part(text)]
            return {"id": self.ids.message, "type": "message", "status": status, "content": content, "role": "assistant"}
        return {
            "id": self.ids.item,
            "type": "function_call",
            "status": status,
            "arguments": text,
            "call_id": self.ids.call,
            "name": self.tool_name,
        }

    @staticmethod
    def _part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}

    def _response(self, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return _response(self.request, self.ids, status=status, output=output, usage=usage, tools=self.tools)

    @property
    def _item_id(self) -> str:
        return self.ids.message if self.request.as_text else self.ids.item

    def preamble(self) -> list[bytes]:
        frames = [
            self._event("response.created", {"response": self._response("in_progress", [], None)}),
            self._event("response.in_progress", {"response": self._response("in_progress", [], None)}),
            self._event(
                "response.output_item.added", {"output_index": 0, "item": self._item(status="in_progress", text="")}
            ),
        ]
        if self.request.as_text:
            frames.append(
                self._event(
                    "response.content_part.added",
                    {"item_id": self.ids.message, "output_index": 0, "content_index": 0, "part": self._part("")},
                )
            )
        return frames

    def token_frames(self, pieces: Sequence[str]) -> Iterator[Tokens]:
        for piece in pieces:
            if self.request.as_text:
                frame = self._event(
                    "response.output_text.delta",
                    {"item_id": self.ids.message, "output_index": 0, "content_index": 0, "delta": piece, "logprobs": []},
                )
            else:
                frame = self._event(
                    "response.function_call_arguments.delta",
                    {"item_id": self.ids.item, "output_index": 0, "delta": piece},
                )
            yield Tokens(data=frame, count=1)

    def finish(self, stop: StopKind, text: str, tokens: int) -> list[bytes]:
        usage = _usage(self.input_tokens, tokens)
        if stop is StopKind.LENGTH:
            item = self._item(status="incomplete", text=text)
            return [
                self._event("response.output_item.done", {"output_index": 0, "item": item}),
                self._event("response.incomplete", {"response": self._response("incomplete", [item], usage)}),
            ]
        frames = []
        if self.request.as_text:
            frames.append(
                self._event(
                    "response.output_text.done",
                    {"item_id": self.ids.message, "output_index": 0, "content_index": 0, "text": text, "logprobs": []},
                )
            )
            frames.append(
                self._event(
                    "response.content_part.done",
                    {"item_id": self.ids.message, "output_index": 0, "content_index": 0, "part": self._part(text)},
                )
            )
        else:
            frames.append(
                self._event(
                    "response.function_call_arguments.done",
                    {"item_id": self.ids.item, "output_index": 0, "name": self.tool_name, "arguments": text},
                )
            )
        item = self._item(status="completed", text=text)
        frames.append(self._event("response.output_item.done", {"output_index": 0, "item": item}))
        frames.append(self._event("response.completed", {"response": self._response("completed", [item], usage)}))
        return frames

    def error_frame(self) -> bytes:
        return self._event(
            "error",
            {"code": "server_error", "message": "The server had an error while processing your request.", "param": None},
        )

    def keepalive(self) -> bytes | None:
        return KEEPALIVE


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        user = [m for m in value if isinstance(m, Mapping) and m.get("role", "user") == "user" and "content" in m]
        if user:
            return text_of(user[-1]["content"])
    return ""


class ResponsesWire:
    """Request parsing and error shape of the Responses API."""

    name = "openai-responses"
    content_type = "text/event-stream; charset=utf-8"
    server_error = SERVER_ERROR

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest:
        body = require_object(body)
        if "input" not in body:
            raise BadRequest("Missing required parameter: 'input'.")
        tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping) and t.get("type") == "function"]
        names = tuple(str(t.get("name", "")) for t in tools)
        choice = body.get("tool_choice")
        forced = None
        if isinstance(choice, Mapping) and choice.get("type") == "function":
            forced = str(choice.get("name", "")) or None
            if forced not in names:
                raise BadRequest(f"Invalid value for 'tool_choice': function {forced!r} is not in tools.")
        elif len(names) == 1 and choice != "none":
            forced = names[0]
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, Mapping) else None
        json_text = isinstance(fmt, Mapping) and fmt.get("type") in ("json_schema", "json_object")
        return ParsedRequest(
            user_text=_input_text(body.get("input")),
            model=str(body.get("model") or "gpt-demo"),
            stream=bool(body.get("stream", False)),
            tool_name=forced,
            tool_names=names,
            as_text=json_text or not names or choice == "none",
            extra={
                "tools": list(body.get("tools") or []),
                "text": text if isinstance(text, Mapping) else None,
                "tool_choice": choice if choice is not None else "auto",
                "instructions": body.get("instructions"),
                "max_output_tokens": body.get("max_output_tokens"),
            },
        )

    def encode(self, body: Any) -> bytes:
        return dumps(body).encode()

    def error_body(self, kind: str, message: str, request_id: str) -> Any:
        return openai_error(kind, message)

    def refusal(self, fault: FaultName, model: str, request_id: str) -> Refusal:
        refusal = openai_refusal(fault, model)
        if fault is FaultName.HTTP_400:  # the Responses API names the schema's place in its body
            error = {**refusal.body["error"], "param": "text.format.schema", "code": "invalid_json_schema"}
            error["message"] = "Invalid schema for response_format 'record': 'required' is required to be supplied and to be an array including every key in properties."
            return Refusal(status=refusal.status, body={"error": error}, headers=refusal.headers)
        return refusal

    def response_headers(self, request_id: str) -> list[tuple[str, str]]:
        return [("x-request-id", request_id), ("openai-processing-ms", "1")]

    def open_stream(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> ResponsesStream:
        return ResponsesStream(request, tool_name=tool_name, input_tokens=input_tokens)

    def complete(
        self, request: ParsedRequest, *, tool_name: str, text: str, stop: StopKind, tokens: int, input_tokens: int
    ) -> Any:
        stream = ResponsesStream(request, tool_name=tool_name, input_tokens=input_tokens)
        status = "incomplete" if stop is StopKind.LENGTH else "completed"
        item = stream._item(status=status, text=text)
        return stream._response(status, [item], _usage(input_tokens, tokens))
