"""The words over the timeline's end lines never overlap.

With five lanes ending within a tenth of a second the timeline drew every "end" on top of the
others. The real TimelineView is painted (on screen and exported) and the rectangles of the words
it draws in the end-line row are compared: none may intersect, and every word is still said.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetrics, QPainter

from livefill.session.timeline import TimelineModel
from livefill.widgets.timeline import _TOP, TimelineView, _end_word, place_end_labels

LANES = ["naive", "partial", "settled", "hybrid", "blocking"]
ENDS = {"naive": (1.91, "committed"), "partial": (1.97, "committed"), "settled": (2.56, "committed"),
        "hybrid": (2.51, "committed"), "blocking": (1.86, "committed")}


def _model(ends: dict[str, tuple[float, str]]) -> TimelineModel:
    tl = TimelineModel()
    for lane in LANES:
        tl.add_lane(lane)
    tl.set_fields(["/customer_name", "/notes"])
    tl.start(10.0)
    for lane, (t, outcome) in ends.items():
        tl.record(lane, "/customer_name", "settled", 10.0 + t * 0.8)
        tl.stop(lane, 10.0 + t, outcome)
    return tl


def _drawn_words(monkeypatch, view: TimelineView, width: int) -> list[tuple[QRectF, str, float]]:
    drawn: list[tuple[QRectF, str, float]] = []
    real = QPainter.drawText

    def recording(self, *args):  # noqa: ANN001, ANN002, ANN202
        if len(args) == 3 and isinstance(args[0], QRectF) and isinstance(args[2], str):
            drawn.append((QRectF(args[0]), args[2], QFontMetrics(self.font()).horizontalAdvance(args[2])))
        return real(self, *args)

    monkeypatch.setattr(QPainter, "drawText", recording)
    view.resize(width, view.sizeHint().height())
    view.grab()
    monkeypatch.setattr(QPainter, "drawText", real)
    return [(rect, text, w) for rect, text, w in drawn if rect.top() == _TOP - 14]  # the row over the end lines


@pytest.mark.parametrize("width", [500, 900, 1600])
@pytest.mark.parametrize("ends", [ENDS, {**ENDS, "hybrid": (1.93, "stopped"), "settled": (1.95, "failed: HTTP 400")}],
                         ids=["five-commits", "with-stop-and-failure"])
def test_end_words_never_overlap(qtbot, monkeypatch, width, ends):
    view = TimelineView(_model(ends), clock=lambda: 13.0)
    qtbot.addWidget(view)
    labels = _drawn_words(monkeypatch, view, width)
    assert labels
    inked = [QRectF(rect.center().x() - w / 2, rect.top(), w, rect.height()) for rect, _, w in labels]  # the text's own width
    for i, a in enumerate(inked):
        assert 0 <= a.left() and a.right() <= width
        for b in inked[i + 1:]:
            assert not a.intersects(b), (width, [t for _, t, _ in labels])
    said = {word for _, text, _ in labels for word in text.split(" / ")}
    assert said == {_end_word(outcome) for _, outcome in ends.values()}


def test_labels_far_apart_stay_apart_and_touching_ones_share_one():
    advance = lambda text: 7.0 * len(text)  # noqa: E731
    apart = place_end_labels([(100.0, "end"), (300.0, "Stop")], advance, 0, 1000)
    assert [text for _, _, text in apart] == ["end", "Stop"]
    close = place_end_labels([(100.0, "end"), (104.0, "end"), (108.0, "end")], advance, 0, 1000)
    assert [text for _, _, text in close] == ["end"]
    left, width, _ = close[0]
    assert left < 104.0 < left + width  # over the middle of the lines it labels
    edge = place_end_labels([(998.0, "failed")], advance, 0, 1000)
    assert edge[0][0] + edge[0][1] <= 1000  # kept inside the picture
