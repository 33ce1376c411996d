"""`livefill --screenshot` is a pre-flight check: it leaves no trace in the user's files (issue 26,
item 11: "--screenshot writes to the user's real history file")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from livefill.gui.app_args import ReadOnlyStore, keeps_history, parse_args, preflight_store
from livefill.session.app_settings import MemoryStore

REPO = Path(__file__).resolve().parents[2]

SETTINGS = "[run]\nprovider=anthropic\n\n[document]\nscenario=invoice\n\n[window]\ntheme=light\n"
HISTORY = '{"run": "run_old", "at": "2026-01-01T10:00:00+0000", "extraction": {"customer_name": "Old"}}\n'


def files(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow  # the app in its own process
@pytest.mark.parametrize(("options", "code"), [
    # a scenario and a theme other than the remembered ones
    (("--scenario", "weather", "--theme", "dark", "--speed", "0"), 0),
    # a live provider's address and model, which a launch remembers (here nothing listens: the run fails)
    (("--live", "--provider", "openai-compatible", "--base-url", "http://127.0.0.1:9/v1", "--model", "smollm2",
      "--structured", "json_object"), 1),
], ids=["demo", "live"])
def test_a_screenshot_writes_nothing_but_its_pictures(tmp_path, options, code):
    home = tmp_path / "home"
    xdg = {name: home / sub for name, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                                              ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache"))}
    settings = xdg["XDG_CONFIG_HOME"] / "livefill" / "livefill.ini"
    history = xdg["XDG_DATA_HOME"] / "livefill" / "history.jsonl"
    for path, text in ((settings, SETTINGS), (history, HISTORY)):
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    xdg["XDG_CACHE_HOME"].mkdir(parents=True)
    before = files(home)
    out = tmp_path / "shots" / "check.png"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "LIVEFILL_"))}
    env.update({k: str(v) for k, v in xdg.items()}, HOME=str(home), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(
        [sys.executable, "-m", "livefill.gui.app", "--screenshot", str(out), *options],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert out.exists() and out.with_name("check-mid.png").exists()
    after = files(home)
    assert after == before, {name: after.get(name, (b"(gone)",))[0][:200] for name in set(after) ^ set(before) | {
        n for n in set(after) & set(before) if after[n] != before[n]}}


def test_a_screenshot_reads_the_remembered_settings_and_keeps_changes_in_memory():
    args = parse_args(["--screenshot", "/tmp/x.png"])
    real = MemoryStore({"document/scenario": "ticket"})
    store = preflight_store(args, real)
    assert isinstance(store, ReadOnlyStore) and store.value("document/scenario") == "ticket"
    store.set_value("document/scenario", "weather")
    store.remove("window/theme")
    store.sync()
    assert store.value("document/scenario") == "weather" and store.value("window/theme") is None
    assert real.values == {"document/scenario": "ticket"}
    assert not keeps_history(args)
    # files named on the command line are the user's choice: written as asked
    named = parse_args(["--screenshot", "/tmp/x.png", "--settings-file", "/tmp/s.ini", "--history", "/tmp/h.jsonl"])
    assert preflight_store(named, real) is real and keeps_history(named)
    plain = parse_args([])
    assert preflight_store(plain, real) is real and keeps_history(plain)
