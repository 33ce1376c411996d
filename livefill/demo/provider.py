"""The demo provider's routes: the provider endpoints, `/_demo/scenarios`, `/_demo/requests` and
`POST /_demo/traces` (a trace to replay, for a server in another process).

Every provider endpoint follows the same path (`DemoProvider.handle`): parse the knobs, the body
and the request's wire vocabulary; pick the scenario (the `x-demo-scenario` header, else the
scenario whose document is the user text); refuse anything it cannot serve in the wire's own error
shape; log the request; then answer with a `StepResponse` (streamed) or a `DelayedResponse`.
A document that is none of its scenarios', or a schema (the forced tool's input schema, or the
structured-output format's) whose properties are not the scenario's, is refused with HTTP 400
saying it only knows its scenarios: it has nothing to answer a person's own document or schema with.
An HTTP fault (`http_401`, `overloaded`, ...: `livefill.demo.protocol.HTTP_FAULTS`) is answered as
soon as the body is read, before any scenario is matched, with the wire's `refusal`: the status,
error body and headers (`retry-after`) the real provider sends.
A request with `x-demo-replay: <trace id>` (a trace kept with `add_trace`) is answered by that
recorded trace instead (livefill/demo/replay.py), on the wire it was recorded on; no scenario is
matched. Nothing a client sends is kept without a bound (no token is needed here): POSTed traces
(`PostedTraces`: the newest `POSTED_TRACES`, `POSTED_TRACE_BYTES` in all), the request log
(livefill/demo/request_log.py, served in pages, a big page rendered off the event loop).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from livefill.demo.faults import check_fault, make_plan, program
from livefill.demo.knobs import DemoDefaults, Knobs, parse_knobs
from livefill.demo.protocol import HTTP_FAULTS, MAX_LABEL_CHARS, Fault, FaultName, KnobError
from livefill.demo.replay import ReplayResponse, TraceShelf
from livefill.demo.request_log import PAGE_DEFAULT, PAGE_MAX, LogEntry, RequestLog, clip, credential_fingerprint
from livefill.demo.streaming import DelayedResponse, StepResponse, install_log_filter
from livefill.demo.wires import BadRequest, StopKind, WireSpec, dumps, new_id
from livefill.demo.wires.anthropic import AnthropicWire
from livefill.demo.wires.ollama import OllamaWire
from livefill.demo.wires.models import anthropic_models, ollama_tags, openai_models, wants_anthropic
from livefill.demo.wires.openai_chat import ChatWire
from livefill.demo.wires.openai_responses import ResponsesWire
from livefill.demo.wires.raw import RawWire
from livefill.errors import TraceError
from livefill.extraction.scenarios import Scenario, load_scenarios
from livefill.extraction.schemas import resolve_schema
from livefill.recording.trace import Trace, parse_trace

__all__ = ["DemoProvider", "PostedTraces", "POSTED_TRACES", "POSTED_TRACE_BYTES", "UNKNOWN_DOCUMENT", "UNKNOWN_SCHEMA"]

POSTED_TRACES = 32  # traces POST /_demo/traces keeps; the oldest is dropped past this
POSTED_TRACE_BYTES = 16 * 1024 * 1024  # their bodies' bytes in all (a parsed trace costs several times its size)
_RENDER_ON_LOOP = 50  # a /_demo/requests page of more entries is rendered in a worker thread

# (they lead with what to do: a status line too narrow for all of it keeps that part)
UNKNOWN_DOCUMENT = (
    "Choose a live provider and give it an API key to read this document: a live provider extracts any "
    "document; the demo provider knows only its bundled scenarios ({names}), and this is not one of them."
)

UNKNOWN_SCHEMA = (
    "Choose a live provider and give it an API key to use this schema: the demo provider knows only its "
    "bundled scenarios ({names}), and the schema asked for is not the {scenario} scenario's (it asks for "
    "properties {asked}; the scenario's are {expected})."
)

def _auth_scheme(request: Request) -> str | None:
    # Only which form of credential was used is ever looked at; the value is never read or kept.
    if "x-api-key" in request.headers:
        return "x-api-key"
    if request.headers.get("authorization", "").lower().startswith("bearer "):
        return "bearer"
    return None


def _requested_schema(body: Any, tool: str) -> Mapping[str, Any] | None:
    """The JSON Schema the request asks its output to follow: the tool `tool`'s (Anthropic
    `input_schema`, OpenAI `parameters`), else a structured-output format's (Chat
    `response_format`, Responses `text.format`, Ollama `format`); None when it gives none."""
    if not isinstance(body, Mapping):
        return None
    found: list[Any] = []
    for entry in body.get("tools") or ():
        if isinstance(entry, Mapping):
            fn = entry.get("function") if isinstance(entry.get("function"), Mapping) else entry
            if fn.get("name") == tool:
                found.append(fn.get("input_schema") or fn.get("parameters"))
    fmt = body.get("response_format")
    if isinstance(fmt, Mapping):
        inner = fmt.get("json_schema")
        found.append(inner.get("schema") if isinstance(inner, Mapping) else fmt.get("schema"))
    text = body.get("text")
    if isinstance(text, Mapping) and isinstance(text.get("format"), Mapping):
        found.append(text["format"].get("schema"))
    found.append(body.get("format"))
    for schema in found:
        if isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping):
            return schema
    return None


def _input_tokens(text: str) -> int:
    return max(1, len(text) // 4) + 12


def _whole(text: str | None, default: int | None, highest: int, name: str) -> int | None:
    if text is None or text == "":
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise BadRequest(f"/_demo/requests: {name} must be a whole number, got {clip(text, 40)!r}")
    return min(int(text), highest)


class PostedTraces:
    """The traces POSTed to a server, by id: the newest `count`, at most `size` body bytes in all
    (the oldest are dropped first). Thread-safe."""

    def __init__(self, count: int = POSTED_TRACES, size: int = POSTED_TRACE_BYTES) -> None:
        self.count, self.size = count, size
        self._lock = threading.Lock()
        self._traces: OrderedDict[str, tuple[Trace, int]] = OrderedDict()
        self._bytes = 0

    def add(self, trace: Trace, size: int) -> str:
        key = f"trace_{secrets.token_hex(6)}"
        with self._lock:
            self._traces[key] = (trace, size)
            self._bytes += size
            while len(self._traces) > self.count or (self._bytes > self.size and len(self._traces) > 1):
                _, (_, dropped) = self._traces.popitem(last=False)
                self._bytes -= dropped
        return key

    def get(self, trace_id: str) -> Trace | None:
        with self._lock:
            kept = self._traces.get(trace_id)
        return kept[0] if kept else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._traces)

    @property
    def bytes(self) -> int:
        with self._lock:
            return self._bytes


class DemoProvider:
    """The demo provider: its routes, its request log and its knob defaults.

    `shutdown()` ends every response in progress (called by the embedded server when it stops).
    """

    def __init__(self, defaults: DemoDefaults | None = None) -> None:
        self.defaults = defaults or DemoDefaults()
        self.log = RequestLog()
        self.scenarios: dict[str, Scenario] = load_scenarios()
        self.traces = TraceShelf()  # added in-process by the app (EmbeddedServer.add_trace)
        self.posted = PostedTraces()  # POST /_demo/traces: any client, so bounded
        self._shutdown: asyncio.Event | None = None
        install_log_filter()

    # -- lifecycle ---------------------------------------------------------------------------

    def _shutdown_event(self) -> asyncio.Event:
        if self._shutdown is None:
            self._shutdown = asyncio.Event()
        return self._shutdown

    def shutdown(self) -> None:
        """Stop every response in progress (call on the server's event loop)."""
        self._shutdown_event().set()

    def add_trace(self, trace: Trace, trace_id: str | None = None) -> str:
        """Keep a loaded trace (livefill.recording.trace.Trace) for `x-demo-replay`; return its id (any thread)."""
        return self.traces.add(trace, trace_id)

    # -- routes ------------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        anthropic, chat, responses = AnthropicWire(), ChatWire(), ResponsesWire()
        ollama_chat, ollama_generate, raw = OllamaWire(generate=False), OllamaWire(generate=True), RawWire()

        def endpoint(wire: WireSpec) -> Callable[[Request], Awaitable[ASGIApp]]:
            async def handler(request: Request) -> ASGIApp:
                return await self.handle(request, wire)

            return handler

        return [
            Route("/v1/messages", endpoint(anthropic), methods=["POST"]),
            Route("/v1/chat/completions", endpoint(chat), methods=["POST"]),
            Route("/v1/responses", endpoint(responses), methods=["POST"]),
            Route("/api/chat", endpoint(ollama_chat), methods=["POST"]),
            Route("/api/generate", endpoint(ollama_generate), methods=["POST"]),
            Route("/raw/v1/extract", endpoint(raw), methods=["POST"]),
            Route("/_demo/scenarios", self.list_scenarios, methods=["GET"]),
            Route("/_demo/requests", self.list_requests, methods=["GET"]),
            Route("/_demo/traces", self.post_trace, methods=["POST"]),
            Route("/v1/models", self.list_models, methods=["GET"]),
            Route("/api/tags", self.list_tags, methods=["GET"]),
        ]

    async def list_scenarios(self, request: Request) -> Response:
        return JSONResponse(
            [
                {
                    "name": s.name,
                    "title": s.title,
                    "document": s.document,
                    "schema": s.json_schema(),
                    "output": s.output,
                    "schema_name": s.schema_name,
                    "tool_name": s.tool_name,
                }
                for s in self.scenarios.values()
            ]
        )

    async def list_requests(self, request: Request) -> Response:
        """A page of the request log, oldest first: `?limit=` entries (default PAGE_DEFAULT, at
        most PAGE_MAX) from `?offset=` (a request's number; default: the newest page), cut at
        PAGE_BYTES. Headers: x-total-count (requests ever logged), x-offset (the first's number)."""
        try:
            offset = _whole(request.query_params.get("offset"), None, 1 << 62, "offset")
            limit = _whole(request.query_params.get("limit"), PAGE_DEFAULT, PAGE_MAX, "limit")
        except BadRequest as exc:
            return JSONResponse({"error": {"type": "invalid_request", "message": exc.message}}, status_code=400)
        assert limit is not None
        if limit > _RENDER_ON_LOOP:
            body, first, count, total = await run_in_threadpool(self.log.page, offset, limit)
        else:
            body, first, count, total = self.log.page(offset, limit)
        headers = {"x-total-count": str(total), "x-offset": str(first), "x-count": str(count)}
        return Response(body, media_type="application/json", headers=headers)

    async def post_trace(self, request: Request) -> Response:
        """POST a trace file's contents: `{"id": ...}` to replay it with, or 400 with its one line."""
        name = clip(request.query_params.get("name"), MAX_LABEL_CHARS) or "<posted trace>"
        raw = await request.body()
        if len(raw) > self.posted.size:
            message = f"the trace is {len(raw)} bytes; this server keeps at most {self.posted.size} bytes of posted traces"
            return JSONResponse({"error": {"type": "too_large", "message": message}}, status_code=413)
        try:
            trace = await run_in_threadpool(parse_trace, raw, name=name)  # a big trace: not on the loop
        except TraceError as exc:
            error = {"type": "invalid_trace", "message": clip(str(exc)), "line": exc.line}
            return JSONResponse({"error": error}, status_code=400)
        except RecursionError:
            error = {"type": "invalid_trace", "message": f"{name}: a line is nested too deeply", "line": None}
            return JSONResponse({"error": error}, status_code=400)
        except (ValueError, OverflowError) as exc:  # a trace reader that let one through: still one line
            error = {"type": "invalid_trace", "message": clip(f"{name}: {exc}"), "line": None}
            return JSONResponse({"error": error}, status_code=400)
        trace_id = self.posted.add(trace, len(raw))
        return JSONResponse({"id": trace_id, "reads": len(trace.reads), "wire": trace.wire})

    async def list_models(self, request: Request) -> Response:
        if wants_anthropic(request.headers):
            return JSONResponse(anthropic_models(request.query_params), headers={"request-id": new_id("req_01")})
        return JSONResponse(openai_models(), headers={"x-request-id": new_id("req_")})

    async def list_tags(self, request: Request) -> Response:
        return JSONResponse(ollama_tags())

    # -- the provider endpoints --------------------------------------------------------------

    def _match(self, user_text: str) -> Scenario | None:
        text = user_text.strip()
        for scenario in self.scenarios.values():
            if scenario.document.strip() == text:
                return scenario
        # Lenient fallback: a prompt that quotes exactly one bundled document in full.
        found = [s for s in self.scenarios.values() if text and s.document.strip() in text]
        return found[0] if len(found) == 1 else None

    def _check_schema(self, body: Any, tool: str, scenario: Scenario) -> None:
        """BadRequest when the request's schema is not the scenario's (other properties)."""
        asked = _requested_schema(body, tool)
        if asked is None:
            return
        expected = _scenario_properties(scenario.schema_name)
        if set(asked["properties"]) != set(expected):
            raise BadRequest(
                UNKNOWN_SCHEMA.format(
                    names=", ".join(self.scenarios),
                    asked=", ".join(asked["properties"]) or "none",
                    scenario=scenario.name,
                    expected=", ".join(expected),
                )
            )

    def _refuse(self, wire: WireSpec, entry: LogEntry, error: BadRequest) -> Response:
        entry.status = error.status
        entry.error = clip(error.message)
        entry.outcome = "refused"
        body = wire.error_body(error.kind, error.message, entry.id)
        headers = dict(wire.response_headers(entry.id))
        content = wire.encode(body)
        return Response(content, status_code=error.status, headers=headers, media_type="application/json")

    def _refuse_with_status(self, wire: WireSpec, entry: LogEntry, fault: Fault, model: str) -> Response:
        refusal = wire.refusal(fault.name, model, entry.id)
        entry.model = clip(model, MAX_LABEL_CHARS)
        entry.status = refusal.status
        entry.error = clip(dumps(refusal.body))
        entry.outcome = "refused"
        headers = dict(wire.response_headers(entry.id))
        headers.update(refusal.headers)
        content = wire.encode(refusal.body)
        return Response(content, status_code=refusal.status, headers=headers, media_type="application/json")

    async def handle(self, request: Request, wire: WireSpec) -> ASGIApp:
        entry = self.log.new(
            path=request.url.path,
            wire=wire.name,
            auth=_auth_scheme(request),
            auth_sha256=credential_fingerprint(request.headers),
        )
        tag = request.headers.get("x-demo-tag") or None  # logged even when another knob is refused
        entry.tag = tag if tag is None or len(tag) <= MAX_LABEL_CHARS else None  # a longer one: refused below
        try:
            knobs = parse_knobs(request.headers, self.defaults)
        except KnobError as exc:
            return self._refuse(wire, entry, BadRequest(str(exc)))
        entry.knobs = knobs.as_log()
        entry.fault = str(knobs.fault) if knobs.fault else None
        raw = await request.body()
        try:
            if isinstance(wire, RawWire) and not raw.lstrip().startswith(b"{"):
                body: Any = raw.decode("utf-8")
            else:
                body = json.loads(raw)
        except RecursionError:
            return self._refuse(wire, entry, BadRequest("The request body is nested too deeply."))
        except ValueError:
            return self._refuse(wire, entry, BadRequest("The request body is not valid JSON."))
        try:
            parsed = wire.parse(body, request.headers)
            if knobs.replay is not None:
                return self._replay(wire, entry, knobs, parsed.model)
            if knobs.fault is not None and knobs.fault.name in HTTP_FAULTS:
                return self._refuse_with_status(wire, entry, knobs.fault, parsed.model)
            if knobs.scenario is not None:
                scenario = self.scenarios.get(knobs.scenario)
                if scenario is None:
                    raise BadRequest(
                        f"x-demo-scenario: unknown scenario {knobs.scenario!r}; known: {', '.join(self.scenarios)}"
                    )
            else:
                scenario = self._match(parsed.user_text)
                if scenario is None:
                    raise BadRequest(UNKNOWN_DOCUMENT.format(names=", ".join(self.scenarios)))
            self._check_schema(body, parsed.resolve_tool(scenario.tool_name), scenario)
            check_fault(knobs.fault, wire, stream=parsed.stream)
        except BadRequest as exc:
            return self._refuse(wire, entry, exc)

        plan = make_plan(scenario, knobs)
        tool_name = parsed.resolve_tool(scenario.tool_name)
        input_tokens = _input_tokens(parsed.user_text)
        entry.scenario = scenario.name
        entry.model = clip(parsed.model, MAX_LABEL_CHARS)
        entry.stream = parsed.stream
        entry.fine_grained = parsed.fine_grained
        entry.tokens_total = plan.tokens_total
        entry.fault_at = plan.cut
        headers = [*wire.response_headers(entry.id)]
        shutdown = self._shutdown_event()

        if parsed.stream:
            stream = wire.open_stream(parsed, tool_name=tool_name, input_tokens=input_tokens, seed=knobs.seed)
            headers += [("content-type", wire.content_type), ("cache-control", "no-cache"), ("x-accel-buffering", "no")]
            return StepResponse(
                steps=program(plan, stream),
                keepalive=stream.keepalive(),
                pings_while_streaming=stream.pings_while_streaming,
                knobs=knobs,
                entry=entry,
                headers=headers,
                shutdown=shutdown,
            )

        # A whole response, after the time the tokens would have taken.
        fault = knobs.fault.name if knobs.fault else None
        tokens = plan.tokens_total if plan.cut is None else plan.cut
        delay: float | None = knobs.ttft_ms / 1000.0 + (tokens / knobs.speed if knobs.speed > 0 else 0.0)
        status = 200
        if fault in (FaultName.STALL, FaultName.STALL_SILENT):
            delay = None
        if fault is FaultName.ERROR:
            status = wire.server_error.status
            body_out = wire.error_body(wire.server_error.kind, wire.server_error.message, entry.id)
        else:
            stop = StopKind.LENGTH if fault is FaultName.MAX_TOKENS else StopKind.COMPLETE
            text = "".join(plan.head)
            body_out = wire.complete(
                parsed, tool_name=tool_name, text=text, stop=stop, tokens=tokens, input_tokens=input_tokens
            )
        content = wire.encode(body_out)
        headers.append(("content-type", "application/json"))
        return DelayedResponse(
            status=status,
            body=content,
            headers=headers,
            delay=delay,
            entry=entry,
            tokens=tokens,
            shutdown=shutdown,
            abort=fault is FaultName.DISCONNECT,
        )

    def _replay(self, wire: WireSpec, entry: LogEntry, knobs: Knobs, model: str) -> ReplayResponse:
        assert knobs.replay is not None
        trace = self.traces.get(knobs.replay) or self.posted.get(knobs.replay)
        entry.replay = knobs.replay
        entry.model = clip(model, MAX_LABEL_CHARS)
        if trace is None:
            raise BadRequest(
                f"x-demo-replay: no trace {knobs.replay!r} on this server (add it first; it keeps the "
                f"last {self.posted.count} posted traces)"
            )
        if trace.wire != wire.name:
            raise BadRequest(
                f"x-demo-replay: the trace {trace.name or knobs.replay} was recorded on the {trace.wire} wire; "
                f"replay it there, not on {wire.name}"
            )
        entry.tokens_total = len(trace.reads)
        return ReplayResponse(trace=trace, speed=knobs.replay_speed, entry=entry, shutdown=self._shutdown_event())

    def requests(self) -> list[dict[str, Any]]:
        """The request log, oldest first (any thread)."""
        return self.log.snapshot()


def _scenario_properties(schema_name: str) -> list[str]:
    """The top-level property names of a bundled schema, from livefill.extraction.user_schema's cache (building a
    model's JSON Schema costs about a millisecond, once per request before)."""
    return list(resolve_schema(schema_name).json_schema.get("properties", {}))
