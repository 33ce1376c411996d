"""A compare run is judged by its own final values: never an earlier run's, never another generation's.

Issue 26, item 2 (Qt-free half): "values shown that were never true" must be counted against the
run's own final values. Until they are known only what the run itself contradicted counts ("so
far", `final_known` False); a committed lane is judged by its own result; a lane that did not
commit by the first committed result of the same generation (a demo or replay run), and in a live
run (each lane its own generation) by nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

from livefill.demo.protocol import DemoKnobs
from livefill.session.metrics import LaneMetrics
from livefill.session.run_status import Phase
from livefill.session.session import Session
from tests.session.test_session import INVOICE, Script, complete

OTHER = {**INVOICE.output, "customer_name": "Other Customer SA", "amount": 980}


def _text(document) -> str:
    return json.dumps(document)


def test_start_forgets_the_previous_runs_final_values():
    m = LaneMetrics()
    m.start(0.0)
    m.display("/customer_name", "Martinez SA", provisional=False, t=1)
    m.set_final({"customer_name": "Martinez SA"})
    m.start(10.0)  # the next run: its truth is unknown until it ends
    m.display("/customer_name", "Other SA", provisional=False, t=11)
    s = m.summary()
    assert (s.never_true, s.final_known, s.accuses, s.fields) == (0, False, False, 0)


def test_a_number_shown_again_in_another_type_is_not_a_contradiction():
    m = LaneMetrics()
    m.start(0.0)
    m.display("/amount", 1200, provisional=False, t=1)
    m.display("/amount", 1200.0, provisional=False, t=2)
    m.display("/amount", 1250, provisional=False, t=3)
    assert m.summary().never_true == 1  # 1200 was contradicted by 1250, not by 1200.0


def test_constructor_final_values_stand_for_every_run():
    m = LaneMetrics(final={"amount": 1200})
    m.start(0.0)
    m.display("/amount", 12, provisional=False, t=1)
    m.start(5.0)
    m.display("/amount", 12, provisional=False, t=6)
    assert m.summary().final_known and m.summary().never_true == 1


async def test_a_second_live_run_is_not_judged_by_the_first_ones_values():
    script = Script(complete(_text(INVOICE.output)))
    session = Session(source=script, fetch_notes=False)
    session.enter_compare(["naive", "partial"])
    live = dataclasses.replace(session.run_config(), demo=None)  # no expected output
    session.start(live)
    await session.wait()
    naive, partial = session.lanes
    assert partial.metrics.summary().final_known  # judged by its own committed result

    script.events = complete(_text(OTHER))  # the model writes something else this time
    seen = []
    partial.metrics.subscribe(lambda: seen.append(partial.metrics.summary()))
    session.start(live)
    await session.wait()
    during = [s for s in seen if s.outcome is None and s.displays]
    assert during and all(not s.final_known and s.never_true == 0 for s in during)
    end = partial.metrics.summary()
    assert end.outcome == "committed" and end.final_known and end.never_true == 0
    assert naive.metrics.summary().final_known and naive.metrics.summary().never_true > 0


class Gated(Script):
    """Every run gets the first half of `text`'s events, waits for `gate`, then gets the rest."""

    def __init__(self, text: str) -> None:
        self.gate = asyncio.Event()
        events = complete(text)
        half = len(events) // 2
        super().__init__(events[:half])
        self.rest = events[half:]

    def __call__(self, tap):
        source = super().__call__(tap)
        rest, gate = self.rest, self.gate

        class Gate:
            async def __aenter__(self):
                inner = await source.__aenter__()

                async def gen():
                    async for ev in inner:
                        yield ev
                    await gate.wait()
                    for ev in rest:
                        yield ev

                self.g = gen()
                return self.g

            async def __aexit__(self, *exc):
                await self.g.aclose()
                return await source.__aexit__(*exc)

        return Gate()


async def _stop_naive_midway(config_of) -> tuple:
    script = Gated(_text(OTHER))
    session = Session(source=script, fetch_notes=False)
    session.enter_compare(["naive", "partial"])
    naive, partial = session.lanes
    session.start(config_of(session.run_config()))
    while script.opened < 2 or not (naive.metrics.summary().displays and partial.metrics.summary().displays):
        await asyncio.sleep(0.01)  # both lanes have shown part of it and wait at the gate
    assert naive.stop()
    script.gate.set()
    statuses = await session.wait()
    assert [s.phase for s in statuses] == [Phase.STOPPED, Phase.COMMITTED]
    return naive.metrics.summary(), partial.metrics.summary()


async def test_a_lane_stopped_in_a_replay_is_judged_by_the_lane_that_committed():
    # a replay: every lane reads the one recorded generation (demo knobs, no expected output)
    naive, partial = await _stop_naive_midway(lambda c: dataclasses.replace(c, demo=DemoKnobs(replay="trace")))
    assert partial.final_known and partial.never_true == 0
    assert naive.outcome == "stopped" and naive.final_known and naive.never_true > 0 and naive.accuses


async def test_a_lane_stopped_in_a_live_run_keeps_its_counts_so_far():
    # live: each lane made its own request, so another lane's result is not this lane's truth
    naive, partial = await _stop_naive_midway(lambda c: dataclasses.replace(c, demo=None))
    assert partial.final_known
    assert naive.outcome == "stopped" and not naive.final_known and not naive.accuses
