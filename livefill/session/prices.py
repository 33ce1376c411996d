"""What a person pays per model, as they entered it: `Price`, and a run's cost from its tokens.

livefill ships no prices: the table is empty until someone fills it in (File → Settings…), and
a cost is shown only for a model it names, and only when the provider reported both its token
counts. A price is per million tokens, input and output apart, in whatever currency the person
thinks in (the cost is in the same one; no symbol is added). The table is part of `RunSettings`
(`prices`) and remembered with the app's settings (livefill.session.app_settings), as JSON text:
`prices_json` / `parse_prices`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Price", "check_prices", "cost", "format_cost", "parse_prices", "price_of", "prices_json"]

PER = 1_000_000
"""A price is for this many tokens."""


@dataclass(frozen=True, slots=True)
class Price:
    """`model`'s price per million input tokens and per million output tokens."""

    model: str
    input: float
    output: float

    def __post_init__(self) -> None:
        model = self.model.strip() if isinstance(self.model, str) else ""
        if not model:
            raise ValueError("a price needs the model's name")
        object.__setattr__(self, "model", model)
        for name in ("input", "output"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{model}: the {name} price must be a number ≥ 0, got {value!r}")
            object.__setattr__(self, name, float(value))


def check_prices(prices: Iterable[Price]) -> tuple[Price, ...]:
    """`prices` as a tuple, each model once (ValueError naming a model given twice)."""
    out = tuple(prices)
    seen: set[str] = set()
    for p in out:
        if not isinstance(p, Price):
            raise ValueError(f"not a price: {p!r}")
        if p.model in seen:
            raise ValueError(f"{p.model}: priced twice")
        seen.add(p.model)
    return out


def price_of(prices: Iterable[Price], model: str | None) -> Price | None:
    """The price of `model` (None: no model, or not priced)."""
    if not model:
        return None
    return next((p for p in prices if p.model == model.strip()), None)


def cost(price: Price | None, tokens_in: int | None, tokens_out: int | None) -> float | None:
    """tokens × price for both directions; None unless the price and both counts are known."""
    if price is None or tokens_in is None or tokens_out is None:
        return None
    return (tokens_in * price.input + tokens_out * price.output) / PER


def format_cost(value: float | None) -> str:
    """0.004215 -> "0.00422", 12.5 -> "12.50", None -> "—" (no currency: the person's own)."""
    if value is None:
        return "—"
    if value == 0 or value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}" if value >= 0.001 else f"{value:.2e}"


def prices_json(prices: Iterable[Price]) -> str:
    """The table as JSON text (how the settings store keeps it)."""
    return json.dumps([{"model": p.model, "input": p.input, "output": p.output} for p in prices])


def parse_prices(text: str) -> tuple[Price, ...]:
    """The table `prices_json` wrote; ValueError (one line) if it is not one."""
    try:
        rows: Any = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(rows, list):
        raise ValueError("not a list of prices")
    out = []
    for row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"not a price: {row!r}")
        out.append(Price(str(row.get("model", "")), row.get("input"), row.get("output")))  # type: ignore[arg-type]
    return check_prices(out)
