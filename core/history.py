"""The extraction history: one JSON line per committed run, in the platform's user data dir.

How this works
--------------
Only committed runs are written (stopped and failed attempts are not). `append` opens the file
with O_APPEND, takes an exclusive advisory lock (fcntl.flock, where the platform has it), and
writes the whole line with one `os.write` loop before `os.fsync`; when `append` returns, the record
is on disk ("acknowledged"). Two app instances appending at once therefore never interleave: the
lock serialises them, and O_APPEND puts every write at the end.

A process killed mid-append leaves a torn last line (no closing newline). Under the lock, `append`
looks at the file's last byte first: if it is not a newline, the new line is preceded by one, so
the next record is never glued onto the torn one. `read` skips every line that is not a JSON object
and notes it in `problems` (which file, which line, why); an `append` that found a torn tail notes
that too; `new_problems()` hands each note to the caller once (a run puts it in its status and so
in the run log). A torn line is never fatal.

A write that fails (full disk, read-only directory) raises `HistoryWriteError`: one line naming
the file and the reason. The run that committed keeps its result; the error goes to its status.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import LivefillError

try:  # POSIX; elsewhere O_APPEND with a single write is what keeps lines whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

APP_NAME = "livefill"


class HistoryWriteError(LivefillError, OSError):
    """The history file could not be written: one line naming the file and why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"could not write the history file {path}: {reason}")

    def __str__(self) -> str:
        return self.args[0]


def default_history_path() -> Path:
    """`<user data dir>/history.jsonl` (platformdirs; e.g. ~/.local/share/livefill on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "history.jsonl"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


class History:
    """An append-only JSON Lines file of committed extractions."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_history_path()
        #: what the last `read()` skipped, one line each (which file, which line, why)
        self.problems: list[str] = []
        self._notes: list[tuple[int, str]] = []  # (where the bad line ends in the file, the note)
        self._reported: set[int] = set()

    def append(self, record: Mapping[str, Any]) -> None:
        """Append `record` as one line; written whole and fsynced before returning.

        Raises HistoryWriteError (naming the file and why) when it cannot be written."""
        data = (json.dumps(dict(record), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
        except OSError as exc:
            raise HistoryWriteError(self.path, _reason(exc)) from exc
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size > 0 and os.lseek(fd, size - 1, os.SEEK_SET) >= 0 and os.read(fd, 1) != b"\n":
                data = b"\n" + data  # a torn last line: start this record on a line of its own
                self._notes.append((size, f"{self.path}: its last record was torn (an app stopped while"
                                          " writing it); it is skipped when read, and the new record"
                                          " starts on a line of its own"))
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError as exc:
            raise HistoryWriteError(self.path, _reason(exc)) from exc
        finally:
            os.close(fd)  # closing releases the lock

    def read(self) -> list[dict[str, Any]]:
        """Every whole record so far, oldest first ([] when there is no file yet).

        A line that is not a JSON object (a torn line left by a killed process) is skipped and
        noted in `problems`; it never makes the read fail."""
        self.problems = []
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        records: list[dict[str, Any]] = []
        end = -1
        for number, line in enumerate(raw.split(b"\n"), start=1):
            end += len(line) + 1  # where this line's newline is (or would be)
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                self._note(end, f"{self.path} line {number}: skipped a torn or damaged record"
                           f" (an app stopped while writing it?): {' '.join(str(exc).split())}")
                continue
            if not isinstance(record, dict):
                self._note(end, f"{self.path} line {number}: skipped, not a JSON object")
                continue
            records.append(record)
        return records

    def _note(self, end: int, note: str) -> None:
        self.problems.append(note)
        self._notes.append((end, note))

    def new_problems(self) -> list[str]:
        """The notes of the last `read()`, and of a torn tail an `append` found, not handed out
        before (each is reported once)."""
        fresh: list[str] = []
        for end, note in self._notes:
            if end not in self._reported:  # one bad line is reported once, by append or by read
                self._reported.add(end)
                fresh.append(note)
        self._notes.clear()
        return fresh
