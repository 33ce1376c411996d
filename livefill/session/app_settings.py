"""What livefill remembers between launches, and the small store interface it is kept through.

    store = MemoryStore()                      # or livefill.gui.qsettings_store.QSettingsStore(path)
    save_settings(store, session.settings, theme="dark", redact=keys.redact)
    saved = load_settings(store)               # SavedSettings: what the last launch left
    session.set_settings(saved.apply(session.settings))

How this works
--------------
`SavedSettings` is the remembered part of a session's `RunSettings` — provider, model, the
OpenAI-compatible server's and Ollama's base URL and model, and exactly what was shown: the
scenario, the document of one's own (its file; none when a scenario was shown) and the schema
chosen, and the price table (livefill.session.prices: JSON text) — plus the colour theme. It has no field for a key, so a key cannot be saved; every value also goes through
`redact` (a `KeyStore.redact`) before it reaches the store, so a key pasted into a URL field is
not written either.

A `SettingsStore` is any object with `value(name) -> str | None`, `set_value(name, str)`,
`remove(name)` and `sync()`: `MemoryStore` here (tests, scripts), a QSettings-backed one in the
GUI. Values are kept as strings under `KEYS`; a value that cannot be read back (an unknown
provider or theme) is dropped with the reason in `SavedSettings.problems`, and the rest is used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from livefill.errors import InputError
from livefill.extraction.scenarios import SCENARIO_NAMES
from livefill.extraction.schemas import resolve_schema
from livefill.session.prices import Price, parse_prices, prices_json
from livefill.session.settings import PROVIDERS, RunSettings
from livefill.wire.providers.base_urls import DEFAULT_HOST

__all__ = [
    "KEYS",
    "THEMES",
    "MemoryStore",
    "SavedSettings",
    "SettingsStore",
    "default_ollama_url",
    "load_settings",
    "save_settings",
]

THEMES: tuple[str, ...] = ("system", "light", "dark")

#: The store's name for each remembered value.
KEYS: dict[str, str] = {
    "provider": "run/provider",
    "model": "run/model",
    "compatible_base_url": "compatible/base_url",
    "compatible_model": "compatible/model",
    "ollama_base_url": "ollama/base_url",
    "ollama_model": "ollama/model",
    "scenario": "document/scenario",
    "last_document": "document/last_path",
    "schema": "document/schema",
    "prices": "prices/table",
    "theme": "window/theme",
}


def default_ollama_url(environ: Mapping[str, str] | None = None) -> str:
    """Ollama's base URL: `OLLAMA_HOST` (a bare host:port gets http://) or http://127.0.0.1:11434."""
    environ = os.environ if environ is None else environ
    host = environ.get("OLLAMA_HOST", "").strip()
    if not host:
        return DEFAULT_HOST
    return host if "://" in host else f"http://{host}"


class SettingsStore(Protocol):
    """Where remembered values live (strings by name)."""

    def value(self, name: str) -> str | None: ...

    def set_value(self, name: str, value: str) -> None: ...

    def remove(self, name: str) -> None: ...

    def sync(self) -> None: ...


class MemoryStore:
    """A SettingsStore in a dict (`values`)."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values: dict[str, str] = dict(values or {})

    def value(self, name: str) -> str | None:
        return self.values.get(name)

    def set_value(self, name: str, value: str) -> None:
        self.values[name] = value

    def remove(self, name: str) -> None:
        self.values.pop(name, None)

    def sync(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class SavedSettings:
    """The remembered settings (None / "": nothing remembered). `problems` says what was dropped."""

    provider: str | None = None
    model: str | None = None
    compatible_base_url: str = ""
    compatible_model: str | None = None
    ollama_base_url: str = ""
    ollama_model: str | None = None
    scenario: str | None = None
    last_document: str | None = None
    schema: str | None = None
    prices: tuple[Price, ...] = ()
    theme: str | None = None
    problems: tuple[str, ...] = ()

    @classmethod
    def of(cls, settings: RunSettings, *, theme: str | None = None) -> SavedSettings:
        """What of `settings` (and the theme) is remembered: exactly what they show. The scenario;
        the document of one's own by its file (None when the scenario's is shown); the schema
        chosen. A document with no file (pasted text, a replayed recording) cannot be reopened:
        then the scenario alone, with its own schema."""
        reopenable = settings.document is None or settings.document_path is not None
        return cls(
            provider=settings.provider,
            model=settings.model,
            compatible_base_url=settings.compatible_base_url,
            compatible_model=settings.compatible_model,
            ollama_base_url=settings.ollama_base_url,
            ollama_model=settings.ollama_model,
            scenario=settings.scenario,
            last_document=settings.document_path if settings.document is not None else None,
            schema=settings.schema_name if reopenable else None,
            prices=settings.prices,
            theme=theme,
        )

    def apply(self, settings: RunSettings) -> RunSettings:
        """`settings` with the remembered values put in (the last document is loaded separately)."""
        changes: dict[str, object] = {
            "compatible_base_url": self.compatible_base_url or settings.compatible_base_url,
            "compatible_model": self.compatible_model or settings.compatible_model,
            "ollama_base_url": self.ollama_base_url or settings.ollama_base_url,
            "ollama_model": self.ollama_model or settings.ollama_model,
            "model": self.model or settings.model,
        }
        if self.provider:
            changes["provider"] = self.provider
        if self.scenario:
            changes["scenario"] = self.scenario
        if self.schema:
            changes["schema_name"] = self.schema
        if self.prices:
            changes["prices"] = self.prices
        return replace(settings, **changes)


def save_settings(
    store: SettingsStore,
    settings: RunSettings,
    *,
    theme: str | None = None,
    redact: Callable[[str], str] | None = None,
) -> SavedSettings:
    """Write the remembered part of `settings` (and `theme`) to `store`; returns what was saved."""
    saved = SavedSettings.of(settings, theme=theme)
    for attr, name in KEYS.items():
        value = getattr(saved, attr)
        if attr == "prices":
            value = prices_json(value) if value else None
        if value is None or value == "":
            store.remove(name)
            continue
        text = str(value)
        store.set_value(name, redact(text) if redact is not None else text)
    store.sync()
    return saved


def load_settings(store: SettingsStore) -> SavedSettings:
    """What `store` remembers; values that cannot be used are left out and named in `problems`."""
    values: dict[str, str | None] = {}
    problems: list[str] = []
    for attr, name in KEYS.items():
        raw = store.value(name)
        values[attr] = raw.strip() if isinstance(raw, str) and raw.strip() else None
    if values["provider"] is not None and values["provider"] not in PROVIDERS:
        problems.append(f"the saved provider {values['provider']!r} is not one livefill knows; using the default")
        values["provider"] = None
    if values["theme"] is not None and values["theme"] not in THEMES:
        problems.append(f"the saved theme {values['theme']!r} is not one of {', '.join(THEMES)}; using the default")
        values["theme"] = None
    if values["scenario"] is not None and values["scenario"] not in SCENARIO_NAMES:
        problems.append(f"the saved scenario {values['scenario']!r} is not one livefill has; using the default")
        values["scenario"] = None
    if values["schema"] is not None:
        try:
            resolve_schema(values["schema"])
        except InputError as exc:
            problems.append(f"the saved schema {values['schema']} cannot be used ({' '.join(str(exc).split())}); "
                            "using the scenario's")
            values["schema"] = None
    prices: tuple[Price, ...] = ()
    if values["prices"] is not None:
        try:
            prices = parse_prices(values["prices"])
        except ValueError as exc:
            problems.append(f"the saved prices cannot be read ({exc}); no prices")
    return SavedSettings(
        provider=values["provider"],
        model=values["model"],
        compatible_base_url=values["compatible_base_url"] or "",
        compatible_model=values["compatible_model"],
        ollama_base_url=values["ollama_base_url"] or "",
        ollama_model=values["ollama_model"],
        scenario=values["scenario"],
        last_document=values["last_document"],
        schema=values["schema"],
        prices=prices,
        theme=values["theme"],
        problems=tuple(problems),
    )
