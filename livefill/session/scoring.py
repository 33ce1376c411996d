"""Scoring an extraction against the right answer: each expected field right, wrong or missing.

The expected answer is a JSON value (a bundled scenario's `expected.json`, or a person's file:
`load_expected`; for a document of one's own, `expected_beside` names the file looked for beside
it: `invoice.pdf` -> `invoice.expected.json`). Its fields are its leaves (`livefill.session.metrics.leaves`): every scalar by
its JSON Pointer, a table's cells by row index (`/line_items/0/sku`), a list of strings item by
item (`/tags/2`), an empty list or object as one field. Only the expected answer's fields are
scored: a field it leaves out (prose, a judgement call) is not counted, and a field the
extraction has beyond it is listed in `Score.extra` but counts neither way.

How two values compare:
- numbers as numbers: 1200 == 1200.0 (a bool is not a number: true != 1);
- strings exactly, after trimming leading and trailing whitespace (" EUR" == "EUR"; case,
  inner spacing and Unicode form count: "eur" != "EUR");
- anything else (true / false / null, an empty list or object) by equality;
- a field the extraction lacks (or has as a different shape) is missing or wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from livefill.errors import InputError
from livefill.session.metrics import leaves

__all__ = ["FieldScore", "Score", "Verdict", "expected_beside", "load_expected", "same_answer", "score"]


class Verdict(Enum):
    RIGHT = "right"
    WRONG = "wrong"
    MISSING = "missing"


@dataclass(frozen=True, kw_only=True, slots=True)
class FieldScore:
    """One expected field: its pointer, the expected and the actual value (None when missing)."""

    pointer: str
    verdict: Verdict
    expected: Any
    actual: Any = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Score:
    """Every expected field's verdict, in the expected answer's order; `extra`: the pointers of
    the extraction's leaves the expected answer does not have (not scored)."""

    fields: tuple[FieldScore, ...]
    extra: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return len(self.fields)

    @property
    def right(self) -> int:
        return sum(1 for f in self.fields if f.verdict is Verdict.RIGHT)

    @property
    def wrong(self) -> tuple[str, ...]:
        """The pointers of the expected fields not right (wrong or missing), in order."""
        return tuple(f.pointer for f in self.fields if f.verdict is not Verdict.RIGHT)

    def of(self, verdict: Verdict) -> tuple[FieldScore, ...]:
        """The fields with `verdict`."""
        return tuple(f for f in self.fields if f.verdict is verdict)

    def verdicts(self) -> dict[str, Verdict]:
        """pointer -> verdict."""
        return {f.pointer: f.verdict for f in self.fields}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_answer(actual: Any, expected: Any) -> bool:
    """Whether one extracted value is the expected one (the rules in the module docstring)."""
    if _is_number(actual) and _is_number(expected):
        return actual == expected
    if isinstance(actual, str) and isinstance(expected, str):
        return actual.strip() == expected.strip()
    if type(actual) is not type(expected):
        return False
    return bool(actual == expected)


def score(expected: Any, actual: Any) -> Score:
    """Score `actual` (an extracted object; None: nothing extracted) against `expected`."""
    got = dict(leaves(actual)) if actual is not None else {}
    deeper = _containers(got)  # the extraction has something deeper there (a list where a scalar was)
    fields: list[FieldScore] = []
    for pointer, want in leaves(expected):
        if pointer not in got:
            verdict = Verdict.WRONG if pointer in deeper else Verdict.MISSING
            fields.append(FieldScore(pointer=pointer, verdict=verdict, expected=want))
            continue
        value = got[pointer]
        verdict = Verdict.RIGHT if same_answer(value, want) else Verdict.WRONG
        fields.append(FieldScore(pointer=pointer, verdict=verdict, expected=want, actual=value))
    wanted = {f.pointer for f in fields}
    covered = _containers(wanted)  # an expected field sits under it (a scalar where a list was)
    extra = tuple(p for p in got if p not in wanted and p not in covered)
    return Score(fields=tuple(fields), extra=extra)


def _containers(pointers: Iterable[str]) -> set[str]:
    """Every pointer something in `pointers` sits under ("" and the proper ancestors: a "/" in a
    pointer always separates tokens). One pass, instead of a scan of all of them per question."""
    out: set[str] = set()
    for p in pointers:
        i = p.rfind("/")
        while i >= 0:
            parent = p[:i]
            if parent in out:
                break  # and so are its own ancestors
            out.add(parent)
            i = p.rfind("/", 0, i)
    return out


def load_expected(path: str | Path) -> Any:
    """The expected answer in the JSON file `path`; InputError (one line) if it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: the expected answer must be a JSON object, like the extraction")
    return value


def expected_beside(document: str | Path) -> Path:
    """Where the expected answer of `document` is looked for: beside it, `NAME.expected.json`."""
    path = Path(document)
    return path.with_name(path.stem + ".expected.json")
