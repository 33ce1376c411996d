"""The source pane wraps every line at a word boundary: nothing cut at its edge, nothing to scroll
sideways, and the rows of a columned document whole where the pane has room. Real widgets."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from livefill.extraction.scenarios import get_scenario
from livefill.widgets.source_view import FIT_COLUMNS, MIN_SCALE, SourceView, font_size

BREAKS_AFTER = (" ", "\t", "-", "/")  # where a line may break at a word boundary (Unicode line breaking)


def lines_of(view: SourceView) -> list[tuple[str, list[str]]]:
    """Each block's text and the lines it is laid out in."""
    out = []
    block = view.document().firstBlock()
    while block.isValid():
        layout, text = block.layout(), block.text()
        parts = [text[layout.lineAt(i).textStart():layout.lineAt(i).textStart() + layout.lineAt(i).textLength()]
                 for i in range(layout.lineCount())] if layout is not None else [text]
        out.append((text, parts))
        block = block.next()
    return out


def breaks_at_words(view: SourceView) -> bool:
    """Every wrapped line ends where a word does (no word is cut in two)."""
    for _text, parts in lines_of(view):
        for part, following in zip(parts, parts[1:]):
            if not (part.endswith(BREAKS_AFTER) or following.startswith(" ")):
                return False
    return True


def _shown(qtbot, text: str, width: int, *, font_pt: float | None = None) -> SourceView:  # noqa: ANN001
    view = SourceView()
    qtbot.addWidget(view)
    if font_pt is not None:
        view.setStyleSheet(f"font-size: {font_pt}pt;")
    view.resize(width, 400)
    view.show()
    qtbot.waitExposed(view)
    view.show_document(text)
    QApplication.processEvents()
    return view


# 560 px: the source pane of the window at 1,280 px; 370 and 240: in presentation mode with the
# History panel open (its type 1.3 times larger); 200: a pane dragged narrow.
@pytest.mark.parametrize(("width", "scale"), [(560, 1.0), (370, 1.3), (240, 1.3), (200, 1.0)])
@pytest.mark.parametrize("scenario", ["invoice", "catalog", "ticket"])
def test_every_line_wraps_at_a_word_and_nothing_is_cut(qtbot, width, scale, scenario):
    # The pane showed "Payment by bank transfer to IBAN DE44 2005 0550 123" and "accounts@nordwind-office.ex":
    # its lines were not wrapped, cut at the pane's edge.
    base = QApplication.font().pointSizeF()
    view = _shown(qtbot, get_scenario(scenario).document, width, font_pt=round(base * scale) if scale != 1.0 else None)
    assert view.horizontalScrollBar().maximum() == 0  # nothing off to the right
    room = view.viewport().width()
    block = view.document().firstBlock()
    while block.isValid():
        layout = block.layout()
        for i in range(layout.lineCount()):
            assert layout.lineAt(i).naturalTextWidth() <= room + 1, (block.text(), width)
        block = block.next()
    assert breaks_at_words(view), [parts for _t, parts in lines_of(view) if len(parts) > 1][:3]
    assert view.toPlainText() == get_scenario(scenario).document  # the text itself is untouched


def test_a_columned_documents_rows_stay_whole_where_80_columns_fit(qtbot):
    view = _shown(qtbot, get_scenario("invoice").document, 2000)
    base = font_size(view.font())
    assert font_size(view.text_font()) == base  # wide: the widget's own size
    view.resize(560, 400)
    QApplication.processEvents()
    assert base * MIN_SCALE - 1 <= font_size(view.text_font()) <= base
    for text, parts in lines_of(view):
        if len(text) <= FIT_COLUMNS:
            assert parts == [text], parts  # a row of the table is one line
