"""`livefill extract` against the real llama-cpp-python server: the terminal run commits (also in
settled mode, through the relay it starts in its own process), and Ctrl-C is a real HTTP cancel
the server sees (exit status 130)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from livefill.extraction.schema import check_document
from livefill.extraction.schemas import schema_model
from tests.live.conftest import REPO

pytestmark = [pytest.mark.realserver, pytest.mark.slow]

CLI = [sys.executable, "-m", "livefill.gui.app", "extract"]
RUN_LIMIT = 240.0


def cli_env() -> dict[str, str]:
    """No key of this machine reaches the run, and no system keyring is touched."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LIVEFILL_API_KEY_")}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    return env


def extract_args(server, scenario: str) -> list[str]:
    return [
        *CLI, "--scenario", scenario, "--schema", scenario, "--provider", "openai-compatible",
        "--base-url", server.base_url, "--model", server.model, "--idle-timeout", "60",
    ]  # fmt: skip


def run_extract(server, scenario: str, *more: str) -> subprocess.CompletedProcess[str]:
    args = [*extract_args(server, scenario), *more]
    return subprocess.run(args, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=RUN_LIMIT)


@pytest.mark.parametrize("structured", ["tools", "json_object"])
def test_extract_streams_provisional_then_settled_lines_and_commits(llama_server, structured):
    result = run_extract(llama_server, "weather", "--structured", structured)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    *changes, final = [json.loads(line) for line in result.stdout.splitlines()]
    assert final["result"] == "committed", final
    check_document(schema_model("weather"), final["object"])
    city = [c for c in changes if c["pointer"] == "/city"]
    assert [c["state"] for c in city][-1] == "settled" and city[-1]["value"] == final["object"]["city"]
    assert "provisional" in [c["state"] for c in city[:-1]]  # it grew in front of the reader
    assert [c["t_ms"] for c in changes] == sorted(c["t_ms"] for c in changes)


def test_ctrl_c_exits_130_and_the_server_stops_generating(llama_server):
    finished_before = llama_server.finished_generations()
    disconnects_before = llama_server.disconnects()
    process = subprocess.Popen(
        extract_args(llama_server, "invoice"),
        cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        seen = [process.stdout.readline() for _ in range(3)]  # three changes: it is streaming
        assert all(line.startswith('{"t_ms"') for line in seen), seen
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    final = json.loads(out.splitlines()[-1])
    assert final["result"] == "stopped" and final["object"] is None, final

    llama_server.wait_for(lambda: llama_server.disconnects() > disconnects_before)
    # the stopped generation never finished: the next one (a short run) is the only one since
    follow = run_extract(llama_server, "weather")
    assert follow.returncode == 0, follow.stderr
    llama_server.wait_for(lambda: llama_server.finished_generations() >= finished_before + 1)
    assert llama_server.finished_generations() == finished_before + 1


def test_extract_in_settled_mode_reads_the_server_through_its_embedded_relay(llama_server):
    result = run_extract(llama_server, "weather", "--mode", "settled")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    *changes, final = [json.loads(line) for line in result.stdout.splitlines()]
    assert final["result"] == "committed", final
    check_document(schema_model("weather"), final["object"])
    assert [(c["pointer"], c["state"], c["value"]) for c in changes] == [("/city", "settled", final["object"]["city"])]
