"""ElidedLabel: the same lines, elision and tooltip; a text of the same height asks no relayout."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from livefill.widgets.elided_label import ElidedLabel

LONG = "connection lost: the peer closed the connection without sending complete message body: incomplete chunked read " * 2


def _shown(qtbot, label: ElidedLabel, width: int = 240) -> QWidget:
    holder = QWidget()
    QVBoxLayout(holder).addWidget(label)
    qtbot.addWidget(holder)
    holder.resize(width, 200)
    holder.show()
    qtbot.waitExposed(holder)
    return holder


def test_a_new_text_of_the_same_height_does_not_ask_the_layout_again(qtbot):
    label = ElidedLabel("streaming · 10 deltas", max_lines=2, min_lines=2)
    holder = _shown(qtbot, label)  # noqa: F841 - kept alive
    asked: list[int] = []
    real = label.updateGeometry
    label.updateGeometry = lambda: (asked.append(1), real())[1]  # type: ignore[method-assign]
    for n in range(11, 60):
        label.setText(f"streaming · {n} deltas")
    assert asked == []  # two lines kept (min_lines), one line of text: the height never changed
    label.setText(LONG)  # still two lines at most: the same height
    assert asked == []
    assert label.elided() and label.toolTip() == LONG


def test_a_text_that_changes_the_height_asks_the_layout(qtbot):
    label = ElidedLabel("short", max_lines=3)
    holder = _shown(qtbot, label)
    asked: list[int] = []
    real = label.updateGeometry
    label.updateGeometry = lambda: (asked.append(1), real())[1]  # type: ignore[method-assign]
    label.setText(LONG)  # three lines now
    assert asked == [1]
    qtbot.waitUntil(lambda: label.height() >= 3 * label.fontMetrics().lineSpacing())
    assert holder.layout() is not None


def test_the_remembered_lines_follow_text_width_and_font(qtbot):
    label = ElidedLabel(LONG, max_lines=2)
    holder = _shown(qtbot, label)  # noqa: F841 - kept alive
    wide, _ = label._lines(600)  # noqa: SLF001
    narrow, cut = label._lines(120)  # noqa: SLF001
    assert wide != narrow and cut
    assert label._lines(600)[0] == wide  # noqa: SLF001 - remembered, the same answer
    font = label.font()
    font.setPointSize(font.pointSize() * 2)
    label.setFont(font)
    assert label._lines(600)[0] != wide  # noqa: SLF001 - a new font: laid out again
    label.setText("two words")
    assert label._lines(600) == (["two words"], False)  # noqa: SLF001
