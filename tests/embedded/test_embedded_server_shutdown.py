"""EmbeddedServer.stop() with connections uvicorn's own shutdown would wait on for its full
graceful timeout (2 s) and then log "timeout graceful shutdown exceeded"."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from livefill.embedded.server import EmbeddedServer


def _stop_with_one_connection(caplog, shutdown_of: Callable) -> tuple[float, list[str]]:  # noqa: ANN001
    """Start a server, connect once, give that connection the shutdown `shutdown_of(connection)`
    returns, stop the server: how long stop() took and the errors uvicorn logged."""
    server = EmbeddedServer(warm=False)
    parts = urlsplit(server.start())
    client = socket.create_connection((parts.hostname, parts.port))
    try:
        deadline = time.monotonic() + 10
        while not server._server.server_state.connections:  # noqa: SLF001
            assert time.monotonic() < deadline, "the server never saw the connection"
            time.sleep(0.01)
        (connection,) = server._server.server_state.connections  # noqa: SLF001
        connection.shutdown = shutdown_of(connection)
        caplog.set_level(logging.ERROR, logger="uvicorn.error")
        started = time.monotonic()
        server.stop()
        took = time.monotonic() - started
    finally:
        client.close()
    return took, [r.getMessage() for r in caplog.records if "graceful shutdown" in r.getMessage()]


def test_a_connection_that_missed_the_shutdown_request_is_closed_promptly_and_quietly(caplog, timing):
    # A connection accepted just after uvicorn asked every connection to close is never asked:
    # simulated by a connection whose first shutdown request is lost.
    asked: list[int] = []

    def lose_the_first_request(connection):  # noqa: ANN001, ANN202
        real_shutdown = connection.shutdown

        def shutdown() -> None:
            asked.append(1)
            if len(asked) > 1:
                real_shutdown()

        return shutdown

    took, errors = _stop_with_one_connection(caplog, lose_the_first_request)
    assert len(asked) >= 2
    assert errors == []  # uvicorn alone: its 2 s timeout, then the error
    timing.record("stop() with a connection that missed the shutdown request", took, budget=1.5)


def test_a_closed_connection_whose_client_stopped_reading_is_aborted(caplog, timing):
    closed: list[int] = []

    def close_but_never_drain(connection):  # noqa: ANN001, ANN202 - transport.close() with a buffer that never drains
        def shutdown() -> None:
            closed.append(1)
            connection.transport.pause_reading()
            connection.transport._closing = True  # noqa: SLF001 - what close() sets while it flushes

        return shutdown

    took, errors = _stop_with_one_connection(caplog, close_but_never_drain)
    assert closed
    assert errors == []  # uvicorn alone: its 2 s timeout, then the error
    timing.record("stop() with a closed connection whose client stopped reading", took, budget=1.5)
