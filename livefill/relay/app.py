"""The relay's HTTP side: `POST /relay/v1/extract` (livefill relay v1, docs/relay-v1.md) as starlette routes.

How this works
--------------
A request is checked in full before anything streams: the bearer token (401 otherwise), then the
JSON body (400 with `{"error": {"type", "message"}}` for anything wrong: not JSON, an unknown key,
an unknown scenario / schema / provider / mode, demo knobs the demo provider would refuse). Then
the response starts (200, `application/x-ndjson`, `cache-control: no-cache`,
`x-accel-buffering: no`, chunked) and two tasks run side by side:

- the producer opens the upstream stream with `livefill.wire.providers.open_stream` — over real HTTP, to
  the demo provider (the configured demo URL; mounted beside the demo provider, this same server
  at the address the request came in on) or to the live provider (see "Live upstreams") — feeds each
  event to a `livefill.relay.settler.Settler` and writes the records it returns, one `send` per event, as
  soon as they exist. The first terminal record ends it: leaving `open_stream` closes upstream.
  Failures of the upstream (error status, broken connection, idle past `idle_timeout`, bad
  bytes) become the Settler's terminal `error` record.
- the watcher waits on `receive()` for `http.disconnect`. A disconnect while the producer is still
  running cancels it at once, which closes the upstream request (the demo provider logs the
  disconnect). Once the producer has finished, a disconnect means nothing (uvicorn reports one
  after every completed response), so the watcher is cancelled before the last body message.

Live upstreams. `"upstream": "live"` names the provider, optionally its `base_url` (else the
relay's own environment: ANTHROPIC_BASE_URL / OPENAI_BASE_URL / OLLAMA_HOST, else the vendor's
address), `model`, `structured` and `fine_grained`. The key comes from one of two places:

- the `x-livefill-upstream-key` request header, accepted only by the app's embedded relay
  (`RelaySettings.accept_upstream_key`, set by `routes()`) and only from a loopback peer; any
  other relay, or a peer elsewhere, gets 403 and the key goes nowhere. It is used for that one
  request, never logged, never echoed;
- otherwise the relay's environment (ANTHROPIC_API_KEY / OPENAI_API_KEY), as a deployed relay
  does — and then only to the address that environment pairs it with: a request that names
  another `base_url` for a provider whose key comes from the environment gets 400, so a client
  can never make the relay send its key elsewhere. An OpenAI-compatible server or Ollama without
  a header key is asked with no key.

Recording. The `x-livefill-record` header (an absolute path, percent-encoded) is accepted, like
the key header, only by the app's embedded relay (`RelaySettings.accept_record`) from a loopback
peer (403 otherwise; never logged). The relay then tees a `livefill.recording.trace.TraceWriter` onto the
upstream tap: the trace is the PROVIDER's wire as the relay read it (header from the upstream
request, credentials removed), an ordinary provider trace that replays in any mode. Its trailer
says how upstream ended: `complete`, `failed` with the terminal error's message, or `stopped`
when the client disconnected. `x-livefill-record-document: 0` keeps only the document's hash.

The app keeps no state between requests (the settings are read-only), so it runs under several
uvicorn / gunicorn workers as well as in one process. `create_relay_app()` with no arguments reads
its settings from the environment (LIVEFILL_RELAY_TOKEN, required; LIVEFILL_RELAY_DEMO_URL;
LIVEFILL_RELAY_IDLE_TIMEOUT; LIVEFILL_RELAY_TIMING_LOG), for `uvicorn --factory`.

Timing (opt-in, for tests/benchmarks/bench_relay.py): with a timing log path set, every record's
line is appended to it as JSON: `read_at`, the monotonic time of the upstream network read that
was the last one before the record was made (the read carrying its settling byte); `written_at`,
the monotonic time its `send` returned (handed to the socket); `written_wall`, the same as
time.time(). Lines are written once per request, after the response ended.

The request body's `schema` is either a bundled schema's name or a JSON Schema object inline:

    {"schema": "invoice", "document": "…"}
    {"schema": {"type": "object", "properties": {…}, "required": […]}, "document": "…"}

An inline schema is read by `livefill.extraction.user_schema.resolve_schema` (the keywords livefill supports; any
other one is a 400 naming the keyword and its pointer, e.g. `schema: /properties/total/anyOf:
anyOf is not supported (…)`); the `start` record then names it by its title (lowercase, `_` for
anything else; "custom" without one), every record is checked against the model built from it,
and upstream receives that model's JSON Schema. A name is never a path: the relay reads no files
a client names.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from livefill.demo.protocol import DemoKnobs, KnobError, RelayDemoBody, fault_refusal
from livefill.errors import InputError, ProtocolError, RunFailure, UsageError
from livefill.wire.events import KeepAlive
from livefill.relay.request import BadRequest, parse_request
from livefill.relay.settler import Settler
from livefill.relay.records import (
    DEFAULT_IDLE_TIMEOUT,
    EXTRACT_PATH,
    KEEPALIVE,
    KEEPALIVE_EVERY,
    RECORD_DOCUMENT_HEADER,
    RECORD_HEADER,
    UPSTREAM_KEY_HEADER,
    CompleteRecord,
    ErrorRecord,
    encode_record,
)
from livefill.extraction.schemas import SCHEMAS
from livefill.serving.connection import on_disconnect
from livefill.wire.taps import ReadWatch, tee
from livefill.extraction.schemas import SchemaSource, resolve_schema

__all__ = ["EXTRACT_PATH", "RelaySettings", "create_relay_app", "relay_routes", "routes"]

log = logging.getLogger("livefill.relay")


#: Which environment variable holds each live provider's key (the relay deployed on its own).
LIVE_KEYS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
}


_RESPONSE_HEADERS = [
    (b"content-type", b"application/x-ndjson"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


@dataclass(frozen=True, kw_only=True)
class RelaySettings:
    """How one relay app behaves. Read-only: nothing is kept between requests.

    `token`: the bearer token clients must send. `accept_upstream_key`: take a live provider's key
    from the `x-livefill-upstream-key` header of a loopback peer (the app's embedded relay only).
    `demo_base_url`: where the demo upstream is; None with `demo_is_local` (the relay mounted beside
    the demo provider, `routes()`): this same server, at the address the request came in on; None
    otherwise: "upstream": "demo" requests get an `upstream_error` saying no demo provider is
    configured. `idle_timeout`: seconds of upstream silence (keep-alives do not count) before the
    run ends with `timeout`. `env`: where live-provider keys are read (default os.environ).
    `timing_log`: a file to append per-record timings to (opt-in). `upstream_tap`: a factory `run_id
    -> WireTap` observing every upstream stream (tests). `accept_record`: take the
    `x-livefill-record` header of a loopback peer (the app's embedded relay only).
    """

    token: str
    accept_upstream_key: bool = False
    accept_record: bool = False
    demo_base_url: str | None = None
    demo_is_local: bool = False
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    env: Mapping[str, str] | None = None
    timing_log: str | None = None
    upstream_tap: Callable[[str], Any] | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RelaySettings:
        """Settings from LIVEFILL_RELAY_* variables; UsageError if LIVEFILL_RELAY_TOKEN is unset."""
        environ = os.environ if environ is None else environ
        token = environ.get("LIVEFILL_RELAY_TOKEN", "")
        if not token:
            raise UsageError(
                "set LIVEFILL_RELAY_TOKEN: every worker of a deployed relay must share one bearer token"
            )
        return cls(
            token=token,
            demo_base_url=environ.get("LIVEFILL_RELAY_DEMO_URL") or None,
            idle_timeout=float(environ.get("LIVEFILL_RELAY_IDLE_TIMEOUT", DEFAULT_IDLE_TIMEOUT)),
            timing_log=environ.get("LIVEFILL_RELAY_TIMING_LOG") or None,
        )


@dataclass(frozen=True, kw_only=True)
class _Job:
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


def _bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": {"type": "invalid_request", "message": message}}, status_code=400)


def _forbidden(message: str) -> JSONResponse:
    return JSONResponse({"error": {"type": "forbidden", "message": message}}, status_code=403)


def _control_characters(demo: Any) -> str | None:
    """The first key of the body's "demo" object whose text holds a control character."""
    items = demo.model_dump(exclude_none=True) if isinstance(demo, BaseModel) else (demo or {})
    for key, value in dict(items).items():
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            return str(key)
    return None


def _parse_job(raw: bytes) -> _Job | JSONResponse:
    try:
        body = parse_request(raw)
    except BadRequest as exc:
        return _bad_request(str(exc))
    demo_scenario: str | None = None
    if body.scenario is not None:
        from livefill.extraction.scenarios import get_scenario

        try:
            scenario = get_scenario(body.scenario)
        except KeyError as exc:
            return _bad_request(str(exc.args[0]))
        schema, document = resolve_schema(scenario.schema_name), scenario.document
        if body.upstream == "demo":
            demo_scenario = scenario.name
    else:
        assert body.schema_name is not None and body.document is not None
        if isinstance(body.schema_name, dict):
            try:
                schema = resolve_schema(body.schema_name)
            except InputError as exc:
                return _bad_request(str(exc))
        elif body.schema_name not in SCHEMAS:
            return _bad_request(f"unknown schema {body.schema_name!r}; known: {', '.join(sorted(SCHEMAS))}")
        else:
            schema = resolve_schema(body.schema_name)
        document = body.document
    control = _control_characters(body.demo)
    if control is not None:
        return _bad_request(f"demo.{control}: control characters are not allowed")
    try:
        knobs = DemoKnobs.from_relay_demo(body.demo, scenario=demo_scenario)
    except KnobError as exc:
        return _bad_request(f"demo: {exc}")
    if knobs.fault is not None:  # a fault the provider's wire cannot carry: refused here, not upstream
        from livefill.recording.trace import WIRE_OF

        why = fault_refusal(knobs.fault.name, WIRE_OF.get(body.provider, body.provider))
        if why:
            return _bad_request(f"demo.fault: {why}")
    demo_headers = knobs.headers()
    return _Job(
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
        demo_headers=demo_headers,
    )


# --- the streaming response ------------------------------------------------------------------------


class _RelayResponse(Response):
    """Streams one run's records; see the module docstring for the two tasks."""

    def __init__(self, job: _Job, settings: RelaySettings, demo_base_url: str | None) -> None:
        self.job = job
        self.settings = settings
        self.demo_base_url = demo_base_url
        self.background = None
        self.run_id = f"run_{secrets.token_hex(6)}"
        self.timings: list[tuple[int, str, float, float, float]] | None = [] if settings.timing_log else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": _RESPONSE_HEADERS})
        producer = asyncio.ensure_future(self._produce(send))
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        gone = False

        def client_gone() -> None:  # heard synchronously under livefill's own protocol
            nonlocal gone
            if not producer.done():
                gone = True
                producer.cancel()

        hook = on_disconnect(scope)
        if hook is not None:
            hook.add(client_gone)
        try:
            await asyncio.wait({producer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if hook is not None:
                hook.discard(client_gone)
            if producer.done() and not gone:
                watcher.cancel()
            else:  # the client went away (or the server is stopping): cancel upstream now
                producer.cancel()
                watcher.cancel()
                log.info("relay %s: client disconnected; upstream cancelled", self.run_id)
            await asyncio.gather(producer, watcher, return_exceptions=True)
        if not producer.cancelled() and producer.exception() is None:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        self._write_timings()

    async def _produce(self, send: Send) -> None:
        job = self.job
        settler = Settler(
            job.schema.model, mode=job.mode, run_id=self.run_id, provider=job.provider,  # type: ignore[arg-type]
            schema_name=job.schema.name,
        )
        clock = ReadWatch()  # when the last upstream read arrived
        upstream = tee(clock, self.settings.upstream_tap(self.run_id) if self.settings.upstream_tap else None)
        recording = _Recording(job, self.run_id) if job.record_path else None

        written_at = time.monotonic()  # the last record or keep-alive written

        async def write(records: list[Any]) -> None:
            nonlocal written_at
            if not records:
                return
            written_at = time.monotonic()
            read_at = clock.last_read
            if recording is not None:
                recording.saw(records)
            await send({"type": "http.response.body", "body": b"".join(map(encode_record, records)), "more_body": True})
            if self.timings is not None:
                written, wall = time.monotonic(), time.time()
                self.timings.extend((r.seq, r.type, read_at, written, wall) for r in records)

        await write(settler.begin())
        try:
            request = self._upstream_request()
            from livefill.wire.providers import open_stream

            if recording is not None:
                upstream = tee(upstream, recording.writer(request))
            # the client's limit when shorter: its own watchdog must not fire before this one says
            # which silence it was (keep-alives or nothing)
            limit = min(self.settings.idle_timeout, self.job.idle_timeout or self.settings.idle_timeout)
            every = min(KEEPALIVE_EVERY, limit / 4)
            async with open_stream(request, tap=upstream, idle_timeout=limit) as events:
                if recording is not None:
                    recording.begin(200, getattr(events, "headers", {}))
                async for event in events:
                    records = settler.feed(event)
                    if records:
                        await write(records)
                        if settler.done:
                            break
                    elif type(event) is not KeepAlive and time.monotonic() - written_at >= every:
                        # upstream is writing a value that has not settled (a long text): tell the
                        # client the run is alive, or its own watchdog ends it (docs/relay-v1.md)
                        written_at = time.monotonic()
                        await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
            await write(settler.close())
        except (RunFailure, ProtocolError) as exc:
            if recording is not None:
                recording.status = getattr(exc, "status", None)
            await write(settler.fail(exc))
        except UsageError as exc:
            await write(settler.fail("upstream_error", f"the upstream request could not be made: {exc}"))
        except Exception as exc:  # a bug: say so on the wire rather than cut the stream
            log.exception("relay %s: unexpected failure", self.run_id)
            await write(settler.fail("upstream_error", f"the relay failed: {type(exc).__name__}: {exc}"))
        except BaseException:  # cancelled: the client went away (or the server is stopping)
            if recording is not None:
                recording.end("stopped", "the client disconnected")
            raise
        finally:
            if recording is not None:
                recording.finish()

    def _upstream_request(self) -> Any:
        from livefill.wire.providers import ExtractionRequest

        job = self.job
        if job.upstream == "demo":
            if not self.demo_base_url:
                raise UsageError(
                    "this relay has no demo provider configured (set LIVEFILL_RELAY_DEMO_URL, or use "
                    '"upstream": "live")'
                )
            base_url, api_key = self.demo_base_url, "demo"
        else:
            env = self.settings.env if self.settings.env is not None else os.environ
            base_url, api_key = _live_upstream(job, env)
        return ExtractionRequest(
            provider=job.provider,
            base_url=base_url,
            schema_name=job.schema.name,
            schema_json=job.schema.schema_json,
            document=job.document,
            model=job.model,
            api_key=api_key,
            demo_headers=dict(job.demo_headers),
            structured=job.structured,
            fine_grained=job.fine_grained,
        )

    def _write_timings(self) -> None:
        if not self.timings or not self.settings.timing_log:
            return
        lines = "".join(
            json.dumps(
                {"run": self.run_id, "seq": seq, "type": kind, "read_at": read_at, "written_at": written, "written_wall": wall}
            )
            + "\n"
            for seq, kind, read_at, written, wall in self.timings
        )
        with open(self.settings.timing_log, "a", encoding="utf-8") as fh:
            fh.write(lines)


class _Recording:
    """The embedded relay's trace of one upstream stream (see "Recording" in the module comment)."""

    def __init__(self, job: _Job, run_id: str) -> None:
        self.job = job
        self.run_id = run_id
        self.trace: Any = None
        self.request: Any = None
        self.terminal: Any = None
        self.status: int | None = None  # the upstream's HTTP error status, when it refused

    def writer(self, request: Any) -> Any:
        """The TraceWriter for `request` (made just before it is sent: its clock starts now)."""
        from livefill.recording.trace import TraceWriter

        assert self.job.record_path is not None
        self.request = request
        key = request.api_key if self.job.upstream == "live" else ""
        self.trace = TraceWriter(self.job.record_path, secrets=[key] if key else [])
        return self.trace

    def begin(self, status: int | None, headers: Any) -> None:
        if self.trace is None or self.trace.begun:
            return
        from livefill.recording.trace import trace_header

        self.trace.begin(
            trace_header(
                self.request,
                status=status,
                headers=headers,
                include_document=self.job.record_document,
                mode=self.job.mode,
                run_id=self.run_id,
            )
        )

    def saw(self, records: list[Any]) -> None:
        for record in records:
            if isinstance(record, (CompleteRecord, ErrorRecord)):
                self.terminal = record

    def end(self, outcome: str, reason: str | None, **extra: Any) -> None:
        if self.trace is None or self.trace.ended:
            return
        if not self.trace.begun:  # refused, or cut, before any response
            self.begin(self.status, {})
        self.trace.end(outcome, reason, **extra)
        if self.trace.error:
            log.warning("relay %s: %s", self.run_id, self.trace.error)

    def finish(self) -> None:
        """The trailer from the terminal record the client was sent."""
        terminal = self.terminal
        if isinstance(terminal, CompleteRecord):
            self.end("complete", None)
        elif isinstance(terminal, ErrorRecord):
            self.end("failed", terminal.message, code=terminal.code)
        else:
            self.end("failed", "the relay ended without a terminal record")


def _live_upstream(job: _Job, env: Mapping[str, str]) -> tuple[str, str]:
    """The live provider's base URL and API key (see "Live upstreams" in the module comment).

    UsageError naming the missing variable when a vendor's key is in neither place."""
    from livefill.wire.providers.request import live_base_url

    if job.api_key is not None:  # the embedded relay, handed the app's key over loopback
        return job.base_url or live_base_url(job.provider, env), job.api_key
    if job.provider not in LIVE_KEYS:  # Ollama, an OpenAI-compatible server: no key needed
        return job.base_url or live_base_url(job.provider, env), ""
    key_var = LIVE_KEYS[job.provider]
    key = env.get(key_var, "")
    if not key:
        raise UsageError(f"no {key_var} in the relay's environment: the live {job.provider} provider needs an API key")
    return live_base_url(job.provider, env), key


def _key_goes_elsewhere(job: _Job, env: Mapping[str, str]) -> str | None:
    """Why a live request must be refused because it would send the relay's own key to an
    address the relay's environment does not pair it with (None: it would not)."""
    if job.upstream != "live" or job.api_key is not None or job.base_url is None or job.provider not in LIVE_KEYS:
        return None
    from livefill.wire.providers.request import join_url, live_base_url

    paired = live_base_url(job.provider, env)
    if join_url(job.base_url, "/v1/") == join_url(paired, "/v1/"):
        return None
    return (
        f"this relay sends its {LIVE_KEYS[job.provider]} only to {paired}; "
        f"it will not send it to {job.base_url!r}"
    )


def _is_loopback_peer(scope: Scope) -> bool:
    from livefill.loopback import is_loopback_host

    client = scope.get("client")
    return bool(client) and str(client[0]) != "localhost" and is_loopback_host(str(client[0]))


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def _own_base_url(scope: Scope) -> str | None:
    server = scope.get("server")
    if not server or server[1] is None:
        return None
    host, port = server
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


# --- the app -----------------------------------------------------------------------------------------


def relay_routes(settings: RelaySettings) -> list[Route]:
    """The relay's routes, to mount in any starlette app (the demo provider's included)."""
    expected = settings.token.encode()

    async def extract(request: Request) -> Response:
        scheme, _, credential = request.headers.get("authorization", "").strip().partition(" ")
        # The scheme is case-insensitive; the token is compared in constant time.
        if not hmac.compare_digest(credential.strip().encode(), expected) or scheme.lower() != "bearer":
            return JSONResponse(
                {"error": {"type": "unauthorized", "message": "send Authorization: Bearer <relay token>"}},
                status_code=401,
                headers={"www-authenticate": "Bearer"},
            )
        job = _parse_job(await request.body())
        if isinstance(job, JSONResponse):
            return job
        handed_key = request.headers.get(UPSTREAM_KEY_HEADER)
        if handed_key is not None:
            if not settings.accept_upstream_key or not _is_loopback_peer(request.scope):
                return _forbidden(
                    f"this relay takes no {UPSTREAM_KEY_HEADER}: only the app's embedded relay "
                    "does, over loopback; a deployed relay reads its keys from its own environment"
                )
            if job.upstream != "live":
                return _bad_request(f'{UPSTREAM_KEY_HEADER} applies only to "upstream": "live"')
            job = replace(job, api_key=handed_key)
        record = request.headers.get(RECORD_HEADER)
        if record is not None:
            if not settings.accept_record or not _is_loopback_peer(request.scope):
                return _forbidden(
                    f"this relay takes no {RECORD_HEADER}: only the app's embedded relay "
                    "records, for a loopback peer; a relay deployed on its own cannot record"
                )
            from urllib.parse import unquote

            path = unquote(record)
            if not path or not os.path.isabs(path) or "\x00" in path:
                return _bad_request(f"{RECORD_HEADER} must be an absolute path")
            job = replace(
                job, record_path=path, record_document=request.headers.get(RECORD_DOCUMENT_HEADER, "1") != "0"
            )
        elsewhere = _key_goes_elsewhere(job, settings.env if settings.env is not None else os.environ)
        if elsewhere:
            return _bad_request(elsewhere)
        demo_base = settings.demo_base_url or (_own_base_url(request.scope) if settings.demo_is_local else None)
        return _RelayResponse(job, settings, demo_base)

    return [Route(EXTRACT_PATH, extract, methods=["POST"])]


def routes(*, relay_token: str, **settings: Any) -> list[Route]:
    """The hook `livefill.embedded.app.build_app` calls: the relay routes for `relay_token`.

    This is the app's embedded relay: it accepts the app's key for a live upstream from a
    loopback peer (`accept_upstream_key`).

    Further keyword arguments are RelaySettings fields (e.g. `idle_timeout=5.0`); the opt-in
    timing log may also come from LIVEFILL_RELAY_TIMING_LOG. The demo upstream is this same server.
    """
    settings.setdefault("timing_log", os.environ.get("LIVEFILL_RELAY_TIMING_LOG") or None)
    settings.setdefault("demo_is_local", True)
    settings.setdefault("accept_upstream_key", True)
    settings.setdefault("accept_record", True)
    return relay_routes(RelaySettings(token=relay_token, **settings))


def create_relay_app(settings: RelaySettings | None = None, **overrides: Any) -> Starlette:
    """The relay as its own ASGI app (e.g. `uvicorn --factory livefill.relay.app:create_relay_app`).

    With no settings they are read from the environment (`RelaySettings.from_env`); keyword
    overrides replace single settings (`create_relay_app(token="t", demo_base_url=url)`).
    """
    if settings is None:
        settings = RelaySettings(**overrides) if "token" in overrides else RelaySettings.from_env()
        if "token" not in overrides and overrides:
            settings = RelaySettings(**{**settings.__dict__, **overrides})
    elif overrides:
        settings = RelaySettings(**{**settings.__dict__, **overrides})
    from starlette.middleware import Middleware

    from livefill.serving.guard import Guard, limits_from_env

    return Starlette(routes=relay_routes(settings), middleware=[Middleware(Guard, limits=limits_from_env())])
