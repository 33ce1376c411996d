"""The streaming wires the demo provider speaks, one module per wire (see docs/wires.md).

How this works
--------------
A wire is split in two halves, both free of IO:

- a `WireSpec` reads a request body into a `ParsedRequest` (the user text, the forced tool, the
  model, stream or not, ...) and knows the wire's HTTP error shape and content type;
- a per-request `WireStream` turns pieces of model output into exact frames: `preamble()`
  (frames before the first token), `token_frames(pieces)` (one frame per event, each carrying
  some tokens), `finish(stop, text)` (the terminal frames), `error_frame()` (the mid-stream error)
  and `keepalive()` (a ping, or None where the wire has none; Anthropic pings every few seconds,
  the OpenAI wires only send an SSE comment while stalled, Ollama and raw have nothing).
  `complete(...)` builds the non-streaming body.

`livefill.demo.faults.program` combines a plan (pieces + fault) with a `WireStream` into a list of
`Step`s; `livefill.demo.streaming` executes the steps against a socket with timing, slicing and
cancel detection. So every byte a wire emits can be checked in a unit test without a server.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from livefill.demo.protocol import FaultName

__all__ = [
    "Write",
    "Tokens",
    "Stall",
    "Abort",
    "Step",
    "StopKind",
    "ParsedRequest",
    "BadRequest",
    "Refusal",
    "RETRY_AFTER_S",
    "SERVER_ERROR",
    "ServerError",
    "WireSpec",
    "WireStream",
    "dumps",
    "sse",
    "new_id",
]


# --- steps -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Write:
    """Bytes written as soon as the step is reached (headers of the stream, terminal frames)."""

    data: bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class Tokens:
    """A frame carrying `count` output tokens, written when those tokens are due."""

    data: bytes
    count: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Stall:
    """Content stops here; with `pings` the wire's keep-alive keeps coming, else silence."""

    pings: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Abort:
    """Write `data` (part of an event) and break the connection."""

    data: bytes


Step = Write | Tokens | Stall | Abort


class StopKind(Enum):
    COMPLETE = "complete"  # the model finished (tool_use / tool_calls / stop / completed)
    LENGTH = "length"  # cut off by the token limit (max_tokens / length / incomplete)


# --- requests ----------------------------------------------------------------------------------


class BadRequest(Exception):
    """The request cannot be served; answered with HTTP `status` in the wire's error shape."""

    def __init__(self, message: str, *, status: int = 400, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind


#: The `retry-after` (seconds) a rate-limited demo request is told to wait.
RETRY_AFTER_S = 20


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """An HTTP error answer in a wire's own error shape: the status, the JSON body, extra headers.

    `WireSpec.refusal(fault, model, request_id)` builds one for each HTTP fault
    (`livefill.demo.protocol.HTTP_FAULTS`) as the real provider answers it on that wire."""

    status: int
    body: Any
    headers: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def headers_for(status: int) -> tuple[tuple[str, str], ...]:
        return (("retry-after", str(RETRY_AFTER_S)),) if status == 429 else ()


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerError:
    """What a wire answers a whole (not streamed) response with when the `error` fault is asked
    for: the status, and the error kind and message of `WireSpec.error_body`."""

    status: int
    kind: str
    message: str


#: The server error of a wire with none of its own (OpenAI's shape and wording).
SERVER_ERROR = ServerError(status=500, kind="server_error", message="The server had an error while processing your request.")


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedRequest:
    """What the demo provider needs from a request body."""

    user_text: str
    model: str
    stream: bool
    tool_name: str | None = None  # the forced tool, or the only tool given
    tool_names: tuple[str, ...] = ()  # every tool the request offered
    as_text: bool = False  # the JSON goes out as text (json_schema format / no tools), not a tool call
    fine_grained: bool = False  # Anthropic: raw, unbuffered tool-input fragments
    include_usage: bool = False  # OpenAI chat: stream_options.include_usage
    extra: Mapping[str, Any] = field(default_factory=dict)

    def resolve_tool(self, default: str) -> str:
        """The tool name the tool call carries: forced, else the only one, else `default`."""
        if self.tool_name:
            return self.tool_name
        if default in self.tool_names or not self.tool_names:
            return default
        return self.tool_names[0]


class WireStream(Protocol):
    """Frames of one streamed response (see the module comment)."""

    def preamble(self) -> list[bytes]: ...

    def token_frames(self, pieces: Sequence[str]) -> Iterator[Tokens]: ...

    def finish(self, stop: StopKind, text: str, tokens: int) -> list[bytes]: ...

    def error_frame(self) -> bytes: ...

    def keepalive(self) -> bytes | None: ...

    #: whether the keep-alive also comes every few seconds while content streams (Anthropic's
    #: pings), not only during a stall
    pings_while_streaming: bool


class WireSpec(Protocol):
    """A wire's request parsing, error shape and stream factory."""

    name: str
    content_type: str
    server_error: ServerError

    def parse(self, body: Any, headers: Mapping[str, str]) -> ParsedRequest: ...

    def error_body(self, kind: str, message: str, request_id: str) -> Any: ...

    def encode(self, body: Any) -> bytes:
        """A whole (not streamed) JSON body as the provider writes it."""
        ...

    def refusal(self, fault: FaultName, model: str, request_id: str) -> Refusal: ...

    def response_headers(self, request_id: str) -> list[tuple[str, str]]: ...

    def open_stream(self, request: ParsedRequest, *, tool_name: str, input_tokens: int, seed: int) -> WireStream: ...

    def complete(self, request: ParsedRequest, *, tool_name: str, text: str, stop: StopKind, tokens: int, input_tokens: int) -> Any: ...


# --- helpers -----------------------------------------------------------------------------------


def dumps(obj: Any) -> str:
    """Compact JSON with UTF-8 kept as is, the way the providers write it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def sse(data: str, event: str | None = None) -> bytes:
    """One SSE event: an optional `event:` line, one `data:` line, a blank line (LF endings)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str, length: int = 24) -> str:
    """A provider-looking id such as `msg_01XFDUDYJgAACzvnptvVoYEL`."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


def require_object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest("the request body must be a JSON object")
    return body


def last_user_message(body: Mapping[str, Any], missing: str) -> Mapping[str, Any]:
    """The last `role: user` entry of a chat-style `messages` list (`missing`: the wire's own
    message when the list is absent or empty)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest(missing)
    user = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    if not user:
        raise BadRequest("messages: at least one user message is required")
    return user[-1]
