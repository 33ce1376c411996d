"""Ollama streaming vocabulary: NDJSON lines -> unified stream events (sans-IO).

How this works
--------------
Each line (already cut by livefill.wire.ndjson.NDJSONFramer) is one JSON object. With `"format": <json
schema>` the JSON being extracted streams as text inside the objects: `message.content` for
`/api/chat`, `response` for `/api/generate` — two protocols stacked, whole objects outside,
fragments inside. Those fragments become `ArgsDelta` (prose, with `json_mode=False`, `TextDelta`).
The line with `"done": true` is the terminal: `BlockStop` then `Stop` (`done_reason` `stop` ->
COMPLETE, `length` -> LENGTH). A line `{"error": "..."}` is a `ProviderError` and ends the stream.
Nothing may follow a terminal.
"""

from __future__ import annotations

import json
from typing import Any

from livefill.errors import ProtocolError, Truncated
from livefill.wire.events import ArgsDelta, BlockStop, ProviderError, Stop, StopReason, StreamEvent, TextDelta
from livefill.wire.providers.base import load_object, need, need_object, need_str, stop_reason
from livefill.wire.providers.request import ExtractionRequest

__all__ = ["STOP_REASONS", "OllamaDecoder", "chat_body"]

STOP_REASONS: dict[str, StopReason] = {
    "stop": StopReason.COMPLETE,
    "": StopReason.COMPLETE,  # servers before done_reason existed send none
    "length": StopReason.LENGTH,
}


class OllamaDecoder:
    """Decode one Ollama stream: `feed(line: str) -> list[StreamEvent]`.

    `endpoint` is "chat" (text in message.content) or "generate" (text in response).
    `finished` turns true at the `done` line or an error line; `close()` raises `Truncated` before.
    """

    def __init__(self, *, endpoint: str = "chat", json_mode: bool = True) -> None:
        if endpoint not in ("chat", "generate"):
            raise ValueError(f"endpoint must be 'chat' or 'generate', not {endpoint!r}")
        self.endpoint = endpoint
        self.json_mode = json_mode
        self.finished = False
        self.carriers: list[str | None] = []  # per ArgsDelta of the last feed: where its text sat

    def feed(self, line: str) -> list[StreamEvent]:
        self.carriers = []
        if self.finished:
            raise ProtocolError("an Ollama line after the end of the stream")
        data = load_object(line, "Ollama line")
        if "error" in data:
            self.finished = True
            error = data["error"]
            return [ProviderError(kind="ollama_error", message=error if isinstance(error, str) else str(error))]
        done = need(data, "done", "Ollama line")
        if not isinstance(done, bool):
            raise ProtocolError("Ollama line: 'done' is not a boolean")
        events: list[StreamEvent] = []
        text = self._text(data, done)
        if text:
            if self.json_mode:
                self.carriers.append("/response" if self.endpoint == "generate" else "/message/content")
            events.append(ArgsDelta(text=text) if self.json_mode else TextDelta(text=text))
        if done:
            raw = data.get("done_reason") or ""
            if not isinstance(raw, str):
                raise ProtocolError("Ollama line: 'done_reason' is not a string")
            if self.json_mode:
                events.append(BlockStop(index=0))
            events.append(Stop(reason=stop_reason(STOP_REASONS, raw), raw=raw))
            self.finished = True
        return events

    def close(self) -> list[StreamEvent]:
        if not self.finished:
            raise Truncated('the Ollama stream ended before its "done": true line')
        return []

    def _text(self, data: dict[str, Any], done: bool) -> str:
        if self.endpoint == "generate":
            if done and "response" not in data:
                return ""
            return need_str(data, "response", "Ollama generate line")
        if done and "message" not in data:
            return ""
        message = need_object(data, "message", "Ollama chat line")
        content = message.get("content", "")
        if not isinstance(content, str):
            raise ProtocolError("Ollama message.content is not a string")
        return content


def chat_body(request: ExtractionRequest) -> dict[str, Any]:
    """The /api/chat body for `request`: structured output via `format` = the JSON schema
    (with `structured` "json_object": `format: "json"`, the schema then only in the prompt)."""
    if request.structured == "json_object":
        prompt = f"{request.prompt()}\n\nAnswer with one JSON object matching this JSON Schema:\n{json.dumps(request.json_schema())}"
        fmt: Any = "json"
    else:
        prompt, fmt = request.prompt(), request.json_schema()
    return {
        "model": request.model_name,
        "messages": [{"role": "user", "content": prompt}],
        "format": fmt,
        "stream": True,
    }
