"""The byte view scrolls a chosen field's bytes into full view (issue 26, item 11: "the
inspector's highlighted bytes sit on a half-clipped line at 720 px")."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from tests.widgets.test_wire_inspector import _invoice_inspector

POINTERS = ["/customer_name", "/amount", "/line_items/1/qty", "/line_items/2/unit_price", "/paid", "/notes"]


def line_rects(view, a: int, b: int):
    """The viewport rects of the first and the last character of document range [a, b)."""
    out = []
    for pos in (a, max(a, b - 1)):
        c = QTextCursor(view.document())
        c.setPosition(pos)
        out.append(view.cursorRect(c))
    return out


@pytest.mark.parametrize("height", [61, 95, 140])  # views a line and a half to a few lines tall
def test_a_chosen_fields_bytes_are_on_whole_lines_with_context(qtbot, height):
    w, rec, _ = _invoice_inspector(qtbot)
    w.resize(900, 600)
    w.show()
    qtbot.waitExposed(w)
    view = w.byte_view
    view.setFixedHeight(height)
    QApplication.processEvents()
    line = view.fontMetrics().lineSpacing()
    bottom = view.viewport().height()
    for pointer in POINTERS:
        w.select_pointer(pointer)
        QApplication.processEvents()
        ranges = view.highlighted_ranges()
        assert ranges, pointer
        first, _ = line_rects(view, *ranges[0])
        _, last = line_rects(view, *ranges[-1])
        assert first.top() >= 0, (pointer, first)
        if last.bottom() - first.top() + 1 <= bottom - 2 * line:  # room for the value and a line either side
            assert last.bottom() < bottom, (pointer, "its last line is cut", last, bottom)
            assert first.top() >= line - 1 and bottom - last.bottom() >= line - 1, (pointer, "no context", first, last)
        else:  # too tall for the view: it starts at the top, its first line whole
            assert first.bottom() < bottom, (pointer, first, bottom)
