"""The fault matrix's results, filled by test_fault_matrix.py and rendered by conftest.py."""

from __future__ import annotations

from typing import Any

RESULTS: dict[tuple[str, str, str], dict[str, Any]] = {}
WIRES = ["anthropic", "openai-chat", "openai-responses", "ollama"]
MODES = ["partial", "blocking", "settled", "hybrid"]


def full_size() -> int:
    """Cells of the whole matrix: every fault on every wire it applies to (FAULT_SCOPES), in every mode."""
    from livefill.demo.protocol import FaultName, fault_applies

    return sum(len(MODES) for f in FaultName for w in WIRES if fault_applies(f, w))


def cell_ok(row: dict[str, Any]) -> bool:
    return (
        row["failed"]
        and not row["committed"]
        and row["values"]
        and row["states"]
        and not row["reason"]
        and row["tasks"] == 0
        and row["open"] == 0
        and row["entries"] >= 1
        and row["hooked"] == 0
    )


def mark(row: dict[str, Any] | None) -> str:
    if row is None:
        return "·"
    if cell_ok(row):
        return "✓"
    bad = [
        name
        for name, broken in (
            ("commit", row["committed"] or not row["failed"]),
            ("values", not row["values"]),
            ("marks", not row["states"]),
            ("reason", bool(row["reason"])),
            ("task", row["tasks"] > 0),
            ("open", row["open"] > 0 or row["entries"] < 1),
            ("hook", row["hooked"] > 0),
        )
        if broken
    ]
    return "✗ " + ",".join(bad)


def render(results: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    keys = sorted(results, key=_order)
    rows = list(dict.fromkeys((k[0], k[1]) for k in keys))
    modes = [m for m in MODES if any(k[2] == m for k in keys)]
    lines = ["| fault | wire | " + " | ".join(modes) + " |", "|---|---|" + "---|" * len(modes)]
    for fault, wire in rows:
        lines.append(f"| {fault} | {wire} | " + " | ".join(mark(results.get((fault, wire, m))) for m in modes) + " |")
    ok = sum(cell_ok(r) for r in results.values())
    lines.append("")
    lines.append(
        f"{len(results)} cells run, {ok} fully restored (✓), {len(results) - ok} not (✗ names what broke); "
        "· = not run (the cell was not selected). A fault is run only on the wires it applies to "
        "(blank_line: Ollama); the demo provider refuses it on the others, so those cells are not in the matrix."
    )
    return "\n".join(lines)


def _order(key: tuple[str, str, str]) -> tuple[int, int, int]:
    from livefill.demo.protocol import FaultName

    faults = [f.value for f in FaultName]
    return faults.index(key[0]), WIRES.index(key[1]), MODES.index(key[2])
