"""The relay's HTTP side: `POST /relay/v1/extract` (livefill relay v1, docs/relay-v1.md) as starlette routes.

A request is checked in full before anything streams (the token, the body: `livefill.relay.job`,
the embedded relay's two loopback-only headers); then a `livefill.relay.response.RelayResponse`
streams its records. The app keeps no state between requests. How the pieces fit, live upstreams
and their keys, recording, timing: docs/notes/relay-app.md.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from livefill import switches
from livefill.loopback import is_loopback_host
from livefill.relay.job import key_goes_elsewhere, read_job
from livefill.relay.records import EXTRACT_PATH, RECORD_DOCUMENT_HEADER, RECORD_HEADER, UPSTREAM_KEY_HEADER
from livefill.relay.request import BadRequest
from livefill.relay.response import RelayResponse
from livefill.relay.settings import RelaySettings
from livefill.serving.guard import Guard, limits_from_env

__all__ = ["create_relay_app", "relay_routes", "routes"]


def _bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": {"type": "invalid_request", "message": message}}, status_code=400)


def _forbidden(message: str) -> JSONResponse:
    return JSONResponse({"error": {"type": "forbidden", "message": message}}, status_code=403)


def _is_loopback_peer(scope: Scope) -> bool:
    client = scope.get("client")
    return bool(client) and str(client[0]) != "localhost" and is_loopback_host(str(client[0]))


def _own_base_url(scope: Scope) -> str | None:
    server = scope.get("server")
    if not server or server[1] is None:
        return None
    host, port = server
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


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
        try:
            job = read_job(await request.body())
        except BadRequest as exc:
            return _bad_request(str(exc))
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
            path = unquote(record)
            if not path or not os.path.isabs(path) or "\x00" in path:
                return _bad_request(f"{RECORD_HEADER} must be an absolute path")
            job = replace(
                job, record_path=path, record_document=request.headers.get(RECORD_DOCUMENT_HEADER, "1") != "0"
            )
        elsewhere = key_goes_elsewhere(job, settings.env if settings.env is not None else os.environ)
        if elsewhere:
            return _bad_request(elsewhere)
        demo_base = settings.demo_base_url or (_own_base_url(request.scope) if settings.demo_is_local else None)
        return RelayResponse(job, settings, demo_base)

    return [Route(EXTRACT_PATH, extract, methods=["POST"])]


def routes(*, relay_token: str, **settings: Any) -> list[Route]:
    """The hook `livefill.embedded.app.build_app` calls: the relay routes for `relay_token`.

    This is the app's embedded relay: it accepts the app's key for a live upstream from a
    loopback peer (`accept_upstream_key`).

    Further keyword arguments are RelaySettings fields (e.g. `idle_timeout=5.0`); the opt-in
    timing log may also come from LIVEFILL_RELAY_TIMING_LOG. The demo upstream is this same server.
    """
    settings.setdefault("timing_log", switches.text("LIVEFILL_RELAY_TIMING_LOG"))
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
    return Starlette(routes=relay_routes(settings), middleware=[Middleware(Guard, limits=limits_from_env())])
