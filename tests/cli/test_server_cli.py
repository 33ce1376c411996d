"""`livefill-server`: its first line is the URL once it listens, and it refuses remote hosts."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx
import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # subprocesses

COMMAND = [sys.executable, "-m", "livefill.cli.server"]


def test_first_line_is_the_listening_url_and_it_serves() -> None:
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", "--relay-token", "tok"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        match = re.fullmatch(r"livefill-server listening on (http://127\.0\.0\.1:(\d+))\n", first)
        assert match, first
        assert int(match.group(2)) > 0
        # Listening by the time the line is printed: the first request succeeds.
        response = httpx.get(match.group(1) + "/_demo/scenarios", timeout=5)
        assert response.status_code == 200 and len(response.json()) == 5
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
    assert code == 0


def test_refuses_a_non_loopback_host_without_allow_remote() -> None:
    result = subprocess.run(
        [*COMMAND, "--host", "0.0.0.0", "--port", "0"], cwd=REPO, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "--allow-remote" in result.stderr and "0.0.0.0" in result.stderr


def test_loopback_names_are_accepted() -> None:
    from livefill.cli.server import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.1.2.3")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10") and not is_loopback("example.com")
