"""The text a form field shows for a value (`format_value`), and with its state (`shown_text`:
the mark of a provisional one)."""

from __future__ import annotations

import json
import math
from typing import Any

from livefill.extraction.json_doc import MISSING
from livefill.extraction.schema import FieldKind, FieldSpec

__all__ = ["PROVISIONAL_MARK", "format_value", "shown_text"]


def format_value(spec: FieldSpec | None, value: Any) -> str:
    """The text a field shows for a (settled) value."""
    if value is MISSING or value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        # A decimal number with at most two places shows two (181.5 -> 181.50, like 118.0 -> 118.00);
        # one with more shows every digit it has, never rounded.
        if math.isfinite(value) and abs(value) < 1e15 and spec is not None and spec.kind is FieldKind.NUMBER:
            if round(value, 2) == value:
                return f"{value:.2f}"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if spec is not None and spec.kind is FieldKind.TABLE:
            return f"{len(value)} row{'s' if len(value) != 1 else ''}"
        return ", ".join(format_value(None, v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {format_value(None, v)}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


PROVISIONAL_MARK = "…"
"""Appended to the text of a provisional value: it is still arriving."""


def shown_text(spec: FieldSpec | None, value: Any, *, provisional: bool) -> str:
    """The text a field shows for `value`: a provisional scalar (`provisional`: the form marks
    states and the field is provisional) ends in `PROVISIONAL_MARK`."""
    text = format_value(spec, value)
    if provisional and value is not MISSING and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return text + PROVISIONAL_MARK
    return text
