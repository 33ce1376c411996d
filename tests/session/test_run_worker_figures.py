"""A lane's figures are the same whether its run is read in this process or in a worker process.

With LIVEFILL_RUN_WORKER=process the app's form gets one batch a frame; the lane's metrics and
timeline must still count every value the reader showed (livefill.session.form_probe.ShownLog,
replayed by the app's FormProbe), or the naive lane's "never true" count would read 0.
"""

from __future__ import annotations

import time

import pytest

from livefill.extraction.scenarios import get_scenario
from livefill.session import run_remote
from livefill.session.lane import SessionLane
from livefill.session.run_status import Phase
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed, rows_of

from tests.session.test_run_demo import config


async def lane_run(demo_server, mode: str, scenario: str, batches: list | None = None):
    """One lane run at speed 0: its summary, its display log, its timeline's bars (states only)."""
    lane = SessionLane(mode, mode=mode)
    feed = TimelineFeed(TimelineModel([mode]), max_fields=10_000)
    lane.set_timeline(feed)
    lane.show(scenario, get_scenario(scenario).schema_name)
    t0 = time.monotonic()
    feed.model.start(t0)
    lane.start(config(demo_server, mode, scenario=scenario, speed=0), t0, final=get_scenario(scenario).output)
    status = await lane.wait()
    assert status.phase is Phase.COMMITTED, status.reason
    summary = lane.metrics.summary()
    log = [(d.pointer, d.value, d.provisional) for d in lane.metrics.log]
    model = feed.model
    bars = {p: [s.state for s in model.bar(mode, p).segments] + [model.bar(mode, p).settled is not None]
            for p in rows_of(get_scenario(scenario).output) if model.bar(mode, p) is not None}
    times_ok = all(t0 <= d.t <= t0 + summary.elapsed for d in lane.metrics.log)
    lane.release()
    return summary, log, bars, times_ok


@pytest.mark.parametrize("mode, scenario", [("naive", "invoice"), ("partial", "invoice"), ("settled", "invoice"),
                                            ("partial", "catalog")])
async def test_a_lanes_figures_read_in_a_worker_are_those_read_in_process(demo_server, monkeypatch, mode, scenario):
    here, here_log, here_bars, _ = await lane_run(demo_server, mode, scenario)
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    applied = []
    apply = run_remote.apply_batch
    monkeypatch.setattr(run_remote, "apply_batch", lambda run, tap, batch, *rest: (applied.append(batch),
                                                                                   apply(run, tap, batch, *rest)))
    there, there_log, there_bars, times_ok = await lane_run(demo_server, mode, scenario)
    assert applied, "the run did not read in a worker"
    if mode == "naive":
        assert here.never_true > 0  # the naive lane's "Mar" for "Martinez SA"
    for figure in ("never_true", "provisional_changed", "displays", "settled", "fields", "examples", "final_known"):
        assert getattr(there, figure) == getattr(here, figure), figure
    assert there_log == here_log
    assert there_bars == here_bars and len(here_bars) > 5
    assert times_ok  # each display at the time the worker showed it, within the run
    # the form got fewer updates than there were displays: the figures did not come from it
    assert len(applied) < here.displays
