"""The real program, a Start pressed right after its window shows (issue 26 item 5): taken at once
while the demo provider and the SDKs still load, and the run begins once they are up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts the app in its own process

REPO = Path(__file__).resolve().parents[2]

PRESS_START = """
import livefill.gui.main_window as mw
from PySide6.QtCore import QTimer

shown = mw.MainWindow.show

def show(self):
    shown(self)
    def press():
        self.start_button.click()
        print("warm-up done when pressed:", self.warmup.ready, flush=True)
        print("taken:", not self.start_button.isEnabled(), self.stop_button.isEnabled(), repr(self.status_line.text()),
              flush=True)
    QTimer.singleShot({delay_ms}, press)
    self.runsFinished.connect(self.close)

mw.MainWindow.show = show
from livefill.gui.app import main
main(["--settings-file", {settings!r}, "--history", {history!r}, "--scenario", "weather", "--speed", "0"])
"""


@pytest.mark.parametrize("delay_ms", [0, 100], ids=["before-the-warmup-starts", "while-it-runs"])
def test_a_start_pressed_right_after_launch_is_taken_at_once_and_then_runs(tmp_path, delay_ms):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"), LIVEFILL_REPORT="1")
    code = PRESS_START.format(delay_ms=delay_ms, settings=str(tmp_path / "settings.ini"),
                              history=str(tmp_path / "history.jsonl"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "warm-up done when pressed: False" in out, out  # pressed while the providers still loaded
    assert "taken: True True '⇄ starting…'" in out, out  # Start greyed, Stop pressable, said at once
    assert "last run: committed" in out, out  # and it ran once they were up
