"""Recording a run and replaying its trace over real loopback sockets (the session's demo server).

Timing is measured on the client: each form change's time after the first network read, in the
recording and in the replay. The server's own send times (`sent_ms` in the request log) are also
compared with the recorded read times.
"""

from __future__ import annotations

import asyncio
import statistics
import dataclasses
import time

import pytest

from livefill.demo.protocol import DemoKnobs
from livefill.errors import UsageError
from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model
from livefill.recording.trace import load_trace
from livefill.session.replay import replay_config
from tests.recording.test_trace import _no_secrets_in_traces, fake_key  # noqa: F401, F811 - fixtures: no key in any trace

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


class Watch:
    """A WireTap plus a form observer: the bytes the client received, and every (pointer, state)
    change with its time after the first read."""

    def __init__(self, form: FormModel) -> None:
        self.form = form
        self.reads: list[bytes] = []
        self.first: float | None = None
        self.changes: list[tuple[float, str, str]] = []
        form.subscribe(self._update)

    def on_read(self, data: bytes) -> None:
        if self.first is None:
            self.first = time.monotonic()
        self.reads.append(bytes(data))

    def on_frame(self, frame) -> None:
        pass

    def on_event(self, event) -> None:
        pass

    def _update(self, update) -> None:
        if update.reset or self.first is None:
            return
        at = (time.monotonic() - self.first) * 1000.0
        for pointer in sorted(update.pointers):
            self.changes.append((at, pointer, self.form.state(pointer).value))

    def sequence(self) -> list[tuple[str, str]]:
        return [(p, s) for _, p, s in self.changes]


def invoice_form() -> FormModel:
    return FormModel(schema_model(get_scenario("invoice").schema_name))


def record_config(server, path, key, *, provider="anthropic", mode="partial", **knobs) -> RunConfig:
    sc = get_scenario("invoice")
    return RunConfig(
        mode=Mode(mode),
        provider=provider,
        base_url=server.url,
        schema_name=sc.schema_name,
        document=sc.document,
        api_key=key,
        demo=DemoKnobs(scenario="invoice", **knobs),
        relay_token=server.relay_token,
        record_path=str(path),
        label="invoice",
    )


async def record(server, path, key, **kw):
    form = invoice_form()
    watch = Watch(form)
    run = Run(form, record_config(server, path, key, **kw), tap=watch)
    status = await run.run()
    return run, status, watch


async def replay(server, trace, *, mode="partial", speed=1.0, **config):
    trace_id = server.add_trace(trace)
    form = invoice_form()
    watch = Watch(form)
    cfg = replay_config(
        trace, trace_id, base_url=server.url, mode=mode, speed=speed, relay_token=server.relay_token, **config
    )
    run = Run(form, cfg, tap=watch)
    started = time.monotonic()
    status = await run.run()
    return run, status, watch, time.monotonic() - started, trace_id


async def wait_until(predicate, limit=5.0):
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def entry_for(server, run_id):
    return next((e for e in reversed(server.requests()) if e.get("tag") == run_id), None)


# --- recording ------------------------------------------------------------------------------------


async def test_a_recorded_demo_run_keeps_every_byte_the_client_received(demo_server, tmp_path, fake_key):
    path = tmp_path / "invoice.jsonl"
    run, status, watch = await record(demo_server, path, fake_key, speed=200, ttft_ms=30)
    assert status.phase is Phase.COMMITTED, status.reason
    trace = load_trace(path)
    assert trace.body() == b"".join(watch.reads)
    assert [r.data for r in trace.reads] == watch.reads  # the same read boundaries
    times = [r.t_ms for r in trace.reads]
    assert times == sorted(times) and times[-1] - times[0] >= 25.0  # the time to first token is in the trace
    assert trace.end == "complete" and not trace.truncated
    assert trace.status == 200 and trace.headers["content-type"].startswith("text/event-stream")
    assert "request-id" in trace.headers
    assert trace.header["mode"] == "partial" and trace.header["run_id"] == run.status.run_id
    assert trace.header["request"]["model"] == trace.model
    assert trace.document == get_scenario("invoice").document


async def test_a_stopped_run_and_a_refused_one_leave_traces_saying_so(demo_server, tmp_path, fake_key):
    form = invoice_form()
    run = Run(form, record_config(demo_server, tmp_path / "stop.jsonl", fake_key, speed=50))
    task = asyncio.ensure_future(run.run())
    await wait_until(lambda: run.status.tokens_received >= 3)
    run.stop()
    assert (await task).phase is Phase.STOPPED
    stopped = load_trace(tmp_path / "stop.jsonl")
    assert stopped.end == "stopped" and 0 < len(stopped.reads)
    # replayed, it ends where the user stopped it, and the reason says so (not only "truncated: ...")
    for mode in ("partial", "settled"):
        _, status, _, _, _ = await replay(demo_server, stopped, mode=mode, speed=0)
        assert status.phase is Phase.FAILED and status.reason.startswith("truncated: "), status.reason
        assert status.reason.endswith(" — the recording ends here: its run was stopped"), status.reason

    run = Run(invoice_form(), record_config(demo_server, tmp_path / "429.jsonl", fake_key, fault="http_429"))
    assert (await run.run()).phase is Phase.FAILED
    refused = load_trace(tmp_path / "429.jsonl")
    assert refused.status == 429 and refused.headers == {"retry-after": "20"}
    assert refused.end == "failed" and refused.reads == ()


def test_a_relay_mode_run_through_a_relay_deployed_on_its_own_cannot_be_recorded(demo_server, tmp_path, fake_key):
    cfg = dataclasses.replace(
        record_config(demo_server, tmp_path / "x.jsonl", fake_key, mode="settled"), relay_url="http://relay.example:8080"
    )
    with pytest.raises(UsageError, match="a relay deployed on its own cannot record; record in partial mode"):
        Run(invoice_form(), cfg)


# --- replaying ------------------------------------------------------------------------------------


@pytest.mark.slow  # real-time replay
async def test_replay_at_1x_gives_the_same_object_changes_and_timing(demo_server, tmp_path, fake_key, timing):
    path = tmp_path / "invoice.jsonl"
    _, status, recorded = await record(demo_server, path, fake_key, speed=60, ttft_ms=100)
    assert status.phase is Phase.COMMITTED
    trace = load_trace(path)

    run, status, replayed, _, trace_id = await replay(demo_server, trace, speed=1.0, api_key=fake_key)
    assert status.phase is Phase.COMMITTED, status.reason
    assert run.result == get_scenario("invoice").output
    assert b"".join(replayed.reads) == trace.body()
    assert replayed.sequence() == recorded.sequence()

    # the server sent each read at its recorded time after the request arrived (`sent_ms`, its own
    # clock), never before it: a replay that ignored the timing would send them all at once. How
    # close to it (typically within 5 ms; a loaded machine is later, never earlier) is a figure of
    # bench_timings.py. Errors are taken up to the constant between the two clocks (the median
    # difference), so one late first read does not make every read after it look late.
    entry = entry_for(demo_server, run.status.run_id)
    assert entry["replay"] == trace_id and entry["outcome"] == "finished"
    sent = entry["sent_ms"]
    wanted = [r.t_ms for r in trace.reads]
    assert len(sent) == len(wanted)
    assert all(s >= w - 1.0 for s, w in zip(sent, wanted)), [(s, w) for s, w in zip(sent, wanted) if s < w - 1.0]
    offset = statistics.median(a - b for a, b in zip(sent, wanted))
    errors = [abs(a - b - offset) for a, b in zip(sent, wanted)]
    timing.record("a 1x replay: median error of a read's send time", statistics.median(errors) / 1000.0, budget=0.005)
    timing.record("a 1x replay: largest error of a read's send time", max(errors) / 1000.0, budget=0.1)

    # and the client saw each change when it saw it while recording (the same figures)
    gaps = [abs(a[0] - b[0]) for a, b in zip(replayed.changes, recorded.changes)]
    timing.record("a 1x replay: median gap to a change's recorded time", statistics.median(gaps) / 1000.0, budget=0.005)
    timing.record("a 1x replay: largest gap to a change's recorded time", max(gaps) / 1000.0, budget=0.1)


@pytest.mark.slow  # real-time replay
async def test_replay_is_scaled_and_as_fast_as_possible_at_speed_0(demo_server, tmp_path, fake_key, timing):
    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=100, ttft_ms=200)
    trace = load_trace(path)
    assert trace.duration_ms > 500

    run, status, _, elapsed, _ = await replay(demo_server, trace, speed=0)
    assert status.phase is Phase.COMMITTED and run.result == get_scenario("invoice").output
    timing.record(f"a replay at speed 0 of a {trace.duration_ms / 1000.0:.2f} s trace", elapsed, budget=trace.duration_ms / 1000.0 / 3)

    run, status, _, _, _ = await replay(demo_server, trace, speed=2)
    assert status.phase is Phase.COMMITTED
    entry = entry_for(demo_server, run.status.run_id)
    # each read at half its recorded time, never before it (how close: a figure)
    assert all(s >= r.t_ms / 2 - 1.0 for s, r in zip(entry["sent_ms"], trace.reads, strict=True))
    timing.record("a 2x replay: its last read's lateness", (entry["sent_ms"][-1] - trace.reads[-1].t_ms / 2) / 1000.0, budget=0.02)


@pytest.mark.slow  # real-time replay
async def test_stop_during_replay_is_a_real_cancel(demo_server, tmp_path, fake_key):
    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=100, ttft_ms=0)
    trace = load_trace(path)
    trace_id = demo_server.add_trace(trace)
    form = invoice_form()
    run = Run(form, replay_config(trace, trace_id, base_url=demo_server.url, speed=0.5))
    task = asyncio.ensure_future(run.run())
    await wait_until(lambda: run.status.tokens_received >= 3)
    run.stop()
    status = await task
    assert status.phase is Phase.STOPPED
    await wait_until(lambda: (entry_for(demo_server, run.status.run_id) or {}).get("outcome") == "disconnected")
    entry = entry_for(demo_server, run.status.run_id)
    assert entry["disconnected"] and entry["bytes_sent"] < len(trace.body())
    assert "stopped after" in (status.server_note or "")


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "openai-compatible", "ollama"])
async def test_every_wire_records_and_replays_byte_for_byte(demo_server, tmp_path, fake_key, provider):
    path = tmp_path / f"{provider}.jsonl"
    _, status, recorded = await record(demo_server, path, fake_key, provider=provider, speed=0, slice="7")
    assert status.phase is Phase.COMMITTED, status.reason
    trace = load_trace(path)
    run, status, replayed, _, _ = await replay(demo_server, trace, speed=0)
    assert status.phase is Phase.COMMITTED, status.reason
    assert replayed.reads == recorded.reads
    assert replayed.sequence() == recorded.sequence()


@pytest.mark.parametrize("mode", ["blocking", "naive", "settled", "hybrid"])
async def test_a_trace_replays_in_any_mode_and_through_the_relay(demo_server, tmp_path, fake_key, mode):
    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=0)
    trace = load_trace(path)
    run, status, _, _, trace_id = await replay(demo_server, trace, mode=mode, speed=0)
    assert status.phase is Phase.COMMITTED, status.reason
    assert run.result == get_scenario("invoice").output
    assert any(e.get("replay") == trace_id and e["outcome"] == "finished" for e in demo_server.requests())


async def test_a_cut_trace_replays_up_to_the_cut_and_ends_truncated(demo_server, tmp_path, fake_key):
    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=0, slice="40")
    lines = path.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n" + lines[len(lines) // 2][:15])
    trace = load_trace(cut)
    assert trace.truncated
    run, status, watch, _, _ = await replay(demo_server, trace, speed=0)
    assert status.phase is Phase.FAILED and status.error_code == "truncated", status.reason
    assert status.reason.endswith(" — the recording ends here: it was cut off"), status.reason
    assert b"".join(watch.reads) == trace.body()


async def test_a_refusal_replays_as_its_status(demo_server, tmp_path, fake_key):
    run = Run(invoice_form(), record_config(demo_server, tmp_path / "429.jsonl", fake_key, fault="http_429"))
    await run.run()
    trace = load_trace(tmp_path / "429.jsonl")
    _, status, _, _, _ = await replay(demo_server, trace, speed=0)
    assert status.phase is Phase.FAILED and "429" in status.reason
    assert "the recording ends here" not in status.reason  # it fails as recorded: nothing to add


async def test_a_trace_on_the_wrong_wire_or_an_unknown_id_is_refused_in_one_line(demo_server, tmp_path, fake_key):
    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=0)
    trace = load_trace(path)
    trace_id = demo_server.add_trace(trace)
    cfg = replay_config(trace, trace_id, base_url=demo_server.url, speed=0)
    wrong = dataclasses.replace(cfg, provider="openai-chat")
    status = await Run(invoice_form(), wrong).run()
    assert status.phase is Phase.FAILED and "recorded on the anthropic wire" in status.reason
    unknown = dataclasses.replace(cfg, demo=DemoKnobs(replay="nope"))
    status = await Run(invoice_form(), unknown).run()
    assert status.phase is Phase.FAILED and "no trace 'nope'" in status.reason


async def test_a_broken_connection_replays_as_a_broken_connection(demo_server, tmp_path, fake_key):
    path = tmp_path / "cut.jsonl"
    _, status, recorded = await record(demo_server, path, fake_key, speed=0, fault="disconnect@0.5")
    assert status.phase is Phase.FAILED and status.reason.startswith("connection lost"), status.reason
    trace = load_trace(path)
    assert trace.end == "failed" and trace.trailer["error"] == "ConnectionLost"
    run, status, replayed, _, _ = await replay(demo_server, trace, speed=0)
    assert status.phase is Phase.FAILED and status.reason.startswith("connection lost"), status.reason
    assert "the recording ends here" not in status.reason  # it fails as recorded and says so itself
    assert b"".join(replayed.reads) == trace.body() == b"".join(recorded.reads)
    assert entry_for(demo_server, run.status.run_id)["outcome"] == "aborted"


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_a_trace_without_its_document_still_replays(demo_server, tmp_path, fake_key, mode):
    path = tmp_path / "hash.jsonl"
    form = invoice_form()
    cfg = record_config(demo_server, path, fake_key, speed=0)
    await Run(form, dataclasses.replace(cfg, record_document=False)).run()
    trace = load_trace(path)
    assert trace.document is None
    run, status, _, _, _ = await replay(demo_server, trace, mode=mode, speed=0)
    assert status.phase is Phase.COMMITTED, status.reason
    assert run.result == get_scenario("invoice").output


async def test_a_trace_that_cannot_be_written_does_not_break_the_run(demo_server, tmp_path, fake_key):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    run, status, _ = await record(demo_server, blocker / "x.jsonl", fake_key, speed=0)
    assert status.phase is Phase.COMMITTED, status.reason
    assert run.recorder.error and str(blocker) in run.recorder.error and "\n" not in run.recorder.error


async def test_a_trace_posted_over_http_replays_and_a_bad_one_is_refused_with_its_line(demo_server, tmp_path, fake_key):
    import httpx

    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=0)
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{demo_server.url}/_demo/traces", content=path.read_bytes())
        assert answer.status_code == 200 and answer.json()["wire"] == "anthropic"
        trace = load_trace(path)
        cfg = replay_config(trace, answer.json()["id"], base_url=demo_server.url, speed=0)
        status = await Run(invoice_form(), cfg).run()
        assert status.phase is Phase.COMMITTED, status.reason
        lines = path.read_text().splitlines()
        lines[2] = '{"t_ms": 1e9, "b64": "%%%"}'
        bad = await client.post(f"{demo_server.url}/_demo/traces?name=bad.jsonl", content="\n".join(lines) + "\n")
    assert bad.status_code == 400
    assert bad.json()["error"]["message"] == "bad.jsonl: line 3: b64 is not valid base64"
    assert bad.json()["error"]["line"] == 3


@pytest.mark.slow  # real-time replay
async def test_compare_lanes_read_the_same_trace_at_once(demo_server, tmp_path, fake_key, timing):
    path = tmp_path / "invoice.jsonl"
    await record(demo_server, path, fake_key, speed=150, ttft_ms=20)
    trace = load_trace(path)
    trace_id = demo_server.add_trace(trace)
    runs = [
        Run(invoice_form(), replay_config(trace, trace_id, base_url=demo_server.url, mode=mode, speed=1,
                                          relay_token=demo_server.relay_token))
        for mode in ("naive", "partial", "settled", "hybrid")
    ]
    started = time.monotonic()
    statuses = await asyncio.gather(*(r.run() for r in runs))
    assert all(s.phase is Phase.COMMITTED for s in statuses), [s.reason for s in statuses]
    assert all(r.result == get_scenario("invoice").output for r in runs)
    # side by side, not one after another (four lanes in turn: four times the trace)
    timing.record(f"four lanes replaying a {trace.duration_ms / 1000.0:.2f} s trace", time.monotonic() - started,
                  budget=trace.duration_ms / 1000.0 * 2 + 1.0)
