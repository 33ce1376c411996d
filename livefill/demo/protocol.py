"""The demo provider's protocol: its knobs (`DemoKnobs`), their names, and the two ways they travel.

A knob travels as an `x-demo-*` request header (to the demo provider) or as a key of the relay
request body's "demo" object (to the relay, which passes it upstream as a header). Both encodings,
both decoders and the checks derive from one table, `FIELDS`; the faults, and which wires each
applies to, are `FaultName` and `FAULT_SCOPES`. The table of knobs: docs/notes/demo-knobs.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from livefill.errors import UsageError

__all__ = [
    "DEFAULT_SEED",
    "DemoKnobs",
    "FAULT_SCOPES",
    "FIELDS",
    "Fault",
    "FaultName",
    "FaultScope",
    "WIRES",
    "fault_applies",
    "fault_refusal",
    "faults_on",
    "HTTP_FAULTS",
    "KnobError",
    "KnobField",
    "MAX_LABEL_CHARS",
    "SliceMode",
    "Slicing",
    "number_text",
    "parse_fault",
    "parse_slicing",
]

#: The seed a request without x-demo-seed gets.
DEFAULT_SEED = 7


class KnobError(UsageError):
    """A knob value the demo provider does not understand (the server answers it with 400)."""


class FaultName(Enum):
    MAX_TOKENS = "max_tokens"  # stop with max_tokens / length / done_reason length, JSON cut off
    ERROR = "error"  # the wire's own mid-stream error event / chunk / line
    DISCONNECT = "disconnect"  # the server breaks the connection in the middle of an event
    STALL = "stall"  # content stops, keep-alive pings continue
    STALL_SILENT = "stall_silent"  # content stops and nothing at all is sent any more
    INVALID_VALUE = "invalid_value"  # the scenario's designated field gets a value its schema rejects
    MALFORMED = "malformed"  # the JSON text is syntactically broken (completes otherwise normally)
    BLANK_LINE = "blank_line"  # an illegal empty line in the NDJSON body (Ollama: FAULT_SCOPES)
    # The request is refused with an HTTP error status, before any body, in the wire's own error
    # shape (the fraction does not apply):
    HTTP_400 = "http_400"  # the request body rejected, with the provider's message
    HTTP_401 = "http_401"  # the key refused (authentication_error / invalid_api_key)
    HTTP_403 = "http_403"  # the key lacks permission (permission_error)
    HTTP_404 = "http_404"  # the model asked for does not exist
    HTTP_429 = "http_429"  # rate limited, with `retry-after: 20`
    HTTP_500 = "http_500"  # a server error (api_error / server_error)
    HTTP_503 = "http_503"  # service unavailable
    OVERLOADED = "overloaded"  # Anthropic: 529 overloaded_error; the other wires: 503


#: The faults answered with an HTTP error status instead of a response, and the status they are
#: named for (OVERLOADED is 529 on the Anthropic wire, 503 elsewhere).
HTTP_FAULTS: dict[FaultName, int] = {
    FaultName.HTTP_400: 400,
    FaultName.HTTP_401: 401,
    FaultName.HTTP_403: 403,
    FaultName.HTTP_404: 404,
    FaultName.HTTP_429: 429,
    FaultName.HTTP_500: 500,
    FaultName.HTTP_503: 503,
    FaultName.OVERLOADED: 503,
}


#: The wires the demo provider serves (its endpoint families; `livefill.demo.wires` names them so).
WIRES: tuple[str, ...] = ("anthropic", "openai-chat", "openai-responses", "ollama", "ollama-generate", "raw")


@dataclass(frozen=True, kw_only=True, slots=True)
class FaultScope:
    """Where a fault applies: on `wires` only, and (`streamed_only`) only to a streamed response;
    `why` says so to a person who asked for it elsewhere."""

    wires: frozenset[str]
    why: str
    streamed_only: bool = False


#: The one table of which faults apply to which wire; a fault not listed applies to every wire.
#: The demo provider refuses the others (400), the app offers only these, the CLIs check them.
FAULT_SCOPES: dict[FaultName, FaultScope] = {
    FaultName.ERROR: FaultScope(
        wires=frozenset(WIRES) - {"raw"},
        why="error needs a wire with an in-band error frame (the raw wire has none; use disconnect or max_tokens)",
    ),
    FaultName.BLANK_LINE: FaultScope(
        wires=frozenset({"ollama", "ollama-generate"}),
        why="blank_line applies only to the Ollama wire (a blank line is illegal only in its NDJSON body)",
        streamed_only=True,
    ),
}


def fault_applies(name: FaultName | str, wire: str) -> bool:
    """Whether the fault `name` can be injected on `wire` (one of `WIRES`)."""
    scope = FAULT_SCOPES.get(FaultName(name))
    return scope is None or wire in scope.wires


def faults_on(wire: str) -> tuple[FaultName, ...]:
    """The faults that apply to `wire`, in `FaultName` order."""
    return tuple(f for f in FaultName if fault_applies(f, wire))


def fault_refusal(name: FaultName | str, wire: str, *, stream: bool = True) -> str | None:
    """Why the fault `name` cannot be injected on `wire` (None: it can)."""
    scope = FAULT_SCOPES.get(FaultName(name))
    if scope is None:
        return None
    if wire not in scope.wires:
        return scope.why
    if scope.streamed_only and not stream:
        return f"{FaultName(name).value} applies only to a streamed response"
    return None


def number_text(x: float) -> str:
    """A number as a knob's text: integers without a point, other numbers exactly (repr)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True, kw_only=True, slots=True)
class Fault:
    """A fault to inject: `name`, after `fraction` of the output tokens."""

    name: FaultName
    fraction: float = 0.5

    def __str__(self) -> str:
        return f"{self.name.value}@{number_text(self.fraction)}"


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
            return f"coalesce:{number_text(self.window_ms)}"
        return "event"


# --- parsing one knob's text ----------------------------------------------------------------------


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


def _parse_scenario(raw: str) -> str | None:
    return raw.strip() or None


#: The longest `x-demo-tag` / `x-demo-replay` (header or the relay body's `demo.tag` / `demo.replay`).
MAX_LABEL_CHARS = 200


def _parse_tag(raw: str) -> str | None:
    if len(raw) > MAX_LABEL_CHARS:
        raise KnobError(f"x-demo-tag: a tag is at most {MAX_LABEL_CHARS} characters, got {len(raw)}")
    return raw or None


def _parse_replay(raw: str) -> str | None:
    text = raw.strip()
    if len(text) > MAX_LABEL_CHARS:
        raise KnobError(f"x-demo-replay: a trace id is at most {MAX_LABEL_CHARS} characters")
    return text or None


def _parse_seed(raw: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise KnobError(f"x-demo-seed: expected an integer, got {raw!r}") from None


# --- the table ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class KnobField:
    """One knob: its `DemoKnobs` attribute, its header, its parser, its key in the relay body's
    "demo" object (None: not carried there), its JSON type there (str: its header text) and the
    limits the relay body checks before the value itself."""

    name: str
    header: str
    parse: Callable[[str], Any]  # header text -> value (None: not set); raises KnobError
    body_key: str | None = None
    json_type: type = str
    body_limits: Mapping[str, Any] | None = None

    def text(self, value: Any) -> str:
        """The header text of a value of this knob (what `parse` reads back as the same value)."""
        if isinstance(value, str):
            return value
        return number_text(value) if self.json_type is float else str(value)

    def json(self, value: Any) -> Any:
        """The relay body's JSON for a value of this knob."""
        return value if self.json_type in (int, float) else self.text(value)


#: Header order is the order the demo provider checks them in (the first bad one is reported).
FIELDS: tuple[KnobField, ...] = (
    KnobField(name="scenario", header="x-demo-scenario", parse=_parse_scenario),
    KnobField(
        name="speed",
        header="x-demo-speed",
        parse=lambda raw: _number("x-demo-speed", raw),
        body_key="speed",
        json_type=float,
        body_limits={"ge": 0},
    ),
    KnobField(
        name="ttft_ms",
        header="x-demo-ttft",
        parse=lambda raw: _number("x-demo-ttft", raw),
        body_key="ttft",
        json_type=float,
        body_limits={"ge": 0},
    ),
    KnobField(name="seed", header="x-demo-seed", parse=_parse_seed, body_key="seed", json_type=int),
    KnobField(name="slice", header="x-demo-slice", parse=parse_slicing, body_key="slice"),
    KnobField(name="fault", header="x-demo-fault", parse=parse_fault, body_key="fault"),
    KnobField(name="tag", header="x-demo-tag", parse=_parse_tag, body_key="tag", body_limits={"max_length": MAX_LABEL_CHARS}),
    KnobField(name="ping", header="x-demo-ping", parse=lambda raw: _number("x-demo-ping", raw, minimum=0.01), json_type=float),
    KnobField(name="replay", header="x-demo-replay", parse=_parse_replay, body_key="replay", body_limits={"max_length": MAX_LABEL_CHARS}),
    KnobField(
        name="replay_speed",
        header="x-demo-replay-speed",
        parse=lambda raw: _number("x-demo-replay-speed", raw),
        body_key="replay_speed",
        json_type=float,
        body_limits={"ge": 0},
    ),
)

@dataclass(frozen=True, kw_only=True, slots=True)
class DemoKnobs:
    """The demo provider's knobs for one request (None: the server's default).

    Any knob may be given as its text (`fault="max_tokens@0.25"`, `slice="coalesce:40"`); every
    value is checked and normalised as the demo provider would read its header (KnobError).
    """

    scenario: str | None = None
    speed: float | None = None  # tokens per second; 0 = as fast as possible
    ttft_ms: float | None = None  # milliseconds before the first token
    seed: int | None = None
    slice: Slicing | None = None
    fault: Fault | None = None
    tag: str | None = None  # recorded as `tag` in the request log
    ping: float | None = None  # seconds between keep-alive pings
    replay: str | None = None  # a recorded trace's id on the server: replay it instead of generating
    replay_speed: float | None = None  # the replay's speed (1 as recorded; 0 as fast as possible)

    def __post_init__(self) -> None:
        for f in FIELDS:
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, f.parse(f.text(value)))

    # -- encoders ----------------------------------------------------------------------------

    def headers(self) -> dict[str, str]:
        """The x-demo-* request headers for these knobs."""
        return {f.header: f.text(v) for f in FIELDS if (v := getattr(self, f.name)) is not None}

    def relay_demo(self) -> dict[str, Any]:
        """The relay request body's "demo" object (the scenario goes in the body's top level)."""
        return {f.body_key: f.json(v) for f in FIELDS if f.body_key and (v := getattr(self, f.name)) is not None}

    # -- decoders ----------------------------------------------------------------------------

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> DemoKnobs:
        """The knobs a request's headers ask for. `headers` must be case-insensitive (starlette's
        Headers is) or lower-case. Raises KnobError for the first bad value, in `FIELDS` order."""
        return cls(**{f.name: f.parse(raw) for f in FIELDS if (raw := headers.get(f.header)) is not None})
