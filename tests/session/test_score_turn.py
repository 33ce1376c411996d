"""A run's end is scored on the event loop's next turn, not in the turn that commits it."""

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


async def test_the_commit_and_the_scoring_are_two_turns_and_a_new_run_is_not_scored_for_the_old():
    session = Session(RunSettings(scenario="invoice", speed=50, slicing="7"), source=Script(complete()), fetch_notes=False)
    session.enter_compare(["partial", "blocking"])
    at_finish = []
    for lane in session.lanes:
        lane.subscribe(lambda e, lane=lane: at_finish.append((lane.form.committed, form_marks(lane.form).score))
                       if isinstance(e, LaneFinished) else None)
    session.start()
    statuses = await session.wait()
    assert [s.phase for s in statuses] == [Phase.COMMITTED] * 2
    # in the turn that committed: the object is there, its marks not yet (the old code scored there)
    assert [committed == INVOICE.output for committed, _ in at_finish] == [True, True]
    assert [score for _, score in at_finish] == [None, None]
    await asyncio.sleep(0)  # the next turn
    for lane in session.lanes:
        score = form_marks(lane.form).score
        assert score is not None and score.right == score.total > 0
        assert lane.metrics.facts.fields_right == score.total

    # a lane emptied before its scoring turn is not marked for the run it left
    session.start()
    await session.wait()
    lane = session.lanes[0]
    lane.forget_run()
    await asyncio.sleep(0)
    assert form_marks(lane.form).score is None
