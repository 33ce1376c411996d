"""Labels that can be cut: a shorter form or an "…", never a word cut off mid-way, the whole text
in the tooltip (the document bar over the source pane; ElidedLabel's shorter forms). Real widgets."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QHBoxLayout, QWidget

from livefill.widgets.document_bar import DocumentBar
from livefill.widgets.elided_label import ElidedLabel

SIZE = "1.3 KB · ≈359 tokens"


def _bar(qtbot, width: int, *, name: str = "letter.txt", own: bool = True, buttons: bool = True) -> DocumentBar:  # noqa: ANN001
    bar = DocumentBar()
    qtbot.addWidget(bar)
    bar.open_button.setVisible(buttons)  # presentation mode hides them
    bar.paste_button.setVisible(buttons)
    bar.show_document(name, SIZE, own=own)
    bar.show_schema("invoice", own=False)
    bar.resize(width, 30)
    bar.show()
    qtbot.waitExposed(bar)
    _settle(bar)
    return bar


def _settle(bar: DocumentBar) -> None:
    """The bar laid out for its width (its fit and its layout's pending requests done)."""
    for _ in range(3):
        QApplication.processEvents()
        bar.layout().activate()


def test_a_wide_bar_says_everything(qtbot):
    bar = _bar(qtbot, 900)
    assert bar.name_label.shown_text() == "Your document: letter.txt" and not bar.name_label.elided()
    assert bar.size_label.shown_text() == SIZE and bar.schema_label.isVisible()


@pytest.mark.parametrize("buttons", [True, False])
@pytest.mark.parametrize("width", [560, 420, 360, 300, 240, 180])
def test_a_narrow_bar_shortens_its_labels_never_mid_word(qtbot, width, buttons):
    # "Your d…" said nothing: the name lost everything to the prefix and the size line. Now the
    # prefix goes first, then the bytes of the size and the schema; the name keeps its own words.
    bar = _bar(qtbot, width, buttons=buttons)
    name, size = bar.name_label, bar.size_label
    shown = name.shown_text()
    buttons_width = (bar.open_button.sizeHint().width() + bar.paste_button.sizeHint().width() + 16) if buttons else 0
    # (the buttons keep their width: a bar too narrow for them is as wide as its least width)
    if name.form_widths()[-1] + buttons_width + 20 <= bar.width():  # room for the bare name: never elided
        assert shown in ("Your document: letter.txt", "Yours: letter.txt", "✎ letter.txt"), (width, shown)
    else:
        assert shown.endswith("…") and len(shown) > 3, (width, shown)
    if shown != name.text():
        assert name.text() in name.toolTip()  # the whole name, on hover
    if name.isVisible() and shown.endswith("…"):  # elided only when even the bare name does not fit
        assert not bar.schema_label.isVisible()
    if size.isVisible():
        assert size.shown_text() in (SIZE, "≈359 tokens"), size.shown_text()
        if size.shown_text() != SIZE:
            assert SIZE in size.toolTip()
    # each label is as wide as it is drawn: nothing overlaps, nothing is cut without a mark
    for label in (name, size, bar.schema_label):
        if label.isVisible():
            assert label.fontMetrics().horizontalAdvance(label.shown_text()) <= label.contentsRect().width()


def test_the_name_goes_last(qtbot):
    # With room for "✎ letter.txt" and the token count, that is what shows (not "Your d…").
    bar = _bar(qtbot, 900, buttons=False)
    need = bar.name_label.form_widths()[-1] + bar.size_label.form_widths()[-1] + 3 * bar.layout().spacing() + 12
    bar.resize(need, 30)
    qtbot.waitUntil(lambda: bar.name_label.shown_text() == "✎ letter.txt")
    assert bar.size_label.shown_text() == "≈359 tokens" and not bar.schema_label.isVisible()


def test_shorter_forms_are_shown_where_the_whole_text_does_not_fit(qtbot):
    label = ElidedLabel("Scenario document: invoice — Invoice from Nordwind")
    label.set_shorter("Scenario: invoice — Invoice from Nordwind", "invoice — Invoice from Nordwind")
    holder = QWidget()
    QHBoxLayout(holder).addWidget(label)
    qtbot.addWidget(holder)
    widths = label.form_widths()
    assert widths == sorted(widths, reverse=True)
    holder.show()
    for width, expected in [(widths[0], label.text()), (widths[1], "Scenario: invoice — Invoice from Nordwind"),
                            (widths[2], "invoice — Invoice from Nordwind")]:
        label.setFixedWidth(width)
        qtbot.waitUntil(lambda: label.width() == width)  # noqa: B023
        assert label.shown_text() == expected
        assert label.elided() == (expected != label.text())
        if label.elided():
            assert label.text() in label.toolTip()
    label.setFixedWidth(widths[2] - 30)
    qtbot.waitUntil(lambda: label.shown_text().endswith("…"))
    assert label.shown_text().startswith("invoice") and label.toolTip() == label.text()
