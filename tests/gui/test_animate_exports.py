"""The exported animation tells what the window told: its colours (✓ marks, the legend) survive the
GIF's palette, and the caption's duration is the one the finished window shows."""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path

import pytest
from PIL import Image
from PySide6.QtCore import QPoint

from livefill.recording.animation import Frame, write_animation
from livefill.recording.trace import load_trace
from livefill.session.run_status import Phase
from tests.gui.conftest import arun, wait_until

REPO = Path(__file__).resolve().parents[2]
DEMO_TRACE = REPO / "docs" / "traces" / "invoice-demo.jsonl"


def _gif_frames(path: Path) -> list[Image.Image]:
    frames = []
    with Image.open(path) as gif:
        for i in range(gif.n_frames):
            gif.seek(i)
            frames.append(gif.convert("RGB"))
    return frames


def _box(widget, window, strip: int) -> tuple[int, int, int, int]:
    """`widget`'s rectangle in a `picture(window, width)` of the same width as the window."""
    top_left = widget.mapTo(window, QPoint(0, 0))
    return (top_left.x(), top_left.y() + strip, top_left.x() + widget.width(), top_left.y() + strip + widget.height())


def _core(image: Image.Image, box) -> tuple[int, int, int]:
    """The most vivid colour in `box`: a glyph's own colour, not its antialiasing nor the grey around."""
    colours = [c for _n, c in image.crop(box).getcolors(1 << 20)]
    vivid = max(colours, key=lambda c: max(c) - min(c))
    assert max(vivid) - min(vivid) >= 40, f"no colour at all in {box}"
    return vivid


def _has_near(image: Image.Image, box, colour, tolerance: int = 24) -> bool:
    return any(max(abs(a - b) for a, b in zip(c, colour)) <= tolerance for _n, c in image.crop(box).getcolors(1 << 20))


def test_a_gif_keeps_the_green_of_settled_marks_and_the_legends_colours(make_window, qloop, tmp_path):
    from livefill.gui.animate_render import picture, strip_height

    window = make_window(mode="partial")
    window.resize(1280, 860)
    window.refresh_now()
    width = window.width()
    before = picture(window, width)  # the empty form: greys and the legend

    async def go():
        window.start()
        await wait_until(lambda: not window.active and window.controller.last_status is not None
                         and window.controller.last_status.phase.final)

    arun(qloop, go())
    assert window.controller.last_status.phase is Phase.COMMITTED
    arun(qloop, asyncio.sleep(1.0))  # the "just settled" highlight has faded
    window.refresh_now()
    after = picture(window, width)
    strip = strip_height(width)
    # many grey frames and one with the marks, as a run's GIF has them: the palette must still keep the marks
    out = write_animation(tmp_path / "run.gif", [before] * 7 + [after], [Frame(i, 100.0) for i in range(8)])
    last = _gif_frames(out)[-1]

    marks = [w for w in window.findChildren(type(window.legend.markers[0]), "fieldMarker")
             if w.isVisible() and w.text() == "✓" and w.window() is window and w not in window.legend.markers]
    assert marks, "no settled ✓ mark in the form"
    for mark in marks[:6]:
        box = _box(mark, window, strip)
        green = _core(after, box)
        assert green[1] > green[0] + 40 and green[1] > green[2] + 40, f"the app's ✓ is not green: {green}"
        assert _has_near(last, box, green), f"the ✓ at {box} lost its green {green} in the GIF"

    checks = {"settled": lambda c: c[1] > c[0] + 40 and c[1] > c[2] + 40,  # green
              "provisional": lambda c: c[0] > c[2] + 80 and c[0] >= c[1],  # amber
              "pending": lambda c: c[2] > c[0] + 60,  # blue
              "invalid": lambda c: c[0] > c[1] + 80 and c[0] > c[2] + 80}  # red
    seen = set()
    for glyph in window.legend.markers:
        state = glyph.property("state")
        if glyph.property("origin") == "user" or state not in checks:
            continue
        box = _box(glyph, window, strip)
        colour = _core(after, box)
        assert checks[state](colour), f"the legend's {state} marker is not its colour in the app: {colour}"
        assert _has_near(last, box, colour), f"the legend's {state} marker lost its colour {colour} in the GIF"
        seen.add(state)
    assert seen == set(checks)


def _render(demo_server, tmp_path, monkeypatch, qloop, **view):
    """`livefill animate DEMO_TRACE` rendered in this process (as fast as possible); the report and
    the texts the finished window showed when the animation was written."""
    import livefill.gui.animate_render as render_module
    from livefill.widgets.metrics_table import MetricsTable

    windows = []
    real_window, real_write = render_module.MainWindow, render_module.write_animation

    def window_class(*args, **kwargs):
        windows.append(real_window(*args, **kwargs))
        return windows[-1]

    shown: dict[str, list[str]] = {}

    def write(*args, **kwargs):
        window = windows[-1]
        shown["status"] = [window.status_line.text()]
        tables = window.findChildren(MetricsTable)
        shown["ended"] = [t.item(t.rowCount() - 1, c).text() for t in tables if t.isVisible()
                          for c in range(t.columnCount())]
        return real_write(*args, **kwargs)

    monkeypatch.setattr(render_module, "MainWindow", window_class)
    monkeypatch.setattr(render_module, "write_animation", write)
    args = argparse.Namespace(out=tmp_path / "run.gif", compare=view.get("compare"), mode=view.get("mode", "partial"),
                              fps=10.0, width=640, render_speed=0.0)
    trace = load_trace(DEMO_TRACE)
    report = arun(qloop, render_module.render(args, trace, "invoice", demo_server, tmp_path), timeout=120)
    return report, shown


def test_the_caption_says_the_duration_the_finished_single_form_shows(demo_server, qloop, tmp_path, monkeypatch):
    report, shown = _render(demo_server, tmp_path, monkeypatch, qloop, mode="partial")
    seconds = re.search(r"\((\d+\.\d) s\)$", report.caption)
    assert seconds, report.caption
    assert "replayed as fast as possible" in report.caption  # not "1×": it was not replayed at 1×
    # the status line of the last frame ("✓ committed · … · 0.4 s") says the same time
    assert shown["status"][0].split("·")[-1].strip() == f"{seconds.group(1)} s", (report.caption, shown["status"])
    assert report.path.is_file()


def test_the_caption_says_the_duration_the_compare_lanes_end_with(demo_server, qloop, tmp_path, monkeypatch):
    report, shown = _render(demo_server, tmp_path, monkeypatch, qloop, compare=["naive", "settled"])
    duration = re.search(r"\(([\d.]+ s)\)$", report.caption)
    assert duration, report.caption
    ended = shown["ended"]
    assert len(ended) == 2 and all(e.startswith("committed (") for e in ended), ended
    slowest = max(ended, key=lambda e: float(e.split("(")[1].split()[0]))
    assert slowest == f"committed ({duration.group(1)})", (report.caption, ended)  # the last lane to end


@pytest.mark.parametrize("speed, words", [(1.0, "replayed at 1×"), (0.5, "replayed at 0.5×"), (0.0, "as fast as possible")])
def test_the_caption_names_the_replay_speed_it_was_rendered_at(speed, words):
    from livefill.gui.animate_render import caption_text

    text = caption_text(load_trace(DEMO_TRACE), "invoice", None, "partial", speed=speed, duration="8.3 s")
    assert words in text and text.endswith("(8.3 s)")


# --- File → Export animation…, greyed: it says why ------------------------------------------------


def test_a_greyed_export_animation_says_it_needs_a_recorded_run_and_the_hint_goes_when_enabled(make_window):
    window = make_window()
    export = window.animation_export
    action = export.action
    file_menu = window.menuBar().actions()[0].menu()
    assert action in file_menu.actions() and file_menu.toolTipsVisible()  # the menu shows the hint on hover

    assert not action.isEnabled()
    assert action.text() == "Export animation… (needs a recorded run)"
    for hint in (action.toolTip(), action.statusTip()):
        assert "needs a recorded run" in hint and "Record runs" in hint and "Recordings" in hint, hint

    assert window.recordings.open_trace(DEMO_TRACE)
    assert action.isEnabled()
    assert action.text() == "Export animation…"
    for hint in (action.toolTip(), action.statusTip()):
        assert "needs" not in hint and "animated GIF" in hint, hint

    window.recordings.leave()
    assert not action.isEnabled() and "needs a recorded run" in action.text()
