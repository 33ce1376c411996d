"""The settings of a run, as one frozen value, and the choices the app offers for them.

`RunSettings` is everything a person chooses before pressing Start: what to read (a scenario, or a
document and schema of one's own), who reads it (provider, base URL, model), how (mode), and the
demo provider's knobs (speed, seed, slicing, fault), plus the provisional-display options.
`livefill.session.session.Session` owns the current value and replaces it whole on every change.

The demo provider's vocabulary the app needs (its fault names, default seed, and the check of a
`NAME[@FRACTION]` fault) is read here, from `livefill.demo.protocol` (the protocol module the server itself uses).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from livefill.defaults import IDLE_TIMEOUT
from livefill.demo.protocol import DEFAULT_SEED as _DEFAULT_SEED
from livefill.demo.protocol import FaultName, KnobError, SliceMode, fault_refusal, faults_on, parse_fault
from livefill.demo.protocol import parse_slicing as _parse_slicing
from livefill.extraction.modes import Mode, parse_mode
from livefill.extraction.schemas import resolve_schema
from livefill.session.prices import Price, check_prices
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

__all__ = [
    "RunSettings",
    "PROVIDERS",
    "DEFAULT_SEED",
    "FAULT_NAMES",
    "SLICING_DEFAULT",
    "check_fault",
    "faults_for",
    "fault_problem",
    "check_slicing",
    "parse_slicing",
    "SETTING_NAMES",
    "REPLAY_SPEEDS",
    "LIVE_PROVIDERS",
    "model_setting",
    "base_url_setting",
]

PROVIDERS: tuple[str, ...] = tuple(name for name, spec in PROVIDER_SPECS.items() if spec.in_app)
"""The providers the app offers (each served by the demo provider, or by the real service)."""

LIVE_PROVIDERS: tuple[str, ...] = PROVIDERS
"""The providers a live run can read (the real services, or any server by its base URL)."""


def model_setting(provider: str) -> str:
    """The name of the setting holding `provider`'s model for a live run."""
    return {"openai-compatible": "compatible_model", "ollama": "ollama_model"}.get(provider, "model")


def base_url_setting(provider: str) -> str:
    """The name of the setting holding `provider`'s live base URL ("": its default address)."""
    return {"openai-compatible": "compatible_base_url", "ollama": "ollama_base_url"}.get(provider, "provider_base_url")


DEFAULT_SEED: int = int(_DEFAULT_SEED)
"""The demo provider's seed for a request that names none."""

FAULT_NAMES: tuple[str, ...] = tuple(f.value for f in FaultName)
"""Every fault the demo provider can inject (as the x-demo-fault knob names them)."""

SLICING_DEFAULT = "event"
"""One network write per event."""

REPLAY_SPEEDS: tuple[tuple[str, float], ...] = (
    ("0.25×", 0.25), ("0.5×", 0.5), ("1×", 1.0), ("2×", 2.0), ("as fast as possible", 0.0),
)
"""The speeds a recorded trace can be replayed at (1 = as recorded, 0 = as fast as possible)."""


def check_fault(text: str | None) -> str | None:
    """`NAME[@FRACTION]` normalised ("none" or empty: None); ValueError with the reason otherwise."""
    if text is None:
        return None
    try:
        fault = parse_fault(text)
    except KnobError as exc:
        raise ValueError(str(exc).removeprefix("x-demo-fault: ")) from None
    if fault is None:
        return None
    name, _, fraction = text.strip().lower().partition("@")
    return f"{name}@{fraction}" if fraction else name


def _wire(provider: str) -> str:
    """The wire `provider` speaks (an unknown name: itself, for the demo provider to refuse)."""
    spec = PROVIDER_SPECS.get(provider)
    return spec.wire if spec is not None else provider


def faults_for(provider: str) -> tuple[str, ...]:
    """The faults the demo provider can inject on `provider`'s wire (`livefill.demo.protocol.FAULT_SCOPES`)."""
    return tuple(f.value for f in faults_on(_wire(provider)))


def fault_problem(fault: str | None, provider: str) -> str | None:
    """Why the fault `NAME[@FRACTION]` cannot be asked of the demo provider on `provider`'s wire
    (None: it can, or no fault)."""
    name = (fault or "").partition("@")[0].strip().lower()
    if not name or name == "none":
        return None
    return fault_refusal(name, _wire(provider))


def parse_slicing(text: str) -> tuple[str, int]:
    """"event" -> ("event", 0); "7" -> ("bytes", 7); "coalesce:50" -> ("coalesce", 50); ValueError otherwise."""
    try:
        slicing = _parse_slicing(text)
    except KnobError as exc:
        raise ValueError(str(exc).removeprefix("x-demo-slice: ")) from None
    if slicing.mode is SliceMode.BYTES:
        return "bytes", slicing.size
    if slicing.mode is SliceMode.COALESCE:
        return "coalesce", int(slicing.window_ms)
    return "event", 0


def check_slicing(text: str) -> str:
    """"event", "N" (bytes, N > 0) or "coalesce:MS" (stripped); ValueError otherwise."""
    parse_slicing(text)
    return text.strip()


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What the next run reads, with whom, how, and with which demo knobs (see the module docstring).

    `document` / `schema_name` left None mean "the scenario's"; a document of one's own has its
    text in `document`, what to call it in `document_name` ("invoice.pdf", "Pasted text") and the
    file it came from in `document_path` (None when pasted). `schema_name` is a bundled schema's
    name or the path of a person's JSON Schema file (livefill.extraction.user_schema; checked here, so a schema
    livefill cannot use is refused with its keyword and pointer before any run). `compatible_*` /
    `ollama_*` are the base URL and model of an OpenAI-compatible server and of Ollama ("" / None:
    not chosen). `live` says who answers: False, the embedded demo provider at `base_url` (with the
    demo knobs); True, the real provider: Anthropic / OpenAI at `provider_base_url` ("": their
    own address, or the one their environment variable names), an OpenAI-compatible server at
    `compatible_base_url`, Ollama at `ollama_base_url`. `seed` None means the demo provider's default. `fault` is `NAME[@FRACTION]` or None.
    """

    scenario: str = "invoice"
    document: str | None = None
    document_name: str | None = None
    document_path: str | None = None
    schema_name: str | None = None
    provider: str = "anthropic"
    live: bool = False
    base_url: str = ""
    provider_base_url: str = ""
    relay_token: str | None = None
    model: str | None = None
    compatible_base_url: str = ""
    compatible_model: str | None = None
    ollama_base_url: str = ""
    ollama_model: str | None = None
    mode: Mode = Mode.PARTIAL
    speed: float = 30.0
    seed: int | None = None
    slicing: str = SLICING_DEFAULT
    fault: str | None = None
    show_provisional_strings: bool = True
    show_provisional_numbers: bool = False
    idle_timeout: float = IDLE_TIMEOUT
    # How structure is forced: "tools" | "json_schema" | "json_object" (which ones each provider
    # takes: livefill.wire.providers.spec.PROVIDER_SPECS).
    structured: str = "tools"
    # Where the relay is for settled / hybrid runs ("": at base_url, the demo provider's server),
    # and whether it is the app's own embedded relay, the only one handed the API key (loopback).
    relay_url: str = ""
    relay_embedded: bool = False
    # Anthropic: fine-grained tool streaming (raw, unbuffered tool-input fragments).
    fine_grained: bool = False
    # A replayed trace's speed (1 = as recorded, 0.5 = half, 0 = as fast as possible).
    replay_speed: float = 1.0
    # What the person pays per model (livefill.session.prices): none unless they say so.
    prices: tuple[Price, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", parse_mode(self.mode))
        object.__setattr__(self, "speed", float(self.speed))
        if self.provider not in PROVIDERS and self.provider != "raw":
            raise ValueError(f"unknown provider {self.provider!r} (known: {', '.join(PROVIDERS)})")
        if self.live and self.provider not in LIVE_PROVIDERS:
            raise ValueError(f"the {self.provider} provider has no live service")
        if self.structured not in STRUCTURED:
            raise ValueError(f"unknown structured output {self.structured!r} (known: {', '.join(STRUCTURED)})")
        if self.speed < 0:
            raise ValueError(f"speed must be >= 0, got {self.speed:g}")
        object.__setattr__(self, "replay_speed", float(self.replay_speed))
        if self.replay_speed < 0:
            raise ValueError(f"replay speed must be >= 0, got {self.replay_speed:g}")
        check_slicing(self.slicing)
        object.__setattr__(self, "prices", check_prices(self.prices))
        object.__setattr__(self, "fault", check_fault(self.fault))
        if self.schema_name is not None:
            resolve_schema(self.schema_name)  # InputError (a ValueError) naming what is wrong

    def with_(self, **changes: Any) -> RunSettings:
        """A copy with `changes` (checked as a new value is)."""
        return replace(self, **changes)

    def changed(self, other: RunSettings) -> frozenset[str]:
        """The names of the settings that differ between `self` and `other`."""
        return frozenset(f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name))


SETTING_NAMES: frozenset[str] = frozenset(f.name for f in fields(RunSettings))
