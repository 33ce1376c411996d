"""What one run is told besides its form: `RunConfig`, and the few facts read from it alone.

A session builds one `RunConfig` per Start from its settings (livefill.session.session) and each
lane puts its own mode and label in; `livefill.session.run.Run` reads it. `relay_can_record` and
`run_secrets` answer from the config alone, so the session can ask them before any run exists.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, AsyncContextManager

from livefill.defaults import IDLE_TIMEOUT
from livefill.demo.protocol import DemoKnobs
from livefill.extraction.modes import Mode
from livefill.extraction.readers import ReaderOptions
from livefill.loopback import is_loopback_url
from livefill.wire.taps import WireTap

__all__ = ["RunConfig", "Source", "relay_can_record", "run_secrets"]

_NOT_SECRETS = frozenset({"", "demo", "ollama"})  # the placeholder keys of the keyless servers


@dataclass(frozen=True, kw_only=True, slots=True)
class RunConfig:
    """Everything one run needs to know besides the form."""

    mode: Mode
    provider: str = "anthropic"  # a name of livefill.wire.providers.spec.PROVIDER_SPECS
    base_url: str = ""
    schema_name: str = ""  # a bundled schema's name, or the path of a JSON Schema file
    schema_json: Mapping[str, Any] | None = None  # a person's JSON Schema itself (wins over schema_name)
    document: str = ""
    model: str | None = None
    api_key: str = field(default="demo", repr=False)  # never in a repr, a log line or a trace
    demo: DemoKnobs | None = None  # None: not the demo provider
    relay_token: str | None = None
    relay_url: str = ""  # where the relay is (settled / hybrid); "": at base_url, the demo provider's server
    relay_embedded: bool = False  # the relay is the app's own embedded one: the only relay handed api_key
    fine_grained: bool = False
    structured: str = "tools"  # how structure is forced: "tools" | "json_schema" | "json_object"
    idle_timeout: float = IDLE_TIMEOUT
    show_provisional_strings: bool = True
    show_provisional_numbers: bool = False
    label: str = ""  # what the history and the run log call this run (e.g. the scenario)
    record_path: str | None = None  # write a trace of the run's wire here (livefill/recording/trace_writer.py)
    record_document: bool = True  # the trace keeps the document's text (False: only its SHA-256)
    replay_ending: str = ""  # a replay of a recording that did not complete: how it ends (see replay_config)

    @property
    def reader_options(self) -> ReaderOptions:
        """What the mode's reader shows before a value settles."""
        return ReaderOptions(
            show_provisional_strings=self.show_provisional_strings,
            show_provisional_numbers=self.show_provisional_numbers,
        )

    @property
    def idle_limit(self) -> float | None:
        """The idle limit in seconds (None: none, for 0 or less)."""
        return self.idle_timeout if self.idle_timeout and self.idle_timeout > 0 else None


Source = Callable[[WireTap], AsyncContextManager[AsyncIterator[Any]]]
"""A stream source: given a tap, an async context manager yielding the events (or relay records)."""


def relay_can_record(cfg: RunConfig) -> bool:
    """Whether the run's relay can record: the app's embedded one (for a demo run with no relay
    address, the demo provider's own server), over loopback."""
    relay_url = cfg.relay_url or cfg.base_url
    embedded = cfg.relay_embedded or (cfg.demo is not None and not cfg.relay_url)
    return embedded and bool(relay_url) and is_loopback_url(relay_url)


def run_secrets(cfg: RunConfig) -> list[str]:
    """What a trace of this run must never contain: its key and its relay token."""
    return [s for s in (cfg.api_key, cfg.relay_token) if s and s not in _NOT_SECRETS]
