"""A nested object as a titled group of its fields."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QGroupBox, QVBoxLayout, QWidget

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.schema import FieldSpec
from livefill.widgets.field_base import FieldWidget
from livefill.widgets.form_signals import FormSignals

WidgetFactory = Callable[[FieldSpec, FormModel, FormSignals], QWidget]


class GroupField(FieldWidget):
    """A QGroupBox titled with the object's label, holding one widget per child field."""

    stacked = True
    answer_marked = False  # its fields are marked, each for itself
    factory: WidgetFactory | None = None  # set by the form view (avoids an import cycle)

    def make_editor(self) -> QWidget:
        box = QGroupBox()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(6, 6, 6, 6)
        self.children_widgets: list[QWidget] = []
        factory = type(self).factory
        if factory is not None:
            for child in self.spec.children:
                widget = factory(child, self.form, self.signals)
                layout.addWidget(widget)
                self.children_widgets.append(widget)
        return box

    def set_editable(self, editable: bool) -> None:
        pass  # each child handles its own

    def show_value(self, text: str, value: Any, state: FieldState) -> None:
        pass
