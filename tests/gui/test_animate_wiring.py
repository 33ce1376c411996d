"""`livefill --replay TRACE --animate OUT.gif` and File → Export animation…: options checked up
front, the render handed to `livefill.gui.animate`, the window's export in a background process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from livefill.gui.saves import saved_note
from livefill.session.run_status import Phase
from tests.gui.conftest import arun, wait_until

REPO = Path(__file__).resolve().parents[2]
WEATHER_TRACE = REPO / "assets" / "scenarios" / "weather" / "trace-smollm2.jsonl"
DEMO_TRACE = REPO / "docs" / "traces" / "invoice-demo.jsonl"


@pytest.fixture(autouse=True)
def _data_home(tmp_path, monkeypatch):
    """The recordings folder inside the test's tmp_path (never the user's)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def _frames(path: Path) -> int:
    with Image.open(path) as image:
        assert image.format == "GIF"
        return getattr(image, "n_frames", 1)


# --- the command line -----------------------------------------------------------------------------


def _parse_error(capsys, argv: list[str]) -> str:
    from livefill.gui.app_args import parse_args

    with pytest.raises(SystemExit) as exc:
        parse_args(argv)
    assert exc.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("livefill: error:")]
    assert len(lines) == 1
    return lines[0]


def test_animate_options_are_checked_before_anything_starts(capsys, tmp_path, monkeypatch):
    assert "needs --replay" in _parse_error(capsys, ["--animate", str(tmp_path / "a.gif")])
    assert ".gif or an .mp4" in _parse_error(capsys, ["--replay", str(DEMO_TRACE), "--animate", str(tmp_path / "a.png")])
    assert "does not exist" in _parse_error(
        capsys, ["--replay", str(DEMO_TRACE), "--animate", str(tmp_path / "nowhere" / "a.gif")]
    )
    assert "go with --animate" in _parse_error(capsys, ["--replay", str(DEMO_TRACE), "--fps", "5"])
    assert "--width" in _parse_error(
        capsys, ["--replay", str(DEMO_TRACE), "--animate", str(tmp_path / "a.gif"), "--width", "50"]
    )
    assert "--fps" in _parse_error(
        capsys, ["--replay", str(DEMO_TRACE), "--animate", str(tmp_path / "a.gif"), "--fps", "0"]
    )
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # the encoder package not installed
    assert "imageio-ffmpeg" in _parse_error(capsys, ["--replay", str(DEMO_TRACE), "--animate", str(tmp_path / "a.mp4")])
    assert not any(p.suffix in {".gif", ".mp4"} for p in tmp_path.iterdir())


def test_animate_hands_the_replay_and_view_options_to_the_renderer(tmp_path, monkeypatch):
    import livefill.gui.animate
    from livefill.gui.app import main

    seen: list[list[str]] = []
    monkeypatch.setattr(livefill.gui.animate, "main", lambda argv: seen.append(list(argv)) or 0)
    out = tmp_path / "run.gif"
    code = main(["--replay", str(DEMO_TRACE), "--animate", str(out), "--compare", "naive,settled",
                 "--fps", "5", "--width", "640"])
    assert code == 0
    assert seen == [[str(DEMO_TRACE), str(out), "--mode", "partial", "--compare", "naive,settled",
                     "--fps", "5.0", "--width", "640"]]


@pytest.mark.slow
def test_replay_animate_renders_a_gif_headless_and_prints_its_path(tmp_path):
    out = tmp_path / "weather.gif"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-m", "livefill.gui.app", "--replay", str(WEATHER_TRACE), "--animate", str(out),
         "--fps", "5", "--width", "480"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert str(out) in result.stdout
    assert _frames(out) > 1
    with Image.open(out) as image:
        assert image.size[0] == 480


# --- File → Export animation… ---------------------------------------------------------------------


def test_export_is_enabled_only_with_a_trace_and_bad_paths_are_one_line(make_window, tmp_path):
    window = make_window()
    export = window.animation_export
    assert export.action in window.menuBar().actions()[0].menu().actions()
    assert not export.action.isEnabled() and export.trace_path() is None
    assert not export.export(tmp_path / "x.gif")
    assert export.last_error and "no trace" in export.last_error and "\n" not in export.last_error

    assert window.recordings.open_trace(DEMO_TRACE)
    assert export.action.isEnabled() and export.trace_path() == DEMO_TRACE.resolve()
    assert not export.export(tmp_path / "x.png")
    assert ".gif or an .mp4" in export.last_error and "\n" not in export.last_error
    assert ".gif or an .mp4" in window.statusBar().currentMessage()
    assert not export.running and not (tmp_path / "x.png").exists()

    argv = export.command(tmp_path / "x.gif")
    assert argv[:5] == ["-m", "livefill.gui.app", "animate", str(DEMO_TRACE.resolve()), str(tmp_path / "x.gif")]
    assert argv[5:] == ["--mode", "partial"]
    window.set_compare(True, ["naive", "settled"])
    assert export.command(tmp_path / "x.gif")[5:] == ["--compare", "naive,settled"]

    window.recordings.leave()
    assert not export.action.isEnabled()


def test_export_follows_the_last_recorded_run(make_window, qloop, tmp_path):
    window = make_window(speed=0)
    export = window.animation_export
    window.recordings.record(str(tmp_path / "mine.jsonl"))

    async def go():
        window.start()
        await wait_until(lambda: not window.active and window.controller.last_status is not None
                         and window.controller.last_status.phase.final)

    arun(qloop, go())
    assert window.controller.last_status.phase is Phase.COMMITTED
    assert export.trace_path() == (tmp_path / "mine.jsonl").resolve()
    export.update_enabled()
    assert export.action.isEnabled()


def test_an_export_in_progress_can_be_cancelled(make_window, qloop, tmp_path):
    window = make_window()
    export = window.animation_export
    assert window.recordings.open_trace(DEMO_TRACE)
    ended: list[tuple[bool, str]] = []
    export.finished.connect(lambda ok, text: ended.append((ok, text)))
    out = tmp_path / "never.gif"
    assert export.export(out)
    assert not export.export(tmp_path / "second.gif") and "already rendering" in export.last_error

    async def go():
        await asyncio.sleep(0.2)
        export.cancel()
        await wait_until(lambda: bool(ended), timeout=10)

    arun(qloop, go())
    assert ended == [(False, "cancelled")]
    assert not export.running and export.action.isEnabled() and not out.exists()
    assert "cancelled" in window.statusBar().currentMessage()


@pytest.mark.slow
def test_export_renders_in_the_background_and_offers_the_folder(make_window, qloop, tmp_path):
    window = make_window()
    export = window.animation_export
    assert window.recordings.open_trace(WEATHER_TRACE)
    out = tmp_path / "export.gif"
    ended: list[tuple[bool, str]] = []
    export.finished.connect(lambda ok, text: ended.append((ok, text)))
    ticks = []

    async def go():
        assert export.export(out)
        assert export.running and not export.action.isEnabled()
        assert "rendering animation…" in window.statusBar().currentMessage()
        while not ended:  # the window's loop keeps turning while the render runs
            ticks.append(1)
            await asyncio.sleep(0.05)
            assert len(ticks) < 4000, "export did not finish"

    arun(qloop, go(), timeout=240)
    assert ended == [(True, str(out.resolve()))], export.last_error
    assert len(ticks) > 10  # the loop ran many times during the render: the window stayed responsive
    assert _frames(out) > 1
    note = saved_note(window)
    assert str(out.resolve()) in note.text() and note.isVisible()  # with an open-folder link
    assert export.open_button.isVisibleTo(window)
    assert not export.running and export.action.isEnabled()
