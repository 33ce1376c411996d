"""The knobs in force for one request: the server's defaults, overridden by the request's headers.

What each `x-demo-*` header means, and how it is read, is the demo provider's protocol
(`livefill.demo.protocol`, shared with the clients); this module only resolves a request's
`DemoKnobs` (None: not given) against the server-wide `DemoDefaults`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from livefill.demo.protocol import DEFAULT_SEED, DemoKnobs, Fault, Slicing

__all__ = ["DemoDefaults", "Knobs", "parse_knobs"]


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
    replay: str | None = None  # a trace id: answer with that trace instead of generating
    replay_speed: float = 1.0  # 1 = as recorded, 0 = as fast as possible

    def as_log(self) -> dict[str, object]:
        return {
            "speed": self.speed,
            "ttft_ms": self.ttft_ms,
            "seed": self.seed,
            "slice": str(self.slicing),
            "ping_interval": self.ping_interval,
        }


def parse_knobs(headers: Mapping[str, str], defaults: DemoDefaults) -> Knobs:
    """The knobs for one request: `defaults` overridden by the request's `x-demo-*` headers.

    `headers` must be case-insensitive (starlette's Headers is). Raises KnobError on bad values.
    """
    asked = DemoKnobs.from_headers(headers)
    return Knobs(
        scenario=asked.scenario,
        speed=defaults.speed if asked.speed is None else asked.speed,
        ttft_ms=defaults.ttft_ms if asked.ttft_ms is None else asked.ttft_ms,
        seed=defaults.seed if asked.seed is None else asked.seed,
        slicing=defaults.slicing if asked.slice is None else asked.slice,
        # `x-demo-fault: none` is a value (no fault), not an absent header: it overrides a default fault
        fault=defaults.fault if headers.get("x-demo-fault") is None else asked.fault,
        ping_interval=defaults.ping_interval if asked.ping is None else asked.ping,
        replay=asked.replay,
        replay_speed=1.0 if asked.replay_speed is None else asked.replay_speed,
    )
