"""`livefill animate`'s rendering: the app's window replays a trace offscreen, grabbed on the recorded clock.

`render_animation(args, trace, scenario)` starts the embedded demo provider and the QApplication,
replays the trace in the window and writes the animation (`livefill.recording.animation`); the
command around it is `livefill.gui.animate`. How the pictures are timed: docs/notes/animate.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import qasync
from PIL import Image
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication

from livefill.embedded.client import embedded_server
from livefill.embedded.server import EmbeddedServer
from livefill.gui.gui_thread_gc import GuiThreadCollector
from livefill.gui.loop import asyncgen_hooks
from livefill.gui.main_window import MainWindow
from livefill.gui.qsettings_store import QSettingsStore
from livefill.gui.qt_app import make_application
from livefill.gui.theme import Theme
from livefill.recording.animation import Capture, CaptureKeeper, ReadClock, frame_schedule, write_animation
from livefill.recording.history import History
from livefill.recording.trace import Trace
from livefill.session.metrics import format_seconds
from livefill.session.replay import replay_config
from livefill.session.session import Session
from livefill.session.settings import RunSettings
from livefill.wire.taps import WireFrame

__all__ = ["RenderReport", "render", "render_animation"]

HOLD_MS = 2000.0
"""How long the finished window (the metrics table) stays on screen at the end."""

SETTLE_S = 0.8
"""Wait after the run before the final picture, so the "just settled" highlight has faded."""

CAPTION_PX = 34
"""The caption strip's height at 1280 px wide (scaled with the width)."""

CAPTION_BG = "#1f2937"
"""The caption strip's dark band."""

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
    caption: str


def caption_text(trace: Trace, scenario: str, compare: list[str] | None, mode: str, *, speed: float, duration: str) -> str:
    """The caption over every frame; `duration`: the run's time as the finished window shows it (`run_duration`)."""
    who = trace.provider + (f" ({trace.model})" if trace.model else "")
    how = "lanes " + " | ".join(compare) if compare else f"{mode} mode"
    pace_text = f"replayed at {speed:g}×" if speed > 0 else "replayed as fast as possible"
    return f"{scenario} · {who} · {how} · recorded run {pace_text} ({duration})"


def run_duration(session: Session) -> str:
    """How long the run took, in the very words the finished window shows it: the compare lanes'
    "committed after 8.52 s" / "Run ended" (the last lane to end), or the single status line's "8.5 s"."""
    if session.comparing:
        ends = [s.elapsed for s in (lane.metrics.summary() for lane in session.compare_lanes) if s.elapsed is not None]
        return format_seconds(max(ends)) if ends else "—"
    return f"{session.single.status.elapsed:.1f} s"


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

    def on_frame(self, frame: WireFrame) -> None:
        pass

    def on_event(self, event: Any) -> None:
        pass


def received(taps: list[ByteCounter], server: EmbeddedServer, trace_id: str) -> list[int]:
    """Bytes of the trace each clocked lane has received: the provider-wire lanes' own counts; when
    every lane reads through the relay, what the demo provider has sent of the trace."""
    if taps:
        return [t.nbytes for t in taps]
    return [int(e.get("bytes_sent") or 0) for e in server.requests() if e.get("replay") == trace_id] or [0]


def strip_height(width: int) -> int:
    """The caption strip's height for pictures `width` px wide."""
    return max(20, round(CAPTION_PX * width / 1280))


def _to_pil(image: QImage) -> Image.Image:
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    data = bytes(image.constBits())
    return Image.frombuffer("RGB", (image.width(), image.height()), data, "raw", "RGB", image.bytesPerLine(), 1).copy()


def picture(window: MainWindow, width: int) -> Image.Image:
    """The window grabbed, scaled to `width`, under an empty caption strip (`caption_strip` is laid
    over it when the animation is written, once the run's duration is known): a PIL RGB image."""
    shot = window.grab().toImage()
    scaled = shot.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    strip = strip_height(width)
    out = QImage(width, scaled.height() + strip, QImage.Format.Format_RGB888)
    out.fill(QColor(CAPTION_BG))
    painter = QPainter(out)
    try:
        painter.drawImage(0, strip, scaled)
    finally:
        painter.end()
    return _to_pil(out)


def caption_strip(width: int, caption: str) -> Image.Image:
    """The caption strip: `caption` in bold light text on a dark band, `width` px wide."""
    strip = strip_height(width)
    out = QImage(width, strip, QImage.Format.Format_RGB888)
    out.fill(QColor(CAPTION_BG))
    painter = QPainter(out)
    try:
        font = QFont()
        font.setPixelSize(max(10, round(strip * 0.5)))
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#f9fafb"))
        painter.drawText(QRect(round(strip * 0.4), 0, width - strip, strip),
                         int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), caption)
    finally:
        painter.end()
    return _to_pil(out)


async def render(args: argparse.Namespace, trace: Trace, scenario: str, server: EmbeddedServer, workdir: Path) -> RenderReport:
    """Replay `trace` in a headless window, capture it on the recorded clock, write `args.out`."""
    started = time.monotonic()
    compare = args.compare or None
    settings = RunSettings(base_url=server.url, relay_token=server.relay_token, scenario=scenario, mode=args.mode,
                           provider=trace.provider)
    window = MainWindow(Session(settings, history=History(workdir / "history.jsonl")), compare=compare,
                        store=QSettingsStore(workdir / "settings.ini"), theme="light")
    try:
        window.resize(*SIZES[bool(compare)])
        window.show()
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
        QApplication.processEvents()
        window.refresh_now()
        before = time.monotonic()
        picture(window, args.width)
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
        keeper.add(0.0, picture(window, args.width))
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
                else:  # after the last read, never past the recorded run's end (a loaded machine's
                    t = min(t, max(at, trace.duration_ms))  # slow commit is not recorded time)
                at, arrived = t, time.monotonic()
            else:
                continue
            window.refresh_now()
            keeper.add(t, picture(window, args.width))
            grabs += 1
        await window.wait_runs()
        window.refresh_now()
        end_ms = max(trace.duration_ms, keeper.captures[-1].t_ms)
        keeper.add(end_ms, picture(window, args.width))
        await asyncio.sleep(SETTLE_S)
        window.refresh_now()
        QApplication.processEvents()
        final_picture = picture(window, args.width)
        grabs += 2
        captures = list(keeper.captures)
        captures.append(Capture(end_ms, final_picture))
        times = [c.t_ms for c in captures]
        frames = frame_schedule(times, fps=args.fps, end_ms=end_ms, hold_ms=HOLD_MS,
                                final=len(captures) - 1)
        rendered = time.monotonic()
        caption = caption_text(trace, scenario, compare, args.mode, speed=speed, duration=run_duration(session))
        out = write_animation(args.out, captures, frames, fps=args.fps, overlay=caption_strip(args.width, caption))
        done = time.monotonic()
        return RenderReport(
            path=out, speed=speed, frames=len(frames), captures=len(captures), grabs=grabs,
            duration_ms=sum(f.duration_ms for f in frames), render_s=rendered - started,
            encode_s=done - rendered, size_bytes=out.stat().st_size, caption=caption,
        )
    finally:
        await window.shutdown()
        window.close()
        window.deleteLater()


async def _amain(args: argparse.Namespace, trace: Trace, scenario: str, server: EmbeddedServer) -> RenderReport:
    collector = GuiThreadCollector(QApplication.instance())
    collector.start()
    try:
        with asyncgen_hooks(asyncio.get_running_loop()), tempfile.TemporaryDirectory(prefix="livefill-animate-") as tmp:
            return await render(args, trace, scenario, server, Path(tmp))
    finally:
        collector.stop()
        await asyncio.get_running_loop().shutdown_asyncgens()


def render_animation(args: argparse.Namespace, trace: Trace, scenario: str) -> RenderReport:
    """Start the embedded demo provider and the QApplication, render `trace` (see `render`), stop them."""
    server = embedded_server()
    server.start()
    app = make_application()
    theme = Theme(app, "light")  # noqa: F841 - the app's child
    try:
        return qasync.run(_amain(args, trace, scenario, server))
    finally:
        gc.collect()
        server.stop()
