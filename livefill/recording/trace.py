"""Recorded traces: one run's response, byte for byte with its timing, as a JSON Lines file.

    writer = TraceWriter(path, secrets=[api_key])       # the clock starts now (the request)
    writer.begin(trace_header(request, status=200, headers=response_headers))
    writer.on_read(chunk)                                # a WireTap: tee it onto the stream's tap
    writer.end("complete")                               # the trailer; the file is closed
    trace = load_trace(path)                             # Trace: header, reads, trailer, truncated

How this works
--------------
The format is docs/trace-format.md: line 1 is the header (format name and version, provider,
wire, base URL, model, the full JSON Schema, the document or its SHA-256, the request body, the
start time, the response status and the headers that matter), then one `{"t_ms", "b64"}` line per
network read (milliseconds since the request was sent, and the read's bytes), then a trailer
`{"end": ..., "reason": ...}` saying how the run ended.

Crash safety: every line is written whole and flushed at once, so a killed writer leaves every
complete line loadable. `load_trace` reads a file without a trailer, or whose last line was cut
in the middle (no newline at its end), as `truncated=True`: everything before the cut replays.
Anything else that is wrong (no header, an unknown version, bad JSON or bad base64 in the middle,
a read before the header, time going backwards, a wire the demo provider cannot replay) is a
`TraceError` whose one-line message names the file and the line.

Credentials never reach the file. The header is built from an allow-list (`KEPT_HEADERS`), the
base URL loses its user info and any secret-looking query parameter (`scrub_url`), the request
body loses every credential-named key (`scrub_body`), and every line the writer writes — and
every read's bytes — has each known secret (`secrets=`) replaced by `[key redacted]`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from livefill.errors import TraceError, UsageError
from livefill.wire.keys import REDACTED, redact
from livefill.wire.taps import WireFrame, arrival

__all__ = [
    "ENDINGS",
    "TraceSummary",
    "list_recordings",
    "new_trace_path",
    "recordings_dir",
    "free_path",
    "FORMAT",
    "KEPT_HEADERS",
    "REPLAY_WIRES",
    "VERSION",
    "WIRE_OF",
    "Trace",
    "TraceRead",
    "TraceWriter",
    "load_trace",
    "parse_trace",
    "replay_config",
    "request_body",
    "scrub_body",
    "scrub_headers",
    "scrub_url",
    "trace_header",
]

FORMAT = "livefill"
VERSION = 1

#: The wire each provider speaks (the demo provider's endpoint a trace is replayed on).
WIRE_OF: dict[str, str] = {
    "anthropic": "anthropic",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "openai-compatible": "openai-chat",
    "ollama": "ollama",
    "raw": "raw",
}

#: The wires the demo provider can replay a trace on.
REPLAY_WIRES: tuple[str, ...] = ("anthropic", "openai-chat", "openai-responses", "ollama", "raw")

#: How a run ended, as the trailer's `end` says it.
ENDINGS: tuple[str, ...] = ("complete", "stopped", "failed", "cancelled")

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


def request_body(request: Any) -> dict[str, Any]:
    """The JSON body `request` (an ExtractionRequest) sends on its wire."""
    from livefill.wire.providers import anthropic, ollama, openai_chat, openai_responses, raw

    makers: dict[str, Callable[[Any], dict[str, Any]]] = {
        "anthropic": anthropic.message_params,
        "openai-chat": openai_chat.chat_body,
        "openai-compatible": openai_chat.chat_body,
        "openai-responses": openai_responses.responses_body,
        "ollama": ollama.chat_body,
        "raw": raw.raw_body,
    }
    return json.loads(json.dumps(makers[request.provider](request), default=str))


def trace_header(
    request: Any,
    *,
    status: int | None = 200,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    include_document: bool = True,
    started_at: float | None = None,
    response_ms: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The header line of a trace of `request` (an ExtractionRequest), credentials removed.

    `include_document`: the document's text (True) or only its SHA-256. `extra` adds
    informational fields (`mode`, `label`, `schema_name`, ...) that a reader may show."""
    document = request.document or ""
    header: dict[str, Any] = {
        "trace": FORMAT,
        "version": VERSION,
        "provider": request.provider,
        "wire": WIRE_OF[request.provider],
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


# --- reading --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TraceRead:
    """One network read: when (milliseconds since the request was sent) and its bytes."""

    t_ms: float
    data: bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class Trace:
    """A loaded trace: its header, its reads in order, its trailer (None when `truncated`)."""

    header: Mapping[str, Any]
    reads: tuple[TraceRead, ...]
    trailer: Mapping[str, Any] | None
    truncated: bool
    path: str = ""
    name: str = field(default="")

    @property
    def provider(self) -> str:
        return str(self.header["provider"])

    @property
    def wire(self) -> str:
        return str(self.header["wire"])

    @property
    def model(self) -> str:
        return str(self.header.get("model") or "")

    @property
    def status(self) -> int:
        status = self.header.get("status")
        return int(status) if isinstance(status, int) else 200

    @property
    def headers(self) -> dict[str, str]:
        return dict(self.header.get("headers") or {})

    @property
    def schema(self) -> dict[str, Any]:
        return dict(self.header["schema"])

    @property
    def document(self) -> str | None:
        """The document's text, or None when the trace keeps only its SHA-256."""
        doc = self.header.get("document")
        return doc if isinstance(doc, str) else None

    @property
    def response_ms(self) -> float:
        value = self.header.get("response_ms")
        return float(value) if isinstance(value, (int, float)) else 0.0

    @property
    def end(self) -> str:
        """How the recorded run ended: the trailer's `end`, or "truncated"."""
        return "truncated" if self.trailer is None else str(self.trailer.get("end"))

    @property
    def duration_ms(self) -> float:
        return self.reads[-1].t_ms if self.reads else 0.0

    def body(self) -> bytes:
        """Every read's bytes, concatenated: the response body as received."""
        return b"".join(r.data for r in self.reads)

    def schema_source(self) -> Any:
        """The trace's schema as livefill.extraction.user_schema reads it (the bundled one when the trace names a
        bundled schema with the same JSON Schema; the trace's own JSON Schema otherwise)."""
        from livefill.extraction.user_schema import resolve_schema

        name = self.header.get("schema_name")
        if isinstance(name, str) and name:
            try:
                bundled = resolve_schema(name)
            except Exception:  # noqa: BLE001 - not bundled here: the trace's own schema decides
                bundled = None
            if bundled is not None and bundled.bundled and dict(bundled.json_schema) == self.schema:
                return bundled
        return resolve_schema(self.schema)


_REQUIRED = ("provider", "wire", "schema", "request", "started_at", "status", "headers")


def load_trace(path: str | os.PathLike[str], *, replayable: bool = True) -> Trace:
    """Load the trace at `path` (TraceError naming the file and line when it cannot be used;
    `replayable`: also refuse a wire the demo provider cannot replay)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise TraceError(f"{p}: cannot read the trace: {exc.strerror or exc}", path=str(p)) from None
    return parse_trace(raw, name=str(p), replayable=replayable)


def parse_trace(data: bytes | str, *, name: str = "<trace>", replayable: bool = True) -> Trace:
    """A trace from its file's contents (see `load_trace`)."""
    text = data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else data

    def fail(line: int, what: str) -> TraceError:
        return TraceError(f"{name}: line {line}: {what}", path=name, line=line)

    if not text.strip():
        raise fail(1, "the trace is empty: its header line is missing")
    lines = text.split("\n")
    ends_cleanly = text.endswith("\n")
    if ends_cleanly:
        lines.pop()
    last = len(lines)
    header: dict[str, Any] | None = None
    reads: list[TraceRead] = []
    trailer: dict[str, Any] | None = None
    truncated = False
    previous = -math.inf
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if trailer is not None:
            raise fail(number, "a line after the trailer (the trailer must be the last line)")
        try:
            obj = json.loads(line)
        except ValueError as exc:
            if number == last and not ends_cleanly:
                truncated = True  # the writer was stopped in the middle of this line
                break
            raise fail(number, f"not a JSON line ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise fail(number, f"expected a JSON object, got {type(obj).__name__}")
        if header is None:
            if "t_ms" in obj or "b64" in obj:
                raise fail(number, "a network read before the header (the header line is missing)")
            if obj.get("trace") != FORMAT:
                raise fail(number, 'the header line is missing (expected {"trace": "livefill", ...})')
            version = obj.get("version")
            if version != VERSION:
                raise fail(number, f"unknown trace version {version!r} (this livefill reads version {VERSION})")
            missing = [k for k in _REQUIRED if k not in obj]
            if missing:
                raise fail(number, f"the header lacks {', '.join(missing)}")
            if "document" not in obj and "document_sha256" not in obj:
                raise fail(number, "the header has neither document nor document_sha256")
            if not isinstance(obj["schema"], dict):
                raise fail(number, "the header's schema is not a JSON Schema object")
            if not isinstance(obj["headers"], dict):
                raise fail(number, "the header's headers are not an object")
            if obj["status"] is not None and not (isinstance(obj["status"], int) and 100 <= obj["status"] <= 599):
                raise fail(number, f"the header's status {obj['status']!r} is not an HTTP status")
            if replayable and obj["wire"] not in REPLAY_WIRES:
                raise fail(
                    number,
                    f"the trace was recorded on the {obj['wire']!r} wire, which the demo provider cannot "
                    f"replay (it replays {', '.join(REPLAY_WIRES)})",
                )
            header = obj
            continue
        if "end" in obj:
            trailer = obj
            continue
        if "t_ms" not in obj or "b64" not in obj:
            raise fail(number, 'expected a read {"t_ms": ..., "b64": ...} or the trailer {"end": ...}')
        t_ms, b64 = obj["t_ms"], obj["b64"]
        if isinstance(t_ms, bool) or not isinstance(t_ms, (int, float)) or not math.isfinite(t_ms) or t_ms < 0:
            raise fail(number, f"t_ms {t_ms!r} is not a time in milliseconds >= 0")
        if t_ms < previous:
            raise fail(number, f"t_ms goes backwards ({t_ms:g} after {previous:g})")
        if not isinstance(b64, str):
            raise fail(number, "b64 is not a string")
        try:
            chunk = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise fail(number, "b64 is not valid base64") from None
        previous = float(t_ms)
        reads.append(TraceRead(float(t_ms), chunk))
    if header is None:
        raise fail(1, "the header line is missing")
    if trailer is None:
        truncated = True
    return Trace(
        header=header, reads=tuple(reads), trailer=trailer, truncated=truncated, path=name,
        name=Path(name).name if name and not name.startswith("<") else name,
    )


# --- the recordings folder ------------------------------------------------------------------------


def recordings_dir() -> Path:
    """`<user data dir>/recordings` (platformdirs; e.g. ~/.local/share/livefill/recordings)."""
    import platformdirs

    from livefill.recording.history import APP_NAME

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "recordings"


def new_trace_path(label: str, provider: str, *, directory: str | os.PathLike[str] | None = None,
                   now: float | None = None) -> Path:
    """A new file name for a recording: `<dir>/2026-11-30_134502_<label>_<provider>.jsonl`
    (`-2`, `-3`, ... when taken). `directory` None: `recordings_dir()`."""
    folder = Path(directory) if directory is not None else recordings_dir()
    stamp = datetime.fromtimestamp(time.time() if now is None else now, UTC).strftime("%Y-%m-%d_%H%M%S")
    words = [re.sub(r"[^A-Za-z0-9._-]+", "-", w).strip("-.")[:40] for w in (label, provider)]
    stem = "_".join([stamp, *[w for w in words if w]])
    return free_path(folder / f"{stem}.jsonl")


def free_path(path: Path) -> Path:
    """`path`, or `stem-2.suffix`, `stem-3.suffix`, ... when it is taken."""
    candidate, n = path, 2
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    return candidate


@dataclass(frozen=True, kw_only=True, slots=True)
class TraceSummary:
    """One line of a Recordings list: what a trace is, or why it cannot be used (`error`)."""

    path: Path
    started_at: str = ""
    provider: str = ""
    model: str = ""
    schema_name: str = ""
    label: str = ""  # the document's name as the app called the run (e.g. the scenario)
    mode: str = ""
    end: str = ""  # complete / stopped / failed / cancelled / truncated
    reason: str | None = None
    reads: int = 0
    duration_ms: float = 0.0
    error: str | None = None  # the TraceError's one line: listed, not openable


def list_recordings(directory: str | os.PathLike[str] | None = None, *, limit: int | None = None) -> list[TraceSummary]:
    """The `*.jsonl` in `directory` (None: `recordings_dir()`), newest first, at most `limit` of
    them; a bad trace is listed with its `error` instead of raising. Only the files listed are
    read, and a file unchanged since it was last summarised is not read again."""
    folder = Path(directory) if directory is not None else recordings_dir()
    if not folder.is_dir():
        return []
    stamped = []
    for path in folder.glob("*.jsonl"):
        try:
            stat = path.stat()
        except OSError:
            continue
        stamped.append((stat.st_mtime, stat.st_size, path))
    stamped.sort(key=lambda item: item[0], reverse=True)
    return [_summary(path, mtime, size) for mtime, size, path in stamped[:limit]]


def summarize(path: str | os.PathLike[str]) -> TraceSummary:
    """One trace's summary (as `list_recordings` lists it); a file that cannot be read is a summary
    with its `error`."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        return TraceSummary(path=path, error=f"{path}: {exc.strerror or exc}")
    return _summary(path, stat.st_mtime, stat.st_size)


_SUMMARIES: dict[tuple[Path, float, int], TraceSummary] = {}


def _summary(path: Path, mtime: float, size: int) -> TraceSummary:
    key = (path, mtime, size)
    cached = _SUMMARIES.get(key)
    if cached is not None:
        return cached
    try:
        trace = load_trace(path, replayable=False)
    except TraceError as exc:
        summary = TraceSummary(path=path, error=str(exc))
    else:
        h = trace.header
        summary = TraceSummary(
            path=path,
            started_at=str(h.get("started_at", "")),
            provider=trace.provider,
            model=trace.model,
            schema_name=str(h.get("schema_name") or h["schema"].get("title") or ""),
            label=str(h.get("label") or ""),
            mode=str(h.get("mode") or ""),
            end=trace.end,
            reason=(trace.trailer or {}).get("reason"),
            reads=len(trace.reads),
            duration_ms=trace.duration_ms,
            error=None if trace.wire in REPLAY_WIRES else f"{path}: the {trace.wire} wire cannot be replayed",
        )
    if len(_SUMMARIES) > 256:
        _SUMMARIES.clear()
    _SUMMARIES[key] = summary
    return summary


# --- replaying ------------------------------------------------------------------------------------


def replay_ending(trace: Trace) -> str:
    """Why a replay of `trace` ends before its stream does, when the recording alone explains it:
    its run was stopped, or the file was cut off. "" otherwise (a recorded failure -- a refusal,
    a broken connection, a failed check -- replays as that same failure and says so itself)."""
    end = trace.end
    if end in ("stopped", "cancelled"):
        return "the recording ends here: its run was stopped"
    if end == "truncated":
        return "the recording ends here: it was cut off"
    return ""


def replay_config(
    trace: Trace,
    trace_id: str,
    *,
    base_url: str,
    mode: Any = "partial",
    speed: float = 1.0,
    relay_token: str | None = None,
    **config: Any,
) -> Any:
    """The RunConfig that replays `trace` (added to the demo provider at `base_url` as `trace_id`)
    in `mode`, at `speed` (1 = as recorded, 0 = as fast as possible). Further keyword arguments are
    RunConfig fields."""
    from livefill.demo.protocol import DemoKnobs
    from livefill.extraction.modes import Mode
    from livefill.session.run import RunConfig

    source = trace.schema_source()
    config.setdefault("replay_ending", replay_ending(trace))
    return RunConfig(
        mode=Mode(mode),
        provider=trace.provider,
        base_url=base_url,
        schema_name=source.name if source.bundled else "",
        schema_json=None if source.bundled else source.schema_json,
        document=trace.document or "",
        model=trace.model or None,
        demo=DemoKnobs(replay=trace_id, replay_speed=speed),
        relay_token=relay_token,
        **config,
    )
