"""What a failed request becomes: the typed livefill.errors for an HTTP error status
(`http_failure`) or a connection not made (`connect_failure`), each message one line; and the
pieces they read (`provider_error`, `retry_after`, `host_of`). No IO, no HTTP stack.

An HTTP failure's line leads with what the user can do ("check the API key: api.anthropic.com
refused it (401 …)"), or with the provider's own message, which says it ("Choose a live provider
… (400 from llm.example)"); the host comes after. A server of this very process (the app's
embedded demo provider and relay, `serve_in_process`) is never named: its loopback address is not
the problem, and means nothing to the person reading.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import math
import socket
import ssl
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from livefill.errors import (
    CannotConnect,
    HostNotFound,
    KeyRefused,
    ModelNotFound,
    NothingListening,
    ProviderHTTPError,
    ProviderUnavailable,
    RateLimited,
    RequestRejected,
    TLSFailed,
)

__all__ = [
    "connect_failure",
    "host_of",
    "http_failure",
    "in_process",
    "one_line",
    "origin_of",
    "provider_error",
    "retry_after",
    "serve_in_process",
]

_IN_PROCESS: set[str] = set()  # host[:port] of this process's own servers (see serve_in_process)


# --- where: the host a message names --------------------------------------------------------------


def host_of(url: str) -> str:
    """`name[:port]` of a URL, as a person would recognise it (`api.anthropic.com`)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return netloc or url


def origin_of(url: str) -> str:
    """`scheme://name[:port]` of a URL: what is (or is not) listening."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.scheme and parts.netloc else url


def serve_in_process(url: str) -> None:
    """Note that `url` is served by this process (the embedded demo provider and relay): failures
    there are said without its address."""
    _IN_PROCESS.add(host_of(url))


def in_process(url_or_host: str) -> bool:
    """Whether a URL (or `name:port`) is one of this process's own servers (`serve_in_process`)."""
    return (host_of(url_or_host) if "://" in url_or_host else url_or_host) in _IN_PROCESS


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


# --- what the provider said: one line ---------------------------------------------------------------

_LINE_LIMIT = 300


def one_line(text: str, limit: int = _LINE_LIMIT) -> str:
    """`text` with every run of whitespace (newlines too) made one space, clipped to `limit`."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def provider_error(body: Any) -> tuple[str, str, bool]:
    """(kind, message, structured) of an error body: `{"error": {"message", "type"|"code"}}`
    (OpenAI, Anthropic), `{"error": "..."}` (Ollama), `{"message"|"detail": ...}` (vLLM, FastAPI),
    else plain text. `structured` says the body was one of those JSON shapes."""
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body).decode("utf-8", errors="replace")
    data = body
    if isinstance(body, str):
        try:
            data = json.loads(body)
        except ValueError:
            return "", one_line(body), False
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping):
            kind = error.get("type") or error.get("code") or ""
            return str(kind), one_line(str(error.get("message") or "")), True
        if isinstance(error, str):
            return "", one_line(error), True
        for key in ("message", "detail"):
            if isinstance(data.get(key), str):
                return str(data.get("type") or ""), one_line(data[key]), True
    return "", one_line(body if isinstance(body, str) else json.dumps(body)) if body else "", False


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP-date)."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            value = float(raw_ms) / 1000.0
            if math.isfinite(value) and value >= 0:
                return value
        except ValueError:
            pass
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
        return value if math.isfinite(value) and value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _seconds(value: float) -> str:
    return str(math.ceil(value)) if value >= 1 or value == 0 else f"{value:.1f}"


def http_failure(
    status: int,
    body: Any,
    *,
    url: str,
    headers: Mapping[str, str] | None = None,
    model: str | None = None,
    secret: str | None = None,
) -> ProviderHTTPError:
    """The typed error for an HTTP error `status` from `url`, its message one line that leads with
    what to do (see the module docstring).

    `body` is the (capped) error body: bytes, text, or the JSON an SDK already parsed. `secret`
    (the API key sent) is masked wherever the provider's message echoes it."""
    host = host_of(url)
    named = host not in _IN_PROCESS  # this process's own server: its address is not said
    kind, message, structured = provider_error(body)
    if secret and len(secret) >= 10:  # a real key; not a placeholder such as "demo" or "ollama"
        message = message.replace(secret, "***")
    wait = retry_after(headers)
    detail = str(status) + (f" {kind}" if kind else "") + (f": {message}" if message else "")
    fields: dict[str, Any] = dict(kind=kind or "http_error", status=status, host=host, provider_message=message, retry_after=wait)
    if status in (401, 403):
        return KeyRefused(f"check the API key: {host} refused it ({detail})" if named else
                          f"check the API key: it was refused ({detail})", **fields)
    if status == 404:
        about_model = "model" in f"{kind} {message}".lower()
        if structured and (about_model or model is None):
            said = f"'{model}' was not found" if model else "no such model"
            at = f" at {host}" if named else ""
            return ModelNotFound(f"choose another model: {said}{at} ({detail})", model=model or "", **fields)
        path = urlsplit(url).path or "/"
        return ProviderHTTPError(f"check the base URL: {host if named else 'the server'} has nothing at {path} ({detail})", **fields)
    if status == 429:
        when = f"wait {_seconds(wait)} s and try again" if wait is not None else "try again later"
        by = f" by {host}" if named else ""
        return RateLimited(f"{when}: rate limited{by} ({status}{' ' + kind if kind else ''})", **fields)
    if status >= 500:
        overloaded = status in (503, 529) or "overloaded" in kind.lower()
        what = "is overloaded" if overloaded else "had a server error"
        again = f"try again in {_seconds(wait)} s" if wait is not None else "try again"
        return ProviderUnavailable(f"{again}: {host if named else 'the server'} {what} ({detail})", **fields)
    if 400 <= status < 500:
        if message:  # the provider's own words say what is wrong (and often what to do)
            return RequestRejected(f"{message} ({status}{' ' + kind if kind else ''}{' from ' + host if named else ''})", **fields)
        return RequestRejected(f"the request was refused{' by ' + host if named else ''} ({detail})", **fields)
    return ProviderHTTPError(f"unexpected answer{' from ' + host if named else ''}: HTTP {detail}", **fields)


# --- why no connection was made ----------------------------------------------------------------------


def _ssl_reason(err: ssl.SSLError) -> str:
    if isinstance(err, ssl.SSLCertVerificationError) and err.verify_message:
        return f"certificate verify failed: {err.verify_message}"
    text = err.reason.replace("_", " ").lower() if err.reason else str(err)
    if err.reason == "WRONG_VERSION_NUMBER":
        text += " (is it a plain http:// server?)"
    return text


def connect_failure(exc: BaseException, url: str, *, service: str | None = None) -> CannotConnect | None:
    """The typed error for a connection that could not be made to `url` (None: not a connect
    failure this knows), its line leading with what to do, then the address (which is the problem
    here). `service` names the server software ("Ollama") when it is known."""
    host, origin = host_of(url), origin_of(url)
    for err in _chain(exc):
        if isinstance(err, ssl.SSLError):
            return TLSFailed(f"check the address: the TLS handshake with {host} failed: {one_line(_ssl_reason(err))}",
                             host=host, url=origin)
        if isinstance(err, socket.gaierror):
            name = urlsplit(url).hostname or host
            return HostNotFound(f"check the address: cannot resolve {name} ({one_line(err.strerror or str(err))})",
                                host=host, url=origin)
        if isinstance(err, ConnectionRefusedError):
            if service:
                return NothingListening(f"start {service}, or check its address: it is not running at {origin}", host=host, url=origin)
            return NothingListening(f"start the server, or check the address: nothing is listening at {origin}", host=host, url=origin)
    return None
