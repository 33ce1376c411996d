"""The tokens a provider says a request used, read from its stream's frames: `Usage`, `UsageTap`.

Where each wire reports them (the demo provider's wires write the same frames):
- Anthropic: `message_start` (message.usage.input_tokens) and `message_delta` (usage.output_tokens,
  a running total; input_tokens too on some servers);
- OpenAI Chat Completions: the `usage` object of the chunk `stream_options.include_usage` adds
  after the finish (prompt_tokens, completion_tokens);
- OpenAI Responses: `response.completed` (response.usage.input_tokens / output_tokens);
- Ollama: the done line's `prompt_eval_count` and `eval_count`.

Usage is not a stream event: no reader, relay or run needs it, so it stays beside the stream. A
`UsageTap` is a `WireTap` (livefill.wire.taps) that looks only at frames whose payload names usage
and keeps the latest counts; a wire that reports none leaves `usage` None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from livefill.wire.taps import WireFrame

__all__ = ["Usage", "UsageTap", "usage_in"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Tokens in (the prompt) and out (the completion) as the provider reported them (None: not said)."""

    tokens_in: int | None = None
    tokens_out: int | None = None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_in(payload: Any) -> Usage | None:
    """The counts one decoded frame payload (a JSON object) reports; None when it reports none."""
    if not isinstance(payload, dict):
        return None
    if "eval_count" in payload or "prompt_eval_count" in payload:  # Ollama's done line
        return Usage(tokens_in=_count(payload.get("prompt_eval_count")), tokens_out=_count(payload.get("eval_count")))
    holder = payload
    if isinstance(payload.get("message"), dict):  # Anthropic message_start
        holder = payload["message"]
    elif isinstance(payload.get("response"), dict):  # OpenAI Responses response.completed
        holder = payload["response"]
    usage = holder.get("usage")
    if not isinstance(usage, dict):
        return None
    tokens_in = _count(usage.get("input_tokens", usage.get("prompt_tokens")))
    tokens_out = _count(usage.get("output_tokens", usage.get("completion_tokens")))
    if tokens_in is None and tokens_out is None:
        return None
    return Usage(tokens_in=tokens_in, tokens_out=tokens_out)


class UsageTap:
    """A WireTap keeping the latest token counts the stream's frames reported (`usage`)."""

    def __init__(self) -> None:
        self.usage: Usage | None = None

    def on_read(self, data: bytes) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass

    def on_frame(self, frame: WireFrame) -> None:
        text = frame.payload
        if "usage" not in text and "eval_count" not in text:
            return
        try:
            found = usage_in(json.loads(text))
        except ValueError:
            return
        if found is None:
            return
        old = self.usage
        if old is not None:  # a later frame may report only one of the two (Anthropic's message_delta)
            found = replace(
                found,
                tokens_in=found.tokens_in if found.tokens_in is not None else old.tokens_in,
                tokens_out=found.tokens_out if found.tokens_out is not None else old.tokens_out,
            )
        self.usage = found
