"""Replaying a recorded trace (livefill/recording/trace.py) as the demo provider's answer: same bytes, same reads,
the recorded timing (or scaled).

How this works
--------------
`TraceShelf` holds the traces the server may replay, by id (`EmbeddedServer.add_trace`). A request
on a provider endpoint with `x-demo-replay: <id>` is answered by `ReplayResponse` instead of
generation: the trace's status and kept headers (after `response_ms`), then each recorded read
as one `send`, at `t_ms / speed` after the request arrived (`x-demo-replay-speed`; 0: as fast as
possible, one read per loop turn). The deadlines are absolute, so time spent writing is absorbed.

Disconnects are watched as for a generated stream (livefill/demo/streaming.py's exchange): a client
that leaves cancels the producer at once and the request log says `disconnected`. The log entry
notes the trace id (`replay`) and when each read left, in milliseconds after the request arrived
(`sent_ms`), so a test can compare the server's own send times with the recorded ones.
A truncated trace (a recording that was cut) ends where the recording ended: the body is closed
cleanly, so the client sees the stream end before its terminal. A recording whose connection
broke (trailer `error: "ConnectionLost"`) breaks the replayed connection after the last read.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

from starlette.types import Receive, Scope, Send

from livefill.demo.request_log import LogEntry
from livefill.demo.streaming import InjectedDisconnect, _Exchange, _run, finish_body
from livefill.recording.trace import Trace

__all__ = ["ReplayResponse", "TraceShelf"]

#: The recorded failures that were a broken connection (replayed as one).
_BROKEN = frozenset({"ConnectionLost"})



class TraceShelf:
    """The traces a server can replay, by id (thread-safe: added from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: dict[str, Trace] = {}

    def add(self, trace: Trace, trace_id: str | None = None) -> str:
        """Keep `trace`; return its id (`trace_id`, or a new one)."""
        key = trace_id or f"trace_{secrets.token_hex(6)}"
        with self._lock:
            self._traces[key] = trace
        return key

    def get(self, trace_id: str) -> Trace | None:
        with self._lock:
            return self._traces.get(trace_id)


def _raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in headers.items()]


class ReplayResponse:
    """A raw ASGI response that serves `trace` at `speed` (see the module comment)."""

    def __init__(self, *, trace: Trace, speed: float, entry: LogEntry, shutdown: asyncio.Event) -> None:
        self.trace = trace
        self.speed = speed
        self.entry = entry
        self.shutdown = shutdown
        self._started = False

    def _at(self, t_ms: float) -> float:
        return 0.0 if self.speed <= 0 else t_ms / 1000.0 / self.speed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        entry = self.entry
        entry.outcome = "streaming"
        exchange = _Exchange(entry)
        producer = await _run(exchange, self._produce(send), receive, self.shutdown, scope)
        await finish_body(producer, exchange, send, before_end=lambda: self._start(send))

    async def _start(self, send: Send) -> None:
        if self._started:
            return
        self._started = True
        headers = {"cache-control": "no-cache", **self.trace.headers}
        headers.setdefault("content-type", "application/octet-stream")
        await send({"type": "http.response.start", "status": self.trace.status, "headers": _raw_headers(headers)})

    async def _produce(self, send: Send) -> None:
        loop = asyncio.get_running_loop()
        entry = self.entry
        t0 = loop.time()
        wait = self._at(self.trace.response_ms)
        if wait > 0:
            await asyncio.sleep(wait)
        await self._start(send)
        for read in self.trace.reads:
            if self.speed > 0:
                delay = t0 + self._at(read.t_ms) - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)  # let the watcher and other requests run
            now = time.time()
            await send({"type": "http.response.body", "body": read.data, "more_body": True})
            entry.sent_ms.append(round((loop.time() - t0) * 1000.0, 3))
            entry.writes += 1
            entry.bytes_sent += len(read.data)
            entry.tokens_sent += 1
            if entry.first_token_at is None:
                entry.first_token_at = now
            entry.last_token_at = now
        trailer = self.trace.trailer or {}
        if trailer.get("error") in _BROKEN:
            await asyncio.sleep(0.01)  # let the last bytes leave before the connection drops
            raise InjectedDisconnect("the recorded connection broke here")
