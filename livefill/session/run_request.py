"""What a run sends and where: the provider request or the relay request, and the stream it opens.

`livefill.session.run.Run` asks this module for its source: a provider-wire run (partial,
blocking, naive) sends an `ExtractionRequest` through `livefill.wire.providers.open_stream`; a
relay run (settled, hybrid, as `ModeSpec.needs_relay` says) sends an `ExtractRequest`
(livefill.relay.request, the one model the relay reads too) through
`livefill.relay.client.open_relay`. Both are opened on the net thread unless it is off.

A relay run's recording is written by the app's embedded relay (over loopback only), of the
provider's wire it reads: the run holds a `RelayRecording` that stands for that file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncContextManager

from livefill.defaults import IDLE_TIMEOUT
from livefill.errors import InputError, UsageError
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SchemaSource, resolve_schema
from livefill.loopback import is_loopback_url
from livefill.session.run_config import RunConfig, Source
from livefill.wire import net_thread
from livefill.wire.providers import open_stream
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.taps import WireTap

if TYPE_CHECKING:
    from livefill.relay.request import ExtractRequest

__all__ = [
    "RelayRecording",
    "demo_scenario",
    "off_thread",
    "provider_request",
    "provider_source",
    "relay_request",
    "relay_source",
    "run_schema",
]

@dataclass(frozen=True)
class RelayRecording:
    """A trace the embedded relay writes (the run holds no writer): `begun` once the file has its
    header line; `error` is None (the relay logs a file it could not write)."""

    path: Path
    error: str | None = None

    @property
    def begun(self) -> bool:
        try:
            return self.path.stat().st_size > 0
        except OSError:
            return False


def run_schema(cfg: RunConfig) -> SchemaSource:
    """The schema the request asks for: `schema_json` if given, else `schema_name` (a bundled
    name or a file), else the demo scenario's; InputError (SchemaError) for one livefill
    cannot use."""
    spec: Any = cfg.schema_json if cfg.schema_json is not None else cfg.schema_name
    if not spec and cfg.demo is not None and cfg.demo.scenario:
        spec = get_scenario(cfg.demo.scenario).schema_name
    return resolve_schema(spec)


def demo_scenario(cfg: RunConfig, schema: SchemaSource) -> str | None:
    """The demo scenario to name in the request: the config's, unless the run is about a
    document or a schema of one's own (then the demo provider is sent what the run is about,
    and says it only knows its scenarios)."""
    if cfg.demo is None or not cfg.demo.scenario:
        return None
    try:
        scenario = get_scenario(cfg.demo.scenario)
    except KeyError:
        return cfg.demo.scenario  # the demo provider names the unknown scenario itself
    if not schema.bundled or schema.name != scenario.schema_name:
        return None
    if cfg.document and cfg.document.strip() != scenario.document.strip():
        return None
    return cfg.demo.scenario


def off_thread(source: Source, tap: WireTap) -> AsyncContextManager[AsyncIterator[Any]]:
    """`source(tap)`, opened and read on the net thread (livefill/wire/net_thread.py) unless that is off."""
    if net_thread.enabled():
        return net_thread.threaded(source, tap)
    return source(tap)


# -- the provider's wire ---------------------------------------------------------------------


def provider_request(cfg: RunConfig, schema: SchemaSource, scenario: str | None, run_id: str) -> ExtractionRequest:
    """The request a provider-wire run sends (tagged with `run_id` for the demo provider's log)."""
    return ExtractionRequest(
        provider=cfg.provider,
        base_url=cfg.base_url,
        schema=schema,
        document=cfg.document,
        model=cfg.model,
        api_key=cfg.api_key,
        demo_headers=(
            {**replace(cfg.demo, scenario=scenario).headers(), "x-demo-tag": run_id} if cfg.demo is not None else {}
        ),
        fine_grained=cfg.fine_grained,
        structured=cfg.structured,
    )


def provider_source(request: ExtractionRequest, idle: float | None) -> Source:
    """The provider stream of `request`, idle for at most `idle` seconds (None: no limit)."""
    return lambda tap: open_stream(request, tap=tap, idle_timeout=idle)


# -- the relay -------------------------------------------------------------------------------


def relay_request(cfg: RunConfig, schema: SchemaSource, scenario: str | None, run_id: str) -> ExtractRequest:
    """The relay request a settled / hybrid run sends (its demo knobs tagged with `run_id`).
    UsageError for a live run with no relay address; InputError, before anything is sent, for a
    request the relay would refuse (a provider or structured-output choice it does not take)."""
    from livefill.relay.request import ExtractRequest  # lazy: the relay's pydantic models, not before the window shows (~100 ms)

    if cfg.demo is None and not cfg.relay_url:
        # base_url is the live provider's: the relay (and its token) must not go there
        raise UsageError(f"{cfg.mode.value} mode with a live provider needs the relay's address (relay_url)")
    fields: dict[str, Any] = {"provider": cfg.provider, "mode": cfg.mode.value}
    if scenario:
        fields["scenario"] = scenario
    else:  # a person's schema travels inline: the relay may not see this machine's files
        fields.update(schema=schema.name if schema.bundled else schema.schema_json, document=cfg.document)
    if cfg.demo is not None:
        fields.update(upstream="demo", demo={**cfg.demo.relay_demo(), "tag": run_id})
    else:
        fields.update(upstream="live", base_url=cfg.base_url or None)
    fields.update(model=cfg.model or None, structured=cfg.structured, fine_grained=cfg.fine_grained)
    idle = cfg.idle_limit
    if idle is not None and idle < IDLE_TIMEOUT:
        # a limit shorter than a relay's default: the relay watches its upstream no longer than
        # this side. Sent only then (a relay older than the key refuses it; a longer limit gains
        # nothing: the relay keeps the shorter of the two).
        fields["idle_timeout"] = idle
    try:
        return ExtractRequest.build(**fields)
    except UsageError as exc:  # the run's choices, not a bug: said as the relay would say it
        raise InputError(str(exc)) from None


def relay_source(cfg: RunConfig, request: ExtractRequest, record: RelayRecording | None) -> Source:
    """The relay's records for `request`; `record`: the trace the embedded relay is asked to write."""
    # lazy: relay.client imports the Anthropic SDK (through wire.providers.transport), which a
    # provider-wire run never needs: 14 s at import under load 11 here (python -X importtime)
    from livefill.relay.client import open_relay  # lazy: the Anthropic SDK, 14 s at load 11
    from livefill.relay.records import relay_backstop  # lazy: loaded with relay.client just above (0 ms)

    relay_url = cfg.relay_url or cfg.base_url
    # The key goes to the relay only when it is the app's own, over loopback; a relay elsewhere
    # uses the keys of its own environment.
    hand_key = cfg.demo is None and cfg.relay_embedded and bool(cfg.api_key) and is_loopback_url(relay_url)
    idle = cfg.idle_limit
    return lambda tap: open_relay(
        relay_url,
        cfg.relay_token or "",
        request,
        tap=tap,
        idle_timeout=None if idle is None else relay_backstop(idle),
        upstream_key=cfg.api_key if hand_key else None,
        record_path=str(record.path) if record is not None else None,
        record_document=cfg.record_document,
    )
