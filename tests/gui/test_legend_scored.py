"""The legend explains "✓ right / ✗ wrong" while the single form shows a run
scored against its expected answer, and only then; the entry's place is kept while it is hidden, so
scoring never re-flows the legend, and at the window's least size it stays on two lines.

Against the real embedded demo provider over loopback, at speed 0 (offscreen).
"""

from __future__ import annotations

from livefill.extraction.modes import Mode
from livefill.widgets.legend import MAX_LINES
from tests.gui.conftest import arun, wait_until
from tests.gui.test_layout import settle, sized

SAID = "✓ right / ✗ wrong"


def lines(legend) -> int:
    shown = [w for w in legend.entries.children() if hasattr(w, "isVisible") and w.isVisible()]
    return len({w.y() for w in shown})


def commit(window, qloop) -> None:
    async def scenario():
        window.start()
        await wait_until(lambda: window.active)
        assert not window.legend.scored.isVisible()  # a running form is not scored
        await wait_until(lambda: not window.active and window.controller.last_status is not None
                         and window.controller.last_status.phase.final, timeout=60)

    arun(qloop, scenario())
    settle()


def test_the_legend_says_right_and_wrong_only_while_the_form_is_scored(make_window, qloop):
    window = make_window(mode="partial", provider="anthropic")
    legend = window.legend
    sized(window, 500, 350)  # the window's least size
    before = (legend.minimumSizeHint().width(), legend.height(), lines(legend))
    assert not legend.scored.isVisible() and SAID not in legend.text()
    commit(window, qloop)
    assert window.field("/amount").marker.text() == "✓ right"
    assert legend.scored.isVisible() and SAID in legend.text()
    markers = [w for w in legend.scored.children() if w.objectName() == "fieldMarker"]
    assert [(m.text(), m.property("answer")) for m in markers] == [("✓ right", "right"), ("✗ wrong", "wrong")]
    assert "expected" in markers[1].toolTip()
    # no re-flow: as wide, as tall, on as many lines (at most two) as before the run was scored
    assert (legend.minimumSizeHint().width(), legend.height(), lines(legend)) == before
    assert lines(legend) <= MAX_LINES
    assert legend.scored.geometry().right() <= legend.entries.width()  # whole, not cut
    window.form.set_value("/currency", "USD")  # an edit: no longer the scored run
    settle()
    assert not legend.scored.isVisible() and SAID not in legend.text()


def test_naive_mode_says_it_shows_no_marks_and_explains_the_scored_ones(make_window, qloop):
    window = make_window(mode="naive", provider="anthropic")
    legend = window.legend
    assert legend.no_marks.isVisible() and not legend.entries.isVisible()
    commit(window, qloop)
    assert window.field("/amount").marker.text() == "✓ right"  # naive's fields are scored at commit too
    assert legend.no_marks.isVisible() and legend.scored.isVisible() and SAID in legend.text()
    assert not any(m.isVisible() for m in legend.markers)  # still no state marks to explain
    window.session.replace(mode=Mode.PARTIAL)
    settle()
    assert all(m.isVisible() for m in legend.markers) and not legend.no_marks.isVisible()
