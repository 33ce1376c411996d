"""Serve an ASGI app with uvicorn on loopback, in a background thread with its own event loop.

How this works
--------------
`LoopbackServer(app_factory)`: `bind()` binds the listening socket (so port 0 resolves to a real
port) and returns the base URL at once, before anything heavy is imported: the socket listens from
that moment, so a connection made before the server runs waits in the backlog instead of being
refused. An app can show its window with that URL and start the server afterwards, off its GUI
thread.

`start()` (which binds first if `bind()` was not called) imports uvicorn, builds the app with
`app_factory(base_url)`, and starts a daemon thread that runs `uvicorn.Server.serve()` on a fresh
event loop. It returns the base URL only once uvicorn has set `started` (the socket is accepting)
and, with `warm`, once the imports a first relay request needs are done (in an executor thread,
before serving: they must never run on the serving loop). `stop()` first calls `end_responses()`
on the server's loop (a subclass ends every response in progress there), then tells uvicorn to
exit, waking its main loop at once (uvicorn alone notices within its 0.1 s tick), and joins the
thread; uvicorn closes idle keep-alive connections itself. Closing a bound server that never
started just closes its socket. The GUI thread and the server never share a loop, so neither can
stall the other. `livefill.embedded.server.EmbeddedServer` is the demo provider and relay served so.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Self

from livefill.defaults import H11_HEAD_BUFFER, HEAD_TIMEOUT
from livefill.errors import UsageError
from livefill.serving.sockets import base_url, listening_socket

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

__all__ = ["AppFactory", "LoopbackServer"]

#: Builds the app to serve, given the base URL it will be served at ("http://127.0.0.1:PORT").
AppFactory = Callable[[str], "ASGIApp"]

# At shutdown, how often connections that linger are asked again to close (or aborted).
_LINGER_GRACE = 0.25


def _prompt_server_class(uvicorn: ModuleType) -> type[uvicorn.Server]:
    """uvicorn's Server whose main loop also wakes on an event (`wake`), so that `stop()` is
    noticed at once rather than at its next 0.1 s tick; ticks run as before otherwise."""

    class PromptServer(uvicorn.Server):
        wake: asyncio.Event | None = None

        async def main_loop(self) -> None:
            self.wake = asyncio.Event()
            counter = 0
            should_exit = await self.on_tick(counter)
            while not should_exit:
                counter = (counter + 1) % 864000
                try:
                    await asyncio.wait_for(self.wake.wait(), 0.1)
                except asyncio.TimeoutError:
                    pass
                should_exit = await self.on_tick(counter)

        async def shutdown(self, sockets: list | None = None) -> None:
            # uvicorn asks each connection it has to finish, then waits for the set to empty. Two
            # kinds never leave it and make uvicorn wait out its graceful timeout and log an error:
            # one accepted in the moment after that request (no request yet, never asked), and one
            # closed while its client has stopped reading (an app closing mid-run: its write buffer
            # never drains). A reaper asks the first kind again and aborts the second.
            reaper = asyncio.ensure_future(self._reap_lingering())
            try:
                await super().shutdown(sockets)
            finally:
                reaper.cancel()

        async def _reap_lingering(self) -> None:
            while True:
                await asyncio.sleep(_LINGER_GRACE)
                for connection in list(self.server_state.connections):
                    transport = getattr(connection, "transport", None)
                    if transport is None:
                        continue
                    if transport.is_closing():
                        transport.abort()
                    else:
                        connection.shutdown()

    return PromptServer


class LoopbackServer:
    """An ASGI app (made by `app_factory` at `start()`) served by uvicorn on `host:port` in a
    background thread. Use as a context manager, or call `start()` (returns
    "http://127.0.0.1:PORT") and `stop()`. `app` is the app once started (None before).
    """

    def __init__(
        self,
        app_factory: AppFactory,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        start_timeout: float = 30.0,
        head_timeout: float = HEAD_TIMEOUT,
        max_connections: int = 500,
        warm: bool = True,
    ) -> None:
        self.app_factory = app_factory
        self.host = host
        self.port = port
        self.start_timeout = start_timeout
        self.head_timeout = head_timeout
        self.max_connections = max_connections
        self.warm = warm
        self.url: str | None = None
        self.app: ASGIApp | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self._sock: socket.socket | None = None
        self._bound_url: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def bind(self) -> str:
        """Bind and listen on the socket now (cheap: nothing is imported); return the base URL the
        server will answer on once `start()` has run. Idempotent."""
        with self._lock:
            return self._bind()

    def adopt(self, sock: socket.socket) -> str:
        """Serve on `sock`, a socket already bound and listening (a parent process's, inherited):
        instead of binding one. Returns the base URL, as `bind()` does."""
        with self._lock:
            if self._bound_url is not None:
                raise UsageError("the server has bound its socket already")
            sock.setblocking(False)
            self._sock = sock
            self._bound_url = base_url(*sock.getsockname()[:2])
            return self._bound_url

    def _bind(self) -> str:
        if self._stopped:
            raise UsageError("a server cannot be restarted after stop(); make a new one")
        if self._bound_url is None:
            sock = listening_socket(self.host, self.port)
            sock.setblocking(False)
            self._sock = sock
            self._bound_url = base_url(self.host, sock.getsockname()[1])
        return self._bound_url

    def start(self) -> str:
        """Start serving; return the base URL once uvicorn is accepting connections."""
        with self._lock:
            if self._stopped:
                raise UsageError("a server cannot be restarted after stop(); make a new one")
            if self._thread is not None and self.url is not None:
                return self.url
            url = self._bind()
            sock = self._sock
            assert sock is not None
            port = sock.getsockname()[1]

            try:
                import uvicorn  # lazy: bind() before a window shows must not pay for it (with the next: 180-260 ms)

                from livefill.serving.connection import install_quiet_logs, prewarm, protocol_class  # lazy: as uvicorn

                self.app = self.app_factory(url)
                config = uvicorn.Config(
                    self.app,
                    http=protocol_class(self.head_timeout),
                    limit_concurrency=self.max_connections,
                    lifespan="off",
                    log_config=None,
                    log_level="warning",
                    access_log=False,
                    timeout_graceful_shutdown=2,
                    timeout_keep_alive=5,
                    h11_max_incomplete_event_size=H11_HEAD_BUFFER,
                )
                self._server = _prompt_server_class(uvicorn)(config)
                install_quiet_logs()
            except BaseException:
                self._stopped = True  # a listening socket that no one will serve would hang its clients
                sock.close()
                raise
            ready = threading.Event()
            self._thread = threading.Thread(
                target=self._serve, args=(sock, ready, prewarm if self.warm else None), name="livefill-server", daemon=True
            )
            self._thread.start()
            ready.wait(self.start_timeout)
            if self._error is not None or not self._server.started:
                self._stopped = True
                self._stop_thread()
                raise RuntimeError(f"the embedded server did not start: {self._error!r}")
            self.port = port
            self.url = url
            return url

    def _serve(self, sock: socket.socket, ready: threading.Event, warm: Callable[[], None] | None) -> None:
        # Explicitly a selector loop: under qasync the process-wide loop policy would hand this
        # thread a Qt loop, which cannot run outside the GUI thread.
        loop = asyncio.SelectorEventLoop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        assert self._server is not None
        server = self._server

        async def main() -> None:
            if warm is not None:  # the first relay request's imports must not run on the serving loop
                await loop.run_in_executor(None, warm)

            async def announce() -> None:
                while not server.started and not server.should_exit:
                    await asyncio.sleep(0.005)
                ready.set()

            watcher = asyncio.ensure_future(announce())
            try:
                await server.serve(sockets=[sock])
            finally:
                watcher.cancel()
                ready.set()

        try:
            loop.run_until_complete(main())
        except BaseException as exc:  # noqa: BLE001 - reported to start()/stop() callers
            self._error = exc
            ready.set()
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                sock.close()

    def stop(self) -> None:
        """End responses in progress, stop uvicorn and join the thread (idempotent)."""
        with self._lock:
            if self._thread is not None or self._sock is not None:
                self._stopped = True
            if self._thread is None and self._sock is not None:  # bound, never started
                self._sock.close()
            self._stop_thread()

    def _stop_thread(self) -> None:
        thread, server, loop = self._thread, self._server, self._loop
        if thread is None or server is None:
            return
        if loop is not None and not loop.is_closed() and self.app is not None:
            try:
                loop.call_soon_threadsafe(self.end_responses)
            except RuntimeError:
                pass  # the loop closed meanwhile
        server.should_exit = True
        wake = getattr(server, "wake", None)
        if wake is not None and loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(wake.set)  # noticed now, not at uvicorn's next 0.1 s tick
            except RuntimeError:
                pass
        thread.join(timeout=10)
        if thread.is_alive():  # pragma: no cover - last resort
            server.force_exit = True
            thread.join(timeout=5)

    @property
    def running(self) -> bool:
        """Whether the server thread is alive and serving."""
        return self._thread is not None and self._thread.is_alive() and bool(self._server and self._server.started)

    def end_responses(self) -> None:
        """Called on the server's loop as `stop()` begins: end the responses in progress there
        (the app's business; nothing here)."""

    # -- context manager ---------------------------------------------------------------------

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
