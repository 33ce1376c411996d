"""The `livefill` program as a user runs it: in its own process, closed mid-run, and --screenshot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts the app in its own process

REPO = Path(__file__).resolve().parents[2]


def run_app(tmp_path: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        QT_QPA_PLATFORM="offscreen",
        XDG_DATA_HOME=str(tmp_path / "data"),
        LIVEFILL_REPORT="1",
        LIVEFILL_CHECK_THREADS="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "livefill.gui.app", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_closing_the_window_mid_run_exits_cleanly(tmp_path):
    proc = run_app(tmp_path, "--autostart", "--speed", "20", "--close-after", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no AsyncLibraryNotFoundError, no stray threads, no Qt noise
    assert "livefill ready in" in proc.stdout
    assert "last run: stopped" in proc.stdout
    served = [line for line in proc.stdout.splitlines() if line.startswith("server: ")]
    assert served and "disconnected=True" in served[-1]
    assert not (tmp_path / "data" / "livefill" / "history.jsonl").exists()


def test_screenshot_mode_saves_mid_and_final_pictures(tmp_path):
    out = tmp_path / "shots" / "out.png"
    proc = run_app(tmp_path, "--screenshot", str(out), "--scenario", "invoice", "--mode", "partial", "--speed", "80")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    mid = out.with_name("out-mid.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert mid.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "last run: committed" in proc.stdout
    assert not (tmp_path / "data" / "livefill" / "history.jsonl").exists()  # a check leaves no trace


HEAVY = ("anthropic", "openai", "httpx", "httpx2", "httpcore", "uvicorn", "starlette", "keyring")

SHOW_PROBE = """
import os, sys, threading
import livefill.gui.main_window as mw

def show(self):
    heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))
    print("at show:", ",".join(heavy) or "-", threading.current_thread() is threading.main_thread(), flush=True)
    os._exit(0)

mw.MainWindow.show = show
from livefill.gui.app import main
main(["--settings-file", {settings!r}])
"""


def test_the_window_is_shown_before_any_sdk_http_stack_or_server_is_imported(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    code = SHOW_PROBE.format(heavy=HEAVY, settings=str(tmp_path / "settings.ini"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert "at show: - True" in proc.stdout, proc.stdout  # nothing heavy yet, and on the GUI thread


CHANGE_AND_CLOSE = """
import sys
import livefill.gui.main_window as mw
from PySide6.QtCore import QTimer

shown = mw.MainWindow.show

def show(self):
    shown(self)
    def change_and_close():
        self.session.replace(provider="ollama")
        self.close()
    QTimer.singleShot(10, change_and_close)

mw.MainWindow.show = show
sys.argv = ["livefill", "--settings-file", {settings!r}]
import livefill.gui.app
livefill.gui.app.run()  # the console script: leaves with os._exit once main() returns
"""


def test_closing_while_the_server_still_starts_exits_at_once_and_keeps_the_settings(tmp_path):
    settings = tmp_path / "settings.ini"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"),
               LIVEFILL_REPORT="1", LIVEFILL_CHECK_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", CHANGE_AND_CLOSE.format(settings=str(settings))], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "server: still starting at close; left to the process's end" in proc.stdout
    assert "provider=ollama" in settings.read_text(encoding="utf-8")


def test_a_run_started_by_the_command_line_waits_for_the_warmup_and_the_server_is_stopped_at_close(tmp_path):
    proc = run_app(tmp_path, "--exit-after-run", "--speed", "0", "--scenario", "weather")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # LIVEFILL_CHECK_THREADS: no thread left, the server was stopped
    lines = proc.stdout.splitlines()
    assert any(line.startswith("livefill warm in") for line in lines)
    assert "last run: committed — committed" in proc.stdout


@pytest.mark.parametrize("placement", ["process", "thread"])
def test_with_the_server_in_either_place_a_run_commits_and_no_server_process_is_left(tmp_path, monkeypatch, placement):
    """The server in its own process (the default): the warm-up boots it while the SDKs import,
    the run commits through it, its request log is read over HTTP, and at close the process has
    ended (LIVEFILL_CHECK_THREADS: nothing left running in the app either). On a thread
    (LIVEFILL_DEMO_SERVER=thread) the same, with no process."""
    monkeypatch.setenv("LIVEFILL_DEMO_SERVER", placement)
    proc = run_app(tmp_path, "--exit-after-run", "--speed", "0", "--scenario", "weather")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "last run: committed — committed" in proc.stdout
    served = [line for line in proc.stdout.splitlines() if line.startswith("server: ")]
    assert served and "disconnected=False" in served[-1]  # the log, read from the other process
    assert _children_of(tmp_path) == []


@pytest.mark.parametrize("reads", [None, "inprocess", "process"])
def test_the_app_reads_its_runs_in_worker_processes_unless_told_otherwise(tmp_path, monkeypatch, reads):
    """The app's default (POSIX): once the window shows, it starts a warm worker per lane, and runs
    read in one once it is warm (the first Start, right after launch, may read in the app: then
    it does not wait; tests/session/test_run_worker.py); LIVEFILL_RUN_WORKER=process always reads
    in one, =inprocess never starts one. Every way the run commits, and no worker is left after close."""
    if reads is None:
        monkeypatch.delenv("LIVEFILL_RUN_WORKER", raising=False)
    else:
        monkeypatch.setenv("LIVEFILL_RUN_WORKER", reads)
    proc = run_app(tmp_path, "--exit-after-run", "--speed", "0", "--scenario", "invoice", "--mode", "partial")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "last run: committed — committed" in proc.stdout
    started, runs = map(int, re.findall(r"^run workers started: (\d+); runs read in one: (\d+)$", proc.stdout, re.M)[0])
    assert (started >= 1, runs) in {None: [(True, 0), (True, 1)], "inprocess": [(False, 0)], "process": [(True, 1)]}[reads]
    assert _children_of(tmp_path, b"spawn_main") == []


def _children_of(tmp_path: Path, what: bytes = b"livefill.embedded.server_child") -> list[int]:
    """The processes still running whose command line has `what` (default: the demo server's)
    that were started for the app run in `tmp_path` (its XDG_DATA_HOME is in their environment):
    other tests' processes may run meanwhile. b"spawn_main": multiprocessing's, the run workers."""
    mark = f"XDG_DATA_HOME={tmp_path / 'data'}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if what in (entry / "cmdline").read_bytes() and mark in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found
