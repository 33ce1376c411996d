"""What `livefill extract` prints: JSON lines for programs, or a live table for people.

How this works
--------------
`FormWatcher` subscribes to the run's `FormModel` and turns every update into the changes a form
would show: a field (a scalar, or an empty list/object) whose state is provisional or settled and
whose (state, value) differs from what was last reported for it. Containers are reported only
when they settle empty (their leaves are reported otherwise), the root never, nor a field going
back to pending or empty (the final line says how the run ended). A long provisional string is
reported as it grows by half again, not at every delta (`REPORT_EVERY_UP_TO`, `GROWTH`), so the
output stays linear in the value's length. Each change goes to a sink with its time in ms since
the run's t0.

Two sinks:

- `JsonLines`: one line per change, `{"t_ms", "pointer", "state", "value"}`, flushed at once, then
  one `{"result", "reason", "object"}` line.
- `LiveTable`: the table of pointer/state/value, in the schema's order, and a progress line ("12/15 fields settled ·
  3.2 s · 4.1 KB"). On a terminal it redraws in place (plain ANSI: cursor up, clear to the end),
  at most `FPS` times a second; elsewhere it prints the final table once.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from livefill.extraction import pointer as jp
from livefill.extraction.documents import format_bytes
from livefill.extraction.form import FieldState, FormModel, FormUpdate
from livefill.extraction.json_doc import MISSING
from livefill.extraction.schema import FieldKind, FieldSpec
from livefill.wording import unit

__all__ = ["Change", "FormWatcher", "JsonLines", "LiveTable", "Outcome", "Sink", "pointer_order", "schema_order"]

SHOWN_STATES = {FieldState.PROVISIONAL: "provisional", FieldState.SETTLED: "settled"}


@dataclass(frozen=True, slots=True)
class Change:
    """One change the form would show."""

    t_ms: int
    pointer: str
    state: str  # "provisional" | "settled"
    value: Any


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the run ended, as the final line says it."""

    result: str  # "committed" | "failed" | "stopped"
    reason: str
    object: Any = None  # the committed object (None unless committed)


def pointer_order(pointer: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key putting pointers in document-like order (/items/2 before /items/10)."""
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in jp.parse(pointer))


def schema_order(fields: Iterable[FieldSpec]) -> Callable[[str], tuple[tuple[int, int | str], ...]]:
    """A sort key putting pointers in the order the schema (the form's `fields`) lists them, array
    elements by index (/items/2 before /items/10); a key the schema does not have goes after its
    known siblings, alphabetically."""
    ranks: dict[tuple[str, ...], int] = {}  # a path, array indices as "*" -> its place in the schema

    def add(base: tuple[str, ...], spec: FieldSpec) -> None:
        path = (*base, *jp.parse(spec.pointer)) if base else tuple(jp.parse(spec.pointer))
        for i in range(len(base) + 1, len(path) + 1):  # (a table column's own groups too)
            ranks.setdefault(path[:i], len(ranks))
        for child in spec.children:
            add((*path, "*") if spec.kind is FieldKind.TABLE else (), child)

    for spec in fields:
        add((), spec)
    unknown = len(ranks)

    def key(pointer: str) -> tuple[tuple[int, int | str], ...]:
        out: list[tuple[int, int | str]] = []
        path: tuple[str, ...] = ()
        for token in jp.parse(pointer):
            if jp.is_index(token):
                path = (*path, "*")
                out.append((0, int(token)))
            else:
                path = (*path, token)
                rank = ranks.get(path, unknown)
                out.append((1, f"{rank:09d}" if rank < unknown else f"{unknown:09d}{token}"))
        return tuple(out)

    return key


def _shown(value: Any, state: FieldState) -> bool:
    """A value the form shows as one field: a scalar, or a table / group that settled empty (a row
    or table just begun is not a value yet: its fields are reported as they arrive)."""
    if value is MISSING:
        return False
    if isinstance(value, (dict, list)):
        return not value and state is FieldState.SETTLED
    return True


class FormWatcher:
    """Reports every change `form` would show to `emit` (see the module docstring)."""

    def __init__(
        self, form: FormModel, emit: Callable[[Change], None], *, clock: Callable[[], float], t0: float
    ) -> None:
        self.form = form
        self.emit = emit
        self.clock = clock
        self.t0 = t0
        self._last: dict[str, tuple[str, type, Any]] = {}  # pointer -> (state, type, value) last reported
        #: the schema's order of fields: changes of one update are reported in it
        self.order = schema_order(form.fields)
        self._unsubscribe = form.subscribe(self._on_update)

    def close(self) -> None:
        """Stop following the form."""
        self._unsubscribe()

    def _on_update(self, update: FormUpdate) -> None:
        form = self.form
        pointers = form.states().keys() if update.reset else update.pointers
        t_ms = int(round((self.clock() - self.t0) * 1000))
        for pointer in sorted((p for p in pointers if p), key=self.order):
            field_state = form.state(pointer)
            state = SHOWN_STATES.get(field_state)
            if state is None:
                continue
            value = form.value(pointer)
            if not _shown(value, field_state):
                continue
            # type beside value: 1, 1.0 and true differ; shown containers are empty, so compare whole
            key = (state, type(value), value)
            last = self._last.get(pointer)
            if last == key or (last is not None and _coalesced(last, key)):
                continue
            self._last[pointer] = key
            self.emit(Change(t_ms, pointer, state, value))


#: A provisional string up to this long is reported at every change; a longer one when it has
#: grown by GROWTH times since it was last reported (and always when it settles), so what is
#: printed for a value stays proportional to its length instead of its square.
REPORT_EVERY_UP_TO = 256
GROWTH = 1.5


def _coalesced(last: tuple[str, type, Any], new: tuple[str, type, Any]) -> bool:
    """`new` (a provisional string that only grew) can wait for more growth before it is reported."""
    state, kind, value = new
    if state != "provisional" or kind is not str or last[:2] != new[:2] or len(value) <= REPORT_EVERY_UP_TO:
        return False
    return len(value) < GROWTH * len(last[2]) and value.startswith(last[2])


def _dumps(data: Any) -> str:
    """One JSON line: text as is, except the characters some readers split lines on (U+0085,
    U+2028, U+2029), escaped; json.dumps escapes the other ones (control characters) itself."""
    text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "))
    for char in _LINE_BREAKS:
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


_LINE_BREAKS = ("\x85", "\u2028", "\u2029")
_ONE_ROW = {ord(c): "⏎" for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"} | {ord("\t"): " "}
"""A value's line breaks shown as ⏎ in its one table row (and tabs as spaces)."""


class _Output:
    """Text to `out`, flushed; a closed pipe (`| head`) silences it and calls `on_closed` once."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.on_closed: Callable[[], None] | None = None  # the reader went away: stop the run
        self.closed = False

    def _text(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self.closed = True
            _silence(self.out)
            if self.on_closed is not None:
                self.on_closed()


class JsonLines(_Output):
    """One JSON line per change, then the final line (see the module docstring)."""

    def change(self, change: Change) -> None:
        self._write({"t_ms": change.t_ms, "pointer": change.pointer, "state": change.state, "value": change.value})

    def progress(self, *, bytes_received: int, elapsed: float) -> None:
        """(JSON lines carry no progress.)"""

    def finish(self, outcome: Outcome) -> None:
        self._write({"result": outcome.result, "reason": outcome.reason, "object": outcome.object})

    def _write(self, data: dict[str, Any]) -> None:
        self._text(_dumps(data) + "\n")


def _silence(out: TextIO) -> None:
    """Point a closed pipe's descriptor at /dev/null, so the interpreter's last flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class LiveTable(_Output):
    """The table of fields for people, redrawn in place on a terminal (see the module docstring).

    `expected`: how many fields the run should end with, when known (a demo scenario's), else the
    progress line counts the fields shown so far.
    """

    FPS = 20

    def __init__(
        self, out: TextIO, *, tty: bool, expected: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(out)
        self.tty = tty
        self.expected = expected
        self.clock = clock
        self.rows: dict[str, tuple[str, Any]] = {}
        #: how rows are sorted: the schema's order once the run sets it (`FormWatcher.order`)
        self.order: Callable[[str], Any] = pointer_order
        self.bytes_received = 0
        self.elapsed = 0.0
        self._drawn = 0  # lines of the last drawing (to move back over)
        self._drawn_at = float("-inf")

    # -- sink ---------------------------------------------------------------------------------

    def change(self, change: Change) -> None:
        self.rows[change.pointer] = (change.state, change.value)
        self._maybe_draw()

    def progress(self, *, bytes_received: int, elapsed: float) -> None:
        self.bytes_received = bytes_received
        self.elapsed = elapsed
        self._maybe_draw()

    def finish(self, outcome: Outcome) -> None:
        self._draw([self._result_line(outcome)], whole=True)

    # -- drawing ------------------------------------------------------------------------------

    def progress_line(self) -> str:
        settled = sum(1 for state, _ in self.rows.values() if state == "settled")
        total = max(self.expected or 0, len(self.rows))
        fields = unit(total, "field")
        return f"{settled}/{total} {fields} settled · {self.elapsed:.1f} s · {format_bytes(self.bytes_received)}"

    def table_lines(self, width: int) -> list[str]:
        ordered = sorted(self.rows, key=self.order)
        first = max([len("field"), *(len(p) for p in ordered)])
        second = len("provisional")
        room = max(10, width - first - second - 4)
        lines = [
            f"{'field':<{first}}  {'state':<{second}}  value",
            f"{'-' * first}  {'-' * second}  {'-' * min(room, 20)}",
        ]
        for pointer in ordered:
            state, value = self.rows[pointer]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            text = text.translate(_ONE_ROW)
            if len(text) > room:
                text = text[: room - 1] + "…"
            lines.append(f"{pointer:<{first}}  {state:<{second}}  {text}")
        return lines

    @staticmethod
    def _result_line(outcome: Outcome) -> str:
        if outcome.result == "committed":
            return "committed"
        return f"{outcome.result}: {outcome.reason}" if outcome.reason else outcome.result

    def _maybe_draw(self) -> None:
        if not self.tty:
            return
        now = self.clock()
        if now - self._drawn_at >= 1.0 / self.FPS:
            self._draw([])

    def _draw(self, tail: list[str], *, whole: bool = False) -> None:
        size = shutil.get_terminal_size((100, 24)) if self.tty else None
        table = self.table_lines(size.columns if size is not None else 100)
        if size is not None and not whole and len(table) + 1 > size.lines - 1:
            # a redraw can move back only over lines still on the screen: show the newest rows
            rows, room = table[2:], size.lines - 5  # header 2, "more above" 1, progress 1, cursor 1
            shown = rows[-room:] if room > 0 else []
            table = [*table[:2], f"… {len(rows) - len(shown)} more above", *shown]
        lines = [*table, self.progress_line(), *tail]
        back = f"\x1b[{self._drawn}F\x1b[J" if self.tty and self._drawn else ""  # to the first line drawn; clear below
        self._text(back + "\n".join(lines) + "\n")
        self._drawn = len(lines)
        self._drawn_at = self.clock()


Sink = JsonLines | LiveTable
"""Where a run's changes, progress and outcome go."""
