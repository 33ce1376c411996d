"""The `livefill` program as a user runs it: in its own process, closed mid-run, and --screenshot."""

from __future__ import annotations

import os
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
        [sys.executable, "-m", "gui.app", *args],
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
    history = (tmp_path / "data" / "livefill" / "history.jsonl").read_text(encoding="utf-8")
    assert history.count("\n") == 1
