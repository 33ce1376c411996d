"""The `livefill` program in its own process: --screenshot in compare view, and --autoplay."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from tests.gui.test_app_process import run_app

pytestmark = pytest.mark.slow  # each test starts the app in its own process

PNG = b"\x89PNG\r\n\x1a\n"


def test_screenshot_in_compare_view_saves_mid_and_final_pictures(tmp_path):
    out = tmp_path / "shots" / "compare.png"
    proc = run_app(
        tmp_path, "--screenshot", str(out), "--compare", "naive,partial,settled", "--speed", "80",
        "--show-provisional-numbers",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    mid = out.with_name("compare-mid.png")
    for picture in (mid, out):
        assert picture.read_bytes()[:8] == PNG
        assert QImage(str(picture)).width() >= 1200
    runs = [line for line in proc.stdout.splitlines() if line.startswith("last run: ")]
    assert runs == [
        "last run: committed — committed (lane naive)",
        "last run: committed — committed (lane partial)",
        "last run: committed — committed (lane settled)",
    ]
    served = [line for line in proc.stdout.splitlines() if line.startswith("server: ")]
    assert len(served) == 3 and all("disconnected=False" in line for line in served)
    tags = [line.split("tag=", 1)[1].split()[0] for line in served if "tag=run_" in line]
    assert len(tags) == 3 and len(set(tags)) == 3  # every lane, the relay lane too, tags its own request
    assert not (tmp_path / "data" / "livefill" / "history.jsonl").exists()  # compare lanes write no history


def test_bad_compare_modes_are_refused(tmp_path):
    proc = run_app(tmp_path, "--compare", "naive", "--screenshot", str(tmp_path / "x.png"), timeout=30)
    assert proc.returncode == 2 and "--compare" in proc.stderr


def test_autoplay_runs_its_cycles_and_closes_cleanly(tmp_path):
    proc = run_app(
        tmp_path, "--autoplay", "--autoplay-cycles", "2", "--autoplay-pause", "0.2", "--speed", "0",
        "--compare", "naive,settled", "--present",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # nothing left running: no stray threads, no unclosed streams
    assert "autoplay: 2 cycles" in proc.stdout
    assert proc.stdout.count("last run: committed") == 2


def test_closing_mid_autoplay_stops_every_lane_and_exits_cleanly(tmp_path):
    proc = run_app(tmp_path, "--autoplay", "--speed", "20", "--compare", "naive,partial,settled", "--close-after", "0.6")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    served = [line for line in proc.stdout.splitlines() if line.startswith("server: ")]
    assert len(served) == 3 and all("disconnected=True" in line for line in served), proc.stdout
    assert proc.stdout.count("last run: stopped") == 3
