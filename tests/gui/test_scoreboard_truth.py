"""The compare view's scoreboard judges a run by its own final values, never by an earlier run's.

Issue 26, item 2: after the invoice demo, a replay of the real model's invoice recording counted
"values shown that were never true" for the partial and settled lanes (their cards red) while it
ran, against the demo run's values, and dropped to 0 at commit. While a run's final values are
unknown its counts say "so far" and accuse nobody (no warning sign, no red card, no bold); at the
end each lane is judged by the run's own result.
"""

from __future__ import annotations

from livefill.widgets.metrics_table import ROWS
from tests.gui.conftest import arun, wait_until

MENU_TEXT = "Real model: invoice (SmolLM2)"


def recording_action(window, text: str):
    """The File → Recordings menu item called `text` (the menu as it is when it opens)."""
    window.recordings.rebuild_menu()
    for action in window.recordings.menu.actions():
        if action.text() == text:
            return action
    raise AssertionError(f"no {text!r} in File → Recordings")


class Watch:
    """What every lane's header and the metrics table show at each change of a lane's metrics."""

    def __init__(self, view) -> None:
        self.view = view
        self.seen: list[tuple[str, bool, bool, str, str, str, bool]] = []
        self._unsubscribes = [lane.metrics.subscribe(lambda lane=lane: self._look(lane)) for lane in view.lanes]

    def _look(self, lane) -> None:
        s = lane.metrics.summary()
        if s.displays == 0:
            return
        lane.header.refresh()
        table = self.view.metrics_table
        table.refresh()
        col = self.view.lanes.index(lane)
        cell = table.item([key for key, _, _ in ROWS].index("never_true"), col)
        self.seen.append((
            lane.title, s.outcome is None, bool(lane.header.property("neverTrue")),
            lane.header.counts_label.text(), table.cell_text("never_true", col), cell.toolTip(), cell.font().bold(),
        ))

    def close(self) -> None:
        for unsubscribe in self._unsubscribes:
            unsubscribe()


def test_a_replay_after_the_demo_is_judged_by_its_own_values_and_accuses_nobody_while_it_runs(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"], provider="anthropic", replay_speed=0)
    view = window.compare_view

    async def scenario():
        window.start()  # the invoice demo first: its final values must not judge the replay
        await wait_until(lambda: not window.active, timeout=30)
        assert view.lane(0).metrics.summary().accuses  # the demo's naive lane: judged, red
        recording_action(window, MENU_TEXT).trigger()
        assert window.session.replay is not None
        watch = Watch(view)
        window.start()
        await wait_until(lambda: not window.active, timeout=60)
        watch.close()
        return watch.seen

    seen = arun(qloop, scenario(), timeout=90)
    running = [entry for entry in seen if entry[1]]
    assert {title for title, *_ in running} == {"naive", "partial", "settled"}
    for title, _, red, counts, cell, tip, bold in running:
        assert not red, f"{title}: red card while the run's truth is unknown: {counts}"
        assert "⚠" not in counts and "<b>" not in counts and "so far" in counts, (title, counts)
        assert "⚠" not in cell and cell.endswith("so far") and not bold, (title, cell)
        assert "once it commits" in tip
    # the honest lanes never showed a value the run contradicted: 0 so far, all the way
    assert all(cell == "0 so far" for title, _, _, _, cell, _, _ in running if title != "naive")
    # the naive lane's fragments ("M", "MARC", ...) were replaced by the run itself: counted so far
    assert any(cell != "0 so far" for title, _, _, _, cell, _, _ in running if title == "naive")

    naive, partial, settled = (lane.metrics.summary() for lane in view.lanes)
    assert all(s.outcome == "committed" and s.final_known for s in (naive, partial, settled))
    assert (partial.never_true, settled.never_true) == (0, 0)
    assert naive.never_true > 0 and naive.examples[0][0] == "/customer_name"
    for lane in view.lanes:
        lane.header.refresh()
    view.metrics_table.refresh()
    assert view.lane(0).header.property("neverTrue") is True
    assert f"⚠ {naive.never_true}" in view.lane(0).header.counts_label.text()
    assert view.metrics_table.cell_text("never_true", 0) == f"⚠ {naive.never_true}"
    assert [view.metrics_table.cell_text("never_true", i) for i in (1, 2)] == ["0", "0"]
    assert not view.lane(1).header.property("neverTrue") and not view.lane(2).header.property("neverTrue")
