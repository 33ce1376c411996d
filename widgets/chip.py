"""A chip: one short value in a rounded box, carrying a `state` property like a field."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from livefill.widgets.field_base import repolish


class Chip(QLabel):
    """A small label styled as a chip (QSS `QLabel#chip`); `set_state` restyles it."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("chip")
        self.setProperty("state", "empty")

    def set_state(self, state: str) -> None:
        """Set the `state` property and re-apply the style sheet."""
        if self.property("state") != state:
            self.setProperty("state", state)
            repolish(self)
