"""A run's end is scored on the event loop's next turn and marked on the one after, not in the
turn that commits it."""

from __future__ import annotations

import asyncio

from livefill.extraction.scenarios import get_scenario
from livefill.session.expected_answer import form_marks
from livefill.session.lane import LaneFinished
from livefill.session.run_status import Phase
from livefill.session.session import Session
from livefill.session.settings import RunSettings
from tests.session.test_session import Script, complete

INVOICE = get_scenario("invoice")


async def test_the_commit_the_scoring_and_the_marks_are_three_turns():
    session = Session(RunSettings(scenario="invoice", speed=50, slicing="7"), source=Script(complete()), fetch_notes=False)
    session.enter_compare(["partial", "blocking"])
    seen: dict[str, list] = {lane.name: [] for lane in session.lanes}

    def look(lane):  # what the lane's figures and marks say now, then a turn later, then another
        seen[lane.name].append((lane.form.committed == INVOICE.output, lane.metrics.facts.fields_right,
                                form_marks(lane.form).score is not None))

    def then(lane, turns):
        look(lane)
        if turns:
            asyncio.get_running_loop().call_soon(then, lane, turns - 1)

    for lane in session.lanes:
        lane.subscribe(lambda e, lane=lane: then(lane, 2) if isinstance(e, LaneFinished) else None)
    session.start()
    statuses = await session.wait()
    assert [s.phase for s in statuses] == [Phase.COMMITTED] * 2
    for _ in range(3):
        await asyncio.sleep(0)
    # the commit's turn: committed, not scored (the old code scored and marked there); the next:
    # scored, not marked; the one after: marked
    assert list(seen.values()) == [[(True, None, False), (True, 19, False), (True, 19, True)]] * 2
    assert all(form_marks(lane.form).score.right == 19 for lane in session.lanes)


async def test_a_lane_emptied_before_its_scoring_or_marking_turn_is_not_scored_or_marked_for_the_run_it_left():
    session = Session(RunSettings(scenario="invoice", speed=50, slicing="7"), source=Script(complete()), fetch_notes=False)
    session.enter_compare(["partial", "blocking"])
    first, second = session.lanes
    emptied: dict[str, int] = {}

    def empty_after(lane, turns):
        if turns:
            asyncio.get_running_loop().call_soon(empty_after, lane, turns - 1)
        else:
            emptied[lane.name] = lane.metrics.facts.fields_right or 0
            lane.forget_run()

    first.subscribe(lambda e: empty_after(first, 0) if isinstance(e, LaneFinished) else None)  # before scoring
    second.subscribe(lambda e: empty_after(second, 1) if isinstance(e, LaneFinished) else None)  # scored, not marked
    session.start()
    await session.wait()
    for _ in range(4):
        await asyncio.sleep(0)
    assert emptied == {first.name: 0, second.name: 19}
    assert form_marks(first.form).score is None and form_marks(second.form).score is None
    assert first.metrics.facts.fields_right is None and first.status is None and second.status is None


async def test_a_runs_wire_counts_reach_the_scoreboard_a_frame_at_a_time_and_exactly_at_its_end(monkeypatch):
    session = Session(RunSettings(scenario="invoice", speed=50, slicing="7"), source=Script(complete(size=2)), fetch_notes=False)
    lane = session.single
    counted = []
    real = type(lane.metrics).set_facts

    def counting(metrics, **changes):  # noqa: ANN001, ANN003, ANN202
        if metrics is lane.metrics and "deltas" in changes:
            counted.append(changes["deltas"])
        return real(metrics, **changes)

    monkeypatch.setattr(type(lane.metrics), "set_facts", counting)
    statuses = []
    lane.subscribe(lambda e: statuses.append(e) if isinstance(e, LaneFinished) else None)
    session.start()
    (status,) = await session.wait()
    assert status.phase is Phase.COMMITTED and status.deltas_received > 200
    # the old code put the counts in with every status (one a delta: > 200); the run took a few ms
    assert len(counted) <= 5
    assert counted[-1] == status.deltas_received == lane.metrics.facts.deltas  # exact at the end
