"""The local servers refuse what they should, over real loopback sockets (127.0.0.1, port 0).

Each test talks raw HTTP/1.1 over a socket so that what is sent is exactly what an attacker or a
broken client would send; every wait is bounded.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from livefill.serving.connection import install_quiet_logs
from livefill.serving.guard import JSON_PATHS, GuardLimits, RefusalLog
from livefill.demo.knobs import DemoDefaults
from livefill.embedded.server import EmbeddedServer

ROOT = Path(__file__).resolve().parents[2]
PROVIDER_PATHS = sorted(JSON_PATHS - {"/relay/v1/extract"})
RELAY = "/relay/v1/extract"


@pytest.fixture(scope="module")
def server():
    srv = EmbeddedServer(defaults=DemoDefaults(speed=0, ttft_ms=0), head_timeout=0.5, max_connections=20)
    srv.start()
    yield srv
    srv.stop()


def _addr(srv: EmbeddedServer) -> tuple[str, int]:
    return "127.0.0.1", int(srv.port)


def _connect(srv: EmbeddedServer, timeout: float = 5.0) -> socket.socket:
    sock = socket.create_connection(_addr(srv), timeout=timeout)
    return sock


def _read_response(sock: socket.socket, limit: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """Read one response (Content-Length framed or until close); bounded in time."""
    deadline = time.monotonic() + limit
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response head: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if "content-length" in headers:
        need = int(headers["content-length"])
        while len(body) < need:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        body = body[:need]
    return status, headers, body


def _request(
    srv: EmbeddedServer,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    host: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    given = {"host": host or f"127.0.0.1:{srv.port}", "connection": "close", **(headers or {})}
    if method == "POST" and "transfer-encoding" not in given:
        given["content-length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in given.items()) + "\r\n"
    with _connect(srv) as sock:
        sock.sendall(head.encode() + body)
        return _read_response(sock)


def _error_type(body: bytes) -> str:
    return json.loads(body)["error"]["type"]


def _auth(srv: EmbeddedServer) -> dict[str, str]:
    return {"authorization": f"Bearer {srv.relay_token}", "content-type": "application/json"}


# --- who may talk to the servers ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/models", "/api/tags", "/_demo/requests"])
def test_a_foreign_host_is_refused_on_get(server, path):
    status, headers, body = _request(server, "GET", path, host="evil.example")
    assert status == 421
    assert headers["content-type"] == "application/json"
    assert _error_type(body) == "wrong_host"
    assert _request(server, "GET", path)[0] == 200
    assert _request(server, "GET", path, host=f"localhost:{server.port}")[0] == 200


@pytest.mark.parametrize("path", [*PROVIDER_PATHS, RELAY])
def test_a_foreign_host_is_refused_on_post(server, path):
    before = len(server.requests())
    status, _, body = _request(
        server, "POST", path, b"{}", {**_auth(server)}, host=f"evil.example:{server.port}"
    )
    assert status == 421 and _error_type(body) == "wrong_host"
    assert len(server.requests()) == before


@pytest.mark.parametrize("path", [*PROVIDER_PATHS, RELAY])
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None])
def test_a_simple_cross_origin_post_starts_no_run(server, path, content_type):
    before = len(server.requests())
    body = json.dumps({"scenario": "invoice", "provider": "anthropic", "model": "m", "messages": []}).encode()
    headers = {"authorization": f"Bearer {server.relay_token}"}
    if content_type is not None:
        headers["content-type"] = content_type
    status, _, reply = _request(server, "POST", path, body, headers)
    assert status == 415 and _error_type(reply) == "content_type"
    assert len(server.requests()) == before


@pytest.mark.parametrize("path", [*PROVIDER_PATHS, RELAY, "/v1/models"])
def test_any_origin_is_refused(server, path):
    method = "GET" if path == "/v1/models" else "POST"
    for origin in ("https://evil.example", "null", f"http://127.0.0.1:{server.port}"):
        status, _, body = _request(server, method, path, b"{}", {**_auth(server), "origin": origin})
        assert status == 403 and _error_type(body) == "origin"


def test_allowed_hosts_extend_what_a_remote_deployment_answers_to():
    with EmbeddedServer(limits=GuardLimits(allowed_hosts=frozenset({"relay.internal:8443"})), warm=False) as srv:
        assert _request(srv, "GET", "/v1/models", host="relay.internal:8443")[0] == 200
        assert _request(srv, "GET", "/v1/models", host="other.internal:8443")[0] == 421


# --- how much they take ------------------------------------------------------------------------


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("path", ["/v1/messages", RELAY])
def test_a_100_mb_body_is_refused_before_it_is_read(server, path, timing):
    rss = _rss_kb()
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\ncontent-type: application/json\r\n"
        f"authorization: Bearer {server.relay_token}\r\ncontent-length: {100 * 1024 * 1024}\r\n\r\n"
    )
    started = time.monotonic()
    with _connect(server) as sock:
        sock.sendall(head.encode())
        sent = 0
        sock.settimeout(0.2)
        try:  # keep pushing until the server has answered and closed (bounded: 100 MB, 5 s)
            chunk = b"[" * 65536
            while sent < 100 * 1024 * 1024 and time.monotonic() - started < 5:
                sent += sock.send(chunk)
        except OSError:
            pass
        status, _, body = _read_response(sock)
    took = time.monotonic() - started
    assert status == 413 and _error_type(body) == "too_large"  # answered within the 5 s of pushing
    assert _rss_kb() - rss < 20 * 1024
    timing.record(f"a 100 MB body to {path} refused", took, budget=5.0)


def test_a_chunked_body_is_cut_at_the_cap():
    limits = GuardLimits(max_body_bytes=64 * 1024)
    with EmbeddedServer(limits=limits, warm=False) as srv:
        head = (
            f"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1:{srv.port}\r\ncontent-type: application/json\r\n"
            "transfer-encoding: chunked\r\n\r\n"
        )
        with _connect(srv) as sock:
            sock.sendall(head.encode())
            piece = b"[" * 16384
            try:
                for _ in range(64):  # 1 MB offered, the cap is 64 KB
                    sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            except OSError:
                pass
            status, _, body = _read_response(sock)
        assert status == 413 and _error_type(body) == "too_large"
        assert srv.requests() == []


def test_a_slow_body_is_refused_after_the_body_timeout(timing):
    with EmbeddedServer(limits=GuardLimits(body_timeout=0.5), warm=False) as srv:
        head = (
            f"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1:{srv.port}\r\ncontent-type: application/json\r\n"
            "content-length: 1000\r\n\r\n{"
        )
        started = time.monotonic()
        with _connect(srv) as sock:
            sock.sendall(head.encode())
            status, _, body = _read_response(sock, limit=5)
        assert status == 408 and _error_type(body) == "slow_body"  # the body timeout, within the read's 5 s
        timing.record("a slow body refused (body timeout 0.5 s)", time.monotonic() - started, budget=3.0)


def test_a_slowloris_client_is_closed_within_the_head_timeout(server, timing):
    started = time.monotonic()
    head = f"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\nx-slow: {'a' * 200}\r\n\r\n".encode()
    closed_at = None
    with _connect(server) as sock:
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
                sock.settimeout(0.05)
                if sock.recv(1) == b"":
                    closed_at = time.monotonic()
                    break
            except socket.timeout:
                pass
            except OSError:
                closed_at = time.monotonic()
                break
            if time.monotonic() - started > 5:
                break
    # closed before the head was whole (230 bytes at one per 50 ms or more: 11 s) and within the
    # 5 s this client tries for, 10 times the head timeout (0.5 s)
    assert closed_at is not None, "the server kept a byte-a-time client open"
    timing.record("a byte-a-time client closed (head timeout 0.5 s)", closed_at - started, budget=1.5)


def test_a_silent_connection_is_closed_within_the_head_timeout(server, timing):
    with _connect(server) as sock:
        started = time.monotonic()
        sock.settimeout(5)  # 10 times the head timeout (0.5 s): a hang, not a slow machine
        assert sock.recv(1) == b""
        timing.record("a silent connection closed (head timeout 0.5 s)", time.monotonic() - started, budget=1.5)


def test_more_silent_connections_than_the_cap_do_not_lock_out_for_good():
    with EmbeddedServer(max_connections=20, head_timeout=30, warm=False) as srv:
        silent = [_connect(srv) for _ in range(25)]
        try:
            time.sleep(0.2)
            status, _, _ = _request(srv, "GET", "/v1/models")
            assert status in (200, 503)  # answered, not hung
            assert status == 503
        finally:
            for sock in silent:
                sock.close()
        deadline = time.monotonic() + 5
        while True:
            status = _request(srv, "GET", "/v1/models")[0]
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status == 200


# --- malformed bodies --------------------------------------------------------------------------


@pytest.mark.parametrize("path", [*PROVIDER_PATHS, RELAY, "/raw/v1/extract"])
def test_deep_nesting_is_a_400_with_a_json_error(server, path):
    status, headers, body = _request(server, "POST", path, b"[" * 100_000, _auth(server))
    assert status == 400, body[:300]
    assert headers["content-type"].startswith("application/json")
    json.loads(body)


@pytest.mark.parametrize("path", [*PROVIDER_PATHS, RELAY])
@pytest.mark.parametrize("raw", [b"", b"{", b"\xff\xfe", b'{"a": 1}]', b"nul\x00l"])
def test_every_malformed_body_is_a_400(server, path, raw):
    status, _, body = _request(server, "POST", path, raw, _auth(server))
    assert status == 400
    json.loads(body)


@pytest.mark.parametrize("field", ["tag", "slice"])
def test_control_characters_in_relay_demo_knobs_are_a_400(server, field):
    value = "a\r\nx-demo-fault: disconnect" if field == "tag" else "event\n"
    body = json.dumps({"scenario": "invoice", "provider": "anthropic", "demo": {field: value}}).encode()
    status, _, reply = _request(server, "POST", RELAY, body, _auth(server))
    assert status == 400
    assert "control characters" in json.loads(reply)["error"]["message"]


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_bearer_scheme_is_case_insensitive(server, scheme):
    body = json.dumps({"scenario": "weather", "provider": "anthropic"}).encode()
    headers = {"authorization": f"{scheme} {server.relay_token}", "content-type": "application/json"}
    status, _, _ = _request(server, "POST", RELAY, body, headers)
    assert status == 200
    bad = {"authorization": f"{scheme} wrong-token", "content-type": "application/json"}
    assert _request(server, "POST", RELAY, body, bad)[0] == 401
    basic = {"authorization": f"Basic {server.relay_token}", "content-type": "application/json"}
    assert _request(server, "POST", RELAY, body, basic)[0] == 401


# --- latency ----------------------------------------------------------------------------------


def test_keep_alive_gets_are_not_delayed_by_nagle(server, timing):
    head = f"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    with _connect(server) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(head)
        assert _read_response(sock)[0] == 200  # warm
        started = time.perf_counter()
        for _ in range(20):
            sock.sendall(head)
            assert _read_response(sock)[0] == 200
        average = (time.perf_counter() - started) / 20
    # the server's side sets TCP_NODELAY (checked in test_plain_uvicorn.py); Nagle with delayed ACKs
    # would make each GET ~40 ms
    timing.record("a keep-alive GET, average of 20", average, budget=0.010)


# --- logs -------------------------------------------------------------------------------------


def test_refusals_are_logged_once_per_interval_with_a_count(caplog):
    log = RefusalLog(interval=10.0)
    with caplog.at_level(logging.WARNING, logger="livefill.server.guard"):
        for _ in range(500):
            log.note("wrong_host", "GET /")
        log.note("origin", "GET /")
    lines = [r.getMessage() for r in caplog.records if r.name == "livefill.server.guard"]
    assert len(lines) == 2
    assert log.counts == {"wrong_host": 500, "origin": 1}


def test_a_flood_of_refusals_writes_one_line(server, caplog):
    with caplog.at_level(logging.WARNING, logger="livefill.server.guard"):
        for _ in range(30):
            _request(server, "GET", "/v1/models", host="flood.example")
    lines = [r for r in caplog.records if r.name == "livefill.server.guard" and "wrong_host" in r.getMessage()]
    assert len(lines) <= 1


def test_client_goodbyes_are_kept_out_of_the_log():
    from starlette.requests import ClientDisconnect

    class Collect(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    # a handler on each logger itself: what passes the logger's own filters, exactly once,
    # whatever propagation earlier servers' logging config left behind
    collect = Collect()
    loggers = [logging.getLogger("asyncio"), logging.getLogger("uvicorn.error")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(collect)
        lg.setLevel(logging.WARNING)
    try:
        install_quiet_logs()
        logging.getLogger("asyncio").warning("socket.send() raised exception.")
        try:
            raise ClientDisconnect()
        except ClientDisconnect:
            logging.getLogger("uvicorn.error").exception("Exception in ASGI application")
        logging.getLogger("uvicorn.error").warning("something else")
    finally:
        for lg, level in zip(loggers, levels):
            lg.removeHandler(collect)
            lg.setLevel(level)
    assert collect.messages == ["something else"]


# --- a cold server process --------------------------------------------------------------------


def _spawn(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    line = ""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(60)
    line = box[0] if box else ""
    if "listening on" not in line:
        proc.kill()
        raise AssertionError(f"no listening line: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}")
    return proc, int(line.rsplit(":", 1)[1])


class _Port:
    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.relay_token = token


@pytest.mark.slow  # a cold server subprocess
@pytest.mark.parametrize("how", ["env", "file"])
def test_the_first_relay_request_does_not_block_the_cold_server(tmp_path, how, timing):
    token = "cold-token-" + how
    if how == "env":
        proc, port = _spawn(tmp_path, env={"LIVEFILL_RELAY_TOKEN": token})
    else:
        path = tmp_path / "token"
        path.write_text(token + "\n")
        proc, port = _spawn(tmp_path, "--relay-token-file", str(path))
    try:
        srv = _Port(port, token)
        body = json.dumps({"scenario": "weather", "provider": "anthropic", "demo": {"speed": 200}}).encode()
        first: list[int] = []
        relay = threading.Thread(target=lambda: first.append(_request(srv, "POST", RELAY, body, _auth(srv))[0]))
        relay.start()
        time.sleep(0.02)
        started = time.monotonic()
        status = _request(srv, "GET", "/v1/models")[0]
        waited = time.monotonic() - started
        relay.join(30)
        assert status == 200
        assert first == [200]  # the token from the environment or file is the relay's token
        # not blocked: the first relay request's work (its imports) stays off the event loop; how
        # long the GET waited is a figure of bench_timings.py, not a test's margin
        timing.record("a GET beside the cold server's first relay request", waited, budget=0.5)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_a_deployed_relay_takes_its_allowed_hosts_from_the_environment():
    from livefill.serving.guard import limits_from_env

    limits = limits_from_env({"LIVEFILL_ALLOWED_HOSTS": "relay.example.com, relay.example.com:443", "LIVEFILL_MAX_BODY_BYTES": "1000"})
    assert limits.allowed_hosts == frozenset({"relay.example.com", "relay.example.com:443"})
    assert limits.max_body_bytes == 1000
    with EmbeddedServer(limits=GuardLimits(allowed_hosts=frozenset({"*"})), warm=False) as srv:
        assert _request(srv, "GET", "/v1/models", host="anything.example")[0] == 200
        assert _request(srv, "GET", "/v1/models", headers={"origin": "https://x.example"})[0] == 403
