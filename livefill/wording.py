"""Counts with their unit, as people write them: "1 byte", "2 bytes", "1,234 bytes".

`plural(n, "byte")` is the count and its noun; `unit(n, "byte")` the noun alone, for a count
printed elsewhere ("3/1 field settled" reads wrong; "0/1 field settled" does not). Every text
that prints a count with a unit goes through one of them, so no "1 bytes" is ever shown.
"""

from __future__ import annotations

__all__ = ["plural", "unit"]


def unit(n: int, noun: str, many: str | None = None) -> str:
    """`noun` for a count of one, else its plural (`many`, or `noun` + "s")."""
    return noun if n == 1 else (many if many is not None else noun + "s")


def plural(n: int, noun: str, many: str | None = None) -> str:
    """'1 byte', '2 bytes', '1,234 bytes' (`many`: an irregular plural, "1 entry", "3 entries")."""
    return f"{n:,} {unit(n, noun, many)}"
