"""Runs read in a worker process (LIVEFILL_RUN_WORKER=process) against the real demo provider.

Each run is compared with the same run read in this process: the committed object, the status
counts, the restored form after a stop or a fault, what the server saw of a stop.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os

import pytest

from livefill.embedded.client import demo_request_entry
from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model
from livefill.recording.wiretap import WireRecorder
from livefill.session import run_remote
from livefill.session.run import Run
from livefill.session.run_batches import FRAME_SECONDS
from livefill.session.run_status import Phase
from livefill.wire.taps import tee

from tests.session.test_run_demo import config, primed_form

FINAL = (FieldState.SETTLED, FieldState.INVALID)  # a value's last states: settled, or found invalid


@pytest.fixture
def worker(monkeypatch):
    """Runs read in a worker; the batches each run applied, as (sent_at, changes, wire items,
    how many values settled or were found invalid in it)."""
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    seen: list[tuple[float, int, int, int]] = []
    apply = run_remote.apply_batch

    def counting(run, tap, batch, *settle):
        seen.append((batch.sent_at, len(batch.changes), len(batch.wire), sum(c[1] in FINAL for c in batch.changes)))
        apply(run, tap, batch, *settle)

    monkeypatch.setattr(run_remote, "apply_batch", counting)
    run_remote.prewarm()
    yield seen
    # the warm worker this test asked for is not wanted by the next one (each would add one, up to
    # MAX_WARM workers kept and started at once under the suite's load: 19 asked for, 6 started)
    run_remote.prewarm(-1)


@pytest.fixture
def stub_workers(monkeypatch):
    """A fresh pool whose workers are stand-ins, warm at once (no process): the lists of those
    started and of those closed."""
    started, closed = [], []

    class Stub:
        alive = True
        _ready = True

        def __init__(self):
            started.append(self)

        def ready(self):
            return True

        def close(self):
            closed.append(self)

    monkeypatch.setattr(run_remote, "_Worker", Stub)
    monkeypatch.setattr(run_remote, "_POOL", None)
    return started, closed


async def warm_pool(limit: float = 60) -> run_remote.WorkerPool:
    """The pool, once every waiting worker has said it is warm (AssertionError after `limit` s)."""
    pool = run_remote.pool()
    deadline = asyncio.get_running_loop().time() + limit
    while not pool.warm():
        assert asyncio.get_running_loop().time() < deadline, "the pool's workers never said they were warm"
        await asyncio.sleep(0.05)
    return pool


async def in_process(demo_server, mode, scenario="invoice", **knobs):
    form = FormModel(schema_model(get_scenario(scenario).schema_name))
    status = await Run(form, config(demo_server, mode, scenario=scenario, **knobs)).run()
    return form, status


@pytest.mark.parametrize("mode, scenario", [("partial", "invoice"), ("partial", "catalog"), ("settled", "invoice"),
                                            ("hybrid", "ticket"), ("naive", "invoice")])
async def test_a_run_in_the_worker_commits_what_it_commits_in_process(demo_server, worker, monkeypatch, mode, scenario):
    tap = WireRecorder(t0=0.0)
    form = FormModel(schema_model(get_scenario(scenario).schema_name))
    run = Run(form, config(demo_server, mode, scenario=scenario, speed=0), tap=tap)
    status = await run.run()
    assert worker, "the run did not read in the worker"
    monkeypatch.delenv("LIVEFILL_RUN_WORKER")
    there, there_status = await in_process(demo_server, mode, scenario, speed=0)
    assert status.phase is Phase.COMMITTED, status.reason
    assert there_status.phase is Phase.COMMITTED, there_status.reason
    assert run.result == there.committed == get_scenario(scenario).output
    assert form.committed == there.committed and form.states() == there.states()
    for count in ("bytes_received", "deltas_received", "records_received", "stop_reason"):
        assert getattr(status, count) == getattr(there_status, count), count
    assert tap.total_bytes == status.bytes_received > 0  # the wire reached this side's taps
    assert tap.next_frame > 0 and tap.next_event > 0


async def test_batches_come_at_most_one_a_frame_with_the_changes_reduced(demo_server, worker, monkeypatch):
    monkeypatch.setattr(run_remote, "_together", lambda messages: messages)  # each batch as it was sent
    form = FormModel(schema_model("catalog"))
    updates = []
    form.subscribe(updates.append)
    status = await Run(form, config(demo_server, "partial", scenario="catalog", speed=2000)).run()
    assert status.phase is Phase.COMMITTED, status.reason
    sent = [at for at, *_ in worker]
    gaps = [b - a for a, b in zip(sent, sent[1:])]
    # every batch at least a frame after the one before, a value that settled in it too (the GUI
    # holds its repaints to a display frame anyway); but the last, which rides on the run's Outcome,
    # made at the stream's end (run_worker.take)
    assert len(sent) > 3 and all(gap >= FRAME_SECONDS * 0.999 for gap in gaps[:-1]), gaps
    assert sum(settled for *_, settled in worker[:-1]) > len(sent)  # several values settled a batch
    assert len(sent) < status.deltas_received  # many deltas a batch
    # one form update a batch at most (the run's beginning and its commit besides)
    assert len([u for u in updates if u.running is None]) <= len(sent) + 1


def test_reduced_changes_leave_the_form_as_all_of_them_do():
    """A real reader's changes, cut into batches every way: applying each batch reduced leaves
    the same values and states as applying every change."""
    from livefill.extraction.readers import READERS, ReaderOptions
    from livefill.extraction.modes import Mode
    from livefill.session.run_batches import reduce_changes
    from livefill.wire.events import ArgsDelta, BlockStop

    scenario = get_scenario("catalog")
    model = schema_model(scenario.schema_name)
    text = json.dumps(scenario.output, ensure_ascii=False)
    reader = READERS[Mode.PARTIAL](ReaderOptions(show_provisional_numbers=True), model)
    changes = []
    for i in range(0, len(text), 3):
        changes.extend(reader.feed(ArgsDelta(text=text[i:i + 3])))
    changes.extend(reader.feed(BlockStop()))
    assert any(c[1] is FieldState.PROVISIONAL for c in changes)
    every = FormModel(model)
    every.begin_run()
    for change in changes:
        every.apply_many([change])
    for size in (2, 7, 50, 400, len(changes)):
        form = FormModel(model)
        form.begin_run()
        kept = 0
        for at in range(0, len(changes), size):
            batch = reduce_changes(changes[at:at + size])
            kept += len(batch)
            form.apply_many(batch)
        assert form.document == every.document and form.states() == every.states(), size
        assert size < 7 or kept < len(changes) * 0.8, (size, kept, len(changes))


def test_batches_that_waited_are_applied_as_one_that_leaves_the_form_as_both_do():
    from livefill.session.run_batches import Batch, merged

    def batch(changes, wire, shown, deltas):
        return Batch(changes=tuple(changes), parent_state=FieldState.PROVISIONAL, wire=tuple(wire), payload_bytes=deltas,
                     deltas=deltas, records=0, content=True, stop_reason=None, sent_at=float(deltas),
                     settle_times=(("/a", float(deltas)),), shown=tuple(shown))

    first = batch([("/customer_name", FieldState.PROVISIONAL, "Mar")], [("e", 1)], [("d", "/customer_name", "Mar", True, 1.0)], 1)
    then = batch([("/customer_name", FieldState.SETTLED, "Martinez SA"), ("/invoice_number", FieldState.PROVISIONAL, "IN")],
                 [("e", 2)], [("s", "/customer_name", 2.0)], 2)
    one = merged(first, then)
    assert one.changes == then.changes  # the earlier write at the same pointer is overwritten whole
    assert one.wire == first.wire + then.wire and one.shown == first.shown + then.shown
    assert one.settle_times == first.settle_times + then.settle_times and one.deltas == 2
    both, single = FormModel(schema_model("invoice")), FormModel(schema_model("invoice"))
    both.begin_run(), single.begin_run()
    for b in (first, then):
        both.apply_many(b.changes)
    single.apply_many(one.changes)
    assert both.document == single.document and both.states() == single.states()


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_stop_in_the_worker_is_a_real_cancel_and_restores_exactly(demo_server, worker, mode):
    """The worker is warm before Start, and the stream slow (50 tok/s), so that Stop lands
    mid-stream however busy the machine: a cold worker's imports, under the suite's load, once
    took over 20 s (it then started 10 below the tests' priority), and this is about the stop, not
    the start."""
    await warm_pool()
    form = primed_form()
    before, states = form.committed, form.states()
    run = Run(form, config(demo_server, mode, speed=50))
    task = asyncio.ensure_future(run.run())
    deadline = asyncio.get_running_loop().time() + 60
    while run.status.tokens_received < 5:
        assert asyncio.get_running_loop().time() < deadline, f"no 5 pieces of content in 60 s: {run.status}"
        await asyncio.sleep(0.01)
    assert run.phase is Phase.STREAMING and form.document != before
    assert run.stop()
    status = await task
    assert status.phase is Phase.STOPPED
    assert form.committed == before and form.document == before and form.states() == states
    entry = await demo_request_entry(demo_server.url, since=status.started_at - 0.5, run_id=status.run_id)
    assert entry["disconnected"] and not entry["finished"]
    assert entry["tokens_sent"] < entry["tokens_total"]
    assert status.server_note == f"server stopped after {entry['tokens_sent']} of {entry['tokens_total']} tokens"


@pytest.mark.parametrize("fault, provider", [("disconnect", "anthropic"), ("invalid_value", "anthropic"),
                                             ("max_tokens", "openai-chat"), ("error", "ollama")])
async def test_a_fault_in_the_worker_restores_and_says_what_in_process_says(demo_server, worker, monkeypatch,
                                                                            fault, provider):
    form = primed_form()
    before, states = form.committed, form.states()
    status = await Run(form, config(demo_server, "partial", provider, speed=0, fault=fault)).run()
    monkeypatch.delenv("LIVEFILL_RUN_WORKER")
    there = await Run(primed_form(), config(demo_server, "partial", provider, speed=0, fault=fault)).run()
    assert status.phase is Phase.FAILED and there.phase is Phase.FAILED
    assert (status.reason, status.error_code, status.pointer) == (there.reason, there.error_code, there.pointer)
    assert form.committed == before and form.document == before and form.states() == states


async def test_a_recorded_run_in_the_worker_writes_the_same_trace(demo_server, worker, tmp_path):
    from dataclasses import replace

    form = FormModel(schema_model("invoice"))
    run = Run(form, replace(config(demo_server, "partial", speed=0), record_path=str(tmp_path / "w.jsonl")))
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    lines = [json.loads(line) for line in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert lines[0]["trace"] == "livefill" and lines[0]["run_id"] == status.run_id
    assert lines[-1]["end"] == "complete"
    reads = [base64.b64decode(r["b64"]) for r in lines[1:-1]]
    assert len(b"".join(reads)) == status.bytes_received > 0
    assert [r["t_ms"] for r in lines[1:-1]] == sorted(r["t_ms"] for r in lines[1:-1])


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_the_byte_to_pixel_probe_notes_in_the_worker_what_it_notes_here(demo_server, worker, monkeypatch, mode):
    """A SettleReads tap is run in the worker (its parse off the GUI thread): it knows when the
    same values settled as one told the wire in this process, by reads that arrived in the run."""
    from livefill.recording.settle_reads import SettleReads

    form = FormModel(schema_model("invoice"))
    probe, recorder = SettleReads(), WireRecorder(t0=0.0)
    told_here = []
    on_frame = SettleReads.on_frame
    monkeypatch.setattr(SettleReads, "on_frame", lambda self, frame: (told_here.append(frame), on_frame(self, frame)))
    status = await Run(form, config(demo_server, mode, speed=0), tap=tee(recorder, probe)).run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert worker and told_here == []  # the frames were parsed in the worker, not here
    monkeypatch.delenv("LIVEFILL_RUN_WORKER")
    here = SettleReads()
    await Run(FormModel(schema_model("invoice")), config(demo_server, mode, speed=0), tap=here).run()
    assert probe.times.keys() == here.times.keys() and len(here.times) > 5
    assert all(probe.time_of(p) is not None for p in here.times)
    assert recorder.total_bytes == status.bytes_received  # the other taps still see the wire


async def test_a_lane_run_in_the_worker_feeds_its_recorder_usage_history_and_figures(demo_server, worker, tmp_path):
    """What a lane keeps of a run (the inspector's recorder, the usage tokens, the history, the
    byte-to-pixel probe's wire side) comes through the worker as it does in process."""
    import time

    from livefill.recording.history import History
    from livefill.session.lane import SessionLane

    lane = SessionLane("w", mode="partial")
    lane.show("invoice", "invoice")
    history = History(tmp_path / "h.jsonl")
    lane.start(config(demo_server, "partial", speed=0), time.monotonic(), history=history)
    status = await lane.wait()
    assert worker and status.phase is Phase.COMMITTED, status.reason
    assert lane.recorder.total_bytes == status.bytes_received > 0 and lane.recorder.next_event > 0
    usage = lane.metrics.usage.usage
    assert usage is not None and usage.tokens_out > 0  # the provider's usage reached this side
    assert [r["extraction"] for r in history.read()] == [get_scenario("invoice").output]
    assert lane.metrics.read_time("/customer_name") is not None
    lane.release()


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_a_refusal_in_the_worker_is_said_without_the_apps_own_server(demo_server, worker, monkeypatch, mode):
    """The embedded server's address is never named in a failure; the worker is told which it is."""
    from dataclasses import replace

    letter = replace(config(demo_server, mode, speed=0), document="Dear accounting,\nplease find the invoice attached.\n")
    status = await Run(primed_form(), letter).run()
    monkeypatch.delenv("LIVEFILL_RUN_WORKER")
    there = await Run(primed_form(), letter).run()
    assert status.phase is Phase.FAILED and status.reason == there.reason, (status.reason, there.reason)
    assert demo_server.url.split("://", 1)[1].rstrip("/") not in status.reason


def test_lanes_keep_at_most_max_warm_workers_and_give_theirs_back_when_released(monkeypatch, stub_workers):
    """Every lane asks for a warm worker; a test suite or a presenter changing lanes must not pile
    up processes: at most MAX_WARM wait, and a released lane's worker ends."""
    from livefill.session.lane import SessionLane

    started, closed = stub_workers
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    lanes = [SessionLane(f"l{i}") for i in range(run_remote.MAX_WARM + 4)]
    pool = run_remote.pool()
    assert len(pool.idle) == len(started) == run_remote.MAX_WARM
    for lane in lanes[:-2]:
        lane.release()
    assert len(pool.idle) == 2 and len(closed) == run_remote.MAX_WARM - 2
    for lane in lanes[-2:]:
        lane.release()
    assert len(pool.idle) == 1  # one stays warm for the next lane


def test_runs_read_in_process_until_the_app_makes_workers_the_default_and_the_switch_wins(monkeypatch):
    """The command line, the library and tests read in their own process; the app calls
    use_by_default() once its window shows (livefill.gui.launch). LIVEFILL_RUN_WORKER wins either
    way, and a platform without pipe readers on its event loop never reads in a worker."""
    monkeypatch.delenv("LIVEFILL_RUN_WORKER", raising=False)
    monkeypatch.setattr(run_remote, "supported", lambda: True)
    assert not run_remote.enabled()
    run_remote.use_by_default()
    assert run_remote.enabled()
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "inprocess")
    assert not run_remote.enabled()
    run_remote.use_by_default(False)
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    assert run_remote.enabled()
    monkeypatch.setattr(run_remote, "supported", lambda: False)
    assert not run_remote.enabled()
    monkeypatch.delenv("LIVEFILL_RUN_WORKER")
    run_remote.use_by_default()
    assert not run_remote.enabled()


async def test_by_default_a_start_before_a_worker_is_warm_reads_here_at_once_and_later_ones_in_a_worker(
        demo_server, monkeypatch):
    """The app's first Start comes seconds after launch, while its workers still import the SDKs
    (at a lower priority): it reads in this process rather than wait for one; once one is warm,
    runs read there. (LIVEFILL_RUN_WORKER=process always waits for a worker: the fixture above.)"""
    monkeypatch.delenv("LIVEFILL_RUN_WORKER", raising=False)
    monkeypatch.setattr(run_remote, "_POOL", None)
    run_remote.use_by_default()  # (tests/conftest.py turns it off again after the test)
    if not run_remote.enabled():
        pytest.skip("runs read in workers on POSIX only")
    pool = run_remote.pool()
    try:
        run_remote.prewarm()
        assert pool.idle and not pool.any_warm()  # started, still importing
        first = await Run(FormModel(schema_model("invoice")), config(demo_server, "partial", speed=0)).run()
        assert first.phase is Phase.COMMITTED and pool.runs == 0
        await warm_pool()
        later = await Run(FormModel(schema_model("invoice")), config(demo_server, "partial", speed=0)).run()
        assert later.phase is Phase.COMMITTED and pool.runs == 1
    finally:
        pool.close()


def test_lanes_made_before_the_default_get_their_warm_workers_when_it_is_set(monkeypatch, stub_workers):
    """The app's window (and its lanes) is built before use_by_default(): the lanes' wishes are
    counted meanwhile, no process starts, and the default starts one warm worker per lane."""
    from livefill.session.lane import SessionLane

    started, _ = stub_workers
    monkeypatch.delenv("LIVEFILL_RUN_WORKER", raising=False)
    monkeypatch.setattr(run_remote, "supported", lambda: True)
    monkeypatch.setattr(run_remote, "worker_cores", lambda: 4)
    lanes = [SessionLane(f"l{i}") for i in range(3)]
    lanes[2].release()
    pool = run_remote.pool()
    assert started == [] and pool.wanted == 2
    run_remote.use_by_default()
    assert len(started) == len(pool.idle) == 2
    lanes[0].release()
    assert len(pool.idle) == 1 and pool.wanted == 1


def test_by_default_no_more_runs_read_in_workers_at_once_than_there_are_cores_to_spare(demo_server, monkeypatch,
                                                                                       stub_workers):
    """Three compare lanes in three workers, beside the GUI thread and the demo server's process
    on two cores, waited for a core (byte to pixel p99 28-64 ms against 20-32 ms on the GUI thread):
    by default a run reads in a worker only while fewer than `worker_cores()` do, and the pool keeps
    no more warm workers than that. LIVEFILL_RUN_WORKER=process reads every run in one."""
    monkeypatch.delenv("LIVEFILL_RUN_WORKER", raising=False)
    monkeypatch.setattr(run_remote, "supported", lambda: True)
    monkeypatch.setattr(run_remote, "worker_cores", lambda: 1)
    run_remote.use_by_default()
    run_remote.prewarm(3)  # three lanes
    pool = run_remote.pool()
    assert len(pool.idle) == 1
    run = Run(FormModel(schema_model("invoice")), config(demo_server, "partial"))
    assert run_remote.usable(run)
    taken = pool.take()  # the first lane's run
    assert not run_remote.usable(run)  # the next reads on the GUI thread
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    assert run_remote.usable(run) and pool.keep() == 3
    monkeypatch.delenv("LIVEFILL_RUN_WORKER")
    pool.give_back(taken)
    assert run_remote.usable(run) and pool.busy == 0


async def test_a_warm_worker_reads_with_the_apps_environment_as_it_is_at_start(demo_server, worker, monkeypatch):
    """A worker warmed up before an environment variable changed (a provider's base URL, as a test
    or a shell sets it) runs with the app's environment of the moment, as an in-process run does."""
    from dataclasses import replace

    await warm_pool()  # the worker was started before the variable was set
    monkeypatch.setenv("ANTHROPIC_BASE_URL", demo_server.url)  # the demo provider addressed as Anthropic's API
    live = replace(config(demo_server, "partial", "anthropic", scenario="weather"), base_url="", demo=None,
                   api_key="sk-ant-test-worker")
    status = await Run(FormModel(schema_model("weather")), live).run()
    assert worker and status.phase is Phase.COMMITTED, status.reason


def _niceness_switch(monkeypatch, switch: str | None) -> None:
    if switch is None:
        monkeypatch.delenv("LIVEFILL_WORKER_NICENESS", raising=False)
    else:
        monkeypatch.setenv("LIVEFILL_WORKER_NICENESS", switch)


@pytest.mark.parametrize("switch, lower", [(None, 10), ("3", 3), ("0", 0), ("25", 19), ("-4", 0), ("lots", 10)])
def test_how_far_below_the_app_a_worker_runs_is_the_switch_clamped_else_ten(monkeypatch, switch, lower):
    from livefill.session import run_worker

    _niceness_switch(monkeypatch, switch)
    assert run_worker.NICENESS == 10 and run_worker.niceness() == lower


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no os.getpriority on this platform")
@pytest.mark.parametrize("switch, lower", [
    pytest.param(None, 10, marks=pytest.mark.slow),  # a worker 10 below three busy xdist processes: ~7 s to warm
    ("3", 3), ("0", 0),
])
async def test_a_worker_reads_at_a_lower_priority_than_the_app(monkeypatch, switch, lower):
    """On two cores, three lanes' workers used to take the GUI thread's turns: a worker runs
    `run_worker.NICENESS` (10) below the app, so the window goes first and the worker reads when it
    is free; LIVEFILL_WORKER_NICENESS says otherwise (0 for a machine busy with other work, where a
    worker 10 below waits long for a core)."""
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    _niceness_switch(monkeypatch, switch)
    monkeypatch.setattr(run_remote, "_POOL", None)  # workers of their own, started at this priority
    run_remote.prewarm()
    pool = await warm_pool()
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        theirs = {os.getpriority(os.PRIO_PROCESS, w.process.pid) for w in pool.idle}
        assert theirs == {min(19, mine + lower)}
    finally:
        pool.close()


def test_ending_a_worker_does_not_wait_for_its_exit_and_reaps_it_later(monkeypatch):
    """A run's end gives its worker back; a worker the pool does not keep is killed. Its exit (the
    memory of a Python with the SDKs, at its lowered priority) took 200-260 ms on a busy machine,
    and the GUI thread used to join it there: now it is killed and reaped later, never waited for."""

    class Exiting:
        def __init__(self):
            self.killed, self.exited, self.joins = False, False, []

        def is_alive(self):
            return not self.exited

        def kill(self):
            self.killed = True

        def join(self, timeout=None):
            self.joins.append(timeout)

    class Conn:
        def close(self):
            pass

    monkeypatch.setattr(run_remote, "_ENDING", [], raising=False)
    worker = object.__new__(run_remote._Worker)
    worker.conn, worker.process, worker.broken, worker._ready = Conn(), Exiting(), False, True
    worker.close()
    assert worker.process.killed and worker.process.joins == []  # not waited for
    assert run_remote._ENDING == [worker.process] and not worker.alive
    worker.process.exited = True
    run_remote._reap()
    assert run_remote._ENDING == [] and worker.process.joins == []
