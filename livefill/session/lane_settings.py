"""One compare lane's own run settings: `LaneSettings`, overrides over the session's `RunSettings`.

A lane says only what it changes (None: the session's): provider, live, base URL, model,
structured mode, fine-grained toggle, and the demo knobs (speed, seed, fault, slice); its reading
mode is always its own. `lane_run_settings(base, lane)` turns the overrides into the lane's
`RunSettings` (then `session_config.settings_config` makes its RunConfig), for the window's
compare lanes (livefill.session.compare) and `livefill compare` alike. The text form is the
CLI's `--lane KEY=VALUE,...` (`parse_lane_settings`, `LaneSettings.text`), which is also how the
app remembers the lanes (`save_lanes` / `load_lanes`, the store's `compare/lanes`).

`lane_titles` says in a few words what differs between lanes ("anthropic · fine-grained" vs
"ollama"; nothing all lanes share). `PRESETS` are the compare view's lane sets: the five reading
modes, every demo wire, and (`live_preset`, keys read off the GUI thread) the live providers
one has keys for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from livefill.errors import InputError
from livefill.extraction.modes import MODES, Mode, parse_mode
from livefill.session.app_settings import SettingsStore
from livefill.session.session_config import live_endpoint
from livefill.session.settings import (
    DEFAULT_SEED, LIVE_PROVIDERS, PROVIDERS, RunSettings, base_url_setting, check_fault, check_slicing, fault_problem, model_setting,
)
from livefill.wire.keys import KeyStore
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

__all__ = [
    "DEMO_KNOBS", "LANE_KEYS", "demo_words", "differing", "LANES_KEY", "PRESETS", "LaneSettings", "LaneSettingsError", "Preset", "lane_run_settings",
    "lane_titles", "live_preset", "load_lanes", "parse_lane_settings", "save_lanes", "shared_words",
]

LANE_KEYS = ("provider", "model", "base_url", "structured", "fine_grained", "mode", "live", "speed", "seed", "fault", "slice")
DEMO_KNOBS = ("speed", "seed", "fault", "slice")
LANES_KEY = "compare/lanes"
"""The settings store's name for the compare lanes (a JSON list of each lane's keys)."""
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


class LaneSettingsError(InputError):
    """A lane's settings cannot be used; one line naming the key (`provider=nope: unknown provider`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LaneSettings:
    """A compare lane's overrides over the session's settings (None: the session's) and its mode."""

    provider: str | None = None
    live: bool | None = None
    base_url: str | None = None
    model: str | None = None
    structured: str | None = None
    fine_grained: bool | None = None
    mode: Mode = Mode.PARTIAL
    speed: float | None = None
    seed: int | None = None
    fault: str | None = None
    slice: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", parse_mode(self.mode))

    def with_(self, **changes: Any) -> LaneSettings:
        return replace(self, **changes)

    def given(self) -> dict[str, Any]:
        """The keys this lane sets (mode always), in `LANE_KEYS` order."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return {key: out[key] for key in LANE_KEYS if key in out}

    def text(self) -> str:
        """`provider=ollama,mode=partial`: the `--lane` text that parses back to this lane."""
        parts = []
        for key, value in self.given().items():
            shown = str(value).lower() if isinstance(value, bool) else value.value if isinstance(value, Mode) else value
            parts.append(f"{key}={shown:g}" if isinstance(shown, float) else f"{key}={shown}")
        return ",".join(parts)


def _bool(key: str, value: str) -> bool:
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise LaneSettingsError(f"{key}={value}: say true or false")


def parse_lane_settings(text: str, *, default_provider: str | None = None) -> LaneSettings:
    """`provider=openai-chat,mode=settled` -> its LaneSettings; LaneSettingsError naming what is
    wrong. A `base_url` without `live` means live; demo knobs on a live lane are refused."""
    given: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if not eq:
            raise LaneSettingsError(f"{part.strip()!r} is not KEY=VALUE (keys: {', '.join(LANE_KEYS)})")
        if key not in LANE_KEYS:
            raise LaneSettingsError(f"unknown key {key!r} (keys: {', '.join(LANE_KEYS)})")
        if key in given:
            raise LaneSettingsError(f"{key} given twice")
        given[key] = value.strip()
    provider = given.get("provider", default_provider)
    if provider is not None and provider not in PROVIDERS:
        raise LaneSettingsError(f"provider={provider}: unknown provider; known: {', '.join(PROVIDERS)}")
    modes = tuple(m.value for m in MODES)
    mode = given.get("mode", Mode.PARTIAL.value)
    if mode not in modes:
        raise LaneSettingsError(f"mode={mode}: unknown mode; known: {', '.join(modes)}")
    base_url = given.get("base_url") or None
    live = _bool("live", given["live"]) if "live" in given else (True if base_url is not None else None)
    if base_url is not None and not live:
        raise LaneSettingsError("base_url=... asks a live server: leave out live=false")
    knobs = [k for k in DEMO_KNOBS if k in given]
    if live and knobs:
        raise LaneSettingsError(f"{', '.join(knobs)} are the demo provider's knobs; a live lane has none")
    model = given.get("model")
    if model is not None and not model:
        raise LaneSettingsError("model=: give a model name")
    lane = LaneSettings(
        provider=provider, live=live, base_url=base_url, model=model, structured=given.get("structured"),
        fine_grained=_bool("fine_grained", given["fine_grained"]) if "fine_grained" in given else None,
        mode=Mode(mode), speed=_speed(given), seed=_seed(given), fault=_fault(given),
        slice=_checked(given, "slice", check_slicing),
    )
    check_lane(lane, provider)
    return lane


def check_lane(lane: LaneSettings, provider: str | None) -> None:
    """Refuse what `provider` (the lane's, or the session's) cannot do: LaneSettingsError."""
    if provider is None:
        if lane.structured is not None and lane.structured not in STRUCTURED:
            raise LaneSettingsError(f"structured={lane.structured}: known: {', '.join(STRUCTURED)}")
        return
    spec = PROVIDER_SPECS[provider]
    if lane.structured is not None and lane.structured not in spec.structured:
        raise LaneSettingsError(
            f"structured={lane.structured}: provider={provider} takes {'/'.join(spec.structured)} (of {', '.join(STRUCTURED)})"
        )
    if lane.fine_grained and not spec.fine_grained:
        raise LaneSettingsError(f"fine_grained=true: only provider=anthropic streams fine-grained, not {provider}")
    if lane.live and provider not in LIVE_PROVIDERS:
        raise LaneSettingsError(f"live=true: the {provider} provider has no live service")
    if not lane.live and lane.fault:
        why = fault_problem(lane.fault, provider)
        if why:
            raise LaneSettingsError(f"fault={lane.fault}: {why}")


def _speed(given: dict[str, str]) -> float | None:
    if "speed" not in given:
        return None
    try:
        speed = float(given["speed"])
    except ValueError:
        speed = -1.0
    if not 0 <= speed <= 100_000:
        raise LaneSettingsError(f"speed={given['speed']}: tokens per second from 0 to 100000; 0 = as fast as possible")
    return speed


def _seed(given: dict[str, str]) -> int | None:
    if "seed" not in given:
        return None
    try:
        return int(given["seed"])
    except ValueError:
        raise LaneSettingsError(f"seed={given['seed']}: a whole number, e.g. seed=7") from None


def _fault(given: dict[str, str]) -> str | None:
    """The lane's fault: "none" is kept (no fault, whatever the session's)."""
    if given.get("fault", "").strip().lower() == "none":
        return "none"
    return _checked(given, "fault", check_fault)


def _checked(given: dict[str, str], key: str, check: Callable[[str], Any]) -> Any:
    if key not in given:
        return None
    try:
        return check(given[key])
    except ValueError as exc:
        raise LaneSettingsError(f"{key}={given[key]}: {exc}") from None


def lane_run_settings(base: RunSettings, lane: LaneSettings) -> RunSettings:
    """The lane's RunSettings: `base` (the session's) with the lane's overrides and mode put in.

    A lane on another provider than `base`'s asks that provider's default model unless it names
    one; a structured mode or a fault the lane's provider cannot take falls back to its first /
    none when it is the session's, and is refused (LaneSettingsError) when it is the lane's own."""
    provider = lane.provider or base.provider
    check_lane(lane, provider)
    spec = PROVIDER_SPECS[provider]
    live = base.live if lane.live is None else lane.live
    changes: dict[str, Any] = {"provider": provider, "live": live, "mode": lane.mode}
    structured = lane.structured or base.structured
    changes["structured"] = structured if structured in spec.structured else spec.structured[0]
    fine = base.fine_grained if lane.fine_grained is None else lane.fine_grained
    changes["fine_grained"] = bool(fine and spec.fine_grained)
    if lane.base_url is not None:
        changes[base_url_setting(provider)] = lane.base_url
    model_key = model_setting(provider) if live else "model"
    if lane.model is not None:
        changes[model_key] = lane.model
    elif provider != base.provider and model_key == "model":
        changes["model"] = None  # another vendor's model name would be refused: the provider's default
    for key, attr in (("speed", "speed"), ("seed", "seed"), ("slice", "slicing")):
        value = getattr(lane, key)
        if value is not None:
            changes[attr] = value
    fault = lane.fault if lane.fault is not None else base.fault
    changes["fault"] = None if fault_problem(fault, provider) else fault
    try:
        return base.with_(**changes)
    except ValueError as exc:
        raise LaneSettingsError(" ".join(str(exc).split())) from None


# -- what differs between lanes -------------------------------------------------------------------

def _words(s: RunSettings) -> dict[str, str | None]:
    """Each setting a lane header may name, as it would say it ("" says nothing; None: it does
    not apply to this lane, as the demo knobs to a live lane)."""
    model = getattr(s, model_setting(s.provider) if s.live else "model")
    return {
        "provider": s.provider,
        "live": "live" if s.live else "demo",
        "fine_grained": "fine-grained" if s.fine_grained else "",
        "structured": s.structured,
        "model": model or "default model",
        "mode": s.mode.value,
        "speed": None if s.live else f"speed {s.speed:g}",
        "seed": None if s.live else f"seed {s.seed if s.seed is not None else DEFAULT_SEED}",  # compare says it
        "fault": None if s.live else f"fault {s.fault}" if s.fault else "no fault",
        "slicing": None if s.live else f"slice {s.slicing}",
    }


def differing(settings: Sequence[RunSettings]) -> list[str]:
    """The settings the lanes do not all share ("provider", "fine_grained", "mode", ...)."""
    words = [_words(s) for s in settings]
    return [k for k in (words[0] if words else {}) if len({w[k] for w in words} - {None}) > 1]


def lane_titles(settings: Sequence[RunSettings]) -> list[str]:
    """Per lane, in a few words, what differs from the other lanes ("anthropic · fine-grained" vs
    "ollama"); lanes alike in everything are called by their mode ("partial", "partial 2")."""
    words = [_words(s) for s in settings]
    keys = differing(settings)
    titles = []
    for w, s in zip(words, settings):
        said = [w[k] for k in keys if w[k]]
        titles.append(" · ".join(said) if said else s.mode.value)
    counts: dict[str, int] = {}
    out = []
    for title in titles:
        counts[title] = counts.get(title, 0) + 1
        out.append(title if counts[title] == 1 else f"{title} {counts[title]}")
    return out


def shared_words(settings: Sequence[RunSettings]) -> list[str]:
    """What every lane shares, in a few words ("partial", "speed 30"), for a caption over them (a
    demo knob only when every lane is a demo lane: a live lane has none; see `demo_words`)."""
    words = [_words(s) for s in settings]
    if not words:
        return []
    return [str(w) for k in words[0] if len(said := {w[k] for w in words}) == 1 and (w := said.pop())]


def demo_words(settings: Sequence[RunSettings]) -> list[str]:
    """Beside a live lane, the demo knobs the demo lanes share ("speed 30", "seed 7"); [] when
    every lane is a demo lane (`shared_words` says them) or none is."""
    words = [_words(s) for s in settings if not s.live]
    if not words or len(words) == len(settings):
        return []
    return [str(w) for k in ("speed", "seed", "fault", "slicing") if len(said := {w[k] for w in words}) == 1 and (w := said.pop())]


# -- presets ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Preset:
    """A set of compare lanes the compare view offers by name."""

    name: str
    title: str
    lanes: tuple[LaneSettings, ...]  # empty for "live": made from the keys one has (`live_preset`)


_WIRES = tuple(
    LaneSettings(provider=name, live=False, fine_grained=fine, mode=Mode.PARTIAL)
    for name in ("anthropic", "openai-chat", "openai-responses", "ollama")
    if name in PROVIDER_SPECS and PROVIDER_SPECS[name].in_app
    for fine in ((False, True) if PROVIDER_SPECS[name].fine_grained else (False,))
)

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("modes", "Same request, read five ways", tuple(
            LaneSettings(mode=m) for m in (Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED, Mode.HYBRID, Mode.BLOCKING)
        )),
        Preset("wires", "One document, every demo wire", _WIRES[:5]),
        Preset("live", "The live providers you have keys for", ()),
    )
}


def live_preset(base: RunSettings, keys: KeyStore | None) -> tuple[LaneSettings, ...]:
    """One partial lane per live provider `keys` has a key for (at most five). Reads the keyring:
    call it off the GUI thread."""
    keys = keys if keys is not None else KeyStore()  # (one store: each keyring slot is read once)
    lanes = []
    for provider in LIVE_PROVIDERS:
        if PROVIDER_SPECS[provider].key_variable is None and provider != "openai-compatible":
            continue  # no key to have (Ollama)
        try:
            _, key, _ = live_endpoint(base.with_(provider=provider, live=True), keys, require_key=False)
        except InputError:
            continue  # an OpenAI-compatible server with no base URL
        if key:
            lanes.append(LaneSettings(provider=provider, live=True, mode=Mode.PARTIAL))
    return tuple(lanes[:5])


# -- remembered -----------------------------------------------------------------------------------

def save_lanes(store: SettingsStore, lanes: Iterable[LaneSettings], *, redact: Callable[[str], str] | None = None) -> None:
    """Remember the compare lanes in `store` (a JSON list of each lane's `--lane` text)."""
    text = json.dumps([lane.text() for lane in lanes])
    store.set_value(LANES_KEY, redact(text) if redact is not None else text)
    store.sync()


def load_lanes(store: SettingsStore) -> tuple[tuple[LaneSettings, ...] | None, str | None]:
    """The compare lanes `store` remembers (None: none), and why they were dropped (None: they were not)."""
    raw = store.value(LANES_KEY)
    if not raw:
        return None, None
    try:
        texts = json.loads(raw)
        lanes = tuple(parse_lane_settings(str(t)) for t in texts)
        if not 2 <= len(lanes) <= 5:
            raise LaneSettingsError(f"{len(lanes)} lanes")
    except (ValueError, TypeError) as exc:
        return None, f"the saved compare lanes cannot be used ({' '.join(str(exc).split())}); using the default"
    return lanes, None
