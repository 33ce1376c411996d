"""The recordings folder: where new traces go, and the list of the traces in it, summarised.

`recordings_dir()` is `<user data dir>/recordings`; `new_trace_path` names a new recording after
its time, label and provider; `list_recordings` / `summarize` give a `TraceSummary` per file (a
trace that cannot be used is listed with its error, never raised), read once per change of file.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from livefill.errors import TraceError
from livefill.recording.history import APP_NAME
from livefill.recording.trace import REPLAY_WIRES, load_trace

__all__ = ["TraceSummary", "free_path", "list_recordings", "new_trace_path", "recordings_dir", "summarize"]


def recordings_dir() -> Path:
    """`<user data dir>/recordings` (platformdirs; e.g. ~/.local/share/livefill/recordings)."""
    import platformdirs  # lazy: only the default folder needs it (8-13 ms at import, e.g. for `livefill extract`)

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "recordings"


def new_trace_path(label: str, provider: str, *, directory: str | os.PathLike[str] | None = None,
                   now: float | None = None) -> Path:
    """A new file name for a recording: `<dir>/2026-11-30_134502_<label>_<provider>.jsonl`
    (`-2`, `-3`, ... when taken). `directory` None: `recordings_dir()`."""
    folder = Path(directory) if directory is not None else recordings_dir()
    stamp = datetime.fromtimestamp(time.time() if now is None else now, UTC).strftime("%Y-%m-%d_%H%M%S")
    words = [re.sub(r"[^A-Za-z0-9._-]+", "-", w).strip("-.")[:40] for w in (label, provider)]
    stem = "_".join([stamp, *[w for w in words if w]])
    return free_path(folder / f"{stem}.jsonl")


def free_path(path: Path) -> Path:
    """`path`, or `stem-2.suffix`, `stem-3.suffix`, ... when it is taken."""
    candidate, n = path, 2
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    return candidate


@dataclass(frozen=True, kw_only=True, slots=True)
class TraceSummary:
    """One line of a Recordings list: what a trace is, or why it cannot be used (`error`)."""

    path: Path
    started_at: str = ""
    provider: str = ""
    model: str = ""
    schema_name: str = ""
    label: str = ""  # the document's name as the app called the run (e.g. the scenario)
    mode: str = ""
    end: str = ""  # complete / stopped / failed / cancelled / truncated
    reason: str | None = None
    reads: int = 0
    duration_ms: float = 0.0
    error: str | None = None  # the TraceError's one line: listed, not openable


def list_recordings(directory: str | os.PathLike[str] | None = None, *, limit: int | None = None) -> list[TraceSummary]:
    """The `*.jsonl` in `directory` (None: `recordings_dir()`), newest first, at most `limit` of
    them; a bad trace is listed with its `error` instead of raising. Only the files listed are
    read, and a file unchanged since it was last summarised is not read again."""
    folder = Path(directory) if directory is not None else recordings_dir()
    if not folder.is_dir():
        return []
    stamped = []
    for path in folder.glob("*.jsonl"):
        try:
            stat = path.stat()
        except OSError:
            continue
        stamped.append((stat.st_mtime, stat.st_size, path))
    stamped.sort(key=lambda item: item[0], reverse=True)
    return [_summary(path, mtime, size) for mtime, size, path in stamped[:limit]]


def summarize(path: str | os.PathLike[str]) -> TraceSummary:
    """One trace's summary (as `list_recordings` lists it); a file that cannot be read is a summary
    with its `error`."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        return TraceSummary(path=path, error=f"{path}: {exc.strerror or exc}")
    return _summary(path, stat.st_mtime, stat.st_size)


_SUMMARIES: dict[tuple[Path, float, int], TraceSummary] = {}


def _summary(path: Path, mtime: float, size: int) -> TraceSummary:
    key = (path, mtime, size)
    cached = _SUMMARIES.get(key)
    if cached is not None:
        return cached
    try:
        trace = load_trace(path, replayable=False)
    except TraceError as exc:
        summary = TraceSummary(path=path, error=str(exc))
    else:
        h = trace.header
        summary = TraceSummary(
            path=path,
            started_at=str(h.get("started_at", "")),
            provider=trace.provider,
            model=trace.model,
            schema_name=str(h.get("schema_name") or h["schema"].get("title") or ""),
            label=str(h.get("label") or ""),
            mode=str(h.get("mode") or ""),
            end=trace.end,
            reason=(trace.trailer or {}).get("reason"),
            reads=len(trace.reads),
            duration_ms=trace.duration_ms,
            error=None if trace.wire in REPLAY_WIRES else f"{path}: the {trace.wire} wire cannot be replayed",
        )
    if len(_SUMMARIES) > 256:
        _SUMMARIES.clear()
    _SUMMARIES[key] = summary
    return summary
