"""The extraction history: one JSON line per committed run, in the platform's user data dir.

Only committed runs are written. `append` writes a whole line under an exclusive lock and fsyncs
it before it returns, so two app instances never interleave and an acknowledged record is on
disk; a torn last line (a killed writer) is skipped and noted (`new_problems()`), never fatal. A
write that fails raises `HistoryWriteError` (one line). `delete(keys)` rewrites the file without
those records and renames it over the history, atomically. `tagged(**fields)` is a writer that
adds fields (view, lane, document) to every record it appends.

How appending, torn lines and deleting work: docs/notes/history.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from livefill.errors import LivefillError

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
    import platformdirs  # lazy: only the default path needs it (8-13 ms at import, e.g. for `livefill extract`)

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "history.jsonl"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


class HistoryReadError(LivefillError, OSError):
    """The history file exists but could not be read: one line naming the file and why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"could not read the history file {path}: {reason}")

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One whole record of the file: its key (what `delete` takes), its line number, the record."""

    key: str
    line: int
    record: dict[str, Any]


def key_of(record: Mapping[str, Any], line: bytes) -> str:
    """A record's key: its run id, else `sha256:` and a hash of its line."""
    run = record.get("run")
    if isinstance(run, str) and run:
        return run
    return "sha256:" + hashlib.sha256(line.strip()).hexdigest()[:16]


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (where the platform allows opening a directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


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
        line = json.dumps(dict(record), ensure_ascii=False, separators=(",", ":"))
        try:
            data = (line + "\n").encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate somewhere: JSON's own escape keeps it, losslessly
            data = (json.dumps(dict(record), separators=(",", ":")) + "\n").encode("ascii")
        fd = self._open_locked()
        try:
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

    def _open_locked(self) -> int:
        """The history file opened for appending, under its exclusive lock, and still the file at
        `path` (a `delete` may have replaced it while this waited for the lock)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistoryWriteError(self.path, _reason(exc)) from exc
        for _attempt in range(1000):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
            except OSError as exc:
                raise HistoryWriteError(self.path, _reason(exc)) from exc
            try:
                if fcntl is None:
                    return fd
                fcntl.flock(fd, fcntl.LOCK_EX)
                held = os.fstat(fd)
                try:
                    now = os.stat(self.path)
                except FileNotFoundError:
                    now = None
                if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                    return fd
            except OSError as exc:
                os.close(fd)
                raise HistoryWriteError(self.path, _reason(exc)) from exc
            os.close(fd)  # replaced meanwhile: open the file that is there now
        raise HistoryWriteError(self.path, "it kept being replaced while livefill tried to lock it")

    def tagged(self, **fields: Any) -> TaggedHistory:
        """A writer on this file that adds `fields` to every record it appends."""
        return TaggedHistory(self, fields)

    def entries(self) -> list[HistoryEntry]:
        """Every whole record with its key and line number, oldest first (see `read`)."""
        return self._scan()[1]

    def delete(self, keys: Iterable[str]) -> int:
        """Remove every record whose key is in `keys`, for good; how many lines were removed.

        Atomic (a new file renamed over the old one, under the lock every `append` takes); every
        other line is kept byte for byte. Raises HistoryWriteError when it cannot be done (the
        file is then as it was)."""
        wanted = set(keys)
        if not wanted:
            return 0
        if not self.path.exists():
            return 0
        fd = self._open_locked()
        temp: str | None = None
        try:
            raw = _read_all(fd)
            kept: list[bytes] = []
            removed = 0
            for line in raw.split(b"\n"):
                if not line.strip():
                    continue
                record = _parse(line)
                if record is not None and key_of(record, line) in wanted:
                    removed += 1
                    continue
                kept.append(line + b"\n")
            if removed == 0:
                return 0
            # a history reached through a symlink is rewritten where the link points: the link stays
            target = Path(os.path.realpath(self.path))
            handle, temp = tempfile.mkstemp(prefix=".history-", suffix=".tmp", dir=target.parent)
            try:
                view = memoryview(b"".join(kept))
                while view:
                    view = view[os.write(handle, view):]
                os.fsync(handle)
                mode = os.fstat(fd).st_mode & 0o777
                os.chmod(temp, mode)
            finally:
                os.close(handle)
            os.replace(temp, target)
            temp = None
            _fsync_dir(target.parent)
            return removed
        except OSError as exc:
            raise HistoryWriteError(self.path, _reason(exc)) from exc
        finally:
            if temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
            os.close(fd)

    def read(self) -> list[dict[str, Any]]:
        """Every whole record so far, oldest first ([] when there is no file yet).

        A line that is not a JSON object (a torn line left by a killed process) is skipped and
        noted in `problems`; it never makes the read fail."""
        return [entry.record for entry in self._scan()[1]]

    def _scan(self) -> tuple[bytes, list[HistoryEntry]]:
        self.problems = []
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return b"", []
        except OSError as exc:
            raise HistoryReadError(self.path, _reason(exc)) from exc
        entries: list[HistoryEntry] = []
        end = -1
        for number, line in enumerate(raw.split(b"\n"), start=1):
            end += len(line) + 1  # where this line's newline is (or would be)
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                self._note(end, f"{self.path} line {number}: skipped a torn or damaged record"
                           f" (an app stopped while writing it?): {' '.join(str(exc).split())}")
                continue
            if not isinstance(record, dict):
                self._note(end, f"{self.path} line {number}: skipped, not a JSON object")
                continue
            entries.append(HistoryEntry(key_of(record, line), number, record))
        return raw, entries

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


class TaggedHistory:
    """A writer on a `History` that adds fixed fields to every record (`History.tagged`)."""

    def __init__(self, history: History, fields: Mapping[str, Any]) -> None:
        self.history = history
        self.fields = dict(fields)

    @property
    def path(self) -> Path:
        return self.history.path

    def append(self, record: Mapping[str, Any]) -> None:
        self.history.append({**dict(record), **self.fields})

    def new_problems(self) -> list[str]:
        return self.history.new_problems()
