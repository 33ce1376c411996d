"""PySide6's import hook checks each newly imported module for "PySide6" from its file's bytes.

PySide6 replaces `__import__` and, for each module named in an import after it is loaded, reads the
module's whole source through `inspect.getsource` (its lines then kept in `linecache` for good):
~70 ms of the GUI thread before a compare launch's first show, and ~3,400 modules in the warm-up.
`livefill.gui.qt_app` makes the check read the file's bytes instead: the same answer, and nothing
kept. A real launch stopped at its first show has put (almost) no source into `linecache` (309
files on c4a662c).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import livefill.gui.qt_app as qt_app

REPO = Path(__file__).resolve().parents[2]

AT_SHOW = """
import linecache, os, sys
import livefill.gui.launch  # first, as the console script imports it
import livefill.gui.main_window as mw

def show(self):
    feature = sys.modules["shibokensupport.feature"]
    print("checked:", len(feature.pyside_feature_dict), flush=True)
    print("sources kept:", len(linecache.cache), flush=True)
    os._exit(0)

mw.MainWindow.show = show
from livefill.gui.app import main
main(["--settings-file", {settings!r}, "--history", {history!r}, "--compare", "naive,partial,settled"])
"""


@pytest.mark.slow
def test_a_launch_keeps_no_module_source_by_its_first_show(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    code = AT_SHOW.format(settings=str(tmp_path / "settings.ini"), history=str(tmp_path / "history.jsonl"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    assert int(lines["checked"]) > 150, proc.stdout  # the hook still sees every module
    assert int(lines["sources kept"]) < 20, proc.stdout  # (309 on c4a662c: each read through inspect.getsource)


def test_the_check_gives_pysides_own_answer_for_every_module_loaded():
    feature = sys.modules["shibokensupport.feature"]
    assert qt_app.lighten_import_hook()  # (done when qt_app was imported; again is harmless)
    check = feature._mod_uses_pyside  # noqa: SLF001
    original = check.original
    assert not hasattr(original, "original")  # wrapped once, however often it is called
    modules = [m for name, m in sorted(sys.modules.items()) if name.startswith(("livefill", "json", "email", "pydantic", "PySide6"))]
    answers = {m.__name__: check(m) for m in modules}
    assert answers == {m.__name__: original(m) for m in modules}
    assert answers["livefill.gui.qt_app"] is True and answers["livefill.errors"] is False


def test_lightening_is_a_no_op_without_pysides_support_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "shibokensupport.feature")
    assert qt_app.lighten_import_hook() is False
