"""One ASGI middleware in front of every local server app: who may talk to it, and how much.

How this works
--------------
`Guard(app, limits)` looks at each HTTP request before the app does and refuses, with a JSON
error `{"error": {"type", "message"}}`, any request that
- names a `Host` other than the address:port the server listens on (DNS rebinding) -> 421;
  loopback servers also answer to `localhost:PORT`; `--allow-remote` deployments add names with
  `GuardLimits.allowed_hosts` (`--allowed-host`, or `LIVEFILL_ALLOWED_HOSTS=a,b:443` for a relay
  served by `create_relay_app`; `*` turns the check off, for a proxy that checks hosts itself);
- carries an `Origin` header (only a browser sends one; no livefill client does) -> 403;
- posts to a JSON endpoint with a content type other than JSON (a cross-origin "simple" POST is
  `text/plain` or form-encoded) -> 415;
- sends a request head (the path, query and every header) over `MAX_HEAD_BYTES` -> 431, so no
  header a server keeps (`x-demo-tag` in the request log, an error echoing a header) is large;
- announces a body larger than `max_body_bytes` -> 413 before reading a byte of it; a chunked
  body is counted while it is read and refused at the cap;
- sends its body slower than `body_timeout` seconds in all -> 408.
The body (at most the cap) is read here and handed to the app whole; later `receive()` calls go
to the server, so the app still sees the client's disconnect.

Refusals are logged per kind at most once per `log_interval` seconds, with the number refused
since the last line, so a flood cannot flood the log. `RefusalLog.counts` keeps the totals.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from livefill import switches
from livefill.defaults import MAX_HEAD_BYTES
from livefill.loopback import is_loopback_host

__all__ = [
    "Guard",
    "GuardLimits",
    "limits_from_env",
    "RefusalLog",
    "JSON_PATHS",
    "DEFAULT_MAX_BODY_BYTES",
]

DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024

JSON_PATHS = frozenset(
    {
        "/v1/messages",
        "/v1/chat/completions",
        "/v1/responses",
        "/api/chat",
        "/api/generate",
        "/relay/v1/extract",
    }
)

logger = logging.getLogger("livefill.server.guard")


@dataclass(frozen=True)
class GuardLimits:
    """What the guard lets through. `allowed_hosts`: extra `Host` values ("name" or "name:port")
    a remote deployment answers to, besides the address:port it listens on."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    body_timeout: float = 30.0
    allowed_hosts: frozenset[str] = frozenset()
    log_interval: float = 10.0


@dataclass
class RefusalLog:
    """Counts refusals per kind; writes one log line per kind per interval."""

    interval: float = 10.0
    counts: dict[str, int] = field(default_factory=dict)
    _pending: dict[str, int] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, kind: str, detail: str) -> None:
        now = time.monotonic()
        with self._lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self._pending[kind] = self._pending.get(kind, 0) + 1
            last = self._last.get(kind)
            if last is not None and now - last < self.interval:
                return
            count = self._pending.pop(kind)
            self._last[kind] = now
        logger.warning("refused %d request(s) (%s) in the last %gs; latest: %s", count, kind, self.interval, detail)


class _Refused(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


def _own_hosts(scope: Scope, extra: frozenset[str]) -> set[str]:
    hosts = {h.lower() for h in extra}
    server = scope.get("server")
    if server and server[1] is not None:
        host, port = str(server[0]), int(server[1])
        shown = f"[{host}]" if ":" in host else host
        hosts.add(f"{shown}:{port}".lower())
        if is_loopback_host(host):
            hosts.add(f"localhost:{port}")
        if port == 80:
            hosts.add(shown.lower())
    return hosts


def _header(scope: Scope, name: bytes) -> list[bytes]:
    return [v for k, v in scope.get("headers") or () if k.lower() == name]


def _is_json_type(value: bytes) -> bool:
    media = value.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


def limits_from_env(environ: Mapping[str, str] | None = None) -> GuardLimits:
    """GuardLimits for a relay deployed with uvicorn: `LIVEFILL_ALLOWED_HOSTS` (comma-separated)
    and `LIVEFILL_MAX_BODY_BYTES` (livefill.switches)."""
    hosts = frozenset(h.strip() for h in (switches.text("LIVEFILL_ALLOWED_HOSTS", environ) or "").split(",") if h.strip())
    size = switches.text("LIVEFILL_MAX_BODY_BYTES", environ)
    return GuardLimits(allowed_hosts=hosts, max_body_bytes=int(size) if size else DEFAULT_MAX_BODY_BYTES)


class Guard:
    """ASGI middleware: refuse foreign hosts, browser origins, non-JSON posts, big or slow bodies."""

    def __init__(self, app: ASGIApp, limits: GuardLimits | None = None) -> None:
        self.app = app
        self.limits = limits or GuardLimits()
        self.refusals = RefusalLog(self.limits.log_interval)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            self._check_head(scope)
            body = await self._read_body(scope, receive)
        except _Refused as refused:
            self.refusals.note(refused.kind, f"{scope.get('method')} {scope.get('path')}: {refused.message}")
            await _send_error(send, refused.status, refused.kind, refused.message)
            return
        if body is None:
            await self.app(scope, receive, send)
            return
        handed = False

        async def replay() -> Message:
            nonlocal handed
            if not handed:
                handed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _check_head(self, scope: Scope) -> None:
        size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        size += sum(len(k) + len(v) + 4 for k, v in scope.get("headers") or ())
        if size > MAX_HEAD_BYTES:
            raise _Refused(
                431, "head_too_large", f"the request head is {size} bytes; this server takes at most {MAX_HEAD_BYTES}"
            )
        hosts = _header(scope, b"host")
        allowed = _own_hosts(scope, self.limits.allowed_hosts)
        if "*" in allowed:
            pass  # a deployment whose reverse proxy checks the host itself
        elif len(hosts) != 1 or hosts[0].decode("latin-1").strip().lower() not in allowed:
            given = hosts[0].decode("latin-1") if hosts else "(none)"
            raise _Refused(421, "wrong_host", f"this server answers only to Host {' or '.join(sorted(allowed))}, not {given!r}")
        if _header(scope, b"origin"):
            raise _Refused(403, "origin", "requests from a web page (with an Origin header) are refused")
        if scope.get("method") in ("POST", "PUT", "PATCH") and scope.get("path") in JSON_PATHS:
            types = _header(scope, b"content-type")
            if len(types) != 1 or not _is_json_type(types[0]):
                given = types[0].decode("latin-1") if types else "(none)"
                raise _Refused(415, "content_type", f"send content-type: application/json, not {given!r}")
        lengths = _header(scope, b"content-length")
        if lengths:
            try:
                length = int(lengths[0])
            except ValueError:
                raise _Refused(400, "bad_length", "content-length is not a number") from None
            if length > self.limits.max_body_bytes:
                raise _Refused(
                    413, "too_large", f"the body is {length} bytes; this server takes at most {self.limits.max_body_bytes}"
                )

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        if scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
            return None
        cap = self.limits.max_body_bytes
        parts: list[bytes] = []
        size = 0

        async def read_all() -> None:
            nonlocal size
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Refused(400, "disconnect", "the client went away before sending its body")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > cap:
                    raise _Refused(413, "too_large", f"the body exceeds {cap} bytes, the most this server takes")
                parts.append(chunk)
                if not message.get("more_body", False):
                    return

        try:
            await asyncio.wait_for(read_all(), self.limits.body_timeout)
        except asyncio.TimeoutError:
            raise _Refused(408, "slow_body", f"the body did not arrive within {self.limits.body_timeout:g}s") from None
        return b"".join(parts)


async def _send_error(send: Send, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
