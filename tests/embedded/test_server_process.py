"""The embedded server in a process of its own (the app's unless LIVEFILL_DEMO_SERVER=thread): it serves the demo
provider and the app's relay on the port bound before it started, the app's runs commit and stop
through it as through the in-process server, and it never outlives its parent."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from livefill.embedded.client import app_server, demo_request_entry, demo_requests
from livefill.embedded.server import EmbeddedServer
from livefill.embedded.server_process import ServerProcess
from livefill.session.run import Run
from livefill.session.run_status import Phase
from tests.session.test_run_demo import config, primed_form

pytestmark = [
    pytest.mark.slow,  # each test starts a server process (a few seconds of imports)
    pytest.mark.skipif(sys.platform == "win32", reason="the child inherits the socket by descriptor (POSIX)"),
]


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(scope="module")
def served():
    server = ServerProcess()
    server.start()
    yield server
    server.stop()


def test_the_url_is_known_at_bind_and_the_child_answers_there(served):
    assert served.bind() == served.url and served.running
    assert httpx.get(f"{served.url}/_demo/scenarios", timeout=10).status_code == 200
    refused = httpx.post(f"{served.url}/relay/v1/extract", json={}, timeout=10)  # no bearer token
    assert refused.status_code == 401


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_a_run_commits_through_it_and_its_request_log_says_so(served, mode):
    form = primed_form()
    status = await Run(form, config(served, mode, speed=0)).run()
    assert status.phase is Phase.COMMITTED, status.reason
    entry = await demo_request_entry(served.url, since=status.started_at - 0.5, run_id=status.run_id)
    assert entry is not None and entry["finished"] and entry["tokens_sent"] == entry["tokens_total"]
    assert any(e.get("tag") == status.run_id for e in await demo_requests(served.url))


async def test_stop_is_a_real_cancel_the_child_sees(served):
    form = primed_form()
    before = form.committed
    run = Run(form, config(served, "partial", speed=100))
    task = asyncio.ensure_future(run.run())
    deadline = asyncio.get_running_loop().time() + 30
    while run.status.tokens_received < 5 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert run.stop()
    status = await task
    assert status.phase is Phase.STOPPED and form.committed == before and form.document == before
    entry = await demo_request_entry(served.url, since=status.started_at - 0.5, run_id=status.run_id)
    assert entry["disconnected"] and entry["tokens_sent"] < entry["tokens_total"]


def test_stop_ends_the_child_and_frees_the_port():
    server = ServerProcess()
    url = server.bind()
    server.spawn()  # the warm-up's order: spawn, import the SDKs, then wait
    assert server.start() == url
    pid = server.pid
    assert pid is not None
    server.stop()
    assert _gone(pid) and not server.running
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe, pytest.raises(OSError):
        probe.settimeout(2)
        probe.connect(("127.0.0.1", port))
    server.stop()  # idempotent


def test_the_child_leaves_when_its_parent_is_gone():
    """Its standard input ends when the parent dies (killed included): a parent that is killed
    with the child serving leaves no server behind."""
    parent = subprocess.Popen(
        [sys.executable, "-c", "from livefill.embedded.server_process import ServerProcess\n"
         "import sys, time\ns = ServerProcess(); s.start(); print(s.pid, flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        child = int(parent.stdout.readline())
        os.kill(child, 0)  # serving
    finally:
        parent.kill()
        parent.wait()
    assert _gone(child), "the server's process outlived its killed parent"


def test_a_parent_gone_before_the_child_is_ready_leaves_no_server_and_no_noise():
    """The app closed while its server still started: the child finds no one to say "ready" to,
    and leaves quietly (its stderr is the app's)."""
    parent = subprocess.Popen(
        [sys.executable, "-c", "from livefill.embedded.server_process import ServerProcess\n"
         "s = ServerProcess(); s.spawn(); print(s.pid, flush=True)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    out, err = parent.communicate(timeout=120)  # the child holds the stderr pipe until it has left
    assert err == ""
    assert _gone(int(out))


@pytest.mark.parametrize("says, shown", [("failed: OSError: no room\n", "OSError: no room"), ("", "it ended before it was ready")])
def test_a_child_that_cannot_serve_says_why_and_start_raises(monkeypatch, tmp_path, says, shown):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nprintf '{says}'\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))  # the child: one that fails as it starts
    server = ServerProcess()
    with pytest.raises(RuntimeError, match=f"did not start: {shown}"):
        server.start()
    assert not server.running
    with pytest.raises(Exception, match="cannot be restarted"):
        server.start()


def test_the_app_serves_from_a_process_of_its_own_unless_told_to_use_a_thread(monkeypatch):
    monkeypatch.delenv("LIVEFILL_DEMO_SERVER", raising=False)
    chosen = app_server()
    assert isinstance(chosen, ServerProcess) and chosen.url is None  # not started: the warm-up starts it
    monkeypatch.setenv("LIVEFILL_DEMO_SERVER", "thread")
    assert isinstance(app_server(), EmbeddedServer)
    monkeypatch.delenv("LIVEFILL_DEMO_SERVER")
    monkeypatch.setattr(ServerProcess, "supported", staticmethod(lambda: False))  # Windows: no descriptor to hand over
    assert isinstance(app_server(), EmbeddedServer)
