"""The extraction history: one JSON line per committed run, in the platform's user data dir.

Only committed runs are written (stopped and failed attempts are not). Each line is flushed and
fsynced before `append` returns, so a crash right after a commit never loses it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

APP_NAME = "livefill"


def default_history_path() -> Path:
    """`<user data dir>/history.jsonl` (platformdirs; e.g. ~/.local/share/livefill on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "history.jsonl"


class History:
    """An append-only JSON Lines file of committed extractions."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_history_path()

    def append(self, record: Mapping[str, Any]) -> None:
        """Append `record` as one line; flushed and fsynced before returning."""
        line = json.dumps(dict(record), ensure_ascii=False, separators=(",", ":")) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def read(self) -> list[dict[str, Any]]:
        """Every record so far, oldest first ([] when there is no file yet)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.split("\n") if line]
