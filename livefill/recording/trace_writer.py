"""Writing a trace: the header of a run's request, credentials scrubbed, and a writer teed onto its wire.

    writer = TraceWriter(path, secrets=[api_key])       # the clock starts now (the request)
    writer.begin(trace_header(request, status=200, headers=response_headers))
    writer.on_read(chunk)                                # a WireTap: tee it onto the stream's tap
    writer.end("complete")                               # the trailer; the file is closed

Crash safety: every line is written whole and flushed at once, so a killed writer leaves every
complete line loadable (livefill.recording.trace reads such a file as truncated).

Credentials never reach the file. The header is built from an allow-list (`KEPT_HEADERS`), the
base URL loses its user info and any secret-looking query parameter (`scrub_url`), the request
body loses every credential-named key (`scrub_body`), and every line the writer writes — and
every read's bytes — has each known secret (`secrets=`) replaced by `[key redacted]`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from livefill.errors import UsageError
from livefill.recording.trace import FORMAT, VERSION
from livefill.wire.redaction import REDACTED, redact
from livefill.wire.providers import anthropic, ollama, openai_chat, openai_responses, raw
from livefill.wire.providers.request import ExtractionRequest
from livefill.wire.providers.spec import PROVIDER_SPECS
from livefill.wire.taps import WireFrame, arrival

__all__ = [
    "KEPT_HEADERS",
    "TraceWriter",
    "request_body",
    "scrub_body",
    "scrub_headers",
    "scrub_url",
    "trace_header",
]

#: The response headers a trace keeps (lower-case); every other header is dropped.
KEPT_HEADERS: tuple[str, ...] = (
    "content-type",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-request-id",
    "openai-request-id",
    "anthropic-request-id",
)

_SECRET_NAMES = frozenset(
    {"key", "api_key", "apikey", "x_api_key", "token", "access_token", "refresh_token", "id_token", "auth",
     "authorization", "proxy_authorization", "bearer", "secret", "client_secret", "password", "passwd",
     "cookie", "set_cookie", "credential", "credentials", "sig", "signature", "session", "session_id"}
)
_SECRET_SUFFIXES = ("_api_key", "_apikey", "_token", "_secret", "_password", "_credential", "_credentials")

#: Keys whose values are JSON Schemas (a schema may well have a property named "token").
_SCHEMA_KEYS = frozenset({"input_schema", "parameters", "schema", "json_schema", "format", "properties", "$defs"})


def _is_secret_name(name: str) -> bool:
    key = name.strip().lower().replace("-", "_")
    return key in _SECRET_NAMES or key.endswith(_SECRET_SUFFIXES)


# --- scrubbing ------------------------------------------------------------------------------------


def scrub_url(url: str) -> str:
    """`url` without user info (`user:pass@`) and without query parameters whose name looks like a
    credential (`key`, `api_key`, `token`, `sig`, ...); everything else kept as it was."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/@]*@", "//", url.split("?", 1)[0])
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if not _is_secret_name(k)]
        query = urlencode(kept)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """Only the response headers that matter (`KEPT_HEADERS`), names lower-cased; never a
    credential, a cookie or anything else."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {k.lower(): str(v) for k, v in items if k.lower() in KEPT_HEADERS}


def scrub_body(value: Any) -> Any:
    """A JSON value with every credential-named key (api_key, authorization, token, ...) removed,
    at any depth. The document, schema and prompt are kept as they are."""
    if isinstance(value, Mapping):
        return {
            str(k): v if str(k) in _SCHEMA_KEYS else scrub_body(v)
            for k, v in value.items()
            if not _is_secret_name(str(k))
        }
    if isinstance(value, (list, tuple)):
        return [scrub_body(v) for v in value]
    return value


# --- the header -----------------------------------------------------------------------------------


#: The function that makes the JSON body of each wire's request.
_BODY_MAKERS: dict[str, Callable[[ExtractionRequest], Mapping[str, Any]]] = {
    "anthropic": anthropic.message_params,
    "openai-chat": openai_chat.chat_body,
    "openai-responses": openai_responses.responses_body,
    "ollama": ollama.chat_body,
    "raw": raw.raw_body,
}


def request_body(request: ExtractionRequest) -> dict[str, Any]:
    """The JSON body `request` sends on its wire."""
    body = _BODY_MAKERS[PROVIDER_SPECS[request.provider].wire](request)
    return json.loads(json.dumps(body, default=str))


def trace_header(
    request: ExtractionRequest,
    *,
    status: int | None = 200,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    include_document: bool = True,
    started_at: float | None = None,
    response_ms: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The header line of a trace of `request`, credentials removed.

    `include_document`: the document's text (True) or only its SHA-256. `extra` adds
    informational fields (`mode`, `label`, `schema_name`, ...) that a reader may show."""
    document = request.document or ""
    header: dict[str, Any] = {
        "trace": FORMAT,
        "version": VERSION,
        "provider": request.provider,
        "wire": PROVIDER_SPECS[request.provider].wire,  # the demo provider's endpoint it replays on
        "base_url": scrub_url(request.base_url),
        "model": request.model_name,
        "schema_name": request.schema_name,
        "schema": request.json_schema(),
    }
    if include_document:
        header["document"] = document
    else:
        header["document_sha256"] = hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()
    body = scrub_body(request_body(request))
    if not include_document and document:  # the prompt quotes the document: it stays out too
        body = json.loads(json.dumps(body).replace(json.dumps(document)[1:-1], "[document]"))
    header["request"] = body
    header["started_at"] = _iso(time.time() if started_at is None else started_at)
    header["status"] = status
    header["headers"] = scrub_headers(headers)
    if response_ms is not None:
        header["response_ms"] = round(response_ms, 3)
    for key, value in extra.items():
        if value is not None and key not in header:
            header[key] = value
    return header


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- writing --------------------------------------------------------------------------------------


class TraceWriter:
    """Writes one trace to `path` as it happens (a `WireTap`: `on_read` records each read).

    The clock starts when the writer is made (make it just before sending the request); `begin`
    writes the header (adding `response_ms`, the time to the response, unless given), each
    `on_read` a read line, `end` the trailer and closes the file. Every line is flushed at once.
    `secrets`: texts (API keys, tokens) replaced by `[key redacted]` wherever they would appear.

    A file that cannot be written (no such directory, no permission, a full disk) never breaks the
    run being recorded: the writer stops writing and `error` says why, in one line.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        secrets: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self._secrets = tuple(s for s in secrets if s and s.strip())
        self._clock = clock
        self._t0 = clock()
        self._last_ms = 0.0
        self._pending: list[tuple[float, bytes]] = []
        self._file: TextIO | None = None
        self.begun = False
        self.ended = False
        self.reads = 0
        self.error: str | None = None  # why the trace could not be written (None: it could)

    def begin(self, header: Mapping[str, Any]) -> None:
        """Write the header line (and any read that arrived before it)."""
        if self.begun:
            raise UsageError("TraceWriter.begin called twice")
        head = dict(header)
        head.setdefault("trace", FORMAT)
        head.setdefault("version", VERSION)
        head.setdefault("response_ms", round(self._ms(), 3))
        self.begun = True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - kept open
        except OSError as exc:
            self._failed(exc)
            return
        self._line(head)
        for t_ms, data in self._pending:
            self._read_line(t_ms, data)
        self._pending.clear()

    def _ms(self) -> float:
        return max(self._last_ms, (self._clock() - self._t0) * 1000.0)

    def _line(self, obj: Mapping[str, Any]) -> None:
        if self._file is None:
            return
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        if self._secrets:
            text = redact(text, self._secrets)
        try:
            self._file.write(text + "\n")
            self._file.flush()
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.error = f"{self.path}: the trace could not be written: {exc.strerror or exc}"
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def _read_line(self, t_ms: float, data: bytes) -> None:
        for secret in self._secrets:
            data = data.replace(secret.encode("utf-8", "surrogatepass"), REDACTED.encode())
        self._line({"t_ms": round(t_ms, 3), "b64": base64.b64encode(data).decode("ascii")})
        self.reads += 1

    # -- WireTap -----------------------------------------------------------------------------

    def on_read(self, data: bytes) -> None:
        if self.ended or not data:
            return
        t_ms = max(self._last_ms, (arrival(self._clock) - self._t0) * 1000.0)
        self._last_ms = t_ms
        if not self.begun:
            self._pending.append((t_ms, bytes(data)))
            return
        self._read_line(t_ms, data)

    def on_frame(self, frame: WireFrame) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass

    # -- the end -----------------------------------------------------------------------------

    def end(self, outcome: str, reason: str | None = None, **extra: Any) -> None:
        """Write the trailer (`outcome` one of ENDINGS; `reason` a person's line) and close."""
        if self.ended:
            return
        if not self.begun:
            raise UsageError("TraceWriter.end before begin: a trace needs its header")
        trailer: dict[str, Any] = {"end": outcome, "reason": reason, "t_ms": round(self._ms(), 3)}
        trailer.update({k: v for k, v in extra.items() if v is not None})
        self._line(trailer)
        self.close()
        self.ended = True

    def close(self) -> None:
        """Close the file without a trailer (what a crash leaves: the trace loads as truncated)."""
        if self._file is not None:
            self._file.flush()
            try:
                os.fsync(self._file.fileno())
            except OSError:
                pass
            self._file.close()
            self._file = None
