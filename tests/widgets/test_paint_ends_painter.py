"""A widget's paint ends its QPainter even when drawing raises.

PySide6 reports an exception raised inside `paintEvent` and carries on; a traceback kept of it
(sys.last_traceback, pytest-qt's capture, a stack sampler) holds the paint's frame, so a painter left for the garbage collector stays
active after the paint event: Qt then warns "QBackingStore::endPaint() called with active painter"
and the painter, destroyed later (on whichever thread drops the last reference), could crash the
process (`bench_ui.py` with BENCH_STALLS, whose sampler holds the GUI thread's frames, segfaulted so).
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QStylePainter

from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import SCHEMAS
from livefill.gui import run_toolbar
from livefill.widgets import elided_label, table_paint
from livefill.widgets.form_view import FormView
from livefill.widgets.table_field import FieldTable


class _Boom(RuntimeError):
    pass


def _boom(*_args, **_kwargs):
    raise _Boom("drawing failed")


def _recording(base: type, made: list) -> type:
    class Recording(base):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            made.append(self)

    return Recording


def _paint_failing(qtbot, monkeypatch, widget, patches) -> list[BaseException]:
    """Repaint `widget` with `patches` (target, name, value) applied, one of which makes its
    drawing raise; the exceptions, kept with their tracebacks (as PySide6 and pytest-qt keep
    them): the paint's frames stay alive after the paint event.

    The patches are undone inside the capture, and the paints still pending then are let run
    on the real code: a paint Qt posts late (a loaded machine) must not raise after the capture."""
    kept: list[BaseException] = []
    with qtbot.capture_exceptions() as captured:
        with monkeypatch.context() as patching:
            for target, name, value in patches:
                patching.setattr(target, name, value)
            try:
                widget.repaint()
                qtbot.wait(20)
            except _Boom as raised:  # PySide6 may raise it out of repaint() instead
                kept.append(raised)
        widget.update()
        qtbot.wait(20)
    kept.extend(value for _kind, value, _tb in captured)
    return kept


def test_the_tables_own_paint_ends_its_painter_when_a_cell_raises(qtbot, monkeypatch):
    form = FormModel(SCHEMAS["catalog"])
    view = FormView(form)
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    qtbot.waitExposed(view)
    form.begin_run()
    form.apply_many([(f"/items/{i}", FieldState.SETTLED, row) for i, row in enumerate(get_scenario("catalog").output["items"][:5])])
    form.commit()
    view.signals.flush()
    table = view.findChildren(FieldTable)[0]
    qtbot.wait(30)
    made: list[QPainter] = []
    kept = _paint_failing(qtbot, monkeypatch, table.viewport(), [
        (table_paint, "QPainter", _recording(QPainter, made)), (table_paint, "_paint_cells", _boom)])
    assert any(isinstance(e, _Boom) for e in kept), "the paint did not go through table_paint"
    assert made and not any(p.isActive() for p in made)


def _label():
    return elided_label.ElidedLabel("A label whose text is long enough to be elided somewhere")


def _combo():
    combo = run_toolbar.ElidingCombo()
    combo.addItem("A choice whose name is long enough to be elided")
    return combo


@pytest.mark.parametrize("make, module, painter, drawing", [
    (_label, elided_label, QPainter, (elided_label.ElidedLabel, "_lines")),
    (_combo, run_toolbar, QStylePainter, (run_toolbar.ElidingCombo, "_option")),
], ids=["elided label", "eliding combo"])
def test_a_widget_ends_its_painter_when_drawing_raises(qtbot, monkeypatch, make, module, painter, drawing):
    widget = make()
    qtbot.addWidget(widget)
    widget.resize(120, 40)
    widget.show()
    qtbot.waitExposed(widget)
    made: list[QPainter] = []
    kept = _paint_failing(qtbot, monkeypatch, widget, [
        (module, painter.__name__, _recording(painter, made)), (*drawing, _boom)])
    assert any(isinstance(e, _Boom) for e in kept)
    assert made and not any(p.isActive() for p in made)
