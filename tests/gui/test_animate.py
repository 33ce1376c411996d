"""`livefill animate`: the frame schedule on the recorded clock, the GIF written, the command's errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from livefill.recording.animation import (
    CaptureKeeper,
    Frame,
    ReadClock,
    check_output,
    frame_schedule,
    write_animation,
    write_gif,
)
from livefill.errors import UsageError
from livefill.recording.trace import TraceRead, load_trace

REPO = Path(__file__).resolve().parents[2]
DEMO_TRACE = REPO / "docs" / "traces" / "invoice-demo.jsonl"


def solid(colour: str, size=(40, 30)) -> Image.Image:
    return Image.new("RGB", size, colour)


# --- the recorded clock ---------------------------------------------------------------------------


def test_bytes_received_map_to_the_recorded_read_that_held_the_last_one():
    clock = ReadClock([TraceRead(10.0, b"abc"), TraceRead(15.0, b""), TraceRead(20.0, b"de"), TraceRead(35.0, b"fghi")])
    assert clock.total == 9
    assert clock.time_at(0) is None
    assert [clock.time_at(n) for n in (1, 3, 4, 5, 6, 9)] == [10.0, 10.0, 20.0, 20.0, 35.0, 35.0]
    assert clock.time_at(500) == 35.0  # past the end: the last read


def test_each_frame_shows_the_latest_capture_at_or_before_its_time_and_runs_are_merged():
    # frames at 0, 100, ..., 500 ms; capture 1 (150) is replaced by capture 2 (160) before frame 200
    frames = frame_schedule([0.0, 150.0, 160.0, 420.0], fps=10, end_ms=420.0)
    assert frames == [Frame(0, 200.0), Frame(2, 300.0), Frame(3, 100.0)]
    assert sum(f.duration_ms for f in frames) == pytest.approx(600.0)


def test_the_schedule_does_not_depend_on_how_long_rendering_took_only_on_recorded_times():
    times = [0.0, 1000.0, 2500.0, 4000.0]
    frames = frame_schedule(times, fps=4, end_ms=4000.0)
    assert [f.capture for f in frames] == [0, 1, 2, 3]
    assert [f.duration_ms for f in frames] == [1000.0, 1500.0, 1500.0, 250.0]


def test_a_final_capture_is_held_after_the_clocked_frames():
    frames = frame_schedule([0.0, 90.0, 90.0], fps=10, end_ms=90.0, hold_ms=2000.0, final=2)
    assert frames == [Frame(0, 100.0), Frame(1, 100.0), Frame(2, 2000.0)]


def test_a_schedule_refuses_a_bad_rate_and_times_going_back():
    with pytest.raises(ValueError, match="frame rate"):
        frame_schedule([0.0], fps=0)
    with pytest.raises(ValueError, match="backwards"):
        frame_schedule([0.0, 200.0, 100.0], fps=10)


def test_the_keeper_drops_identical_pictures_and_keeps_the_last_capture_of_a_frame_interval():
    keep = CaptureKeeper(fps=10)
    keep.add(0.0, solid("white"))
    keep.add(40.0, solid("white"))  # the same picture: nothing new
    keep.add(120.0, solid("red"))
    keep.add(180.0, solid("blue"))  # the same interval (100, 200]: only the later one can show
    keep.add(250.0, solid("green"))
    assert [c.t_ms for c in keep.captures] == [0.0, 180.0, 250.0]
    assert keep.captures[1].picture.getpixel((0, 0)) == (0, 0, 255)
    assert keep.offered == 5


# --- the files -------------------------------------------------------------------------------------


def test_a_gif_has_every_frame_with_its_duration_and_one_palette(tmp_path):
    pictures = [solid("white"), solid("#ff8800"), solid("#0044cc")]
    frames = [Frame(0, 300.0), Frame(1, 500.0), Frame(2, 2000.0)]
    out = write_gif(tmp_path / "a.gif", pictures, frames)
    with Image.open(out) as gif:
        assert gif.n_frames == 3 and gif.size == (40, 30)
        durations = []
        colours = []
        for i in range(gif.n_frames):
            gif.seek(i)
            durations.append(gif.info["duration"])
            colours.append(gif.convert("RGB").getpixel((5, 5)))
    assert durations == [300, 500, 2000]
    assert colours == [(255, 255, 255), (255, 136, 0), (0, 68, 204)]


def test_an_export_stopped_half_way_leaves_the_file_that_was_there(tmp_path, monkeypatch):
    import livefill.recording.animation as animation

    out = tmp_path / "demo.gif"
    out.write_bytes(b"the user's earlier export")
    real = animation.write_gif

    def torn(path, pictures, frames):  # writes part of a file, then the export is stopped
        Path(path).write_bytes(b"GIF89a half")
        raise KeyboardInterrupt

    monkeypatch.setattr(animation, "write_gif", torn)
    with pytest.raises(KeyboardInterrupt):
        write_animation(out, [solid("white")], [Frame(0, 100.0)])
    assert out.read_bytes() == b"the user's earlier export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.gif"]  # no partial file left behind

    monkeypatch.setattr(animation, "write_gif", real)
    assert write_animation(out, [solid("white"), solid("black")], [Frame(0, 100.0), Frame(1, 100.0)]) == out
    with Image.open(out) as gif:
        assert gif.n_frames == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.gif"]


def test_only_gif_and_mp4_are_accepted(tmp_path):
    with pytest.raises(UsageError, match=r"\.gif or an \.mp4"):
        check_output(tmp_path / "out.png")
    with pytest.raises(UsageError, match="does not exist"):
        check_output(tmp_path / "missing" / "out.gif")
    assert check_output(tmp_path / "out.GIF") == tmp_path / "out.GIF"


def test_mp4_without_imageio_ffmpeg_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails as if not installed
    with pytest.raises(UsageError, match="imageio-ffmpeg"):
        check_output(tmp_path / "out.mp4")
    with pytest.raises(UsageError, match="imageio-ffmpeg"):
        write_animation(tmp_path / "out.mp4", [solid("white")], [Frame(0, 100.0)])
    assert not (tmp_path / "out.mp4").exists()


# --- the command -----------------------------------------------------------------------------------


def _one_line_exit_2(capsys, argv, *expected):
    from livefill.gui.app import main

    assert main(["animate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("livefill animate: "), err
    for text in expected:
        assert text in err, err
    return err


def test_a_bad_trace_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "livefill", "version": 99}\n', encoding="utf-8")
    _one_line_exit_2(capsys, [str(bad), str(tmp_path / "out.gif")], "bad.jsonl")
    _one_line_exit_2(capsys, [str(tmp_path / "none.jsonl"), str(tmp_path / "out.gif")], "none.jsonl")
    assert not (tmp_path / "out.gif").exists()


def test_a_trace_with_no_response_bytes_is_one_line_and_exit_2(tmp_path, capsys):
    lines = DEMO_TRACE.read_text(encoding="utf-8").splitlines()
    empty = tmp_path / "empty.jsonl"
    empty.write_text(lines[0] + "\n" + lines[-1] + "\n", encoding="utf-8")  # header and trailer only
    _one_line_exit_2(capsys, [str(empty), str(tmp_path / "out.gif")], "nothing to animate")


def test_mp4_without_the_encoder_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    _one_line_exit_2(capsys, [str(DEMO_TRACE), str(tmp_path / "out.mp4")], "imageio-ffmpeg")


def test_the_committed_demo_trace_loads_and_lasts_several_seconds():
    trace = load_trace(DEMO_TRACE)
    assert trace.end == "complete" and not trace.truncated
    assert trace.header.get("schema_name") == "invoice"
    assert 5000 < trace.duration_ms < 15000
    assert len(trace.reads) > 20


@pytest.mark.slow
def test_a_rendered_compare_gif_plays_at_the_recorded_speed_with_a_caption(tmp_path):
    out = tmp_path / "compare.gif"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-m", "livefill.gui.app", "animate", str(DEMO_TRACE), str(out),
         "--compare", "naive,partial,settled", "--width", "800", "--fps", "10"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout
    trace = load_trace(DEMO_TRACE)
    with Image.open(out) as gif:
        assert gif.size[0] == 800
        assert gif.n_frames > 10
        total = 0
        for i in range(gif.n_frames):
            gif.seek(i)
            total += gif.info["duration"]
        gif.seek(gif.n_frames - 1)
        hold = gif.info["duration"]
        gif.seek(0)
        first = gif.convert("RGB")
    assert hold >= 2000  # the finished window (the metrics table) stays; Pillow merges an identical frame into it
    assert total - 2000 == pytest.approx(trace.duration_ms, rel=0.10)
    # the caption strip: a dark band across the top with light text in it
    band = [first.getpixel((x, 3)) for x in range(0, 800, 8)]
    assert all(p == (31, 41, 55) for p in band), band[:5]
    text_row = [first.getpixel((x, y)) for x in range(0, 400) for y in range(6, 20)]
    assert any(min(p) > 200 for p in text_row)
    assert out.stat().st_size < 5_000_000


def test_an_mp4_repeats_each_frame_for_its_duration_at_a_constant_rate(tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    pictures = [solid("white", (101, 61)), solid("red", (101, 61)), solid("blue", (101, 61))]
    out = write_animation(tmp_path / "a.mp4", pictures, [Frame(0, 300.0), Frame(1, 500.0), Frame(2, 2000.0)], fps=10)
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    frames = list(reader)
    assert meta["size"] == (100, 60)  # even sizes for yuv420p
    assert meta["fps"] == 10.0 and len(frames) == 28  # 2.8 s at 10 fps


def test_captures_keep_their_pictures_packed_and_give_them_back_unchanged(tmp_path):
    from livefill.recording.animation import Capture

    picture = Image.new("RGB", (300, 200), "white")
    picture.paste(solid("#123456", (50, 20)), (10, 10))
    capture = Capture(12.5, picture)
    assert capture.packed_bytes < 300 * 200 * 3 // 10
    assert capture.picture.tobytes() == picture.tobytes() and capture.picture.size == (300, 200)
    black = Capture(20.0, solid("black", (300, 200)))
    out = write_gif(tmp_path / "c.gif", [capture, black], [Frame(0, 100.0), Frame(1, 100.0)])
    with Image.open(out) as gif:
        assert gif.n_frames == 2 and gif.convert("RGB").getpixel((20, 15)) == (0x12, 0x34, 0x56)


def test_the_apps_replay_and_animate_options_become_this_commands_argv():
    import argparse

    from livefill.gui.animate import parse_args
    from livefill.gui.app_args import argv_from_app

    app = argparse.Namespace(replay="t.jsonl", animate="o.gif", mode="settled", compare=["naive", "partial"], fps=5.0)
    argv = argv_from_app(app)
    assert argv == ["t.jsonl", "o.gif", "--mode", "settled", "--compare", "naive,partial", "--fps", "5.0"]
    parsed = parse_args(argv)
    assert parsed.compare == ["naive", "partial"] and parsed.fps == 5.0 and parsed.width == 1280


def test_the_clock_knows_the_next_recorded_read():
    clock = ReadClock([TraceRead(10.0, b"abc"), TraceRead(20.0, b"de"), TraceRead(35.0, b"fghi")])
    assert [clock.next_time(n) for n in (0, 2, 3, 4, 5, 9)] == [10.0, 10.0, 20.0, 20.0, 35.0, None]
