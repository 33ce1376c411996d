"""The launch's first show: the window is built before the style sheet goes on, and nothing is
collected while it is first shown.

Each probe runs the real `main()` in its own process. Building the window while the application
has a style sheet polished every widget again each time it was added to a parent (with everything
under it); the sheet now goes on once the window is built, before it is shown, and the window
looks exactly the same. The GUI thread's collector used to run a full collection (every module
imported so far) in the first event processing after the show; it now waits for the warm-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import gc, os, sys
from PySide6.QtWidgets import QApplication
import livefill.gui.main_window as mw
import livefill.gui.gui_thread_gc as gtc
import livefill.gui.launch as launch

real_init, real_show, real_start_warmup = mw.MainWindow.__init__, mw.MainWindow.show, launch.start_warmup
real_collector_init = gtc.GuiThreadCollector.__init__

def collector_init(self, parent=None, *, interval_ms=250):
    real_collector_init(self, parent, interval_ms=0)  # its timer fires on every turn of the event loop

def init(self, *args, **kwargs):
    if os.environ.get("SHEET_FIRST"):  # as the launch was before: the style sheet on, then the window built
        from livefill.gui.theme import Theme
        global first_theme
        first_theme = Theme(QApplication.instance(), kwargs["theme"])
    print("sheet while building:", bool(QApplication.instance().styleSheet()), flush=True)
    real_init(self, *args, **kwargs)

def show(self):
    print("sheet at show:", bool(QApplication.instance().styleSheet()), flush=True)
    real_show(self)
    global collections
    collections = sum(s["collections"] for s in gc.get_stats())

def start_warmup(warmup, window, collector):
    window.grab().save({picture!r})
    print("collections after show:", sum(s["collections"] for s in gc.get_stats()) - collections, flush=True)
    os._exit(0)

gtc.GuiThreadCollector.__init__ = collector_init
mw.MainWindow.__init__, mw.MainWindow.show, launch.start_warmup = init, show, start_warmup
from livefill.gui.app import main
main(["--settings-file", {settings!r}, "--history", {history!r}, *{args!r}])
"""


def probe(tmp_path: Path, *args: str, sheet_first: bool = False, picture: str = "shown.png") -> str:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    if sheet_first:
        env["SHEET_FIRST"] = "1"
    code = PROBE.format(settings=str(tmp_path / "settings.ini"), history=str(tmp_path / "history.jsonl"),
                        picture=str(tmp_path / picture), args=list(args))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_style_sheet_goes_on_after_the_window_is_built_and_before_it_shows(tmp_path):
    out = probe(tmp_path, "--compare", "naive,partial,settled", "--theme", "dark")
    assert "sheet while building: False" in out
    assert "sheet at show: True" in out


def test_nothing_is_collected_between_the_show_and_the_warm_up(tmp_path):
    out = probe(tmp_path, "--compare", "naive,partial,settled")
    assert "collections after show: 0" in out, out


def test_the_window_looks_the_same_as_one_built_under_the_style_sheet(tmp_path):
    """The window shown is pixel for pixel the one built the old way (style sheet first)."""
    from PySide6.QtGui import QImage

    for theme in ("light", "dark"):
        for args in (("--compare", "naive,partial,settled"), ()):
            options = (*args, "--theme", theme, "--scenario", "invoice")
            assert "sheet while building: True" in probe(tmp_path, *options, sheet_first=True, picture="old.png")
            probe(tmp_path, *options, picture="new.png")
            old, new = QImage(str(tmp_path / "old.png")), QImage(str(tmp_path / "new.png"))
            assert not new.isNull() and old == new, (theme, args)
