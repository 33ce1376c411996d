"""Labels of the window that can be cut wrap at words and end in "…", whole in their tooltip
(the History panel's; the document bar in presentation mode). Real window, offscreen."""

from __future__ import annotations

from livefill.widgets.elided_label import ElidedLabel
from tests.gui.conftest import arun, wait_until
from tests.gui.test_layout import settle, sized


def test_the_history_panels_empty_line_is_never_cut_mid_word(make_window, qloop):
    # At 1,280 × 720 with the panel open it read "No runs yet: every run of the s".
    window = make_window()
    sized(window, 1280, 720)
    panel = window.history_panel

    async def shown():
        loaded: list[int] = []
        panel.loaded.connect(loaded.append)
        window.history_action.trigger()
        await wait_until(lambda: loaded)

    arun(qloop, shown())
    label = panel.empty_label
    assert isinstance(label, ElidedLabel) and label.text().startswith("No runs yet")
    for width in (420, 300, 200):
        label.resize(width, label.heightForWidth(width))
        shown_text = label.shown_text()
        words = label.text().split()
        for line in shown_text.split("\n"):
            for word in line.removesuffix("…").split():
                assert word in words or line.endswith("…"), (width, shown_text)
        if shown_text.replace("\n", " ") != label.text():
            assert shown_text.endswith("…") and label.toolTip() == label.text()


def test_the_document_bar_in_presentation_mode_keeps_the_name(make_window, qloop, tmp_path):
    # In presentation mode with the History panel open the bar read "Your d…" / "Scenario docume…".
    path = tmp_path / "letter.txt"
    path.write_text("Dear accounting,\n", encoding="utf-8")
    window = make_window()
    sized(window, 1280, 720)

    async def opened():
        task = window.documents.open_path(path)
        assert task is not None
        await task

    arun(qloop, opened())
    window.history_action.trigger()
    window.toggle_presentation()
    settle()
    window.resize(1280, 720)
    window.top_splitter.setSizes([300, 980])  # a narrow source pane, as the History panel leaves it
    settle()
    name = window.document_bar.name_label.shown_text()
    assert name in ("Your document: letter.txt", "Yours: letter.txt", "✎ letter.txt"), name
    window.toggle_presentation()
    settle()


def test_a_narrow_lanes_mode_box_ends_in_an_ellipsis_not_mid_word(make_window, qloop):
    # A five-lane compare at 1,280 px read "naive — incorrect on purpo" in the naive lane's box.
    window = make_window(compare=["naive", "partial", "settled", "blocking", "hybrid"])
    sized(window, 1280, 720)
    combo = window.compare_view.lane(0).mode_combo
    full = combo.currentText()
    assert full.startswith("naive") and len(full) > 20
    combo.resize(120, combo.height())
    shown = combo.shown_text()
    assert shown != full and shown.endswith("…") and full.startswith(shown[:-1])
