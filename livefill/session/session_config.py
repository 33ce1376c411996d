"""The RunConfig a session's settings make: a demo run, a live run, or the replay of a trace.

`livefill.session.session.Session.run_config()` is `settings_config(...)` of its settings; each
lane then puts its own mode in. A live run's address and key (`live_address`, `live_endpoint`)
are read here too, so the model list and the settings dialog ask the same questions.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from livefill.demo.protocol import DemoKnobs
from livefill.errors import InputError
from livefill.extraction.json_doc import MISSING
from livefill.extraction.scenarios import get_scenario
from livefill.session.app_settings import default_ollama_url
from livefill.session.replay import ReplaySource, recorded_structured, replay_config
from livefill.session.run_config import RunConfig
from livefill.session.settings import DEFAULT_SEED, RunSettings, base_url_setting, model_setting
from livefill.wire.keys import KeyStore
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = [
    "expected_output", "live_address", "live_endpoint", "settings_config", "settings_document", "settings_schema_name",
]


def settings_schema_name(s: RunSettings) -> str:
    """The schema the document is read with (the scenario's unless one was chosen)."""
    return s.schema_name or get_scenario(s.scenario).schema_name


def settings_document(s: RunSettings) -> str:
    """The source document (the scenario's unless one was given)."""
    return s.document if s.document is not None else get_scenario(s.scenario).document


def expected_output(config: RunConfig, s: RunSettings) -> Any:
    """What a run of `config` is expected to extract: a demo scenario's output when the run reads
    that scenario's own document; MISSING when it is not known (a live run, a document of one's own)."""
    if config.demo is not None and config.demo.scenario and s.document is None:
        return get_scenario(config.demo.scenario).output
    return MISSING


def settings_config(
    s: RunSettings, *, comparing: bool = False, replay: ReplaySource | None = None, keys: KeyStore | None = None
) -> RunConfig:
    """The RunConfig of the next run from settings `s` (each lane puts its own mode in).

    `replay`: the trace Start replays (its document, schema, provider and structured-output
    choice, at `s.replay_speed`). Demo (`s.live` False): the embedded demo provider at `base_url`,
    with the demo knobs and its placeholder key; no key source is asked (`comparing`: the seed is
    said explicitly, so every lane's request shows the same one). Live: the real provider
    (`live_endpoint`), no demo knobs, its key from `keys` (`MissingKey`, an InputError, before any
    request when Anthropic's or OpenAI's is missing), a structured-output choice the provider
    takes, and for settled / hybrid the app's embedded relay (the only relay handed the key)."""
    if replay is not None:
        return replay_config(
            replay.trace, replay.trace_id, base_url=replay.base_url or s.base_url, mode=s.mode,
            speed=s.replay_speed, relay_token=s.relay_token, idle_timeout=s.idle_timeout,
            show_provisional_strings=s.show_provisional_strings,
            show_provisional_numbers=s.show_provisional_numbers, label=f"replay {replay.name}",
            structured=recorded_structured(replay.trace),
        )
    if s.live:
        return _live_config(s, keys)
    seed = s.seed
    if seed is None and comparing:
        seed = DEFAULT_SEED  # said explicitly, so every lane's request shows the same seed
    return replace(
        _common_config(s),
        base_url=s.base_url,
        model=s.model,
        api_key="demo",
        demo=DemoKnobs(scenario=s.scenario, speed=s.speed, seed=seed, slice=s.slicing or None, fault=s.fault),
        structured=s.structured,
        relay_url=s.relay_url,
        relay_embedded=s.relay_embedded,
        fine_grained=s.fine_grained,
        label=f"{_what(s)} · {s.provider}" + (f" · fault {s.fault}" if s.fault else ""),
    )


def _common_config(s: RunSettings) -> RunConfig:
    """The part of a run's config that a demo and a live run take alike from the settings."""
    return RunConfig(
        mode=s.mode,
        provider=s.provider,
        schema_name=settings_schema_name(s),
        document=settings_document(s),
        relay_token=s.relay_token,
        idle_timeout=s.idle_timeout,
        show_provisional_strings=s.show_provisional_strings,
        show_provisional_numbers=s.show_provisional_numbers,
    )


def _what(s: RunSettings) -> str:
    return s.document_name if s.document is not None and s.document_name else s.scenario


def live_address(s: RunSettings) -> tuple[str, str | None]:
    """Where a live run of the provider chosen goes, without its key: (base_url, model).

    base_url "" is Anthropic's / OpenAI's own address (or the one their environment variable
    names); an OpenAI-compatible server needs its base URL (InputError without one); Ollama
    defaults to OLLAMA_HOST, else http://127.0.0.1:11434. Reads no keyring."""
    base_url = getattr(s, base_url_setting(s.provider))
    model = getattr(s, model_setting(s.provider))
    if s.provider == "openai-compatible" and not base_url:
        raise InputError(
            "No base URL for the OpenAI-compatible server: enter one in Settings (or start with --base-url)"
        )
    if s.provider == "ollama":
        base_url = base_url or default_ollama_url()
    return base_url, model


def live_endpoint(
    s: RunSettings, keys: KeyStore | None = None, *, require_key: bool = True
) -> tuple[str, str, str | None]:
    """`live_address(s)` and the key: (base_url, api_key, model). api_key "" when there is none
    (`MissingKey` instead, with `require_key`, when the provider needs one). The key may come
    from the system keyring (`keys` None: a store reading the environment and the keyring): call
    this off the GUI thread where it can wait."""
    provider = s.provider
    base_url, model = live_address(s)
    keys = keys if keys is not None else KeyStore()
    if provider == "ollama":
        key = None
    elif provider == "openai-compatible":
        key = keys.get(provider, base_url)
    else:
        # the vendor's key, or the key kept for the address its environment variable moves it
        # to (as the settings dialog keeps it: livefill.wire.keys.key_slot)
        variable = PROVIDER_SPECS[provider].base_url_variable
        slot_url = base_url or (os.environ.get(variable, "").strip() if variable else "") or None
        key = keys.require(provider, slot_url) if require_key else keys.get(provider, slot_url)
    return base_url, key.secret if key is not None else "", model


def _live_config(s: RunSettings, keys: KeyStore | None) -> RunConfig:
    base_url, api_key, model = live_endpoint(s, keys)
    spec = PROVIDER_SPECS[s.provider]
    structured = s.structured if s.structured in spec.structured else spec.structured[0]
    return replace(
        _common_config(s),
        base_url=base_url,
        model=model,
        api_key=api_key,
        demo=None,
        structured=structured,
        relay_url=s.base_url,  # the embedded relay: used by the lanes whose mode needs one
        relay_embedded=True,
        fine_grained=s.fine_grained and spec.fine_grained,
        label=f"{_what(s)} · {s.provider} (live)",
    )
