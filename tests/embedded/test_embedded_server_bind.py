"""EmbeddedServer.bind(): the address before the server runs; the request log's cheap client."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from urllib.parse import urlsplit

import pytest

from livefill.embedded.client import embedded_server, log_client
from livefill.embedded.server import EmbeddedServer


def _get(url: str, path: str, out: list) -> None:  # noqa: ANN001
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        out.append((response.status, response.read()))
    finally:
        conn.close()


def test_a_request_made_after_bind_and_before_start_is_answered_once_the_server_runs():
    server = embedded_server(warm=False)
    url = server.bind()
    assert url.startswith("http://127.0.0.1:") and server.bind() == url  # idempotent
    assert server.url is None and not server.running
    answers: list = []
    early = threading.Thread(target=_get, args=(url, "/_demo/requests", answers))
    early.start()  # connects now: the socket listens, the connection waits in its backlog
    try:
        early.join(0.3)
        assert answers == []  # nothing serves it yet
        assert server.start() == url
        early.join(30)
        assert answers and answers[0][0] == 200
        assert isinstance(json.loads(answers[0][1]), (list, dict))
    finally:
        server.stop()


def test_a_bound_server_that_never_started_closes_its_socket_on_stop():
    server = EmbeddedServer(warm=False)
    url = server.bind()
    port = urlsplit(url).port
    server.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    from livefill.errors import UsageError

    with pytest.raises(UsageError):
        server.start()


def test_the_request_log_client_shares_the_transports_tls_context():
    from livefill.wire.providers.transport import _ssl_context

    client = log_client()
    try:
        pool = client._transport._pool  # noqa: SLF001 - httpx's transport -> httpcore's pool
        assert pool._ssl_context is _ssl_context()  # noqa: SLF001 - no CA bundle loaded per client
    finally:
        import asyncio

        asyncio.run(client.aclose())


def test_a_trace_added_while_the_server_still_starts_is_kept_for_replay():
    from pathlib import Path

    from livefill.recording.trace import load_trace

    trace = load_trace(Path(__file__).resolve().parents[2] / "docs" / "traces" / "invoice-demo.jsonl")
    server = EmbeddedServer(warm=False)
    server.bind()
    trace_id = server.add_trace(trace)  # a recording opened in the first seconds after launch
    try:
        server.start()
        assert server.app.state.demo.traces.get(trace_id) is trace
        assert server.app.state.demo.traces.get(server.add_trace(trace)) is trace  # and after start, directly
    finally:
        server.stop()


def test_a_server_that_fails_to_build_closes_its_bound_socket(monkeypatch):
    import livefill.embedded.app

    def broken(**_kwargs):
        raise RuntimeError("no app today")

    monkeypatch.setattr(livefill.embedded.app, "build_app", broken)
    server = EmbeddedServer(warm=False)
    port = urlsplit(server.bind()).port
    with pytest.raises(RuntimeError, match="no app today"):
        server.start()
    with pytest.raises(OSError):  # refused at once, not left hanging in a backlog no one serves
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
