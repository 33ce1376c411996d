"""How `livefill compare` prints its lanes: JSON lines (`--json`), or a table for people.

One JSON object per lane, one per line, in lane order (`LaneResult.as_json`: every figure, null
where unknown). The table has one row per lane and says under it which fields a committed lane
got wrong (why a lane did not commit goes to stderr, `livefill.cli.compare_run`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from livefill.cli.compare_result import LaneResult
from livefill.session.metrics import format_seconds

__all__ = ["print_json", "print_table"]

_HEADERS = ("lane", "provider", "mode", "outcome", "first value", "first settled", "all settled",
            "deltas", "bytes", "never true", "right", "tokens in/out")


def print_json(results: Sequence[LaneResult], out: TextIO) -> None:
    """One JSON object per lane, one per line."""
    for result in results:
        out.write(json.dumps(result.as_json(), ensure_ascii=False) + "\n")
    out.flush()


def _who(r: LaneResult) -> str:
    who = r.provider + (" (live)" if r.live else " (demo)")
    extras = [x for x in (r.model if r.live else None, "fine-grained" if r.fine_grained else None,
                          r.structured if r.structured != "tools" else None) if x]
    return who + (" " + ", ".join(extras) if extras else "")


def _count(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _row(r: LaneResult) -> tuple[str, ...]:
    right = "—" if r.fields_right is None else f"{r.fields_right}/{r.fields_total}"
    tokens = "—" if r.tokens_in is None and r.tokens_out is None else f"{_count(r.tokens_in)}/{_count(r.tokens_out)}"
    deltas = f"{r.deltas:,}" if not r.records else f"{r.deltas:,} + {r.records:,} records"
    return (
        str(r.lane), _who(r), r.mode, r.outcome, format_seconds(r.first_value_s), format_seconds(r.first_settled_s),
        format_seconds(r.all_settled_s), deltas, f"{r.bytes:,}", str(r.never_true), right, tokens,
    )


def print_table(results: Sequence[LaneResult], out: TextIO) -> None:
    """The lanes as a table, then a line for each committed lane that got a field wrong."""
    rows = [_HEADERS, *(_row(r) for r in results)]
    widths = [max(len(row[c]) for row in rows) for c in range(len(_HEADERS))]
    for n, row in enumerate(rows):
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    for r in results:  # (why a lane did not commit is said on stderr)
        if r.committed and r.wrong_fields:
            shown = ", ".join(r.wrong_fields[:5]) + (f" and {len(r.wrong_fields) - 5} more" if len(r.wrong_fields) > 5 else "")
            out.write(f"lane {r.lane}: not right: {shown}\n")
    out.flush()
