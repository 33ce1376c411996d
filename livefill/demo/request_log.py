"""The demo provider's request log, served at `GET /_demo/requests` (oldest first).

Entries are written by the server's event loop and read from any thread (the embedded server's
owner reads them directly), so the log keeps a lock around the list; each entry is a plain mutable
record that only the request's own handler changes. Credentials are never recorded: `auth` holds
the scheme the request used ("x-api-key", "bearer" or None), never a value; `auth_sha256` the
first 12 hex digits of the credential's SHA-256, so a test can tell *which* key arrived (the
relay handing on the app's key) without the key itself being written anywhere.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from livefill.demo.wires import new_id

__all__ = ["LogEntry", "RequestLog", "credential_fingerprint"]


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
    sent_ms: list[float] = field(default_factory=list)  # a replay: when each read left, ms after the request

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

    def __init__(self, limit: int = 2000) -> None:
        self._lock = threading.Lock()
        self._entries: deque[LogEntry] = deque(maxlen=limit)

    def new(self, *, path: str, wire: str, auth: str | None, auth_sha256: str | None = None) -> LogEntry:
        entry = LogEntry(
            id=new_id("req_01"), path=path, wire=wire, started_at=time.time(), auth=auth, auth_sha256=auth_sha256
        )
        with self._lock:
            self._entries.append(entry)
        return entry

    def snapshot(self) -> list[dict[str, Any]]:
        """Every entry as a dict, oldest first."""
        with self._lock:
            entries = list(self._entries)
        return [e.as_dict() for e in entries]

    def get(self, request_id: str) -> dict[str, Any] | None:
        """The entry with `request_id`, as a dict, or None."""
        with self._lock:
            for entry in self._entries:
                if entry.id == request_id:
                    return entry.as_dict()
        return None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
