"""Executing a response's steps against the socket: timing, slicing, pings, and cancel detection.

How this works
--------------
`StepResponse` is a raw ASGI response. After `http.response.start` it runs two tasks side by side:

- the *producer* walks the steps (`livefill.demo.faults.program`): `Write` frames go out at once,
  `Tokens` frames wait for their deadline (`ttft + (tokens - 1) / speed`, absolute, so time spent
  writing is absorbed), keep-alive pings are slotted in whenever a ping falls due before the next
  deadline, `Stall` never returns, `Abort` writes half an event and raises `InjectedDisconnect`;
- the *watcher* waits on `receive()`. Under uvicorn that returns `http.disconnect` when the client
  closes the connection, but also as soon as a response has completed; so a disconnect is recorded
  only while `complete` is still False (it is set just before the last body message), and the
  watcher cancels the producer at once: it is parked in a sleep, so no further token is produced,
  and detection never waits for the next token.

Writers implement the `x-demo-slice` regimes: one `send` per frame; fixed N-byte writes spread
over each token's interval (so at low speed they arrive as separate reads); or writes gathered for
a time window. A disconnect fault raises `InjectedDisconnect` out of the ASGI app after the partial
bytes, which makes uvicorn close the transport: the client sees a chunked body that just stops.
`install_log_filter()` keeps that deliberate exception out of uvicorn's error log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from starlette.types import Receive, Scope, Send

from livefill.demo.protocol import SliceMode, Slicing
from livefill.serving.connection import on_disconnect
from livefill.demo.knobs import Knobs
from livefill.demo.request_log import LogEntry
from livefill.demo.wires import Abort, Stall, Step, Tokens, Write

__all__ = ["InjectedDisconnect", "StepResponse", "DelayedResponse", "install_log_filter"]



class InjectedDisconnect(Exception):
    """Raised on purpose to make uvicorn drop the connection mid-body (the disconnect fault)."""


class _DropInjected(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, InjectedDisconnect):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


_FILTER = _DropInjected()


def install_log_filter() -> None:
    """Keep the deliberate `InjectedDisconnect` out of uvicorn's error log (idempotent)."""
    logger = logging.getLogger("uvicorn.error")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


# --- writers -----------------------------------------------------------------------------------


class _Writer:
    def __init__(self, send: Send, entry: LogEntry) -> None:
        self._send = send
        self._entry = entry
        self._lock = asyncio.Lock()

    async def _out(self, data: bytes) -> None:
        if not data:
            return
        async with self._lock:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})
        self._entry.writes += 1
        self._entry.bytes_sent += len(data)

    async def write(self, data: bytes, spread: float) -> None:
        await self._out(data)

    async def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class _ByteWriter(_Writer):
    def __init__(self, send: Send, entry: LogEntry, size: int) -> None:
        super().__init__(send, entry)
        self._size = size
        self._buffer = bytearray()

    async def write(self, data: bytes, spread: float) -> None:
        self._buffer += data
        count = len(self._buffer) // self._size
        for i in range(count):
            chunk = bytes(self._buffer[: self._size])
            del self._buffer[: self._size]
            await self._out(chunk)
            if spread > 0 and i < count - 1:
                await asyncio.sleep(spread / count)

    async def flush(self) -> None:
        data = bytes(self._buffer)
        self._buffer.clear()
        await self._out(data)


class _CoalescingWriter(_Writer):
    def __init__(self, send: Send, entry: LogEntry, window_ms: float) -> None:
        super().__init__(send, entry)
        self._window = window_ms / 1000.0
        self._buffer = bytearray()
        self._timer: asyncio.Task[None] | None = None

    async def write(self, data: bytes, spread: float) -> None:
        self._buffer += data
        if self._timer is None and self._buffer:
            self._timer = asyncio.ensure_future(self._later())

    async def _later(self) -> None:
        await asyncio.sleep(self._window)
        self._timer = None
        data = bytes(self._buffer)
        self._buffer.clear()
        await self._out(data)

    async def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        data = bytes(self._buffer)
        self._buffer.clear()
        await self._out(data)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _writer(slicing: Slicing, send: Send, entry: LogEntry) -> _Writer:
    if slicing.mode is SliceMode.BYTES:
        return _ByteWriter(send, entry, slicing.size)
    if slicing.mode is SliceMode.COALESCE:
        return _CoalescingWriter(send, entry, slicing.window_ms)
    return _Writer(send, entry)


def _raw_headers(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]


# --- the disconnect watcher --------------------------------------------------------------------


class _Exchange:
    """Shared state of one response: is it complete, and the task to stop on a disconnect."""

    def __init__(self, entry: LogEntry) -> None:
        self.entry = entry
        self.complete = False
        self.producer: asyncio.Future[Any] | None = None

    def client_gone(self) -> None:
        """The client went away: log it and stop producing (once; nothing if already complete)."""
        if self.complete or self.entry.disconnected:
            return
        self.entry.disconnected = True
        self.entry.disconnected_at = time.time()
        self.entry.outcome = "disconnected"
        if self.producer is not None:
            self.producer.cancel()

    async def watch(self, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.client_gone()
                return


async def _run(
    exchange: _Exchange, work: Any, receive: Receive, shutdown: asyncio.Event, scope: Scope | None = None
) -> asyncio.Future[Any]:
    """Run `work` until it ends, the client leaves, or the server shuts down; return its task.

    Under livefill's own protocol (livefill.serving.connection) the client's departure is also heard
    synchronously through the scope's DisconnectHook, a loop turn before the watcher task runs."""
    producer = asyncio.ensure_future(work)
    exchange.producer = producer
    hook = on_disconnect(scope) if scope is not None else None
    if hook is not None:
        hook.add(exchange.client_gone)
    watcher = asyncio.ensure_future(exchange.watch(receive))
    stopper = asyncio.ensure_future(shutdown.wait())
    try:
        await asyncio.wait([producer, stopper], return_when=asyncio.FIRST_COMPLETED)
    finally:
        if hook is not None:
            hook.discard(exchange.client_gone)
        watcher.cancel()
        stopper.cancel()
        if not producer.done():
            producer.cancel()
        await asyncio.gather(producer, watcher, stopper, return_exceptions=True)
    return producer


# --- streamed responses ------------------------------------------------------------------------


class StepResponse:
    """A streamed response that executes `steps` (see the module comment)."""

    def __init__(
        self,
        *,
        steps: Iterator[Step],
        keepalive: bytes | None,
        pings_while_streaming: bool,
        knobs: Knobs,
        entry: LogEntry,
        headers: list[tuple[str, str]],
        shutdown: asyncio.Event,
    ) -> None:
        self.steps = steps
        self.keepalive = keepalive
        self.pings_while_streaming = pings_while_streaming
        self.knobs = knobs
        self.entry = entry
        self.headers = headers
        self.shutdown = shutdown

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        entry = self.entry
        await send({"type": "http.response.start", "status": 200, "headers": _raw_headers(self.headers)})
        entry.outcome = "streaming"
        exchange = _Exchange(entry)
        writer = _writer(self.knobs.slicing, send, entry)
        try:
            producer = await _run(exchange, self._produce(writer), receive, self.shutdown, scope)
        finally:
            writer.close()
        await finish_body(producer, exchange, send)

    async def _produce(self, writer: _Writer) -> None:
        loop = asyncio.get_running_loop()
        knobs = self.knobs
        entry = self.entry
        start = loop.time()
        first = start + knobs.ttft_ms / 1000.0
        interval = 1.0 / knobs.speed if knobs.speed > 0 else 0.0
        spread = interval * 0.8
        self._next_ping = start + knobs.ping_interval
        produced = 0
        for step in self.steps:
            if isinstance(step, Tokens):
                if step.count > 0:
                    deadline = first + (produced + step.count - 1) * interval
                    await self._wait_until(deadline, writer)
                now = time.time()  # the moment the token is produced, taken before the write
                await writer.write(step.data, spread)
                produced += step.count
                entry.tokens_sent = produced
                if entry.first_token_at is None:
                    entry.first_token_at = now
                entry.last_token_at = now
                if interval == 0:
                    await asyncio.sleep(0)  # let the watcher and other requests run
            elif isinstance(step, Write):
                await writer.write(step.data, spread)
            elif isinstance(step, Stall):
                await writer.flush()
                await self._stall(step.pings, writer)
            elif isinstance(step, Abort):
                await writer.write(step.data, 0.0)
                await writer.flush()
                await asyncio.sleep(0.01)  # let the partial bytes leave before the connection drops
                raise InjectedDisconnect("disconnect fault")
        await writer.flush()

    async def _wait_until(self, deadline: float, writer: _Writer) -> None:
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            if self.pings_while_streaming and self.keepalive is not None and self._next_ping < deadline:
                if self._next_ping > now:
                    await asyncio.sleep(self._next_ping - now)
                await writer.write(self.keepalive, 0.0)
                self._next_ping += self.knobs.ping_interval
                continue
            if deadline > now:
                await asyncio.sleep(deadline - now)
            return

    async def _stall(self, pings: bool, writer: _Writer) -> None:
        if not pings or self.keepalive is None:
            await asyncio.Event().wait()  # silence until the client leaves or the server stops
        while True:
            await writer.write(self.keepalive, 0.0)
            await writer.flush()
            await asyncio.sleep(self.knobs.ping_interval)


class DelayedResponse:
    """A whole (non-streamed) body sent after `delay` seconds (None: never), watching for a
    disconnect meanwhile; with `abort`, half the body is written and the connection dropped."""

    def __init__(
        self,
        *,
        status: int,
        body: bytes,
        headers: list[tuple[str, str]],
        delay: float | None,
        entry: LogEntry,
        tokens: int,
        shutdown: asyncio.Event,
        abort: bool = False,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers
        self.delay = delay
        self.entry = entry
        self.tokens = tokens
        self.shutdown = shutdown
        self.abort = abort

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        entry = self.entry
        entry.outcome = "streaming"
        exchange = _Exchange(entry)

        async def wait() -> None:
            if self.delay is None:
                await asyncio.Event().wait()
            await asyncio.sleep(self.delay)

        producer = await _run(exchange, wait(), receive, self.shutdown, scope)
        if producer.cancelled() and entry.disconnected:
            return
        headers = [*self.headers, ("content-length", str(len(self.body)))]
        exchange.complete = True
        await send({"type": "http.response.start", "status": self.status, "headers": _raw_headers(headers)})
        if self.abort:
            entry.aborted = True
            entry.outcome = "aborted"
            await send({"type": "http.response.body", "body": self.body[: len(self.body) // 2], "more_body": True})
            await asyncio.sleep(0.01)
            raise InjectedDisconnect("disconnect fault")
        entry.tokens_sent = self.tokens
        entry.bytes_sent = len(self.body)
        entry.writes = 1
        entry.finished = not producer.cancelled()
        entry.finished_at = time.time()
        entry.outcome = "finished" if entry.finished else "shutdown"
        await send({"type": "http.response.body", "body": self.body, "more_body": False})


async def finish_body(
    producer: asyncio.Future[Any],
    exchange: _Exchange,
    send: Send,
    before_end: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """End a streamed response as its producer ended, and log how.

    The client gone: nothing to write. The server stopping (producer cancelled): end the body
    where it is (`before_end` first, e.g. to send headers not sent yet). An injected disconnect:
    logged `aborted` and re-raised so the connection breaks. Otherwise `finished`.
    """
    entry = exchange.entry
    if producer.cancelled():
        if entry.disconnected:
            return  # the client is gone: there is no one to write to
        entry.outcome = "shutdown"
        exchange.complete = True
        if before_end is not None:
            await before_end()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    error = producer.exception()
    if isinstance(error, InjectedDisconnect):
        entry.aborted = True
        entry.outcome = "aborted"
        raise error
    if error is not None:
        raise error
    exchange.complete = True
    entry.finished = True
    entry.finished_at = time.time()
    entry.outcome = "finished"
    await send({"type": "http.response.body", "body": b"", "more_body": False})
