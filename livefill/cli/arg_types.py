"""argparse `type=` converters for livefill's command lines (`livefill`, `livefill animate`,
`livefill extract`, `livefill-server`): a bad value is one `error:` line naming the option and
what it takes, and exit status 2, before anything starts.

Qt-free, so `livefill extract` and `livefill-server` use them without importing Qt; the app's own
converters (compare modes, faults, frame rate) are in `gui/cli_args.py`.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

__all__ = ["Parser", "number", "whole_number", "existing_file", "output_file", "port"]


class Parser(argparse.ArgumentParser):
    """argparse, but bad usage is one line on stderr (`PROG: error: ...`) and exit 2, without the
    usage block before it."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _range_text(low: float | None, high: float | None, *, low_open: bool, whole: bool) -> str:
    fmt = (lambda x: f"{int(x):,}" if float(x).is_integer() else f"{x:g}")  # noqa: E731
    if low is not None and high is not None:
        return f"{'above ' + fmt(low) + ' and at most' if low_open else 'from ' + fmt(low) + ' to'} {fmt(high)}"
    if low is not None:
        return f"{'above' if low_open else 'at least'} {fmt(low)}"
    return f"at most {fmt(high)}" if high is not None else ("a whole number" if whole else "a number")


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           what: str = "") -> Callable[[str], float]:
    """A finite number in [low, high] ((low, high] with `low_open`); `what` adds a word of meaning."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        wanted = _range_text(low, high, low_open=low_open, whole=False) + (f" ({what})" if what else "")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"give a number {wanted}, not {text}")
        if (low is not None and (value <= low if low_open else value < low)) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"give a number {wanted}, not {text}")
        return value

    convert.__name__ = "number"  # argparse names the type in "invalid number value"
    return convert


def whole_number(low: int | None = None, high: int | None = None, *, what: str = "") -> Callable[[str], int]:
    """A whole number in [low, high]."""

    def convert(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            wanted = _range_text(low, high, low_open=False, whole=True) + (f" ({what})" if what else "")
            raise argparse.ArgumentTypeError(f"give a whole number {wanted}, not {text}")
        return value

    convert.__name__ = "whole number"
    return convert


port = whole_number(0, 65535, what="0 = any free port")
"""A TCP port."""


def existing_file(text: str) -> str:
    """A file that exists and can be read (its path as given)."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot read {text} (permission denied)")
    return text


def _either(words: tuple[str, ...]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _unwritable(path: Path, folder: Path) -> str | None:
    """Why `path` (whose nearest existing folder is `folder`) cannot be written, or None. Tried for
    real (a file made and removed at once): permission bits say nothing under root or on /proc."""
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            return exc.strerror or str(exc)
        return None
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".livefill-write-check-"):
            pass
    except OSError as exc:
        return f"{folder}: " + ("files cannot be made there" if exc.errno == errno.ENOENT else exc.strerror or str(exc))
    return None


def output_file(suffixes: tuple[str, ...] = ()) -> Callable[[str], str]:
    """A file that can be written: not a folder, in a folder that exists (or can be made) and is
    writable, with one of `suffixes` (any when empty)."""

    def convert(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError("give a file name")
        path = Path(text).expanduser()
        if suffixes and path.suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text}: the file name must end in {_either(suffixes)}" + ("" if path.suffix else " (it has no extension)")
            )
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name")
        folder = path.parent
        while not folder.exists():  # the first folder that exists must let us make the rest
            folder = folder.parent
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: {folder} is a file, not a folder")
        problem = _unwritable(path, folder)
        if problem:
            raise argparse.ArgumentTypeError(f"cannot write {text}: {problem}")
        return text

    convert.__name__ = "file"
    return convert
