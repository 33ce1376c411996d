"""A real OpenAI-compatible model server for the tests marked `realserver`.

`llama_server` (one per session) starts llama-cpp-python's server on a free loopback port with
SmolLM2-135M-Instruct, waits until `GET /v1/models` answers, and stops it at the end of the
session. Its output (uvicorn's access log, "Disconnected from client", llama.cpp's per-generation
`llama_perf_context_print` lines) goes to one log file the tests read to see what the server did.

`scripts/install-llama-server.sh` installs the package and the model; the model file is
`$LIVEFILL_LLAMA_MODEL`, else `SmolLM2-135M-Instruct.Q4_1.gguf` in `$LIVEFILL_MODEL_CACHE`
(default ~/.cache/livefill/models). When either is missing a developer's run skips these tests
with one reason that says how to get them; in CI (`CI=true`) the same reason fails them, so a
broken install step cannot pass unnoticed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "scripts" / "llama_server.py"
INSTALLER = "scripts/install-llama-server.sh"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
READY_LIMIT = 120.0  # seconds for the server to load the model and answer /v1/models
FINISHED_GENERATION = re.compile(r"llama_perf_context_print:\s+eval time")
DISCONNECTED = "Disconnected from client"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def model_path() -> Path:
    explicit = os.environ.get("LIVEFILL_LLAMA_MODEL", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("LIVEFILL_MODEL_CACHE", "").strip() or "~/.cache/livefill/models"
    return Path(cache).expanduser() / MODEL_FILE


def missing_reason() -> str | None:
    """Why the real server cannot run here, or None."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("sse_starlette") is None:
        return f"llama-cpp-python[server] is not installed (run {INSTALLER})"
    model = model_path()
    if not model.is_file():
        return f"no model file at {model} (run {INSTALLER}, or set LIVEFILL_LLAMA_MODEL)"
    return None


def unavailable(reason: str) -> None:
    """Skip outside CI; fail in CI."""
    if in_ci():
        pytest.fail(f"real model server unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"real model server unavailable: {reason}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True, slots=True)
class LlamaServer:
    """A running llama-cpp-python server: `base_url` ends in /v1; `log` is its output file."""

    base_url: str
    model: str
    log: Path
    pid: int

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def finished_generations(self) -> int:
        """Generations that ran to their end (llama.cpp prints one `eval time` line for each)."""
        return len(FINISHED_GENERATION.findall(self.log_text()))

    def disconnects(self) -> int:
        """Streams the client closed before their end."""
        return self.log_text().count(DISCONNECTED)

    def wait_for(self, condition: Callable[[], bool], limit: float = 30.0) -> None:
        """Wait until `condition()` holds (the server writes its log from another process)."""
        deadline = time.monotonic() + limit
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"the llama server's log did not show it within {limit:g} s:\n"
                                     + self.log_text()[-2000:])
            time.sleep(0.05)


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise RuntimeError(f"the llama server exited with status {process.returncode} while starting:\n{tail}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the llama server did not answer {url} within {READY_LIMIT:g} s")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory):
    reason = missing_reason()
    if reason is not None:
        unavailable(reason)
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        sys.executable, str(LAUNCHER),
        "--model", str(model_path()), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", "1", "--interrupt_requests", "False",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # log lines in the order they happened
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    try:
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(process, base + "/v1/models", log)
        except RuntimeError as exc:  # installed but broken: a failure everywhere, not a skip
            pytest.fail(str(exc), pytrace=False)
        yield LlamaServer(base_url=base + "/v1", model=MODEL_ALIAS, log=log, pid=process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
