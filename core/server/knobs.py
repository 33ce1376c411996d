"""The demo provider's knobs: server-wide defaults, overridden per request by `x-demo-*` headers.

    x-demo-scenario  NAME            which bundled scenario to answer with (else matched by document)
    x-demo-speed     tokens/second   0 = as fast as possible (default 30, like a real model)
    x-demo-ttft      milliseconds    delay before the first token
    x-demo-seed      integer         token cutting and chunking are deterministic per seed
    x-demo-slice     event | N | coalesce:MS
                                     event: one write per event; N: the byte stream cut into N-byte
                                     writes (splitting characters and events anywhere), spread over
                                     each token's interval; coalesce:MS: writes gathered for MS ms
    x-demo-fault     NAME[@FRACTION] see `FaultName`; FRACTION of output tokens before it (0.5)
    x-demo-tag       any text        recorded as `tag` in the request log (lets a client find its entry)
    x-demo-ping      seconds         interval between keep-alive pings (default 3)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from core.errors import UsageError
from core.server.generation import DEFAULT_SEED

__all__ = ["FaultName", "Fault", "SliceMode", "Slicing", "DemoDefaults", "Knobs", "KnobError", "parse_knobs"]


class KnobError(UsageError):
    """A request asked for a knob value the demo provider does not understand (answered with 400)."""


class FaultName(Enum):
    MAX_TOKENS = "max_tokens"  # stop with max_tokens / length / done_reason length, JSON cut off
    ERROR = "error"  # the wire's own mid-stream error event / chunk / line
    DISCONNECT = "disconnect"  # the server breaks the connection in the middle of an event
    STALL = "stall"  # content stops, keep-alive pings continue
    STALL_SILENT = "stall_silent"  # content stops and nothing at all is sent any more
    INVALID_VALUE = "invalid_value"  # the scenario's designated field gets a value its schema rejects
    MALFORMED = "malformed"  # the JSON text is syntactically broken (completes otherwise normally)
    BLANK_LINE = "blank_line"  # Ollama only: an illegal empty line in the NDJSON body


@dataclass(frozen=True, kw_only=True, slots=True)
class Fault:
    """A fault to inject: `name`, after `fraction` of the output tokens."""

    name: FaultName
    fraction: float = 0.5

    def __str__(self) -> str:
        return f"{self.name.value}@{self.fraction:g}"


class SliceMode(Enum):
    EVENT = "event"  # one write per event
    BYTES = "bytes"  # the byte stream cut into fixed-size writes
    COALESCE = "coalesce"  # writes gathered over a time window


@dataclass(frozen=True, kw_only=True, slots=True)
class Slicing:
    """How the response bytes are handed to the socket."""

    mode: SliceMode = SliceMode.EVENT
    size: int = 0  # bytes per write (BYTES)
    window_ms: float = 0.0  # gathering window (COALESCE)

    def __str__(self) -> str:
        if self.mode is SliceMode.BYTES:
            return str(self.size)
        if self.mode is SliceMode.COALESCE:
            return f"coalesce:{self.window_ms:g}"
        return "event"


@dataclass(frozen=True, kw_only=True, slots=True)
class DemoDefaults:
    """Server-wide knob defaults; every field can be overridden per request by its header."""

    speed: float = 30.0  # tokens per second; 0 = as fast as possible
    ttft_ms: float = 250.0  # delay before the first token
    seed: int = DEFAULT_SEED
    slicing: Slicing = Slicing()
    fault: Fault | None = None
    ping_interval: float = 3.0  # seconds between keep-alive pings


@dataclass(frozen=True, kw_only=True, slots=True)
class Knobs:
    """The knobs in force for one request."""

    scenario: str | None
    speed: float
    ttft_ms: float
    seed: int
    slicing: Slicing
    fault: Fault | None
    ping_interval: float

    def as_log(self) -> dict[str, object]:
        return {
            "speed": self.speed,
            "ttft_ms": self.ttft_ms,
            "seed": self.seed,
            "slice": str(self.slicing),
            "ping_interval": self.ping_interval,
        }


def _number(name: str, raw: str, *, minimum: float = 0.0) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise KnobError(f"{name}: expected a number, got {raw!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise KnobError(f"{name}: expected a number >= {minimum:g}, got {raw!r}")
    return value


def parse_slicing(raw: str) -> Slicing:
    """Parse an `x-demo-slice` value: `event`, `N` (bytes) or `coalesce:MS`."""
    text = raw.strip().lower()
    if text == "event":
        return Slicing()
    if text.startswith("coalesce:"):
        window = _number("x-demo-slice", text.partition(":")[2])
        return Slicing(mode=SliceMode.COALESCE, window_ms=window)
    if text.isdigit() and int(text) > 0:
        return Slicing(mode=SliceMode.BYTES, size=int(text))
    raise KnobError(f"x-demo-slice: expected 'event', a byte count N > 0 or 'coalesce:MS', got {raw!r}")


def parse_fault(raw: str) -> Fault | None:
    """Parse an `x-demo-fault` value `NAME[@FRACTION]` (empty or `none`: no fault)."""
    text = raw.strip().lower()
    if text in ("", "none"):
        return None
    name, _, fraction = text.partition("@")
    try:
        fault_name = FaultName(name)
    except ValueError:
        known = ", ".join(f.value for f in FaultName)
        raise KnobError(f"x-demo-fault: unknown fault {name!r}; known: {known}") from None
    value = 0.5 if not fraction else _number("x-demo-fault", fraction)
    if value > 1.0:
        raise KnobError(f"x-demo-fault: the fraction must be between 0 and 1, got {fraction!r}")
    return Fault(name=fault_name, fraction=value)


def parse_knobs(headers: Mapping[str, str], defaults: DemoDefaults) -> Knobs:
    """The knobs for one request: `defaults` overridden by the request's `x-demo-*` headers.

    `headers` must be case-insensitive (starlette's Headers is). Raises KnobError on bad values.
    """
    knobs = Knobs(
        scenario=None,
        speed=defaults.speed,
        ttft_ms=defaults.ttft_ms,
        seed=defaults.seed,
        slicing=defaults.slicing,
        fault=defaults.fault,
        ping_interval=defaults.ping_interval,
    )
    if (raw := headers.get("x-demo-scenario")) is not None and raw.strip():
        knobs = replace(knobs, scenario=raw.strip())
    if (raw := headers.get("x-demo-speed")) is not None:
        knobs = replace(knobs, speed=_number("x-demo-speed", raw))
    if (raw := headers.get("x-demo-ttft")) is not None:
        knobs = replace(knobs, ttft_ms=_number("x-demo-ttft", raw))
    if (raw := headers.get("x-demo-seed")) is not None:
        try:
            knobs = replace(knobs, seed=int(raw.strip()))
        except ValueError:
            raise KnobError(f"x-demo-seed: expected an integer, got {raw!r}") from None
    if (raw := headers.get("x-demo-slice")) is not None:
        knobs = replace(knobs, slicing=parse_slicing(raw))
    if (raw := headers.get("x-demo-fault")) is not None:
        knobs = replace(knobs, fault=parse_fault(raw))
    if (raw := headers.get("x-demo-ping")) is not None:
        knobs = replace(knobs, ping_interval=_number("x-demo-ping", raw, minimum=0.01))
    return knobs
