"""A relay served by plain uvicorn, and by `livefill-relay` (livefill.relay.serve): what holds.

Subprocess tests run the real command lines on 127.0.0.1, port 0, each wait bounded:

- `uvicorn --factory livefill.relay.app:create_relay_app` with the documented flags: the ASGI
  guard holds (401, 421, 403, 415, 413), `--limit-concurrency` answers 503 beyond the cap; a
  connection that never sends its request head stays open (uvicorn has no head deadline: the
  docs/relay.md says so, and this test keeps it honest);
- `python -m livefill.relay.serve` (livefill-relay): the same guard and cap, and a silent or
  trickling client is closed after `--head-timeout`.

In-process tests check TCP_NODELAY on the server side of each accepted connection: uvicorn's own
protocol sets it only when asyncio made the listening socket (single process, --host/--port); on a
socket bound by hand (uvicorn's --workers, livefill-server) only livefill's protocol does.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from livefill.serving.connection import GuardedH11Protocol
from livefill.relay.app import create_relay_app
from livefill.relay.serve import uvicorn_settings

ROOT = Path(__file__).resolve().parents[2]
RELAY = "/relay/v1/extract"


# --- subprocesses ---------------------------------------------------------------------------------


class _Served:
    def __init__(self, argv: list[str], pattern: str, env: dict[str, str]) -> None:
        self.token = env["LIVEFILL_RELAY_TOKEN"]
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 30
        lines = []
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            match = re.search(pattern, line)
            if match:
                self.port = int(match.group(1))
                break
        else:  # pragma: no cover
            self.stop()
            raise AssertionError(f"no listening line in {lines!r}")
        if not hasattr(self, "port"):
            self.stop()
            raise AssertionError(f"the server did not start: {''.join(lines)}")
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                status, _, _ = self.request("GET", "/nothing")
                if status:
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the server never answered")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            self.proc.wait(timeout=10)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
                host: str | None = None) -> tuple[int, dict[str, str], bytes]:
        head = {"host": host or f"127.0.0.1:{self.port}", "connection": "close", **(headers or {})}
        if body or method == "POST":
            head.setdefault("content-length", str(len(body)))
        raw = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n"
        with self.connect() as sock:
            sock.sendall(raw.encode("latin-1") + body)
            return _read_all(sock)


def _read_all(sock: socket.socket, limit: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    deadline = time.monotonic() + limit
    data = b""
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        data += chunk
        if b"\r\n\r\n" in data:
            head, _, body = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            if length and len(body) >= int(length.group(1)):
                break
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (reading whatever it sends first)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if not sock.recv(4096):
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "LIVEFILL_RELAY_TOKEN": secrets.token_urlsafe(16), "PYTHONPATH": str(ROOT)}
    env.pop("LIVEFILL_HEAD_TIMEOUT", None)
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def plain():
    served = _Served(
        [sys.executable, "-m", "uvicorn", "--factory", "livefill.relay.app:create_relay_app",
         "--host", "127.0.0.1", "--port", "0", "--limit-concurrency", "4", "--timeout-keep-alive", "2",
         "--log-level", "info", "--no-access-log"],
        r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
        _env(),
    )
    yield served
    served.stop()


@pytest.fixture(scope="module")
def launcher():
    served = _Served(
        [sys.executable, "-m", "livefill.relay.serve", "--port", "0", "--head-timeout", "0.5",
         "--max-connections", "4", "--keep-alive", "1"],
        r"livefill-relay listening on http://127\.0\.0\.1:(\d+)",
        _env(),
    )
    yield served
    served.stop()


def _guard_holds(served: _Served) -> None:
    good = {"authorization": f"Bearer {served.token}", "content-type": "application/json"}
    body = json.dumps({"scenario": "invoice"}).encode()
    assert served.request("POST", RELAY, body, {"content-type": "application/json"})[0] == 401
    assert served.request("POST", RELAY, body, good, host="evil.example")[0] == 421
    assert served.request("POST", RELAY, body, {**good, "origin": "https://evil.example"})[0] == 403
    assert served.request("POST", RELAY, body, {**good, "content-type": "text/plain"})[0] == 415
    assert served.request("POST", RELAY, b"", {**good, "content-length": str(100 * 1024 * 1024)})[0] == 413
    status, _, answer = served.request("POST", RELAY, b"[" * 100_000, good)
    assert status == 400 and json.loads(answer)["error"]["type"] == "invalid_request"
    # h11 refuses a head it still holds incomplete past 16 KB (a head that arrives whole in one
    # read, up to asyncio's 256 KB, is parsed): a 1 MB head gets 400 or a reset, never the app
    try:
        status = served.request("GET", "/anything", headers={"x-pad": "a" * 1_000_000})[0]
    except ConnectionError:
        status = 400
    assert status == 400


def _keep_alive_closes(served: _Served, seconds: float) -> None:
    with served.connect() as sock:
        sock.sendall(f"GET /anything HTTP/1.1\r\nhost: 127.0.0.1:{served.port}\r\n\r\n".encode())
        status, _, _ = _read_all(sock, limit=2.0)
        assert status == 404
        assert _closed_within(sock, seconds + 3.0)


def _cap_holds(served: _Served, cap: int) -> None:
    idle = [served.connect() for _ in range(cap)]
    try:
        time.sleep(0.2)  # let the server accept them all
        status, _, _ = served.request("GET", "/anything")
        assert status == 503
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + 5
    while served.request("GET", "/anything")[0] == 503 and time.monotonic() < deadline:
        time.sleep(0.05)  # the server sees the closes
    assert served.request("GET", "/anything")[0] == 404


@pytest.mark.slow
def test_plain_uvicorn_keeps_the_guard_and_the_connection_cap(plain):
    _guard_holds(plain)
    _cap_holds(plain, 4)
    _keep_alive_closes(plain, 2.0)


@pytest.mark.slow
def test_plain_uvicorn_has_no_request_head_deadline(plain):
    # What docs/relay.md says needs livefill-relay (or livefill-server, or a proxy): a client that
    # sends nothing keeps its connection; uvicorn's keep-alive timeout starts only after a response.
    with plain.connect() as sock:
        assert not _closed_within(sock, 3.0)


@pytest.mark.slow
def test_livefill_relay_keeps_the_guard_and_the_connection_cap(launcher):
    _guard_holds(launcher)
    _cap_holds(launcher, 4)
    _keep_alive_closes(launcher, 1.0)


@pytest.mark.slow
def test_livefill_relay_closes_a_silent_or_trickling_client(launcher, timing):
    with launcher.connect() as silent:
        assert _closed_within(silent, 5.0)
    with launcher.connect() as trickle:
        start = time.monotonic()
        head = b"POST /relay/v1/extract HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        closed = False
        for byte in head:
            try:
                trickle.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            if _closed_within(trickle, 0.1):
                closed = True
                break
        # closed before the head was whole (50 bytes at one per 100 ms or more: 5 s)
        assert closed
        timing.record("livefill-relay closing a trickling client (head timeout 0.5 s)", time.monotonic() - start, budget=5.0)


def test_livefill_relay_refuses_bad_options_before_binding():
    from livefill.relay.serve import main

    assert main(["--host", "0.0.0.0"]) == 2
    assert main(["--workers", "0"]) == 2
    assert main(["--head-timeout", "0"]) == 2


def test_livefill_relay_needs_the_token(monkeypatch, capsys):
    from livefill.relay.serve import main

    monkeypatch.delenv("LIVEFILL_RELAY_TOKEN", raising=False)
    assert main(["--port", "0"]) == 2
    assert "LIVEFILL_RELAY_TOKEN" in capsys.readouterr().err


# --- TCP_NODELAY, in process ----------------------------------------------------------------------


def _hand_bound() -> socket.socket:
    """A listening socket made the way uvicorn's --workers (and livefill-server) make it: proto 0."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


async def _nodelay_of_accepted(http: object, sock: socket.socket | None) -> int:
    app = create_relay_app(token="t")
    kwargs = {k: v for k, v in uvicorn_settings(head_timeout=5).items() if k != "http"}
    config = uvicorn.Config(app, http=http, host="127.0.0.1", port=0, log_level="warning", **kwargs)
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock] if sock is not None else None))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
            port = (sock.getsockname() if sock is not None else server.servers[0].sockets[0].getsockname())[1]
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"GET /x HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n".encode())
            await reader.readuntil(b"\r\n\r\n")
            (protocol,) = list(server.server_state.connections)
            accepted = protocol.transport.get_extra_info("socket")
            value = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()
            return value
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.mark.parametrize(
    ("http", "hand_bound", "nodelay"),
    [
        pytest.param(H11Protocol, False, True, id="uvicorn-own-socket"),
        pytest.param(H11Protocol, True, False, id="uvicorn-hand-bound-socket"),
        pytest.param(GuardedH11Protocol, True, True, id="livefill-protocol"),
    ],
)
def test_tcp_nodelay_on_accepted_connections(http, hand_bound, nodelay, monkeypatch):
    monkeypatch.setenv("LIVEFILL_HEAD_TIMEOUT", "5")  # uvicorn_settings() sets it; restored after the test
    sock = _hand_bound() if hand_bound else None
    try:
        value = asyncio.run(_nodelay_of_accepted(http, sock))
    finally:
        if sock is not None:
            sock.close()
    assert bool(value) is nodelay
