"""OpenAI Responses streaming vocabulary: typed SSE events -> unified stream events (sans-IO).

How this works
--------------
Every event has an `event:` name equal to its payload's `type` and a `sequence_number` that
must rise strictly. The stream opens with `response.created` and ends with exactly one
terminal: `response.completed` (Stop COMPLETE), `response.incomplete` (Stop LENGTH for
`max_output_tokens`, REFUSAL for `content_filter`), `response.failed` or `error`
(ProviderError). `_TRANSITIONS` holds that outer order.

Inside, output items are announced by `response.output_item.added` with `output_index` 0, 1, 2
in order and closed by `response.output_item.done`. Two kinds carry the JSON being extracted:

- a `message` item's `response.output_text.delta` fragments (structured output via
  `text.format` json_schema) -> `ArgsDelta(index=output_index)`; `.done` -> `BlockStop`;
- a `function_call` item's `response.function_call_arguments.delta` -> `ArgsDelta`; `.done` -> `BlockStop`.

Each `.done` repeats the whole text; it must equal the concatenated deltas. With
`json_mode=False` output text is prose (`TextDelta`) instead. Reasoning and annotation events are
known and skipped; any other event type is a protocol error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from livefill.errors import ProtocolError, Truncated
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, ProviderError, Stop, StopReason, StreamEvent, TextDelta
from livefill.wire.providers.base import load_object, need_int, need_object, need_str, opt_str
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.strict_schema import openai_subset, strict_json_schema
from livefill.wire.sse import ServerSentEvent

__all__ = ["INCOMPLETE_REASONS", "ResponsesDecoder", "responses_body"]

INCOMPLETE_REASONS: dict[str, StopReason] = {
    "max_output_tokens": StopReason.LENGTH,
    "content_filter": StopReason.REFUSAL,
}

_TERMINALS = frozenset({"response.completed", "response.incomplete", "response.failed", "error"})
_SKIPPED = frozenset(
    {
        "response.output_text.annotation.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
    }
)


class _State(Enum):
    START = "start"  # nothing yet: response.created must come first
    RUNNING = "running"  # between response.created and a terminal
    DONE = "done"  # a terminal arrived: nothing may follow


_TRANSITIONS: dict[tuple[_State, str], _State] = {
    (_State.START, "response.created"): _State.RUNNING,
    (_State.START, "error"): _State.DONE,
    **{(_State.RUNNING, t): _State.DONE for t in _TERMINALS},
}


@dataclass(slots=True)
class _Item:
    type: str  # the output item's type: message, function_call, reasoning ...
    text: list[str] = field(default_factory=list)  # deltas so far (output text or arguments)
    parts: int = 0  # content parts announced (message items)
    closed: bool = False  # output_item.done arrived


class ResponsesDecoder:
    """Decode one Responses stream: `feed(ServerSentEvent) -> list[StreamEvent]`.

    `json_mode` (default True): output text is the JSON document (text.format json_schema).
    `finished` turns true at a terminal; `close()` raises `Truncated` before one.
    """

    def __init__(self, *, json_mode: bool = True) -> None:
        self.json_mode = json_mode
        self._state = _State.START
        self._seq = -1
        self._items: list[_Item] = []
        self.finished = False
        self.carriers: list[str | None] = []  # per ArgsDelta of the last feed: where its text sat

    def feed(self, frame: ServerSentEvent) -> list[StreamEvent]:
        self.carriers = []
        data = load_object(frame.data, f"Responses {frame.event!r} event data")
        kind = need_str(data, "type", "Responses event")
        if frame.event not in ("message", kind):
            raise ProtocolError(f"Responses SSE event {frame.event!r} carries a {kind!r} payload")
        seq = need_int(data, "sequence_number", kind)
        if seq <= self._seq:
            raise ProtocolError(f"{kind}: sequence_number {seq} does not rise (previous {self._seq})")
        self._seq = seq
        nxt = _TRANSITIONS.get((self._state, kind))
        if nxt is None:
            if self._state is not _State.RUNNING or kind == "response.created":
                raise ProtocolError(f"Responses {kind!r} event is not allowed in state {self._state.value!r}")
            nxt = _State.RUNNING
        events = self._events(kind, data)
        self._state = nxt
        self.finished = nxt is _State.DONE
        return events

    def close(self) -> list[StreamEvent]:
        if not self.finished:
            raise Truncated("the Responses stream ended before response.completed")
        return []

    # -- internals -------------------------------------------------------------------------

    def _item(self, data: dict[str, Any], kind: str, *types: str) -> tuple[int, _Item]:
        index = need_int(data, "output_index", kind)
        if not 0 <= index < len(self._items):
            raise ProtocolError(f"{kind}: output_index {index} was never added")
        item = self._items[index]
        if item.closed:
            raise ProtocolError(f"{kind}: output item {index} is already done")
        if types and item.type not in types:
            raise ProtocolError(f"{kind} for a {item.type!r} item")
        return index, item

    def _events(self, kind: str, data: dict[str, Any]) -> list[StreamEvent]:
        if kind in ("response.created", "response.in_progress", "response.queued"):
            need_object(data, "response", kind)
            return [KeepAlive()]
        if kind == "response.completed":
            return [Stop(reason=StopReason.COMPLETE, raw="completed")]
        if kind == "response.incomplete":
            response = need_object(data, "response", kind)
            details = response.get("incomplete_details") or {}
            raw = (details.get("reason") if isinstance(details, dict) else None) or "incomplete"
            return [Stop(reason=INCOMPLETE_REASONS.get(raw, StopReason.OTHER), raw=str(raw))]
        if kind == "response.failed":
            response = need_object(data, "response", kind)
            error = response.get("error") or {}
            if not isinstance(error, dict):
                raise ProtocolError("response.failed: 'error' is not an object")
            return [ProviderError(kind=str(error.get("code") or "failed"), message=str(error.get("message") or ""))]
        if kind == "error":
            code = data.get("code") or data.get("type")
            return [ProviderError(kind=str(code), message=str(data.get("message") or ""))]
        if kind == "response.output_item.added":
            index = need_int(data, "output_index", kind)
            if index != len(self._items):
                raise ProtocolError(f"output item {index} added, expected {len(self._items)}")
            item = need_object(data, "item", kind)
            item_type = need_str(item, "type", "output item")
            if item_type == "function_call":
                need_str(item, "name", "function_call item")
            self._items.append(_Item(item_type))
            return []
        if kind == "response.output_item.done":
            _, item = self._item(data, kind)
            item.closed = True
            return []
        if kind in ("response.content_part.added", "response.content_part.done"):
            _, item = self._item(data, kind, "message")
            part = need_object(data, "part", kind)
            if need_str(part, "type", "content part") not in ("output_text", "refusal"):
                raise ProtocolError(f"unknown content part type {part['type']!r}")
            item.parts += kind.endswith("added")
            return []
        if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
            expected = "message" if kind.startswith("response.output_text") else "function_call"
            index, item = self._item(data, kind, expected)
            if expected == "message" and not item.parts:
                raise ProtocolError("output text before response.content_part.added")
            delta = need_str(data, "delta", kind)
            item.text.append(delta)
            if not delta:
                return []
            if expected == "message" and not self.json_mode:
                return [TextDelta(text=delta, index=index)]
            self.carriers.append("/delta")
            return [ArgsDelta(text=delta, index=index)]
        if kind in ("response.output_text.done", "response.function_call_arguments.done"):
            expected = "message" if kind.startswith("response.output_text") else "function_call"
            index, item = self._item(data, kind, expected)
            whole = need_str(data, "text" if expected == "message" else "arguments", kind)
            if whole != "".join(item.text):
                raise ProtocolError(f"{kind}: the whole text differs from the deltas that built it")
            if expected == "message" and not self.json_mode:
                return []
            return [BlockStop(index=index)]
        if kind in ("response.refusal.delta", "response.refusal.done"):
            index, _ = self._item(data, kind, "message")
            delta = opt_str(data, "delta", kind) if kind.endswith("delta") else None
            return [TextDelta(text=delta, index=index)] if delta else []
        if kind in _SKIPPED:
            return []
        raise ProtocolError(f"unknown Responses event type {kind!r}")


def responses_body(request: ExtractionRequest) -> dict[str, Any]:
    """The Responses API body for `request`: with `structured` "json_schema", structured output
    via `text.format` (strict json_schema); with "tools", one strict function tool, forced. The
    schema keeps only the keywords OpenAI supports (`openai_subset`)."""
    schema = openai_subset(strict_json_schema(request.json_schema()))
    body: dict[str, Any] = {
        "model": request.model_name,
        "input": [{"role": "user", "content": request.prompt()}],
    }
    if request.structured == "json_schema":
        body["text"] = {
            "format": {"type": "json_schema", "name": request.tool_name, "schema": schema, "strict": True}
        }
    else:
        body["tools"] = [
            {
                "type": "function",
                "name": request.tool_name,
                "description": f"Record the {request.schema_name} extracted from the document.",
                "parameters": schema,
                "strict": True,
            }
        ]
        body["tool_choice"] = {"type": "function", "name": request.tool_name}
    body["stream"] = True
    return body
