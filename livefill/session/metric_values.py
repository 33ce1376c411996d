"""The values lane metrics compare and print: same value or not, leaves, percentiles, durations.

Split from livefill/session/metrics.py (which re-exports the public ones): `same_value` says
whether a shown value is the final one (1200 == 1200.0 == "1200"), `_identical` whether two
displays are the same display (same type too), `leaves` lists an object's leaves with their
pointers, `percentile` is nearest-rank, `format_ms` / `format_seconds` write durations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from livefill.extraction import pointer as jp

__all__ = ["same_value", "percentile", "format_ms", "format_seconds", "leaves"]


def same_value(shown: Any, final: Any) -> bool:
    """Whether a shown value is the final value (1200 == 1200.0 == "1200"; True != 1; "" != None)."""
    if isinstance(shown, bool) or isinstance(final, bool):
        if isinstance(shown, str) and isinstance(final, bool):
            return shown.strip().lower() == ("true" if final else "false")
        return isinstance(shown, bool) and isinstance(final, bool) and shown == final
    if _is_number(shown) and _is_number(final):
        return shown == final or (math.isnan(shown) and math.isnan(final))
    if isinstance(shown, str) and _is_number(final):
        try:
            return float(shown.strip().replace(",", "")) == final
        except ValueError:
            return False
    if isinstance(shown, str) and final is None:
        return shown.strip().lower() in ("null", "none")
    if isinstance(shown, (list, tuple)) and isinstance(final, list):
        return len(shown) == len(final) and all(same_value(a, b) for a, b in zip(shown, final))
    if isinstance(shown, dict) and isinstance(final, dict):
        return shown.keys() == final.keys() and all(same_value(shown[k], final[k]) for k in shown)
    return shown == final


def percentile(ordered: list[float], q: float) -> float:
    """The `q`-th percentile (0-100) of an ascending list, nearest rank."""
    k = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


def format_ms(value: float) -> str:
    """0.0042 -> "4.2 ms", 0.0421 -> "42 ms", 1.5 -> "1.50 s"."""
    ms = value * 1000
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return format_seconds(value)


def format_seconds(value: float | None) -> str:
    """0.2149 -> "0.21 s", 12.3 -> "12.3 s", None -> "—"."""
    if value is None:
        return "—"
    if value < 10:
        return f"{value:.2f} s"
    return f"{value:.1f} s"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def leaves(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """(pointer, value) of every leaf under `value`: scalars, and empty lists/objects, in order.
    (One loop over a stack, not a generator per level: a leaf is not passed up through each.)"""
    stack: list[tuple[str, Iterator[tuple[Any, Any]], bool]] = []
    node, at = value, pointer
    while True:
        if isinstance(node, dict) and node:
            stack.append((at, iter(node.items()), True))
        elif isinstance(node, (list, tuple)) and node:
            stack.append((at, enumerate(node), False))
        else:
            yield at, node
        while stack:
            base, items, keyed = stack[-1]
            step = next(items, None)
            if step is not None:
                key, node = step
                at = jp.child(base, key) if keyed else f"{base}/{key}"
                break
            stack.pop()
        else:
            return


def _is_empty(value: Any) -> bool:
    return value is None or value == ""


def _is_blank(value: Any) -> bool:
    """"" and empty containers: a field, row or table with nothing in it yet."""
    return isinstance(value, (str, list, dict, tuple)) and not value


def _identical(a: Any, b: Any) -> bool:
    """Same value and same type (1 and 1.0 and True shown are different displays)."""
    if type(a) is not type(b):
        return False
    try:
        return a == b
    except Exception:  # noqa: BLE001 - exotic values compare as different
        return json.dumps(a, default=str) == json.dumps(b, default=str)
