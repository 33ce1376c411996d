"""An httpcore network backend on asyncio's own transports, for httpx's httpcore and the SDKs' httpcore2.

How this works
--------------
httpcore reads a response through a "network backend". Its default (anyio) wraps every read in a
cancel scope and a checkpoint (one more loop turn per read), and pauses the socket after each read
and resumes it before the next: under qasync each pause/resume drops and makes a QSocketNotifier.
On the GUI thread that was ~15 % of its samples while a form streamed (py-spy, issue 13).

This backend keeps one `asyncio.Protocol` per connection that buffers what arrives. `read()` hands
back what is buffered without awaiting anything; only when the buffer is empty does it wait, on
one future, for `data_received`, EOF or the connection's loss. Reading is paused only when the
buffer passes `_HIGH_WATER` (a consumer that stopped reading) and resumed when it drains. Writes
go to the transport and wait for `resume_writing` only when asyncio's own write buffer is full.
TLS is `loop.start_tls` on the same protocol; timeouts are `asyncio.timeout`, taken only when a
read has to wait.

Errors are httpcore's own classes (`ConnectError`, `ReadError`, `ReadTimeout`, ...) of the flavour
the backend was made for (`backend_for(httpcore)` / `backend_for(httpcore2)`), so httpx and httpx2
map them to their exceptions exactly as they map the anyio backend's, and livefill/wire/providers/transport
translates those as before. `install(client)` puts the backend into an httpx / httpx2 client's
connection pools (its default transport and any proxy mounts); a pool that does not look as
expected keeps its default backend (slower, never broken; a test pins the installed versions).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import sys
from collections.abc import Iterable
from types import ModuleType
from typing import Any

_HIGH_WATER = 1 << 20  # bytes buffered before reading from the socket is paused
_LOW_WATER = 1 << 16  # ... and resumed once the buffer drains below this
_HAPPY_EYEBALLS_DELAY = 0.25  # seconds before the next address is tried in parallel (RFC 8305)


class _BufferedProtocol(asyncio.Protocol):
    """Collects what the socket delivers; wakes a waiting reader; tracks write flow control."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.reading_paused = False
        self._reader: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _HIGH_WATER and not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if exc is not None and self.error is None:
            self.error = exc
        self._wake_reader()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None or self._writable.done():
            self._writable = self._loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    # -- for the stream -----------------------------------------------------------------------

    def take(self, max_bytes: int) -> bytes:
        """Up to `max_bytes` of what is buffered (the caller checked there is some)."""
        chunks = self.chunks
        data = chunks[0]
        if len(chunks) > 1:
            data = b"".join(chunks)
            chunks[:] = [data]
        if len(data) > max_bytes:
            chunks[0] = data[max_bytes:]
            data = data[:max_bytes]
        else:
            chunks.clear()
        self.buffered -= len(data)
        if self.reading_paused and self.buffered < _LOW_WATER and self.transport is not None and not self.lost:
            self.reading_paused = False
            self.transport.resume_reading()
        return data

    async def wait_readable(self) -> None:
        """Until data, EOF or the connection's end arrives."""
        self._reader = self._loop.create_future()
        try:
            await self._reader
        finally:
            self._reader = None

    async def wait_writable(self) -> None:
        if self._writable is not None and not self._writable.done():
            await self._writable

    def _wake_reader(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)


def backend_for(httpcore: ModuleType) -> Any:
    """An instance of the backend for this httpcore flavour (`httpcore` or `httpcore2`)."""
    return _backend_classes(httpcore)[1]()


_CLASSES: dict[str, tuple[type, type]] = {}


def _backend_classes(httpcore: ModuleType) -> tuple[type, type]:
    """(stream class, backend class) subclassing this flavour's bases and raising its errors."""
    known = _CLASSES.get(httpcore.__name__)
    if known is not None:
        return known
    errors = httpcore

    class AsyncioStream(httpcore.AsyncNetworkStream):  # type: ignore[misc,name-defined]
        def __init__(self, transport: asyncio.Transport, protocol: _BufferedProtocol) -> None:
            self._transport = transport
            self._protocol = protocol

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            protocol = self._protocol
            if not protocol.chunks and not (protocol.eof or protocol.lost):
                try:
                    async with asyncio.timeout(timeout):
                        await protocol.wait_readable()
                except TimeoutError as exc:
                    raise errors.ReadTimeout("timed out waiting for the server") from exc
            if protocol.chunks:
                return protocol.take(max_bytes)
            if protocol.error is not None:  # the connection broke (after what it delivered)
                raise errors.ReadError(str(protocol.error) or type(protocol.error).__name__)
            return b""  # EOF

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            if not buffer:
                return
            protocol = self._protocol
            if protocol.lost or self._transport.is_closing():
                raise errors.WriteError(str(protocol.error) if protocol.error else "the connection is closed")
            try:
                self._transport.write(buffer)
                async with asyncio.timeout(timeout):
                    await protocol.wait_writable()
            except TimeoutError as exc:
                raise errors.WriteTimeout("timed out sending to the server") from exc
            except OSError as exc:
                raise errors.WriteError(str(exc)) from exc
            if protocol.lost and protocol.error is not None:
                raise errors.WriteError(str(protocol.error))

        async def aclose(self) -> None:
            transport = self._transport
            if not transport.is_closing():
                transport.close()  # the peer sees FIN once what was written is flushed
            if transport.get_write_buffer_size():
                transport.abort()
            await asyncio.sleep(0)  # let connection_lost run, as anyio's aclose does

        async def start_tls(
            self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            loop = asyncio.get_running_loop()
            try:
                async with asyncio.timeout(timeout):
                    tls = await loop.start_tls(self._transport, self._protocol, ssl_context, server_hostname=server_hostname)
            except TimeoutError as exc:
                await self.aclose()
                raise errors.ConnectTimeout("timed out during the TLS handshake") from exc
            except (ssl.SSLError, OSError, ConnectionError) as exc:
                await self.aclose()
                raise errors.ConnectError(str(exc)) from exc
            if tls is None:  # the connection ended during the handshake
                raise errors.ConnectError("the connection closed during the TLS handshake")
            self._protocol.transport = tls
            return AsyncioStream(tls, self._protocol)  # type: ignore[arg-type]

        def get_extra_info(self, info: str) -> Any:
            transport = self._transport
            if info == "ssl_object":
                return transport.get_extra_info("ssl_object")
            if info == "client_addr":
                return transport.get_extra_info("sockname")
            if info == "server_addr":
                return transport.get_extra_info("peername")
            if info == "socket":
                return transport.get_extra_info("socket")
            if info == "is_readable":  # an idle pooled connection the server has closed
                protocol = self._protocol
                return bool(protocol.chunks) or protocol.eof or protocol.lost or transport.is_closing()
            return None

    class AsyncioBackend(httpcore.AsyncNetworkBackend):  # type: ignore[misc,name-defined]
        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            return await self._open(_connect(host, port, local_address), f"{host}:{port}", timeout, socket_options)

        async def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
        ) -> Any:
            loop = asyncio.get_running_loop()
            return await self._open(loop.create_unix_connection(lambda: _BufferedProtocol(loop), path), path, timeout, socket_options)

        @staticmethod
        async def _open(connecting: Any, where: str, timeout: float | None, socket_options: Iterable[Any] | None) -> Any:
            """Await `connecting` (a transport and its protocol) within `timeout`, as httpcore's errors."""
            try:
                async with asyncio.timeout(timeout):
                    transport, protocol = await connecting
            except TimeoutError as exc:
                raise errors.ConnectTimeout(f"timed out connecting to {where}") from exc
            except OSError as exc:
                raise errors.ConnectError(str(exc)) from exc
            _apply(transport, socket_options)
            return AsyncioStream(transport, protocol)

        async def sleep(self, seconds: float) -> None:
            await asyncio.sleep(seconds)

    _CLASSES[httpcore.__name__] = (AsyncioStream, AsyncioBackend)
    return AsyncioStream, AsyncioBackend


async def _connect(host: str, port: int, local_address: str | None) -> tuple[asyncio.Transport, _BufferedProtocol]:
    """A TCP connection to the first of `host`'s addresses that answers (happy eyeballs, RFC 8305):
    one attempt per address, families alternating, the next started `_HAPPY_EYEBALLS_DELAY` after
    the last or as soon as every attempt so far has failed; the first to connect wins.

    Our own race, not asyncio's `happy_eyeballs_delay`: there (3.11) a cancel -- a Stop while
    connecting -- that lands just after an attempt connected leaves that socket open, owned by
    nobody, until a garbage collection; the server saw a connection that never sent a request.
    Here every attempt but the winner is cancelled or, if it connected meanwhile, closed. All
    failing: a refusal if any address refused ("nothing is listening"), else the first address's
    own error."""
    loop = asyncio.get_running_loop()
    local = (local_address, 0) if local_address else None
    addresses = _interleaved(await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM))
    if not addresses:
        raise OSError(f"cannot resolve {host}")

    def protocol() -> _BufferedProtocol:
        return _BufferedProtocol(loop)

    attempts: list[asyncio.Task[Any]] = []
    winner: asyncio.Task[Any] | None = None
    try:
        for address in [*addresses, None]:
            if address is not None:
                attempts.append(loop.create_task(loop.create_connection(protocol, address[0], address[1], local_addr=local)))
            deadline = None if address is None else loop.time() + _HAPPY_EYEBALLS_DELAY
            while pending := [a for a in attempts if not a.done()]:
                timeout = None if deadline is None else max(0.0, deadline - loop.time())
                done, _ = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    break  # the delay passed: the next address joins the race
                for attempt in done:
                    if attempt.exception() is None:
                        winner = attempt
                        return attempt.result()  # type: ignore[no-any-return]
        failures = [attempt.exception() for attempt in attempts]  # every attempt failed
        refused = [f for f in failures if isinstance(f, ConnectionRefusedError)]
        raise (refused or failures)[0]  # type: ignore[misc]  ("nothing is listening" says the most)
    finally:
        for attempt in attempts:
            if attempt is not winner:
                attempt.cancel()
                attempt.add_done_callback(_close_if_connected)


def _interleaved(infos: list[Any]) -> list[tuple[str, int]]:
    """(host, port) of each address, families alternating from the first one's (RFC 8305)."""
    by_family: dict[int, list[tuple[str, int]]] = {}
    for family, *_, sockaddr in infos:
        host = sockaddr[0]
        if family == socket.AF_INET6 and len(sockaddr) > 3 and sockaddr[3]:
            host = f"{host}%{sockaddr[3]}"  # a link-local address keeps its interface (scope id)
        by_family.setdefault(family, []).append((host, sockaddr[1]))
    queues = list(by_family.values())
    out = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def _close_if_connected(attempt: asyncio.Task[Any]) -> None:
    """A losing attempt that connected anyway: hang up (nobody else holds its transport)."""
    if not attempt.cancelled() and attempt.exception() is None:
        attempt.result()[0].close()


def _apply(transport: asyncio.BaseTransport, options: Iterable[Any] | None) -> None:
    sock: socket.socket | None = transport.get_extra_info("socket")
    if sock is None:
        return
    for option in options or ():
        sock.setsockopt(*option)


def install(client: Any) -> int:
    """Give every connection pool of an httpx / httpx2 client this backend; returns how many pools
    got it (0: the client's insides are not what this module knows; it keeps its own backend)."""
    transports = [getattr(client, "_transport", None)]
    transports += list(getattr(client, "_mounts", {}).values())
    done = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is None or not hasattr(pool, "_network_backend") or getattr(pool, "_connections", None):
            continue
        flavour = _flavour_of(pool)
        if flavour is None:
            continue
        pool._network_backend = backend_for(flavour)
        done += 1
    return done


def _flavour_of(pool: Any) -> ModuleType | None:
    """The httpcore module (`httpcore` or `httpcore2`) a pool belongs to (imported: it made the pool)."""
    root = type(pool).__module__.split(".", 1)[0]
    return sys.modules.get(root) if root in ("httpcore", "httpcore2") else None
