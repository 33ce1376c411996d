"""The window's two docks are hidden at launch: what they show is built when a dock is first shown or used.

A real launch (the console script's `main()` in its own process, stopped at the window's first
show) has neither imported the wire inspector's and the timeline's widgets nor built them; the
docks themselves exist (the View menu's toggles, their place under the lanes). In the window,
what a dock was told before it was built (the lanes, their recorders, a run greying the slicing
knob, the timeline's model and note) is what it shows once it is built, by the View menu's item
or by a caller asking for its contents.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget

from livefill.gui.docks import InspectorDock, TimelineDock
from tests.gui.conftest import arun

REPO = Path(__file__).resolve().parents[2]

AT_SHOW = """
import os, sys
import livefill.gui.main_window as mw
from PySide6.QtWidgets import QWidget

def show(self):
    built = sorted({{type(w).__name__ for w in self.findChildren(QWidget)}} & {{"WireInspector", "TimelineView", "InspectorBody", "TimelineBody"}})
    print("dock contents built before the show:", built, flush=True)
    print("docks:", sorted(type(d).__name__ for d in (self.inspector_dock, self.timeline_dock)), flush=True)
    heavy = ("livefill.widgets.wire_inspector", "livefill.widgets.timeline", "livefill.gui.dock_bodies")
    print("imported:", sorted(m for m in sys.modules if m.startswith(heavy)), flush=True)
    os._exit(0)

mw.MainWindow.show = show
from livefill.gui.app import main
main(["--settings-file", {settings!r}, "--history", {history!r}, *{args!r}])
"""


def _at_show(tmp_path: Path, *args: str) -> str:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(tmp_path / "data"))
    code = AT_SHOW.format(settings=str(tmp_path / "settings.ini"), history=str(tmp_path / "history.jsonl"), args=list(args))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("args", [("--compare", "naive,partial,settled"), ()], ids=["compare", "single"])
def test_a_launch_neither_imports_nor_builds_the_docks_contents_before_its_window_shows(tmp_path, args):
    out = _at_show(tmp_path, *args)
    assert "docks: ['InspectorDock', 'TimelineDock']" in out, out
    assert "dock contents built before the show: []" in out, out
    assert "imported: []" in out, out


def _built(window) -> set[str]:
    return {type(w).__name__ for w in window.findChildren(QWidget)} & {"WireInspector", "TimelineView"}


def test_the_inspector_shows_what_it_was_told_before_it_was_built(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"])
    dock = window.inspector_dock
    assert not dock.built and not window.timeline_dock.built and _built(window) == set()
    window.start()  # a run: the slicing knob is greyed, each lane's recorder handed to the dock
    assert window.active and not dock.built
    recorders = dict(dock.recorders)
    assert set(recorders) == {lane.name for lane in window.session.compare_lanes} and all(recorders.values())
    window.inspector_action.trigger()  # View → Wire inspector
    assert dock.built and dock.isVisible() and "WireInspector" in _built(window)
    assert [dock.lane_combo.itemText(i) for i in range(dock.lane_combo.count())] == [
        f"lane {i + 1}: {lane.title}" for i, lane in enumerate(window.session.compare_lanes)]
    assert dock.lane == window.session.compare_lanes[0].name
    assert dock.inspector.recorder is recorders[dock.lane]  # the first lane's wire, as if it had been built at once
    assert not dock.inspector.slicing.isEnabled()  # greyed: a run is active
    assert dock.inspector.slicing_value() == window.session.settings.slicing
    arun(qloop, window.wait_runs())
    assert dock.inspector.slicing.isEnabled()
    window.session.replace(slicing="coalesce:30")  # bound to the session once built
    assert dock.inspector.slicing_value() == "coalesce:30"


def test_the_lane_selected_before_the_inspector_is_built_follows_the_lanes(qapp):
    dock = InspectorDock()
    dock.set_lanes([("a", "lane a"), ("b", "lane b")])
    assert dock.lane == "a"
    dock.set_lanes([("b", "lane b"), ("c", "lane c")])  # "a" removed: the first lane, as the selector does
    assert not dock.built and dock.lane == "b"
    dock.set_lanes([("c", "lane c"), ("b", "lane b")])  # still there: kept
    assert not dock.built and dock.lane == "b"
    assert dock.lane_combo.currentData() == "b" and dock.built  # and so once built
    dock.deleteLater()


def test_the_timeline_shows_its_model_and_note_once_built_and_exports_unshown(make_window, qloop, tmp_path):
    window = make_window(compare=["naive", "partial"])
    window.start()
    arun(qloop, window.wait_runs())
    dock = window.timeline_dock
    assert not dock.built
    out = dock.export(tmp_path / "timeline.png")  # File → Export timeline as PNG… without the dock shown
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and dock.built and not dock.isVisible()
    assert dock.view.model is window.session.feed.model
    assert dock.note.text().startswith("Seconds from Start")


def test_a_dock_shown_the_first_time_is_built_then(qapp):
    inspector, timeline = InspectorDock(), TimelineDock()
    inspector.set_lanes([("a", "lane a"), ("b", "lane b")])
    inspector.set_busy(True)
    timeline.set_note("a note")
    assert not inspector.built and not timeline.built and inspector.lane == "a"
    inspector.show()
    timeline.show()
    assert inspector.built and timeline.built
    assert inspector.lane_combo.count() == 2 and inspector.lane == "a" and not inspector.inspector.slicing.isEnabled()
    assert timeline.note.text() == "a note"
    for dock in (inspector, timeline):
        dock.close()
        dock.deleteLater()
