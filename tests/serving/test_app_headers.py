"""`x-livefill-record` and `x-livefill-upstream-key` belong to the app's own in-process relay only.

`livefill-server` (a real process) and `livefill-relay`'s app refuse both with a 403 naming the
header: no file or folder is written, and nothing connects to the `base_url` a key was handed for.
The app's embedded server still takes them (its relay records and forwards for a loopback peer).
Every socket is 127.0.0.1, port 0; every wait is bounded. docs/security.md says the same (read here).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from livefill.embedded.server import EmbeddedServer
from livefill.relay.app import create_relay_app
from livefill.relay.records import RECORD_HEADER, UPSTREAM_KEY_HEADER
from livefill.serving.runner import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
RELAY = "/relay/v1/extract"


def _spawn_server(env: dict[str, str], *args: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(90)
    if not box or "listening on" not in box[0]:
        proc.kill()
        raise AssertionError(f"livefill-server did not start: {box!r}")
    return proc, int(box[0].rsplit(":", 1)[1])


class _Listener:
    """A socket on 127.0.0.1 that counts who connects (the `base_url` a key would go to)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1

    def close(self) -> None:
        self.sock.close()


def _attempts(base: str, token: str, tmp_path: Path, *, record_only: bool = False) -> list[tuple[str, httpx.Response, Path, _Listener]]:
    """Send both headers to the relay at `base` (`record_only`: the record header alone); return
    what came back."""
    out = []
    target = tmp_path / "made" / "by" / "relay" / "run.trace"
    auth = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    demo = json.dumps({"scenario": "weather", "provider": "anthropic", "demo": {"speed": 0}})
    listener = _Listener()
    live = json.dumps({"scenario": "weather", "provider": "anthropic", "upstream": "live", "base_url": listener.url})
    with httpx.Client(timeout=30) as client:
        r = client.post(base + RELAY, content=demo, headers={**auth, RECORD_HEADER: quote(str(target))})
        out.append((RECORD_HEADER, r, target, listener))
        if record_only:  # (a relay that takes the key header waits on the silent listener: ~20 s)
            return out
        r = client.post(base + RELAY, content=live, headers={**auth, UPSTREAM_KEY_HEADER: "sk-ant-handed-key-0123456789"})
        out.append((UPSTREAM_KEY_HEADER, r, target, listener))
    return out


def _assert_refused(results, tmp_path: Path) -> None:
    try:
        for header, response, target, listener in results:
            assert response.status_code == 403, (header, response.status_code, response.text[:300])
            assert header in response.json()["error"]["message"]
            assert not (tmp_path / "made").exists() and not target.exists()  # nothing written, no mkdir -p
            assert listener.connections() == 0  # nothing forwarded
    finally:
        results[0][3].close()


@pytest.mark.slow  # a server subprocess
def test_livefill_server_refuses_the_app_only_headers(tmp_path):
    token = "app-headers-token-0123456789"
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    proc, port = _spawn_server({"LIVEFILL_RELAY_TOKEN": ""}, "--relay-token-file", str(token_file))
    try:
        assert token.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()  # not in `ps`
        _assert_refused(_attempts(f"http://127.0.0.1:{port}", token, tmp_path), tmp_path)
    finally:
        proc.terminate()
        proc.wait(15)


def test_livefill_relay_app_refuses_the_app_only_headers(tmp_path):
    token = "relay-app-token-0123456789"
    with LoopbackServer(lambda url: create_relay_app(token=token, demo_base_url=url), warm=False) as server:
        _assert_refused(_attempts(server.url, token, tmp_path), tmp_path)


def test_the_served_embedded_app_refuses_them_unless_it_is_the_apps(tmp_path):
    with EmbeddedServer(app_headers=False, warm=False) as server:
        _assert_refused(_attempts(server.url, server.relay_token, tmp_path), tmp_path)
    # The app's own relay still records for a loopback peer.
    with EmbeddedServer(warm=False) as server:
        ((header, response, target, listener),) = _attempts(server.url, server.relay_token, tmp_path, record_only=True)
        listener.close()
        assert response.status_code == 200 and target.exists()


def test_the_threat_model_says_so():
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `livefill-server`"))
    for header in (RECORD_HEADER, UPSTREAM_KEY_HEADER):
        assert header in row and re.search(r"403", row)
    help_text = subprocess.run(
        [sys.executable, "-m", "livefill.cli.server", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    assert "--relay-token-file" in help_text and "LIVEFILL_RELAY_TOKEN" in help_text
