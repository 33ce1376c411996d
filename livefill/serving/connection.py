"""The connection side of the local servers: uvicorn's h11 protocol with a request-head deadline
and TCP_NODELAY, the log filters for a client's ordinary goodbyes, and the relay's prewarm.

How this works
--------------
`protocol_class(head_timeout)` returns a subclass of uvicorn's `H11Protocol`. Each connection
sets TCP_NODELAY on its socket (asyncio does so only for sockets it creates itself; the servers
hand uvicorn a socket bound by hand, so without it small responses wait for Nagle + delayed ACK).
A deadline runs from the moment a connection opens, or from the first byte of a next request on a
kept-alive connection, until a whole request head has been parsed: a client that sends nothing,
or sends headers one byte at a time, is closed after `head_timeout` seconds. Closings are counted
in `CONNECTION_REFUSALS` (one log line per interval, not one per connection).

A client that goes away is seen at once. The end of its byte stream (EOF) marks the request
disconnected in the same loop iteration that read it (asyncio would call `connection_lost` one
iteration later; uvicorn closes on EOF anyway), and every request's scope carries a
`DisconnectHook` at `scope["extensions"]["livefill.disconnect"]`: callbacks the app registers there
run synchronously when the client goes (EOF or a lost connection), so a streaming response cancels
its work without waiting for a task that waits on `receive()` to be scheduled. Under a server
without this protocol (plain uvicorn) the hook is absent and apps fall back to `receive()`; each
hop saved is one turn of a busy event loop on the cancel path.

`install_quiet_logs()` drops the tracebacks of a client that simply went away (starlette's
`ClientDisconnect`, asyncio's "socket.send() raised exception.") from the server logs.

`prewarm()` does, in the calling thread, the imports and one-off setup a first relay request
would otherwise do on the server's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import socket
from collections.abc import Callable
from typing import Any

from starlette.types import Scope
from uvicorn.protocols.http.h11_impl import H11Protocol

from livefill import switches
from livefill.defaults import HEAD_TIMEOUT
from livefill.serving.guard import RefusalLog

__all__ = [
    "GuardedH11Protocol",
    "protocol_class",
    "install_quiet_logs",
    "prewarm",
    "CONNECTION_REFUSALS",
    "DISCONNECT_EXTENSION",
    "DisconnectHook",
    "on_disconnect",
]

CONNECTION_REFUSALS = RefusalLog(10.0)
DISCONNECT_EXTENSION = "livefill.disconnect"


class DisconnectHook:
    """Callbacks to run, once, the moment the client of one request goes away."""

    __slots__ = ("_callbacks", "fired")

    def __init__(self) -> None:
        self._callbacks: list[Callable[[], None]] = []
        self.fired = False

    def add(self, callback: Callable[[], None]) -> None:
        """Run `callback()` when the client goes (at once if it already has)."""
        if self.fired:
            callback()
        else:
            self._callbacks.append(callback)

    def discard(self, callback: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    def fire(self) -> None:
        if self.fired:
            return
        self.fired = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one app's callback must not break the connection
                logging.getLogger("livefill.server").exception("a disconnect callback failed")


def on_disconnect(scope: Scope) -> DisconnectHook | None:
    """The request's DisconnectHook, when the server provides one (livefill-server, embedded)."""
    extensions = scope.get("extensions") or {}
    hook = extensions.get(DISCONNECT_EXTENSION)
    return hook if isinstance(hook, DisconnectHook) else None


class _GuardedH11(H11Protocol):
    head_timeout: float = HEAD_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout, self._on_head_timeout)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _on_head_timeout(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            client = "%s:%d" % tuple(self.client[:2]) if self.client else "?"
            CONNECTION_REFUSALS.note(
                "slow_head", f"{client} sent no complete request head within {self.head_timeout:g}s; closed"
            )
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting:
            self._arm_head_timer()
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:
            self._disarm_head_timer()
            if self.cycle is not None:  # its task is created, not started: the scope is still ours
                self.cycle.scope.setdefault("extensions", {})[DISCONNECT_EXTENSION] = DisconnectHook()

    def _client_gone(self) -> None:
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return
        cycle.disconnected = True
        cycle.message_event.set()
        hook = on_disconnect(cycle.scope)
        if hook is not None:
            hook.fire()

    def eof_received(self) -> None:
        # The transport closes on EOF (nothing returned); say so now, not an iteration later.
        self._client_gone()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        self._client_gone()
        super().connection_lost(exc)


def protocol_class(head_timeout: float) -> type[H11Protocol]:
    """An h11 protocol class for `uvicorn.Config(http=...)` with this request-head deadline."""
    return type("GuardedH11Protocol", (_GuardedH11,), {"head_timeout": float(head_timeout)})


class GuardedH11Protocol(_GuardedH11):
    """The protocol by import string, for uvicorn configurations made elsewhere (worker processes,
    `uvicorn.Config(http="livefill.serving.connection:GuardedH11Protocol")`): the head deadline is
    LIVEFILL_HEAD_TIMEOUT seconds (default HEAD_TIMEOUT), read when the process first makes a connection."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "head_timeout" not in GuardedH11Protocol.__dict__:
            GuardedH11Protocol.head_timeout = switches.number("LIVEFILL_HEAD_TIMEOUT", HEAD_TIMEOUT)
            install_quiet_logs()
        super().__init__(*args, **kwargs)


class _QuietGoodbyes(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("socket.send() raised exception"):
            return False
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if type(exc).__name__ == "ClientDisconnect":
                return False
            exc = exc.__cause__ or exc.__context__
        return True


_QUIET = _QuietGoodbyes()


def install_quiet_logs() -> None:
    """Keep a client's ordinary disconnects out of the asyncio and uvicorn logs (idempotent)."""
    for name in ("asyncio", "uvicorn.error"):
        logger = logging.getLogger(name)
        if _QUIET not in logger.filters:
            logger.addFilter(_QUIET)


_PREWARM_MODULES = (
    "livefill.wire.providers",
    "livefill.wire.providers.anthropic",
    "livefill.wire.providers.openai_chat",
    "livefill.wire.providers.openai_responses",
    "livefill.wire.providers.ollama",
    "livefill.wire.providers.raw",
    "livefill.wire.providers.request",
    "livefill.extraction.scenarios",
    "livefill.relay.settler",
    "livefill.extraction.user_schema",
    "livefill.wire.providers.transport",
)


def prewarm() -> None:
    """Import what a first relay request needs (by name: importing them is the point, in the
    calling thread), and warm the provider transport. Safe to skip: any failure here is left for
    the request itself to report."""
    for name in _PREWARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the request reports it properly
            pass
    try:
        importlib.import_module("livefill.wire.providers.transport").prewarm()
    except Exception:  # noqa: BLE001
        pass
