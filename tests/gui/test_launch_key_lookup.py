"""What a compare launch leaves until after its window is shown: the key lookup, the relay's models.

The Lanes menu's "live providers you have keys for" looks the keys up in the system keyring
(importing keyring, choosing its backend: hundreds of ms in a thread that competed with the GUI
thread while the window was built). Launched in the compare view, the real app asks for no lookup
before its window is shown; the window asks once the warm-up has chosen the keyring's backend.
Nor has it imported keyring, the relay's pydantic models (livefill.relay.*: a settled or hybrid
run's request, loaded by the warm-up with the relay client) or the provider SDKs by then. And a
window opened in the compare view builds the single form only when it is first shown.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from livefill.gui.compare_presets import NO_KEYS, PresetButton
from livefill.gui.warmup import Warmup
from tests.gui.conftest import arun, wait_until
from tests.gui.test_compare_lanes import null_keys

REPO = Path(__file__).resolve().parents[2]

AT_SHOW = """
import os, sys
import livefill.gui.compare_presets as cp
import livefill.gui.main_window as mw

asked = []
real_check = cp.PresetButton.check_live_keys
def check(self):
    asked.append(1)
    real_check(self)
cp.PresetButton.check_live_keys = check

def show(self):
    print("compare view built:", self.compare_view is not None, flush=True)
    print("key lookups asked before the show:", len(asked), flush=True)
    early = ("keyring", "livefill.relay", "anthropic", "openai", "httpx", "uvicorn")
    print("imported:", sorted(m for m in sys.modules if m.split(".")[0] in early or m.startswith("livefill.relay")), flush=True)
    os._exit(0)

mw.MainWindow.show = show
from livefill.gui.app import main
main(["--settings-file", {settings!r}, "--history", {history!r}, "--compare", "naive,partial,settled"])
"""


@pytest.mark.slow
def test_a_compare_launch_looks_for_no_key_before_its_window_is_shown(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    code = AT_SHOW.format(settings=str(tmp_path / "settings.ini"), history=str(tmp_path / "history.jsonl"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert "compare view built: True" in proc.stdout, proc.stdout
    assert "key lookups asked before the show: 0" in proc.stdout, proc.stdout
    assert "imported: []" in proc.stdout, proc.stdout


def test_the_window_looks_for_keys_once_the_warmup_is_idle(make_window, qloop, monkeypatch):
    asked: list[PresetButton] = []
    real_check = PresetButton.check_live_keys
    monkeypatch.setattr(PresetButton, "check_live_keys", lambda self: (asked.append(self), real_check(self)))
    chosen: list[str] = []
    warmup = Warmup(lambda: None, after=(lambda: chosen.append("keyring"),), planned=True)
    window = make_window(keys=null_keys())
    window.warmup = warmup  # the app's (livefill.gui.launch gives it to the window as it is made)
    window.set_compare(True, ["naive", "partial"])
    button = window.compare_view.preset_button
    assert asked == [] and button.live_lanes is None  # built, shown: no lookup yet
    assert button.live_action().toolTip() == "Looking for your keys…" and not button.live_action().isEnabled()
    warmup.on_after = window.views.look_for_keys  # as livefill.gui.launch.start_warmup does
    warmup.start(qloop)
    arun(qloop, wait_until(lambda: button.live_lanes is not None))
    assert chosen == ["keyring"] and asked == [button] and warmup.idle
    assert button.live_action().toolTip() == NO_KEYS


def test_a_compare_view_made_after_the_warmup_looks_at_once(make_window, qloop):
    window = make_window(keys=null_keys())  # a Warmup never started: idle
    window.set_compare(True, ["naive", "partial"])
    button = window.compare_view.preset_button
    arun(qloop, wait_until(lambda: button.live_lanes is not None))
    assert button.live_action().toolTip() == NO_KEYS


def test_a_window_opened_in_the_compare_view_builds_the_single_form_when_it_is_first_shown(make_window):
    from livefill.widgets.form_view import FormView

    window = make_window(compare=["naive", "partial", "settled"])
    assert window.single_view.form_view is None and window.single_view.form_deferred
    assert len(window.findChildren(FormView)) == 3  # the three lanes' forms only
    window.set_compare(False)
    view = window.single_view.form_view
    assert view is not None and view.isVisible() and window.body.stack.currentWidget() is window.body.form_holder
    assert len(window.findChildren(FormView)) == 4 and set(view.fields) == set(window.compare_view.lanes[0].form_view.fields)
    window.set_compare(True)  # and back: the lanes kept, nothing built again
    assert window.single_view.form_view is view and len(window.findChildren(FormView)) == 4


def test_a_window_opened_in_the_single_view_builds_its_form_at_once(make_window):
    window = make_window()
    assert window.single_view.form_view is not None and window.compare_view is None
