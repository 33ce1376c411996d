"""What the lanes report to the timeline: a bounded number of fields, into a swappable model.

Every lane's `FormProbe` reports each field's state transitions to its `timeline`; on the catalog
scenario that is thousands of leaves (every cell of every row), far more rows than a person can
read and more than the timeline should repaint 30 times a second. `TimelineFeed` stands in for the
model: it forwards `record(lane, pointer, state, t)` for at most `max_fields` distinct fields (the
first ones announced by `set_fields`, then the first ones seen) and counts the rest. The model it
forwards to can be replaced (`model = ...`, when the set of lanes changes) without re-creating the
probes that hold the feed.

A container (the object itself, a table, one of its rows) is a row of its own, above its fields:
it settles when its closing byte arrives, after everything inside it. `rows_of(document)` lists
a document's rows in that order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from livefill.extraction import pointer as jp
from livefill.session.timeline import BAR_STATES, TimelineModel, normalise_state

__all__ = ["TimelineFeed", "DEFAULT_MAX_FIELDS", "rows_of"]

DEFAULT_MAX_FIELDS = 32
"""Rows a person can read at a glance; the timeline repaints every row ~30 times a second while lanes run."""


def rows_of(document: Any, pointer: str = "") -> list[str]:
    """Every pointer of `document` in reading order, each container before what it holds."""
    rows = [pointer]
    if isinstance(document, dict):
        for key, value in document.items():
            rows.extend(rows_of(value, jp.child(pointer, key)))
    elif isinstance(document, list):
        for i, value in enumerate(document):
            rows.extend(rows_of(value, f"{pointer}/{i}"))
    return rows


class TimelineFeed:
    """A `record()` target for `livefill.session.form_probe.FormProbe` that bounds the fields (see the module docstring)."""

    def __init__(self, model: TimelineModel | None = None, *, max_fields: int = DEFAULT_MAX_FIELDS) -> None:
        self.model = model if model is not None else TimelineModel()
        self.max_fields = max_fields
        self._fields: set[str] = set()
        self._skipped: set[str] = set()

    def set_fields(self, pointers: Iterable[str]) -> None:
        """Start over with these fields first (at most `max_fields` of them); the model's row order."""
        wanted = list(dict.fromkeys(pointers))[: self.max_fields]
        self._fields = set(wanted)
        self._skipped = set()
        self.model.set_fields(wanted)

    def record(self, lane: str, pointer: str, state: Any, t: float) -> None:
        """Forward one transition if `pointer` is (or can become) one of the fields shown."""
        if pointer not in self._fields:
            if len(self._fields) >= self.max_fields:
                if len(self._skipped) < 100_000:
                    self._skipped.add(pointer)
                return
            if normalise_state(state) not in BAR_STATES:
                return  # not on the timeline yet: takes no row
            self._fields.add(pointer)
        self.model.record(lane, pointer, state, t)

    @property
    def skipped(self) -> int:
        """How many fields were not put on the timeline (over `max_fields`)."""
        return len(self._skipped)
