"""One run as a state machine, against scripted event sources (edge cases, every ending)."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

from livefill.errors import ConnectionLost, ProtocolError, UpstreamError, UsageError, failure_for
from livefill.wire.events import ArgsDelta, BlockStop, KeepAlive, Stop, StopReason, TextDelta
from livefill.wire.idle import IdleWatch
from tests.wire.idle_support import watch_events
from livefill.extraction.form import FieldState, FormModel
from livefill.extraction.json_doc import MISSING
from livefill.recording.history import History
from livefill.embedded.client import server_note
from livefill.extraction.modes import Mode
from livefill.session.failure_reasons import describe_failure
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import TRANSITIONS, Phase, Trigger
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model

INVOICE = get_scenario("invoice")
TEXT = INVOICE.output_text


def pieces(text: str, size: int = 4) -> list[ArgsDelta]:
    return [ArgsDelta(text=text[i : i + size]) for i in range(0, len(text), size)]


def complete(text: str = TEXT, size: int = 4) -> list:
    return [*pieces(text, size), BlockStop(), Stop(reason=StopReason.COMPLETE, raw="tool_use")]


class Script:
    """A fake source: yields the scripted events; floats are pauses; records when it was closed.

    `idle`: watched by the sources' idle watchdog (livefill.wire.idle), as open_stream / open_relay are.
    """

    def __init__(self, events, *, hold: bool = False, raise_at_end: Exception | None = None, idle: float | None = None):
        self.events = events
        self.hold = hold
        self.raise_at_end = raise_at_end
        self.idle = idle
        self.closed = False
        self.phase_at_close: Phase | None = None
        self.run: Run | None = None

    def __call__(self, tap):
        @asynccontextmanager
        async def source():
            async def gen():
                for ev in self.events:
                    if isinstance(ev, (int, float)):
                        await asyncio.sleep(ev)
                        continue
                    tap.on_read(b"x" * 10)
                    yield ev
                if self.raise_at_end is not None:
                    raise self.raise_at_end
                if self.hold:
                    await asyncio.Event().wait()

            g = gen()
            watched = g
            if self.idle is not None:
                watch = IdleWatch(self.idle, "script")
                watched = watch_events(g, watch, is_content=lambda e: not isinstance(e, KeepAlive))
            try:
                yield watched
            finally:
                if watched is not g:
                    await watched.aclose()
                await g.aclose()
                self.closed = True
                self.phase_at_close = self.run.phase if self.run else None

        return source()


def make_run(form, mode, script, tmp_path=None, **cfg):
    history = History(tmp_path / "history.jsonl") if tmp_path is not None else None
    run = Run(form, RunConfig(mode=Mode(mode), schema_name="invoice", label="invoice", **cfg), history=history, source=script)
    script.run = run
    return run


@pytest.fixture
def form():
    return FormModel(schema_model("invoice"))


# -- the table ------------------------------------------------------------------------------


def test_the_transition_table_only_moves_forward():
    finals = {Phase.COMMITTED, Phase.STOPPED, Phase.FAILED}
    for (phase, _trigger), target in TRANSITIONS.items():
        assert phase not in finals
        assert phase is not target or phase is Phase.STREAMING
    assert TRANSITIONS[(Phase.STREAMING, Trigger.STOP)] is Phase.STOPPED


# -- commit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["blocking", "naive", "partial"])
async def test_complete_stream_commits_and_writes_one_history_line(form, tmp_path, mode):
    if mode == "partial":
        pytest.importorskip("livefill.extraction.prefix")
    script = Script(complete())
    run = make_run(form, mode, script, tmp_path, provider="anthropic")
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == json.loads(TEXT)
    assert all(s is FieldState.SETTLED for s in form.states().values())
    lines = (tmp_path / "history.jsonl").read_text().split("\n")
    assert lines[-1] == "" and len(lines) == 2
    record = json.loads(lines[0])
    assert record["extraction"] == json.loads(TEXT) and record["mode"] == mode
    assert status.tokens_received == len(pieces(TEXT))
    assert status.bytes_received == 10 * (len(pieces(TEXT)) + 2)
    assert status.stop_reason == "tool_use"


async def test_blocking_shows_nothing_until_the_block_stops(form):
    seen = []
    script = Script(complete())
    run = make_run(form, "blocking", script)
    form.subscribe(lambda u: seen.append(form.value("/customer_name")))
    await run.run()
    # begin_run (reset) .. one update at BlockStop .. commit
    shown = [v for v in seen if v is not MISSING]
    assert shown and shown[0] == "Martinez SA"
    assert len(seen) == 3


# -- every other ending restores ---------------------------------------------------------------


def prime(form):
    form.load({"customer_name": "Previous GmbH", "amount": 99})
    form.set_value("/notes", "my own note")
    return form.committed, form.states()


async def test_stop_mid_stream_closes_the_source_before_saying_stopped(form, tmp_path):
    before, states = prime(form)
    script = Script([*pieces(TEXT[:40]), 0.01], hold=True)
    run = make_run(form, "blocking", script, tmp_path)
    task = asyncio.ensure_future(run.run())
    while run.status.tokens_received < 10:
        await asyncio.sleep(0.005)
    assert run.phase is Phase.STREAMING
    assert run.stop()
    status = await task
    assert status.phase is Phase.STOPPED
    assert script.closed and script.phase_at_close is Phase.STREAMING  # closed, then "stopped"
    assert form.committed == before and form.document == before and form.states() == states
    assert not (tmp_path / "history.jsonl").exists()
    assert not run.stop()


async def test_partial_stop_restores_user_edits(form):
    pytest.importorskip("livefill.extraction.prefix")
    before, states = prime(form)
    script = Script([*pieces(TEXT[:60])], hold=True)
    run = make_run(form, "partial", script)
    task = asyncio.ensure_future(run.run())
    while form.value("/customer_name") is MISSING or run.status.tokens_received < 15:
        await asyncio.sleep(0.005)
    assert form.value("/customer_name") == "Martinez SA"
    run.stop()
    status = await task
    assert status.phase is Phase.STOPPED
    assert form.document == before and form.states() == states


@pytest.mark.parametrize(
    ("events", "kwargs", "code", "words"),
    [
        ([*pieces(TEXT[:50]), Stop(reason=StopReason.LENGTH, raw="max_tokens")], {}, "truncated", "max_tokens"),
        (pieces(TEXT[:50]), {"raise_at_end": UpstreamError("overloaded_error: Overloaded", kind="overloaded_error")}, "upstream_error", "Overloaded"),
        (pieces(TEXT[:50]), {}, "truncated", "before its terminal"),
        ([*pieces(TEXT[:50]), BlockStop(), Stop(reason=StopReason.COMPLETE)], {}, "protocol_error", "incomplete"),
        ([*pieces(TEXT[:50]), Stop(reason=StopReason.REFUSAL, raw="refusal")], {}, "upstream_error", "refused"),
        ([*pieces(TEXT[:50])], {"raise_at_end": ConnectionLost("reset by peer")}, "protocol_error", "connection lost"),
        ([*pieces(TEXT[:50])], {"raise_at_end": ProtocolError("bad frame")}, "protocol_error", "bad frame"),
    ],
)
async def test_every_failure_restores_and_says_why(form, tmp_path, events, kwargs, code, words):
    pytest.importorskip("livefill.extraction.prefix")
    before, states = prime(form)
    script = Script(events, **kwargs)
    run = make_run(form, "partial", script, tmp_path)
    status = await run.run()
    assert status.phase is Phase.FAILED
    assert status.error_code == code
    assert words in status.reason
    assert script.closed
    assert form.document == before and form.states() == states
    assert not (tmp_path / "history.jsonl").exists()


async def test_idle_timeout_with_only_keepalives(form):
    before, _ = prime(form)
    script = Script([*pieces(TEXT[:20]), *([0.02, KeepAlive()] * 200)], idle=0.15)
    run = make_run(form, "blocking", script)
    status = await run.run()
    assert status.phase is Phase.FAILED and status.error_code == "timeout"
    assert "idle timeout" in status.reason
    assert script.closed
    assert form.document == before


async def test_validation_failure_names_the_field_and_restores_it_unmarked(form, tmp_path):
    before, _ = prime(form)
    script = Script(complete(INVOICE.invalid_output_text))
    run = make_run(form, "blocking", script, tmp_path)
    status = await run.run()
    assert status.phase is Phase.FAILED and status.error_code == "validation_failed"
    assert status.pointer == "/amount"
    assert "/amount" in status.reason
    assert form.committed == before and form.value("/amount") == 99
    assert "twelve hundred" in status.reason
    assert form.state("/amount") is FieldState.SETTLED and form.reason("/amount") is None  # restored as it was
    assert not (tmp_path / "history.jsonl").exists()


async def test_a_cancel_from_outside_restores_and_propagates(form):
    before, _ = prime(form)
    script = Script(pieces(TEXT[:20]), hold=True)
    run = make_run(form, "blocking", script)
    task = asyncio.ensure_future(run.run())
    while run.status.tokens_received < 5:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert script.closed
    assert run.phase is Phase.FAILED
    assert form.document == before and not form.running


# -- naive ----------------------------------------------------------------------------------


async def test_naive_shows_prefixes_and_keeps_them_after_stop(form):
    prime(form)
    cut = TEXT.index("1200") + 2  # '..."amount": 12'
    script = Script([ArgsDelta(text=TEXT[: TEXT.index("Martinez") + 3]), ArgsDelta(text=TEXT[TEXT.index("Martinez") + 3 : cut])], hold=True)
    form_naive = FormModel(schema_model("invoice"), marking=False)
    run = make_run(form_naive, "naive", script)
    task = asyncio.ensure_future(run.run())
    while run.status.tokens_received < 1:
        await asyncio.sleep(0.002)
    await asyncio.sleep(0.01)
    assert run.status.tokens_received == 2
    assert form_naive.display("/amount") == "12"
    run.stop()
    status = await task
    assert status.phase is Phase.STOPPED
    assert form_naive.committed["amount"] == 12  # no restore: the wrong value stays


async def test_naive_first_delta_shows_mar(form):
    script = Script([ArgsDelta(text=TEXT[: TEXT.index("Martinez") + 3])], hold=True)
    run = make_run(form, "naive", script)
    task = asyncio.ensure_future(run.run())
    while run.status.tokens_received < 1:
        await asyncio.sleep(0.002)
    assert form.value("/customer_name") == "Mar"
    assert form.state("/customer_name") is FieldState.SETTLED  # shown as if final: the lie
    run.stop()
    await task


# -- partial ----------------------------------------------------------------------------------


async def test_partial_provisional_string_then_settled_and_no_provisional_numbers(form):
    pytest.importorskip("livefill.extraction.prefix")
    shown: list[tuple[str, str, str]] = []

    def watch(update):
        for p in ("/customer_name", "/amount"):
            if update.reset or p in update.pointers:
                shown.append((p, form.state(p).value, form.display(p)))

    form.subscribe(watch)
    cut = TEXT.index("Martinez") + 3
    script = Script([ArgsDelta(text=TEXT[:cut]), *complete(TEXT[cut:], size=3)])
    run = make_run(form, "partial", script)
    assert (await run.run()).phase is Phase.COMMITTED
    names = [(s, d) for p, s, d in shown if p == "/customer_name" and d]
    assert ("provisional", "Mar…") in names
    assert names.index(("provisional", "Mar…")) < names.index(("settled", "Martinez SA"))
    amounts = [d for p, s, d in shown if p == "/amount" and d]
    assert amounts and set(amounts) == {"1200"}
    assert all(s != "provisional" for p, s, d in shown if p == "/amount")


async def test_partial_with_provisional_numbers_shows_12(form):
    pytest.importorskip("livefill.extraction.prefix")
    amounts = []
    form.subscribe(lambda u: amounts.append(form.display("/amount")))
    text = TEXT.replace('"amount": 1200', '"amount": 12')  # the cut, not the value
    cut = TEXT.index("1200") + 2
    script = Script([ArgsDelta(text=TEXT[:cut]), ArgsDelta(text=TEXT[cut:]), BlockStop(), Stop(reason=StopReason.COMPLETE)])
    run = make_run(form, "partial", script, show_provisional_numbers=True)
    await run.run()
    assert "12…" in amounts and text  # shown, and marked provisional


async def test_text_deltas_count_as_activity_but_not_tokens(form):
    script = Script([TextDelta(text="thinking"), *complete()])
    run = make_run(form, "blocking", script)
    status = await run.run()
    assert status.phase is Phase.COMMITTED
    assert status.tokens_received == len(pieces(TEXT))


# -- relay records -----------------------------------------------------------------------------


def rec(type_, **kw):
    return SimpleNamespace(type=type_, **kw)


def relay_script(doc, *, prose=None, terminal=None):
    events = [rec("start", run="r", provider="anthropic")]
    for key, value in doc.items():
        if prose and key in prose:
            for i in range(0, len(value), 10):
                events.append(rec("delta", pointer=f"/{key}", text=value[i : i + 10]))
        if isinstance(value, list):
            for i, item in enumerate(value):
                events.append(rec("item", pointer=f"/{key}", index=i, value=item))
        else:
            events.append(rec("field", pointer=f"/{key}", value=value))
    if terminal is not None and terminal.type == "error":  # the relay client raises it, as open_relay does
        return Script(events, raise_at_end=failure_for(terminal.code, terminal.message, getattr(terminal, "pointer", None)))
    events.append(terminal or rec("complete", fields=len(events) - 1))
    return Script(events)


async def test_settled_mode_never_shows_a_provisional_value(form, tmp_path):
    states = set()
    form.subscribe(lambda u: states.update(form.state(p) for p in u.pointers if p))
    run = make_run(form, "settled", relay_script(json.loads(TEXT)), tmp_path)
    status = await run.run()
    assert status.phase is Phase.COMMITTED
    assert form.committed == json.loads(TEXT)
    assert FieldState.PROVISIONAL not in states
    assert len(History(tmp_path / "history.jsonl").read()) == 1


async def test_hybrid_mode_grows_prose_provisionally(form):
    seen = []
    form.subscribe(lambda u: seen.append((form.state("/notes"), form.value("/notes"))) if "/notes" in u.pointers else None)
    run = make_run(form, "hybrid", relay_script(json.loads(TEXT), prose={"notes"}))
    assert (await run.run()).phase is Phase.COMMITTED
    assert seen[0][0] is FieldState.PROVISIONAL and len(seen[0][1]) == 10
    assert seen[-1] == (FieldState.SETTLED, json.loads(TEXT)["notes"])


async def test_relay_error_record_fails_with_its_code(form):
    before, _ = prime(form)
    terminal = rec("error", code="validation_failed", message="Input should be a number", pointer="/amount")
    run = make_run(form, "settled", relay_script({"customer_name": "Martinez SA"}, terminal=terminal))
    status = await run.run()
    assert status.phase is Phase.FAILED and status.error_code == "validation_failed" and status.pointer == "/amount"
    assert form.document == before


async def test_a_run_runs_once(form):
    run = make_run(form, "blocking", Script(complete()))
    await run.run()
    with pytest.raises(UsageError):
        await run.run()


def test_server_note_and_reasons():
    assert server_note({"tokens_sent": 37, "tokens_total": 120, "disconnected": True}) == "server stopped after 37 of 120 tokens"
    assert describe_failure(ConnectionLost("x"))[0] == "connection lost: x"


async def test_elapsed_comes_from_the_injected_clock(form):
    ticks = iter(range(0, 10_000, 2))
    script = Script(complete())
    run = Run(form, RunConfig(mode=Mode.BLOCKING, schema_name="invoice"), source=script, clock=lambda: float(next(ticks)))
    script.run = run
    seen = []
    run.subscribe(lambda s: seen.append(s.elapsed))
    status = await run.run()
    assert status.phase is Phase.COMMITTED
    assert seen == sorted(seen) and all(e == int(e) and e % 2 == 0 for e in seen) and seen[-1] > 0


async def test_naive_mode_keeps_what_it_showed_because_its_spec_says_so(form):
    from livefill.extraction.modes import MODES

    assert not MODES[Mode.NAIVE].restores_on_failure
    naive = FormModel(schema_model("invoice"), marking=False)
    run = make_run(naive, "naive", Script([ArgsDelta(text='{"customer_name": "Mar')]))
    status = await run.run()
    assert status.phase is Phase.FAILED and naive.committed == {"customer_name": "Mar"}


async def test_stop_before_the_run_begins_ends_stopped_without_a_request():
    opened: list[str] = []

    def source(tap):  # noqa: ANN001
        opened.append("opened")
        raise AssertionError("a stopped run must not open its source")

    form = FormModel(schema_model("weather"))
    form.load({"city": "Paris"})
    run = Run(form, RunConfig(mode=Mode.PARTIAL), source=source)
    task = asyncio.ensure_future(run.run())  # created, not yet begun: Stop right after Start
    assert run.stop() is True
    status = await task
    assert status.phase is Phase.STOPPED and status.reason == "stopped by the user"
    assert opened == [] and form.committed["city"] == "Paris" and not form.running
    assert run.stop() is False


async def test_a_batch_of_events_that_arrived_together_is_told_to_the_observers_once(form):
    """A source that says more of the same batch is waiting (`pending`, as livefill.wire.net_thread's
    does) gets one status update per batch, with every count in it."""
    events = complete(size=4)
    batches = [events[i : i + 10] for i in range(0, len(events), 10)]

    class Batched:
        def __init__(self) -> None:
            self.pending = False

        async def _gen(self):
            for batch in batches:
                await asyncio.sleep(0)
                for i, event in enumerate(batch):
                    self.pending = i < len(batch) - 1
                    yield event

        def __aiter__(self):
            return self._gen()

    @asynccontextmanager
    async def source(tap):  # noqa: ANN001
        yield Batched()

    run = Run(form, RunConfig(mode=Mode.PARTIAL, schema_name="invoice"), source=source)
    told = []
    run.subscribe(lambda status: told.append(status.deltas_received))
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    deltas = sum(isinstance(e, ArgsDelta) for e in events)
    assert status.deltas_received == deltas
    ends = {sum(isinstance(e, ArgsDelta) for e in events[: i + len(b)]) for i, b in zip(range(0, len(events), 10), batches)}
    streaming = [n for n in told if 1 < n < deltas]  # 1: the first content moves the run to STREAMING
    assert 0 < len(streaming) <= len(batches)  # one per batch, not one per delta
    assert set(streaming) <= ends  # each at a batch's end
