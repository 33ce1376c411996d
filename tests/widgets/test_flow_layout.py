"""widgets/flow_layout.py: chips wrap onto new lines within the width they are given."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from livefill.widgets.flow_layout import FlowLayout


def _box(qtbot, n: int):
    box = QWidget()
    qtbot.addWidget(box)
    layout = FlowLayout(box, spacing=4)
    layout.setContentsMargins(0, 0, 0, 0)
    labels = [QLabel(f"chip number {i}") for i in range(n)]
    for label in labels:
        layout.addWidget(label)
    return box, layout, labels


def test_narrow_width_wraps_onto_more_lines(qtbot):
    box, layout, labels = _box(qtbot, 8)
    one = labels[0].sizeHint()
    wide = layout.heightForWidth(10_000)
    narrow = layout.heightForWidth(one.width() * 2 + 10)
    assert wide == one.height()
    assert narrow >= 4 * one.height()  # two chips a line, eight chips


def test_every_chip_stays_inside_the_width(qtbot):
    box, layout, labels = _box(qtbot, 12)
    width = 300
    box.resize(width, layout.heightForWidth(width))
    box.show()
    qtbot.waitExposed(box)
    for label in labels:
        assert label.geometry().right() < width
    assert len({label.geometry().y() for label in labels}) > 1


def test_hidden_widgets_take_no_room_and_insert_places_in_order(qtbot):
    box, layout, labels = _box(qtbot, 3)
    labels[1].hide()
    extra = QLabel("first")
    layout.insertWidget(0, extra)
    box.resize(10_000, layout.heightForWidth(10_000))
    box.show()
    qtbot.waitExposed(box)
    assert layout.itemAt(0).widget() is extra
    assert extra.geometry().x() == 0
    assert labels[2].geometry().x() == labels[0].geometry().right() + 1 + 4


def test_height_for_width_is_worked_out_once_per_width_until_the_layout_changes(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    labels = [QLabel(f"chip {i}") for i in range(6)]
    for label in labels:
        flow.addWidget(label)
    arranged: list[int] = []
    real = flow._arrange  # noqa: SLF001

    def counting(rect, *, apply):  # noqa: ANN001, ANN202
        if not apply:
            arranged.append(rect.width())
        return real(rect, apply=apply)

    flow._arrange = counting  # type: ignore[method-assign]  # noqa: SLF001
    first = flow.heightForWidth(120)
    assert flow.heightForWidth(120) == first and arranged == [120]  # asked again: remembered
    wide = flow.heightForWidth(2000)
    assert wide < first and arranged == [120, 2000]
    labels[0].setText("a much longer chip than before")  # the label asks its layout again
    flow.invalidate()
    assert flow.heightForWidth(120) >= first and arranged == [120, 2000, 120]
    labels[1].hide()
    flow.invalidate()
    flow.heightForWidth(120)
    assert arranged[-1] == 120 and len(arranged) == 4
