"""A replayed run as an animation: pictures stamped on the recorded clock, frames at a chosen rate.

    clock = ReadClock(trace)                      # bytes received -> the recorded time they arrived
    t = clock.time_at(nbytes)                     # ms since the request, or None before any read
    keep = CaptureKeeper(fps=10)                  # the captures an animation can show, as they come
    keep.add(t, picture)                          # picture: PIL.Image (RGB), any number of times
    frames = frame_schedule([c.t_ms for c in keep.captures], fps=10, end_ms=..., hold_ms=2000)
    write_animation(path, keep.captures, frames, fps=10, overlay=caption)  # .gif, or .mp4 (imageio-ffmpeg)

How this works
--------------
Rendering replays a trace as fast as possible, so wall-clock time says nothing about when a
picture belongs in the animation. Each picture (a "capture") is instead stamped with the recorded
time of the last byte the run had received: the replay serves the trace's bytes in order, so
`ReadClock` maps a count of bytes received to the `t_ms` of the recorded read holding the last of
them (the client may see several recorded reads as one, or one as several; bytes are what match).

`frame_schedule` is pure: output frame k stands for recorded time k/fps and shows the latest
capture whose time is <= it (the first capture before any). Consecutive frames showing the same
capture are merged into one frame with the summed duration, so an idle stretch costs one frame;
a final capture (the finished run, e.g. the compare metrics table) is held for `hold_ms`.
`CaptureKeeper` keeps only what a schedule can show: of the captures falling in one frame interval
only the last is ever shown, so an earlier one in the same interval is replaced, and a picture
identical to the previous one only moves nothing.

GIF: every frame is mapped to one shared 255-colour palette (`livefill.recording.gif_palette`: the
pictures' exact key colours, so a green ✓ stays green, and a median cut for the rest) without
dithering, so unchanged pixels keep the same index and Pillow's frame differencing
(`optimize=True`, each frame cropped to what changed) keeps the file small. MP4 needs the optional `imageio-ffmpeg` package (`pip install livefill[video]`).
"""

from __future__ import annotations

import bisect
import math
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from livefill.errors import UsageError
from livefill.recording.gif_palette import shared_palette
from livefill.recording.trace import TraceRead

__all__ = [
    "FORMATS",
    "Capture",
    "CaptureKeeper",
    "Frame",
    "ReadClock",
    "check_output",
    "frame_schedule",
    "write_animation",
    "write_gif",
    "write_mp4",
]

#: The output formats by file suffix.
FORMATS = (".gif", ".mp4")

#: The shortest frame a GIF viewer honours (browsers treat 0-1 cs as 10 cs): GIF durations are in
#: centiseconds, so the frame rate of a GIF is at most 50.
MAX_FPS = 50.0


class ReadClock:
    """Bytes received so far -> the recorded time (ms after the request) of the read holding the last one."""

    def __init__(self, reads: Sequence[TraceRead]) -> None:
        self._ends: list[int] = []
        self._times: list[float] = []
        total = 0
        for read in reads:
            if not read.data:
                continue
            total += len(read.data)
            self._ends.append(total)
            self._times.append(float(read.t_ms))

    @property
    def total(self) -> int:
        """Every byte of the trace."""
        return self._ends[-1] if self._ends else 0

    def time_at(self, nbytes: int) -> float | None:
        """The recorded time of byte `nbytes` (1-based), None for 0; past the end: the last read's time."""
        if nbytes <= 0 or not self._ends:
            return None
        i = bisect.bisect_left(self._ends, nbytes)
        return self._times[min(i, len(self._times) - 1)]

    def next_time(self, nbytes: int) -> float | None:
        """The recorded time of the next byte to come after `nbytes` (None when all have come)."""
        return self.time_at(max(0, nbytes) + 1) if nbytes < self.total else None


@dataclass(frozen=True, slots=True)
class Frame:
    """One output frame: which capture it shows, for how long."""

    capture: int
    duration_ms: float


def frame_schedule(
    times: Sequence[float], *, fps: float, end_ms: float | None = None, hold_ms: float = 0.0, final: int | None = None
) -> list[Frame]:
    """The frames at `fps` on the recorded clock from 0 to `end_ms` (default: the last capture's
    time) showing `times`' captures (non-decreasing ms); runs of one capture merged. `final`: the
    index of a capture shown last for `hold_ms` (e.g. the finished run's picture, not on the clock)."""
    if fps <= 0 or not math.isfinite(fps):
        raise ValueError(f"the frame rate must be a positive number, not {fps}")
    if any(b < a for a, b in zip(times, times[1:])):
        raise ValueError("capture times go backwards")
    clocked = len(times) if final is None else final
    frames: list[Frame] = []
    if clocked > 0:
        step = 1000.0 / fps
        end = float(times[clocked - 1]) if end_ms is None else max(0.0, float(end_ms))
        count = max(1, math.ceil(end / step - 1e-9) + 1)  # frame k stands for time k*step, up to end
        j = 0
        for k in range(count):
            at = k * step
            while j + 1 < clocked and times[j + 1] <= at + 1e-9:
                j += 1
            duration = step if k < count - 1 else max(step, 0.0)
            _append(frames, j, duration)
    if final is not None and hold_ms > 0:
        _append(frames, final, float(hold_ms))
    return frames


def _append(frames: list[Frame], capture: int, duration: float) -> None:
    if frames and frames[-1].capture == capture:
        frames[-1] = Frame(capture, frames[-1].duration_ms + duration)
    else:
        frames.append(Frame(capture, duration))


class Capture:
    """A picture and the recorded time it shows; the picture is kept zlib-packed (a window picture is
    ~3 MB raw and ~0.1 MB packed), so a long run's captures fit in memory."""

    __slots__ = ("t_ms", "_mode", "_size", "_packed")

    def __init__(self, t_ms: float, picture: Any) -> None:
        self.t_ms = float(t_ms)
        self._mode, self._size = picture.mode, picture.size
        self._packed = zlib.compress(picture.tobytes(), 1)

    @property
    def picture(self) -> Any:
        """The picture (a new PIL image each time)."""
        from PIL import Image  # lazy: only `livefill animate` draws; the app imports this at start (14-67 ms)

        return Image.frombytes(self._mode, self._size, zlib.decompress(self._packed))

    @property
    def packed_bytes(self) -> int:
        return len(self._packed)


@dataclass(slots=True)
class CaptureKeeper:
    """The captures a schedule at `fps` can show, kept as they arrive (see the module comment)."""

    fps: float
    captures: list[Capture] = field(default_factory=list)
    offered: int = 0
    _last: bytes = b""

    def add(self, t_ms: float, picture: Any) -> None:
        self.offered += 1
        last = self.captures[-1] if self.captures else None
        if last is not None and t_ms < last.t_ms:
            t_ms = last.t_ms  # a lane's clock never goes back; keep the order anyway
        raw = picture.tobytes()
        if last is not None and raw == self._last:
            return
        self._last = raw
        step = 1000.0 / self.fps
        if (
            last is not None
            and len(self.captures) > 1
            and math.ceil(t_ms / step - 1e-9) == math.ceil(last.t_ms / step - 1e-9)
        ):
            self.captures[-1] = Capture(t_ms, picture)  # the same frame interval: only the later one shows
        else:
            self.captures.append(Capture(t_ms, picture))


# --- encoding ---------------------------------------------------------------------------------------


def check_output(path: str | Path) -> Path:
    """The output path, checked before anything renders (UsageError with one line when unusable)."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"{out.name}: the animation must be a .gif or an .mp4 file")
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401  # lazy: an optional dependency (the `video` extra)
        except ImportError:
            raise UsageError(
                "MP4 needs the imageio-ffmpeg package (pip install 'livefill[video]' or pip install imageio-ffmpeg); "
                "a .gif needs nothing more"
            ) from None
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{out}: the folder {parent} does not exist")
    return out


def _image(item: Any) -> Any:
    """A PIL image from a picture or a `Capture`."""
    return item.picture if isinstance(item, Capture) else item


class _Overlaid(Sequence[Any]):
    """`pictures` with `overlay` (a PIL image) pasted at their top left, each made when asked for."""

    def __init__(self, pictures: Sequence[Any], overlay: Any) -> None:
        self._pictures, self._overlay = pictures, overlay

    def __len__(self) -> int:
        return len(self._pictures)

    def __getitem__(self, i: Any) -> Any:
        image = _image(self._pictures[i]).convert("RGB")
        image.paste(self._overlay.convert("RGB"), (0, 0))
        return image


def write_animation(
    path: str | Path, pictures: Sequence[Any], frames: Sequence[Frame], *, fps: float = 10.0, overlay: Any = None
) -> Path:
    """Write `frames` of `pictures` (PIL images or `Capture`s, unpacked one at a time) to `path` as
    a GIF or an MP4 at `fps` (by its suffix). `overlay`: a PIL image laid over the top left of every
    picture (the caption, drawn once the run is over and its duration known)."""
    out = check_output(path)
    if overlay is not None:
        pictures = _Overlaid(pictures, overlay)
    # Written beside `out` under a temporary name and moved over it only when whole: an export
    # stopped half way (an error, a cancel, a killed process) never leaves a torn file at `out`,
    # nor destroys the file that was there.
    partial = out.with_name(f".{out.stem}.partial{out.suffix}")
    try:
        if out.suffix.lower() == ".mp4":
            write_mp4(partial, pictures, frames, fps=fps)
        else:
            write_gif(partial, pictures, frames)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return out


def write_gif(path: str | Path, pictures: Sequence[Any], frames: Sequence[Frame]) -> Path:
    """An animated GIF (looping) of `frames`: one shared palette, frame differencing."""
    from PIL import Image  # lazy: only `livefill animate` draws; the app imports this at start (14-67 ms)

    if not frames:
        raise ValueError("no frames to write")
    palette = shared_palette([pictures[f.capture] for f in frames], image=_image)
    indexed: dict[int, Any] = {}
    images = []
    durations = []
    for f in frames:
        if f.capture not in indexed:
            rgb = _image(pictures[f.capture]).convert("RGB")
            indexed[f.capture] = rgb.quantize(palette=palette, dither=Image.Dither.NONE)
        images.append(indexed[f.capture])
        durations.append(max(20, int(round(f.duration_ms / 10.0)) * 10))
    out = Path(path)
    first, rest = images[0], images[1:]
    first.save(
        out, format="GIF", save_all=True, append_images=rest, loop=0, optimize=True, disposal=1,
        duration=durations if len(durations) > 1 else durations[0],
    )
    return out


def write_mp4(path: str | Path, pictures: Sequence[Any], frames: Sequence[Frame], fps: float = 10.0) -> Path:
    """An H.264 MP4 at a constant `fps` (each frame repeated for its duration); needs imageio-ffmpeg."""
    import imageio_ffmpeg  # lazy: an optional dependency (the `video` extra)

    if not frames:
        raise ValueError("no frames to write")
    first = _image(pictures[frames[0].capture])
    width, height = first.size[0] // 2 * 2, first.size[1] // 2 * 2  # yuv420p wants even sizes
    writer = imageio_ffmpeg.write_frames(
        str(path), (width, height), fps=fps, codec="libx264", pix_fmt_out="yuv420p", macro_block_size=1,
    )
    writer.send(None)
    step = 1000.0 / fps
    shown = 0.0
    elapsed = 0.0
    for f in frames:
        data = _image(pictures[f.capture]).convert("RGB").crop((0, 0, width, height)).tobytes()
        elapsed += f.duration_ms
        while shown < elapsed - 1e-6:
            writer.send(data)
            shown += step
    writer.close()
    return Path(path)
