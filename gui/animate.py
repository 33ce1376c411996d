"""`livefill animate TRACE OUT.gif`: a recorded run replayed headless into an animated GIF (or MP4).

    livefill animate docs/traces/invoice-demo.jsonl out.gif --compare naive,partial,settled

How this works
--------------
The window is the app's own (`MainWindow`, offscreen), on the embedded demo provider, which serves
the trace at `--render-speed`. Every shown lane gets a wire tap counting the bytes it has received;
after each batch of reads the loop gets to, the window is refreshed and grabbed, and the picture is
stamped with the recorded time of those bytes (`livefill.recording.animation.ReadClock`; in compare view the
slowest provider-wire lane's; a relay lane's wire is the relay's records, so it is not a clock, and
when every lane is a relay lane the demo provider's count of bytes sent is). When no byte comes for
a frame's time the window is grabbed anyway (timers, fading highlights), stamped with the last
read's time plus the wall time since it (times the replay speed), never past the next read's time.

The replay speed decides how many pictures there are, never when they show: the default 1× gives
a picture per read and per frame between reads, and a metrics table whose times are the recorded
ones; 0 (as fast as possible) finishes the replay before more than a handful of pictures are
taken, and the table then shows the replay's times. A trace's schema must be a bundled scenario's
(the window shows that scenario's form). The pictures are
scaled to `--width` with a caption strip on top (schema, provider and model, mode or lanes, speed),
then `livefill.recording.animation` lays them out at `--fps` on the recorded clock and writes the file, so the
animation plays at the recorded speed however long rendering took. The last frame is the finished
window (the compare metrics table, or the single run's final form) held for `HOLD_MS`.

A bad trace or output path is one line on stderr and exit status 2, before anything renders.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from livefill.recording.animation import Capture, CaptureKeeper, ReadClock, check_output, frame_schedule, write_animation
from livefill.cli.arg_types import Parser
from livefill.errors import InputError, UsageError
from livefill.extraction.modes import Mode
from livefill.gui.cli_args import compare_modes, frame_rate, frame_width, number

HOLD_MS = 2000.0
"""How long the finished window (the metrics table) stays on screen at the end."""

SETTLE_S = 0.8
"""Wait after the run before the final picture, so the "just settled" highlight has faded."""

CAPTION_PX = 34
"""The caption strip's height at 1280 px wide (scaled with the width)."""

SIZES = {True: (1680, 1000), False: (1280, 860)}
"""The window's size (compare view, single form) before the pictures are scaled to `--width`."""


@dataclass(frozen=True, slots=True)
class RenderReport:
    """What a render did: for the benchmark and the command's last line."""

    path: Path
    speed: float
    frames: int
    captures: int
    grabs: int
    duration_ms: float
    render_s: float
    encode_s: float
    size_bytes: int


USAGE = """\
livefill animate TRACE OUT.gif [--compare MODES | --mode MODE]
                        [--fps N] [--width PX] [--render-speed X]"""

DESCRIPTION = """\
Replay a run recorded by livefill in its window, headless, and save it as an
animated GIF (or MP4) that plays at the recorded speed.

examples:
  # the bundled demo trace, read three ways side by side
  livefill animate docs/traces/invoice-demo.jsonl out.gif \\
      --compare naive,partial,settled

  # one of your recordings, in settled mode, small and smooth
  livefill animate ~/.local/share/livefill/recordings/run.jsonl run.gif \\
      --mode settled --width 800 --fps 15

  # an MP4 (needs: pip install imageio-ffmpeg)
  livefill animate docs/traces/invoice-demo.jsonl out.mp4"""

EPILOG = """\
exit status: 0 written, 1 rendering failed, 2 bad usage (one line saying why;
nothing rendered)"""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = Parser(
        prog="livefill animate", usage=USAGE, description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("trace", help="a trace (.jsonl) recorded by livefill")
    parser.add_argument("out", help="the animation to write: OUT.gif, or OUT.mp4 (needs imageio-ffmpeg)")
    parser.add_argument("--compare", metavar="MODES", type=compare_modes, help="compare view with these lanes, e.g. naive,partial,settled")
    parser.add_argument("--mode", default="partial", choices=[m.value for m in Mode], help="the single form's mode")
    parser.add_argument("--fps", type=frame_rate, default=10.0, help="frames per second of the recorded clock (default 10)")
    parser.add_argument("--width", type=frame_width, default=1280, help="width of the animation in pixels (default 1280)")
    parser.add_argument("--render-speed", type=number(0, 100, what="0 = as fast as possible"), default=None, metavar="X",
                        help="replay speed while rendering (default 1: the metrics table shows the recorded times; "
                             "0 = as fast as possible, fewer pictures, the table shows the replay's times)")
    return parser.parse_args(argv)


def scenario_of(trace: Any) -> str:
    """The bundled scenario whose schema (and preferably document) the trace's run used."""
    from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario

    name = str(trace.header.get("schema_name") or "")
    same_schema = [s for s in SCENARIO_NAMES if get_scenario(s).schema_name == name]
    for s in same_schema:
        if trace.document is not None and get_scenario(s).document == trace.document:
            return s
    if same_schema:
        return same_schema[0]
    raise UsageError(f"{Path(trace.path).name}: its schema {name or '(its own)'} is not a bundled scenario's; "
                     "animate replays traces of the bundled scenarios")


def caption_text(trace: Any, scenario: str, compare: list[str] | None, mode: str) -> str:
    who = trace.provider + (f" ({trace.model})" if trace.model else "")
    how = "lanes " + " | ".join(compare) if compare else f"{mode} mode"
    seconds = trace.duration_ms / 1000.0
    return f"{scenario} · {who} · {how} · recorded run replayed at 1× ({seconds:.1f} s)"


def pace(grab_s: float, fps: float) -> float:
    """The replay speed at which a picture can be taken for every frame: a frame interval of the
    recorded clock must last at least ~1.5 pictures' time, between 0.25× and 8×."""
    step_s = 1.0 / fps
    return max(0.25, min(8.0, step_s / max(1e-3, 1.5 * grab_s)))


class ByteCounter:
    """A wire tap: how many bytes a lane has received."""

    def __init__(self) -> None:
        self.nbytes = 0

    def on_read(self, data: bytes) -> None:
        self.nbytes += len(data)

    def on_frame(self, frame: Any) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass


def received(taps: list[ByteCounter], server: Any, trace_id: str) -> list[int]:
    """Bytes of the trace each clocked lane has received: the provider-wire lanes' own counts; when
    every lane reads through the relay, what the demo provider has sent of the trace."""
    if taps:
        return [t.nbytes for t in taps]
    return [int(e.get("bytes_sent") or 0) for e in server.requests() if e.get("replay") == trace_id] or [0]


def picture(window: Any, width: int, caption: str) -> Any:
    """The window grabbed, scaled to `width`, a caption strip on top: a PIL RGB image."""
    from PIL import Image
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter

    shot = window.grab().toImage()
    scaled = shot.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    strip = max(20, round(CAPTION_PX * width / 1280))
    out = QImage(width, scaled.height() + strip, QImage.Format.Format_RGB888)
    out.fill(QColor("#1f2937"))
    painter = QPainter(out)
    try:
        painter.drawImage(0, strip, scaled)
        font = QFont()
        font.setPixelSize(max(10, round(strip * 0.5)))
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#f9fafb"))
        painter.drawText(QRect(round(strip * 0.4), 0, width - strip, strip),
                         int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), caption)
    finally:
        painter.end()
    data = bytes(out.constBits())
    return Image.frombuffer("RGB", (out.width(), out.height()), data, "raw", "RGB", out.bytesPerLine(), 1).copy()


async def render(args: argparse.Namespace, trace: Any, server: Any, workdir: Path) -> RenderReport:
    """Replay `trace` in a headless window, capture it on the recorded clock, write `args.out`."""
    from livefill.recording.history import History
    from livefill.recording.trace import replay_config
    from livefill.gui.main_window import MainWindow
    from livefill.gui.qsettings_store import QSettingsStore

    started = time.monotonic()
    scenario = scenario_of(trace)
    compare = args.compare or None
    window = MainWindow(
        base_url=server.url, relay_token=server.relay_token, history=History(workdir / "history.jsonl"),
        scenario=scenario, mode=args.mode, provider=trace.provider, compare=compare,
        store=QSettingsStore(workdir / "settings.ini"), theme="light",
    )
    try:
        window.resize(*SIZES[bool(compare)])
        window.show()
        caption = caption_text(trace, scenario, compare, args.mode)
        clock = ReadClock(trace.reads)
        session = window.session
        taps = []
        for lane in session.lanes:
            tap = ByteCounter()
            lane.extra_tap = tap
            if not lane.mode.spec.needs_relay:  # a relay lane's wire is the relay's records, not the trace
                taps.append(tap)
        trace_id = server.add_trace(trace)
        keeper = CaptureKeeper(fps=args.fps)
        QApp().processEvents()
        window.refresh_now()
        before = time.monotonic()
        picture(window, args.width, caption)
        grab_s = time.monotonic() - before
        speed = args.render_speed if args.render_speed is not None else 1.0
        if speed > 0 and pace(grab_s, args.fps) < speed / 2:
            print(f"livefill animate: a picture takes {grab_s * 1000:.0f} ms: expect about {1 / (1.5 * grab_s):.0f} "
                  f"pictures per second at {speed:g}x (--render-speed 0.5 for more)", file=sys.stderr)
        config = replay_config(trace, trace_id, base_url=server.url, mode=args.mode, speed=speed,
                               relay_token=server.relay_token, label=f"{scenario} (replay)")
        if compare:
            window.compare_view.start(config)
        else:
            session.start(config)
        window.refresh_now()
        keeper.add(0.0, picture(window, args.width, caption))
        grabs = 1
        seen: list[int] = []
        at, arrived = 0.0, time.monotonic()
        step_s = 1.0 / args.fps
        while session.active:
            await asyncio.sleep(0.002)
            now = received(taps, server, trace_id)
            if now != seen:
                seen, arrived = now, time.monotonic()
                at = t = min((clock.time_at(n) or 0.0) for n in now)
            elif speed > 0 and time.monotonic() - arrived >= step_s:
                # no new bytes for a frame's time: the window still moves (timers, highlights fading);
                # at speed > 0 the recorded time since the last read is the wall time since it, scaled
                t = at + (time.monotonic() - arrived) * 1000.0 * speed
                due = clock.next_time(min(seen or [0]))  # never past the next read's recorded time
                if due is not None:
                    t = min(t, max(at, due - 1.0))
                at, arrived = t, time.monotonic()
            else:
                continue
            window.refresh_now()
            keeper.add(t, picture(window, args.width, caption))
            grabs += 1
        await window.wait_runs()
        window.refresh_now()
        end_ms = max(trace.duration_ms, keeper.captures[-1].t_ms)
        keeper.add(end_ms, picture(window, args.width, caption))
        await asyncio.sleep(SETTLE_S)
        window.refresh_now()
        QApp().processEvents()
        final_picture = picture(window, args.width, caption)
        grabs += 2
        captures = list(keeper.captures)
        captures.append(Capture(end_ms, final_picture))
        times = [c.t_ms for c in captures]
        frames = frame_schedule(times, fps=args.fps, end_ms=end_ms, hold_ms=HOLD_MS,
                                final=len(captures) - 1)
        rendered = time.monotonic()
        out = write_animation(args.out, captures, frames, fps=args.fps)
        done = time.monotonic()
        return RenderReport(
            path=out, speed=speed, frames=len(frames), captures=len(captures), grabs=grabs,
            duration_ms=sum(f.duration_ms for f in frames), render_s=rendered - started,
            encode_s=done - rendered, size_bytes=out.stat().st_size,
        )
    finally:
        await window.shutdown()
        window.close()
        window.deleteLater()


def QApp() -> Any:  # noqa: N802 - reads like the Qt class it returns
    from PySide6.QtWidgets import QApplication

    return QApplication.instance()


def prepare(argv: list[str]) -> tuple[argparse.Namespace, Any]:
    """Parse and check everything that can be checked before rendering (InputError / UsageError)."""
    from livefill.recording.trace import load_trace

    args = parse_args(argv)
    args.out = check_output(args.out)
    trace = load_trace(args.trace)
    if not trace.reads:
        raise UsageError(
            f"{Path(args.trace).name}: the trace holds no response bytes (it ended {trace.end}); nothing to animate"
        )
    scenario_of(trace)
    return args, trace


async def _amain(args: argparse.Namespace, trace: Any, server: Any) -> RenderReport:
    from livefill.gui.gui_thread_gc import GuiThreadCollector
    from livefill.gui.loop import asyncgen_hooks

    collector = GuiThreadCollector(QApp())
    collector.start()
    try:
        with asyncgen_hooks(asyncio.get_running_loop()), tempfile.TemporaryDirectory(prefix="livefill-animate-") as tmp:
            return await render(args, trace, server, Path(tmp))
    finally:
        collector.stop()
        await asyncio.get_running_loop().shutdown_asyncgens()


def argv_from_app(args: argparse.Namespace) -> list[str]:
    """`livefill --replay TRACE --animate OUT [--compare ...] [--mode ...] [--fps N] [--width PX]` as
    this command's argv (the app's `main()` hands the parsed options over: `main(argv_from_app(args))`)."""
    argv = [str(args.replay), str(args.animate), "--mode", str(args.mode)]
    if getattr(args, "compare", None):
        argv += ["--compare", ",".join(args.compare)]
    for option in ("fps", "width"):
        value = getattr(args, option, None)
        if value is not None:
            argv += [f"--{option}", str(value)]
    return argv


def main(argv: list[str] | None = None) -> int:
    """`livefill animate TRACE OUT [--compare MODES] [--mode M] [--fps N] [--width PX]`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args, trace = prepare(argv)
    except (InputError, UsageError) as exc:
        print(f"livefill animate: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # bad usage (the parser said why in one line) or --help
        return exc.code if isinstance(exc.code, int) else 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from livefill.embedded.client import embedded_server
    from livefill.gui.app import SWITCH_INTERVAL, _install_qt_message_filter
    from livefill.gui.theme import Theme

    sys.setswitchinterval(SWITCH_INTERVAL)
    server = embedded_server()
    server.start()
    _install_qt_message_filter()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("livefill")
    app.setQuitOnLastWindowClosed(False)
    theme = Theme(app, "light")  # noqa: F841 - the app's child
    try:
        report = qasync.run(_amain(args, trace, server))
    except KeyboardInterrupt:
        return 130
    finally:
        gc.collect()
        server.stop()
    print(
        f"livefill animate: wrote {report.path} ({report.size_bytes / 1e6:.2f} MB, {report.frames} frames, "
        f"{report.duration_ms / 1000:.1f} s; replayed at {report.speed:.2g}x, {report.grabs} pictures) "
        f"in {report.render_s + report.encode_s:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
