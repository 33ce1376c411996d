"""Widgets built and shown the way several widget tests need them."""

from __future__ import annotations

from livefill.extraction.form import FormModel
from livefill.extraction.schemas import SCHEMAS
from livefill.widgets.form_view import FormView


def shown_catalog(qtbot, width: int = 700, height: int = 600) -> tuple[FormModel, FormView]:  # noqa: ANN001
    """A catalog form's view, shown at `width` × `height` (no run yet)."""
    form = FormModel(SCHEMAS["catalog"])
    view = FormView(form)
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return form, view
