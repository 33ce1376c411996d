"""EmbeddedServer.stop() with connections uvicorn's own shutdown would wait on for its full
graceful timeout (2 s) and then log "timeout graceful shutdown exceeded"."""

from __future__ import annotations

import logging
import socket
import time
from urllib.parse import urlsplit

from core.server.runner import EmbeddedServer


def _wait_for_connections(server: EmbeddedServer, count: int) -> list:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        connections = list(server._server.server_state.connections)  # noqa: SLF001
        if len(connections) >= count:
            return connections
        time.sleep(0.01)
    raise AssertionError("the server never saw the connection")


def test_a_connection_that_missed_the_shutdown_request_is_closed_promptly_and_quietly(caplog):
    # A connection accepted just after uvicorn asked every connection to close is never asked:
    # simulated by a connection whose first shutdown request is lost.
    server = EmbeddedServer(warm=False)
    url = server.start()
    parts = urlsplit(url)
    client = socket.create_connection((parts.hostname, parts.port))
    try:
        (connection,) = _wait_for_connections(server, 1)
        real_shutdown = connection.shutdown
        asked: list[int] = []

        def lose_the_first_request() -> None:
            asked.append(1)
            if len(asked) > 1:
                real_shutdown()

        connection.shutdown = lose_the_first_request
        caplog.set_level(logging.ERROR, logger="uvicorn.error")
        started = time.monotonic()
        server.stop()
        took = time.monotonic() - started
    finally:
        client.close()
    assert len(asked) >= 2
    assert not [r for r in caplog.records if "graceful shutdown" in r.getMessage()]
    assert took < 1.5, f"stop() took {took:.2f} s"  # uvicorn alone: its 2 s timeout, then the error


def test_a_closed_connection_whose_client_stopped_reading_is_aborted(caplog):
    server = EmbeddedServer(warm=False)
    url = server.start()
    parts = urlsplit(url)
    client = socket.create_connection((parts.hostname, parts.port))
    try:
        (connection,) = _wait_for_connections(server, 1)
        closed: list[int] = []

        def close_but_never_drain() -> None:  # transport.close() with a buffer that never drains
            closed.append(1)
            connection.transport.pause_reading()
            connection.transport._closing = True  # noqa: SLF001 - what close() sets while it flushes

        connection.shutdown = close_but_never_drain
        caplog.set_level(logging.ERROR, logger="uvicorn.error")
        started = time.monotonic()
        server.stop()
        took = time.monotonic() - started
    finally:
        client.close()
    assert closed
    assert not [r for r in caplog.records if "graceful shutdown" in r.getMessage()]
    assert took < 1.5, f"stop() took {took:.2f} s"
