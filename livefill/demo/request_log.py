"""The demo provider's request log, served at `GET /_demo/requests` (oldest first).

Entries are written by the server's event loop and read from any thread (the embedded server's
owner reads them directly), so the log keeps a lock around the list; each entry is a plain mutable
record that only the request's own handler changes. Credentials are never recorded: `auth` holds
the scheme the request used ("x-api-key", "bearer" or None), never a value; `auth_sha256` the
first 12 hex digits of the credential's SHA-256, so a test can tell *which* key arrived (the
relay handing on the app's key) without the key itself being written anywhere.

Everything here is bounded, since any client may fill it without a token: the log keeps the newest
`LOG_ENTRIES` entries; an entry's client-given text is clipped (`clip`: `model`, `error`, at most
`TEXT_CHARS`; the tag is refused past its limit before it is logged) and a replay's `sent_ms` keeps
its first `SENT_MS_MAX` reads. `RequestLog.page` serves the log in pages (GET
/_demo/requests?offset=&limit=, `PAGE_DEFAULT`, at most `PAGE_MAX` entries or `PAGE_BYTES`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from livefill.demo.wires import new_id

__all__ = [
    "LOG_ENTRIES",
    "LogEntry",
    "PAGE_BYTES",
    "PAGE_DEFAULT",
    "PAGE_MAX",
    "RequestLog",
    "SENT_MS_MAX",
    "TEXT_CHARS",
    "clip",
    "credential_fingerprint",
]

LOG_ENTRIES = 2000  # the newest requests the log keeps
TEXT_CHARS = 1000  # longest client-given text (model name, error message) an entry keeps
SENT_MS_MAX = 1000  # a replay's send times kept per entry (its first reads)
PAGE_DEFAULT = 200  # entries in a page of GET /_demo/requests without ?limit=
PAGE_MAX = LOG_ENTRIES  # the most entries one page may ask for
PAGE_BYTES = 512 * 1024  # a page stops growing past this many bytes of JSON (at least one entry)


def clip(text: str | None, limit: int = TEXT_CHARS) -> str | None:
    """`text` cut to `limit` characters (with "…" and the length it had), None kept."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


class _SendTimes(list):  # type: ignore[type-arg]
    """A replay's send times: the first `SENT_MS_MAX` are kept, later appends are dropped."""

    __slots__ = ()

    def append(self, value: float) -> None:  # type: ignore[override]
        if len(self) < SENT_MS_MAX:
            super().append(value)


def credential_fingerprint(headers: Mapping[str, str]) -> str | None:
    """12 hex digits of the SHA-256 of a request's credential (`x-api-key`, else a bearer token),
    or None without one. Which key arrived can be told from it; the key itself is never kept."""
    secret = headers.get("x-api-key")
    if secret is None:
        value = headers.get("authorization", "")
        if not value.lower().startswith("bearer "):
            return None
        secret = value[7:]
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()[:12]


@dataclass(kw_only=True, slots=True)
class LogEntry:
    """One request the demo provider served (or refused)."""

    id: str
    path: str
    wire: str
    started_at: float
    scenario: str | None = None
    model: str | None = None
    stream: bool = True
    fine_grained: bool = False
    auth: str | None = None
    auth_sha256: str | None = None  # 12 hex digits of the credential's SHA-256, never the credential
    tag: str | None = None  # the client's own label for the request (`x-demo-tag`), e.g. a run id
    status: int = 200
    error: str | None = None  # the message of a refused request
    knobs: dict[str, Any] = field(default_factory=dict)
    fault: str | None = None  # "name@fraction"
    fault_at: int | None = None  # tokens written before a cutting fault
    tokens_total: int = 0  # tokens in the planned output
    tokens_sent: int = 0  # tokens written to the socket so far
    writes: int = 0  # socket writes (after slicing)
    bytes_sent: int = 0  # body bytes written
    first_token_at: float | None = None
    last_token_at: float | None = None
    finished: bool = False  # the whole response was written
    finished_at: float | None = None
    disconnected: bool = False  # the client went away while the response was being written
    disconnected_at: float | None = None
    aborted: bool = False  # the server broke the connection on purpose (disconnect fault)
    outcome: str = "pending"  # pending, streaming, finished, disconnected, aborted, refused, shutdown
    replay: str | None = None  # the id of the recorded trace this request was answered with
    sent_ms: list[float] = field(default_factory=_SendTimes)  # a replay: when each read left, ms after the request

    def as_dict(self) -> dict[str, Any]:
        # Field by field (dataclasses.asdict deep-copies recursively: ~10x slower, and the whole
        # log is rendered on the server's event loop at every GET /_demo/requests).
        out = {name: getattr(self, name) for name in _FIELDS}
        out["knobs"] = dict(self.knobs)  # flat: Knobs.as_log()
        out["sent_ms"] = list(self.sent_ms)
        return out


_FIELDS = tuple(f.name for f in fields(LogEntry))


class RequestLog:
    """A bounded, thread-safe list of `LogEntry`s (the oldest are dropped past `limit`)."""

    def __init__(self, limit: int = LOG_ENTRIES) -> None:
        self._lock = threading.Lock()
        self._entries: deque[LogEntry] = deque(maxlen=limit)
        self._dropped = 0  # entries dropped from the front since the start: offsets stay stable

    def new(self, *, path: str, wire: str, auth: str | None, auth_sha256: str | None = None) -> LogEntry:
        entry = LogEntry(
            id=new_id("req_01"), path=path, wire=wire, started_at=time.time(), auth=auth, auth_sha256=auth_sha256
        )
        with self._lock:
            if len(self._entries) == self._entries.maxlen:
                self._dropped += 1
            self._entries.append(entry)
        return entry

    def snapshot(self) -> list[dict[str, Any]]:
        """Every entry as a dict, oldest first."""
        with self._lock:
            entries = list(self._entries)
        return [e.as_dict() for e in entries]

    def window(self, offset: int | None, limit: int) -> tuple[list[LogEntry], int, int]:
        """(entries, offset of the first, total ever logged): `limit` entries from `offset` (a
        request's number since the server started; None: the newest `limit`), oldest first."""
        with self._lock:
            first, count = self._dropped, len(self._entries)
            start = max(first, first + count - limit) if offset is None else max(offset, first)
            chosen = list(itertools.islice(self._entries, start - first, min(count, start - first + limit)))
        return chosen, start, first + count

    def page(self, offset: int | None = None, limit: int = PAGE_DEFAULT) -> tuple[bytes, int, int, int]:
        """(JSON list, offset of its first entry, entries in it, total ever logged): a page of the
        log, oldest first, cut at `PAGE_BYTES` (from the old end for `offset`, else from the
        newest). Renders the JSON: call it off the event loop for a big page."""
        chosen, start, total = self.window(offset, min(max(limit, 0), PAGE_MAX))
        parts: list[bytes] = []
        size = 0
        order = chosen if offset is not None else reversed(chosen)
        for entry in order:
            part = json.dumps(entry.as_dict(), separators=(",", ":")).encode("ascii")
            if parts and size + len(part) > PAGE_BYTES:
                break
            parts.append(part)
            size += len(part) + 1
        if offset is None:
            parts.reverse()
            start += len(chosen) - len(parts)
        return b"[" + b",".join(parts) + b"]", start, len(parts), total

    def get(self, request_id: str) -> dict[str, Any] | None:
        """The entry with `request_id`, as a dict, or None."""
        with self._lock:
            for entry in self._entries:
                if entry.id == request_id:
                    return entry.as_dict()
        return None

    def clear(self) -> None:
        with self._lock:
            self._dropped += len(self._entries)
            self._entries.clear()
