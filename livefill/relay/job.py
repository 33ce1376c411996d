"""One checked relay request, a `Job`: what to ask upstream and how to settle it.

`read_job` turns a request body into a Job, or a `BadRequest` (the relay's 400): the body's shape
(livefill.relay.request), then what needs the bundled scenarios and schemas and the demo knobs.
`upstream_request` makes the provider request a Job asks for, with the key from where the relay
may take it (docs/notes/relay-app.md, "Live upstreams").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

from livefill.demo.protocol import KnobError, fault_refusal
from livefill.demo.relay_body import knobs_from_relay_demo
from livefill.errors import InputError, UsageError
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SCHEMAS, SchemaSource, resolve_schema
from livefill.relay.request import BadRequest, parse_request
from livefill.wire.providers.base_urls import join_url, live_base_url
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = ["Job", "key_goes_elsewhere", "read_job", "upstream_request"]


@dataclass(frozen=True, kw_only=True)
class Job:
    """One checked request: what to ask upstream, and how to settle it."""

    schema: SchemaSource
    document: str
    provider: str
    upstream: str
    model: str | None
    mode: str
    base_url: str | None = None
    structured: str = "tools"
    fine_grained: bool = False
    idle_timeout: float | None = None  # the client's idle limit, if it gave one
    api_key: str | None = field(default=None, repr=False)  # from the embedded relay's header only
    demo_headers: dict[str, str] = field(default_factory=dict)
    record_path: str | None = field(default=None, repr=False)  # the embedded relay's trace, if asked
    record_document: bool = True


def _control_characters(demo: BaseModel | None) -> str | None:
    """The first key of the body's "demo" object whose text holds a control character."""
    items = demo.model_dump(exclude_none=True) if demo is not None else {}
    for key, value in items.items():
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            return str(key)
    return None


def read_job(raw: bytes) -> Job:
    """The Job a request body asks for; BadRequest naming what is wrong."""
    body = parse_request(raw)
    demo_scenario: str | None = None
    if body.scenario is not None:
        try:
            scenario = get_scenario(body.scenario)
        except KeyError as exc:
            raise BadRequest(str(exc.args[0])) from None
        schema, document = resolve_schema(scenario.schema_name), scenario.document
        if body.upstream == "demo":
            demo_scenario = scenario.name
    else:
        assert body.schema_name is not None and body.document is not None
        if isinstance(body.schema_name, dict):
            try:
                schema = resolve_schema(body.schema_name)
            except InputError as exc:
                raise BadRequest(str(exc)) from None
        elif body.schema_name not in SCHEMAS:
            raise BadRequest(f"unknown schema {body.schema_name!r}; known: {', '.join(sorted(SCHEMAS))}")
        else:
            schema = resolve_schema(body.schema_name)
        document = body.document
    control = _control_characters(body.demo)
    if control is not None:
        raise BadRequest(f"demo.{control}: control characters are not allowed")
    try:
        knobs = knobs_from_relay_demo(body.demo, scenario=demo_scenario)
    except KnobError as exc:
        raise BadRequest(f"demo: {exc}") from None
    if knobs.fault is not None:  # a fault the provider's wire cannot carry: refused here, not upstream
        why = fault_refusal(knobs.fault.name, PROVIDER_SPECS[body.provider].wire)
        if why:
            raise BadRequest(f"demo.fault: {why}")
    return Job(
        schema=schema,
        document=document,
        provider=body.provider,
        upstream=body.upstream,
        model=body.model,
        mode=body.mode,
        base_url=body.base_url,
        structured=body.structured,
        fine_grained=body.fine_grained,
        idle_timeout=body.idle_timeout,
        demo_headers=knobs.headers(),
    )


def upstream_request(job: Job, demo_base_url: str | None, env: Mapping[str, str]) -> ExtractionRequest:
    """The provider request `job` asks for: to the demo provider at `demo_base_url`, or to the live
    provider with its key (`env`: the relay's environment). UsageError when it cannot be made."""
    if job.upstream == "demo":
        if not demo_base_url:
            raise UsageError(
                "this relay has no demo provider configured (set LIVEFILL_RELAY_DEMO_URL, or use "
                '"upstream": "live")'
            )
        base_url, api_key = demo_base_url, "demo"
    else:
        base_url, api_key = _live_upstream(job, env)
    return ExtractionRequest(
        provider=job.provider,
        base_url=base_url,
        schema=job.schema,
        document=job.document,
        model=job.model,
        api_key=api_key,
        demo_headers=dict(job.demo_headers),
        structured=job.structured,
        fine_grained=job.fine_grained,
    )


def _live_upstream(job: Job, env: Mapping[str, str]) -> tuple[str, str]:
    """The live provider's base URL and API key (docs/notes/relay-app.md, "Live upstreams").

    UsageError naming the missing variable when a vendor's key is in neither place."""
    if job.api_key is not None:  # the embedded relay, handed the app's key over loopback
        return job.base_url or live_base_url(job.provider, env), job.api_key
    key_var = PROVIDER_SPECS[job.provider].key_variable
    if key_var is None:  # Ollama, an OpenAI-compatible server: no key needed
        return job.base_url or live_base_url(job.provider, env), ""
    key = env.get(key_var, "")
    if not key:
        raise UsageError(f"no {key_var} in the relay's environment: the live {job.provider} provider needs an API key")
    return live_base_url(job.provider, env), key


def key_goes_elsewhere(job: Job, env: Mapping[str, str]) -> str | None:
    """Why a live request must be refused because it would send the relay's own key to an
    address the relay's environment does not pair it with (None: it would not)."""
    key_var = PROVIDER_SPECS[job.provider].key_variable
    if job.upstream != "live" or job.api_key is not None or job.base_url is None or key_var is None:
        return None
    paired = live_base_url(job.provider, env)
    if join_url(job.base_url, "/v1/") == join_url(paired, "/v1/"):
        return None
    return f"this relay sends its {key_var} only to {paired}; it will not send it to {job.base_url!r}"
