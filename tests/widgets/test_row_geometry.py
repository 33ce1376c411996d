"""A field's state never moves the rows of the form (issue 26, item 11: "rows shift 2 px after a
run replaces typed values").

Two causes were found: an invalid value's 2 px border made its editor (and chip) 2 px taller, so
a typed value that was invalid, replaced by a run's valid one, moved every row below it; and the
Currency field's chip (shown during a run) is shorter than its choice box (shown while idle), so
every run moved the rows below it up and back by 4 px.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication

from livefill.extraction.form import FieldState as S
from livefill.extraction.form import FormModel
from livefill.extraction.schemas import SCHEMAS
from livefill.widgets.form_view import FormView
from tests.widgets.conftest import STYLE

DARK = STYLE.with_name("livefill-dark.qss")
TYPED = {"/customer_name": "ACME Ltd", "/invoice_number": "X-1", "/amount": 5, "/currency": "USD",
         "/issue_date": "2024-01-01", "/due_date": "2024-02-01", "/paid": True}
FINAL = {"/customer_name": "Martinez SA", "/invoice_number": "NW-2024-0417", "/amount": 1200, "/currency": "EUR",
         "/issue_date": "2024-03-04", "/due_date": "2024-04-03", "/paid": False}


def rows(view: FormView) -> dict[str, tuple[int, int]]:
    """Each one-row field's top and height in the form."""
    view.signals.flush()
    QApplication.processEvents()  # the layouts' posted requests: rows take their new sizes
    return {p: (view.field(p).mapTo(view, QPoint(0, 0)).y(), view.field(p).height()) for p in TYPED}


@pytest.mark.parametrize("style", [STYLE, DARK], ids=["light", "dark"])
def test_no_state_moves_a_row(qtbot, qapp, style: Path):
    before = qapp.styleSheet()
    qapp.setStyleSheet(style.read_text(encoding="utf-8"))
    try:
        form = FormModel(SCHEMAS["invoice"])
        view = FormView(form)
        qtbot.addWidget(view)
        view.resize(900, 900)
        view.show()
        qtbot.waitExposed(view)
        seen = {"idle, empty": rows(view)}
        for pointer, value in TYPED.items():
            form.set_value(pointer, value)
        seen["idle, typed"] = rows(view)
        form.set_value("/issue_date", "14.03.2024", invalid_reason="not a date (YYYY-MM-DD)")
        form.set_value("/currency", "XXX", invalid_reason="not one of the choices")
        seen["idle, typed invalid"] = rows(view)
        assert view.field("/issue_date").editor.property("state") == "invalid"
        form.begin_run()
        seen["run begun"] = rows(view)
        form.apply_many([(p, S.PENDING, None) for p in TYPED])
        seen["pending"] = rows(view)
        form.apply_many([("/customer_name", S.PROVISIONAL, "Mart"), ("/currency", S.PROVISIONAL, "EU")])
        seen["provisional"] = rows(view)
        form.apply_many([(p, S.SETTLED, v) for p, v in FINAL.items()])
        seen["settled"] = rows(view)
        form.apply("/amount", S.INVALID, -1, "must be greater than 0")
        form.apply("/currency", S.INVALID, "XXX", "not one of the choices")
        seen["invalid in the run"] = rows(view)
        form.apply("/amount", S.SETTLED, 1200)
        form.apply("/currency", S.SETTLED, "EUR")
        form.commit()
        seen["committed"] = rows(view)
        first = seen["idle, empty"]
        moved = {when: {p: (first[p], g[p]) for p in g if g[p] != first[p]} for when, g in seen.items()}
        assert not any(moved.values()), {when: m for when, m in moved.items() if m}
    finally:
        qapp.setStyleSheet(before)
