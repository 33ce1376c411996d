"""What every wire vocabulary shares: the decoder shape, strict JSON access, stop-reason tables.

A decoder is sans-IO: `feed(frame) -> list[StreamEvent]`, `close() -> list[StreamEvent]`, and a
`finished` flag that turns true on the wire's terminal frame. A frame that breaks the vocabulary
(not JSON, a wrong type, a field missing, an event out of order, anything after the terminal)
raises `livefill.errors.ProtocolError`; `close()` without a terminal raises `livefill.errors.Truncated`.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from livefill.errors import ProtocolError
from livefill.wire.events import StopReason, StreamEvent

__all__ = [
    "Decoder",
    "load_object",
    "need",
    "need_int",
    "need_list",
    "need_object",
    "need_str",
    "opt_str",
    "stop_reason",
]


class Decoder(Protocol):
    """The shape every vocabulary decoder has (the frame type differs per wire).

    `carriers` lists, for each `ArgsDelta` the last `feed` returned (in order), the JSON Pointer
    inside the frame's payload of the string that held its text (None: the payload verbatim);
    the wire inspector maps delta characters to bytes with it (livefill.wire.taps.WireFrame)."""

    finished: bool
    carriers: list[str | None]

    def feed(self, frame: Any) -> list[StreamEvent]: ...

    def close(self) -> list[StreamEvent]: ...


def load_object(text: str, what: str) -> dict[str, Any]:
    """`text` parsed as a JSON object, or ProtocolError naming `what` it was meant to be."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ProtocolError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} is not a JSON object")
    return value


def need(obj: dict[str, Any], key: str, what: str) -> Any:
    """obj[key], or ProtocolError if it is missing."""
    try:
        return obj[key]
    except KeyError:
        raise ProtocolError(f"{what} has no {key!r}") from None


def need_str(obj: dict[str, Any], key: str, what: str) -> str:
    value = need(obj, key, what)
    if not isinstance(value, str):
        raise ProtocolError(f"{what}: {key!r} is not a string")
    return value


def opt_str(obj: dict[str, Any], key: str, what: str) -> str | None:
    """obj[key] if it is a string, None if missing or null; ProtocolError otherwise."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise ProtocolError(f"{what}: {key!r} is not a string")
    return value


def need_int(obj: dict[str, Any], key: str, what: str) -> int:
    value = need(obj, key, what)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{what}: {key!r} is not an integer")
    return value


def need_object(obj: dict[str, Any], key: str, what: str) -> dict[str, Any]:
    value = need(obj, key, what)
    if not isinstance(value, dict):
        raise ProtocolError(f"{what}: {key!r} is not an object")
    return value


def need_list(obj: dict[str, Any], key: str, what: str) -> list[Any]:
    value = need(obj, key, what)
    if not isinstance(value, list):
        raise ProtocolError(f"{what}: {key!r} is not a list")
    return value


def stop_reason(table: dict[str, StopReason], raw: str) -> StopReason:
    """Normalise a provider's raw stop reason; unknown reasons are OTHER (raw text kept in Stop.raw)."""
    return table.get(raw, StopReason.OTHER)
