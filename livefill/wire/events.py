"""The unified stream events every provider vocabulary decodes into.

A provider module (livefill/wire/providers/*) turns its wire frames into these; everything above the
vocabulary layer (the prefix parser, the relay, a run) sees only these.

- `ArgsDelta`   a fragment of the JSON document being extracted (Anthropic input_json_delta,
                OpenAI tool-call arguments or json_schema output text, Ollama message.content,
                an unframed chunk).
- `TextDelta`   prose outside the JSON (an Anthropic text block before the tool block).
- `BlockStop`   the JSON document's block ended (Anthropic content_block_stop of the tool block,
                OpenAI arguments .done / finish chunk, Ollama done line).
- `Stop`        the stream's terminal: the model stopped, with a normalised reason.
- `ProviderError` the provider reported an error mid-stream.
- `KeepAlive`   a ping or other frame that carries no content (counts for idle timeouts only).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class StopReason(Enum):
    COMPLETE = "complete"  # the model finished the extraction (tool_use, tool_calls, stop, completed)
    LENGTH = "length"  # cut off by a token limit (max_tokens, length): the JSON is incomplete
    REFUSAL = "refusal"  # the model refused or a content filter stopped it
    OTHER = "other"  # any other reason the provider gave (raw text kept in Stop.raw)


@dataclass(frozen=True, kw_only=True, slots=True)
class ArgsDelta:
    text: str
    index: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    text: str
    index: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class BlockStop:
    index: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Stop:
    reason: StopReason
    raw: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderError:
    kind: str
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class KeepAlive:
    pass


StreamEvent = ArgsDelta | TextDelta | BlockStop | Stop | ProviderError | KeepAlive
