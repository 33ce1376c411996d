"""What one Clear emptied, kept so Undo can put it back exactly (values, states, marks, origins).

`livefill.session.session.Session.clear_forms()` keeps a `ClearedForms` until the next Start,
another clear, or a change of view, lanes or document (`session_events.ends_undo`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from livefill.extraction.form import FormModel, FormSnapshot

__all__ = ["ClearedForms"]


@dataclass(frozen=True, slots=True)
class ClearedForms:
    """The forms one Clear emptied, each with what it held, and what Undo says for them."""

    undo: str  # "Undo clear form" / "Undo clear all lanes"
    forms: tuple[tuple[FormModel, FormSnapshot], ...]

    @classmethod
    def clear(cls, forms: Iterable[FormModel], undo: str) -> ClearedForms:
        """Empty `forms`, keeping what each held."""
        return cls(undo, tuple((form, form.clear()) for form in forms))

    def put_back(self) -> None:
        """Put back exactly what the clear emptied."""
        for form, snapshot in self.forms:
            form.put_back(snapshot)
