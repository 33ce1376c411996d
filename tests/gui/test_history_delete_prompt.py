"""The History panel's delete prompt shows the history file's path whole, on a line of its own
(issue 26, item 11: "the delete prompt splits its path mid-word")."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QMessageBox

from livefill.recording.history import History
from tests.gui.conftest import arun, wait_until, window_on
from tests.gui.test_history_panel import _show


def prompt(window, qloop) -> QMessageBox:
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_0", "label": "invoice · anthropic",
                           "schema": "invoice", "provider": "anthropic", "mode": "partial",
                           "extraction": {"customer_name": "Person"}})
    _show(window, qloop)
    panel = window.history_panel
    assert panel.select("run_0")
    panel.delete_button.click()
    box = window.findChild(QMessageBox, "historyDeleteBox")

    async def shown():
        await wait_until(lambda: box.isVisible())
    arun(qloop, shown())
    return box


@pytest.mark.parametrize("depth", [1, 6])  # a short path, and one longer than the box is wide
def test_the_delete_prompt_shows_the_path_on_one_line_never_cut_mid_word(qapp, qloop, demo_server, tmp_path, depth):
    folder = tmp_path.joinpath(*[f"a-rather-long-folder-name-{i}" for i in range(depth)])
    folder.mkdir(parents=True)
    path = folder / "history.jsonl"
    window = window_on(demo_server, History(path), speed=0)
    window.show()
    box = prompt(window, qloop)
    try:
        assert str(path) not in box.text() and "/" not in box.text()  # the sentence holds no path to wrap
        assert box.text().startswith("Delete the run of ") and box.text().endswith("It cannot be brought back.")
        assert box.toolTip() == str(path)  # the whole path, however long
        shown = box.informativeText()
        label = box.findChild(QLabel, "qt_msgbox_informativelabel")
        assert label is not None and label.isVisible() and label.text() == shown
        # on one line: the label is one line tall and the path fits its width
        assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
        assert label.contentsRect().height() < 2 * label.fontMetrics().lineSpacing()
        if shown != str(path):  # too long: its middle gives way, its start and its file name stay
            head, _, tail = shown.partition("…")
            assert str(path).startswith(head) and str(path).endswith(tail) and tail.endswith("history.jsonl")
        if depth == 6:  # longer than any box is wide
            assert shown != str(path)
        box.grab().save(str(tmp_path / f"delete-prompt-{depth}.png"))
    finally:
        box.button(QMessageBox.StandardButton.Cancel).click()
        arun(qloop, window.shutdown())
        window.close()
        window.deleteLater()
