"""The Ollama wire: `POST /api/chat` and `POST /api/generate`, NDJSON.

One compact JSON object per line, escaped the way Go's encoder does it (`<`, `>`, `&`, U+2028,
U+2029 as `\\uXXXX`), so no raw U+2028 ever sits inside a line. With `format` (a JSON schema or
"json") the JSON text streams inside `message.content` (chat) or `response` (generate). A chat
request with tools and no `format` gets one whole `tool_calls` message, as Ollama sends tool calls
whole. Ollama has no keep-alive frame; a mid-stream error is a line `{"error": "..."}`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from livefill.demo.protocol import FaultName
from livefill.demo.wires import SERVER_ERROR, BadRequest, ParsedRequest, Refusal, StopKind, Tokens, dumps, require_object, text_of

_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_GO_TABLE = str.maketrans(_GO_ESCAPES)


def go_dumps(obj: Any) -> str:
    """Compact JSON escaped like Go's encoding/json (these characters only occur inside strings)."""
    return dumps(obj).translate(_GO_TABLE)


def _line(obj: Any) -> bytes:
    return (go_dumps(obj) + "\n").encode()


def _now() -> str:
    stamp = datetime.now(timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond:06d}" + "Z"


class OllamaStream:
    """Lines of one streamed chat or generate response."""

    pings_while_streaming = False

    def __init__(self, request: ParsedRequest, *, tool_name: str, input_tokens: int) -> None:
        self.request = request
        self.tool_name = tool_name
        self.input_tokens = input_tokens
        self.generate = bool(request.extra.get("generate"))
        self.started = time.monotonic_ns()

    def _chunk(self, content: str, **rest: Any) -> dict[str, Any]:
        if self.generate:
            return {"model": self.request.model, "created_at": _now(), "response": content, **rest}
        return {
            "model": self.request.model,
            "created_at": _now(),
            "message": {"role": "assistant", "content": content},
            **rest,
        }

    def preamble(self) -> list[bytes]:
        return []

    def token_frames(self, pieces: Sequence[str]) -> Iterator[Tokens]:
        if self.request.as_text:
            for piece in pieces:
                yield Tokens(data=_line(self._chunk(piece, done=False)), count=1)
        else:
            # Tool calls arrive whole: the whole call is one line, sent when its last token is due.
            if not pieces:
                return
            if len(pieces) > 1:
                yield Tokens(data=b"", count=len(pieces) - 1)  # produced, not yet written
            text = "".join(pieces)
            try:
                arguments = json.loads(text)
            except ValueError:
                arguments = text
            chunk = self._chunk("", done=False)
            chunk["message"]["tool_calls"] = [{"function": {"name": self.tool_name, "arguments": arguments}}]
            yield Tokens(data=_line(chunk), count=1)

    def finish(self, stop: StopKind, text: str, tokens: int) -> list[bytes]:
        elapsed = max(1, time.monotonic_ns() - self.started)
        return [
            _line(
                self._chunk(
                    "",
                    done=True,
                    done_reason="length" if stop is StopKind.LENGTH else "stop",
                    total_duration=elapsed,
                    load_duration=elapsed // 20,
                    prompt_eval_count=self.input_tokens,
                    prompt_eval_duration=elapsed // 10,
                    eval_count=tokens,
                    eval_duration=elapsed - elapsed // 20 - elapsed // 10,
                )
            )
        ]

    def error_frame(self) -> bytes:
        return _line({"error": "an error was encountered while running the model: unexpected EOF"})

    def keepalive(self) -> bytes | None:
        return None


#: The HTTP faults as Ollama (or a proxy in front of it) answers them: status, `error` ({model}).
REFUSALS: dict[FaultName, tuple[int, str]] = {
    FaultName.HTTP_400: (400, 'invalid format: expected "json" or a valid JSON schema'),
    FaultName.HTTP_401: (401, "unauthorized"),
    FaultName.HTTP_403: (403, "forbidden"),
    FaultName.HTTP_404: (404, 'model "{model}" not found, try pulling it first'),
    FaultName.HTTP_429: (429, "too many requests"),
    FaultName.HTTP_500: (500, "llama runner process has terminated: exit status 2"),
    FaultName.HTTP_503: (503, "server busy, please try again.  maximum pending requests exceeded"),
    FaultName.OVERLOADED: (503, "server busy, please try again.  maximum pending requests exceeded"),
}


class OllamaWire:
    """Request parsing and error shape of Ollama's chat and generate endpoints."""

    content_type = "application/x-ndjson"
    server_error = SERVER_ERROR

    def __init__(self, *, generate: bool) -> None:
        self.generate = generate
        self.name = "ollama-generate" if generate else "ollama"

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest:
        body = require_object(body)
        if not body.get("model"):
            raise BadRequest("model is required")
        fmt = body.get("format")
        if self.generate:
            if not isinstance(body.get("prompt"), str):
                raise BadRequest("prompt is required")
            user_text = body["prompt"]
            names: tuple[str, ...] = ()
        else:
            messages = body.get("messages")
            if not isinstance(messages, list):
                raise BadRequest("messages is required")
            user = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
            user_text = text_of(user[-1].get("content")) if user else ""
            tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)]
            names = tuple(str((t.get("function") or {}).get("name", "")) for t in tools)
        return ParsedRequest(
            user_text=user_text,
            model=str(body["model"]),
            stream=bool(body.get("stream", True)),  # Ollama streams unless told otherwise
            tool_name=names[0] if len(names) == 1 else None,
            tool_names=names,
            as_text=bool(fmt) or not names,
            extra={"generate": self.generate},
        )

    def encode(self, body: Any) -> bytes:
        return ollama_body(body)  # Go-escaped, as Ollama writes it

    def error_body(self, kind: str, message: str, request_id: str) -> Any:
        return {"error": message}

    def refusal(self, fault: FaultName, model: str, request_id: str) -> Refusal:
        status, message = REFUSALS[fault]
        return Refusal(status=status, body={"error": message.format(model=model)}, headers=Refusal.headers_for(status))

    def response_headers(self, request_id: str) -> list[tuple[str, str]]:
        return [("x-request-id", request_id)]

    def open_stream(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> OllamaStream:
        return OllamaStream(request, tool_name=tool_name, input_tokens=input_tokens)

    def complete(
        self, request: ParsedRequest, *, tool_name: str, text: str, stop: StopKind, tokens: int, input_tokens: int
    ) -> Any:
        stream = OllamaStream(request, tool_name=tool_name, input_tokens=input_tokens)
        final = json.loads(stream.finish(stop, text, tokens)[0])
        if request.as_text:
            if self.generate:
                final["response"] = text
            else:
                final["message"]["content"] = text
        else:
            try:
                arguments = json.loads(text)
            except ValueError:
                arguments = text
            final["message"]["tool_calls"] = [{"function": {"name": tool_name, "arguments": arguments}}]
        return final


def ollama_body(obj: Any) -> bytes:
    """A whole (non-streamed) Ollama JSON body, Go-escaped."""
    return go_dumps(obj).encode()
