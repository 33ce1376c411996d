"""The Qt-free part (livefill/) must never import Qt, qasync, gui or widgets: import every module with those blocked."""

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # subprocesses

BLOCKER = r"""
import importlib, pkgutil, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        root = name.split(".")[0]
        if root in {"PySide6", "shiboken6", "qasync"} or name.startswith(("livefill.gui", "livefill.widgets")):
            raise ImportError(f"core must not import {name}")
        return None
sys.meta_path.insert(0, Block())
import livefill
names = [m.name for m in pkgutil.walk_packages(livefill.__path__, "livefill.")
         if not m.name.startswith(("livefill.gui", "livefill.widgets", "livefill.assets"))]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_every_core_module_imports_without_qt():
    out = subprocess.run(
        [sys.executable, "-c", BLOCKER], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 3


def test_the_blocker_itself_catches_a_qt_import(tmp_path):
    script = BLOCKER.replace("import livefill\n", "import livefill\nimport PySide6\n", 1)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode != 0 and "core must not import PySide6" in out.stderr
