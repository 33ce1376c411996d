"""Runs against the real demo provider (and relay) over loopback: every mode, every ending."""

from __future__ import annotations

import asyncio

import pytest

from livefill.embedded.client import demo_request_entry
from livefill.demo.protocol import DemoKnobs
from livefill.extraction.form import FieldState, FormModel
from livefill.recording.history import History
from livefill.extraction.modes import Mode
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model

PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "ollama"]


def config(server, mode="partial", provider="anthropic", scenario="invoice", **knobs):
    sc = get_scenario(scenario)
    idle = knobs.pop("idle_timeout", 20.0)
    return RunConfig(
        mode=Mode(mode),
        provider=provider,
        base_url=server.url,
        schema_name=sc.schema_name,
        document=sc.document,
        demo=DemoKnobs(scenario=scenario, **knobs),
        relay_token=server.relay_token,
        idle_timeout=idle,
        label=scenario,
    )


def primed_form(scenario="invoice"):
    form = FormModel(schema_model(get_scenario(scenario).schema_name))
    form.set_value("/customer_name" if scenario == "invoice" else form.fields[0].pointer, "Typed by the user")
    return form


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mode", ["partial", "blocking", "naive", "settled", "hybrid"])
async def test_every_mode_commits_the_scenario_on_every_wire(demo_server, tmp_path, provider, mode):
    form = primed_form()
    history = History(tmp_path / "h.jsonl")
    run = Run(form, config(demo_server, mode, provider, speed=0), history=history)
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == get_scenario("invoice").output
    assert [r["extraction"] for r in history.read()] == [get_scenario("invoice").output]
    assert status.bytes_received > 0 and status.tokens_received > 0


@pytest.mark.parametrize("scenario", ["weather", "ticket", "multilingual", "catalog"])
async def test_partial_commits_every_scenario(demo_server, scenario):
    form = FormModel(schema_model(get_scenario(scenario).schema_name))
    status = await Run(form, config(demo_server, "partial", scenario=scenario, speed=0)).run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert form.committed == get_scenario(scenario).output


@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_stop_is_a_real_cancel_the_server_sees(demo_server, mode):
    form = primed_form()
    before = form.committed
    run = Run(form, config(demo_server, mode, speed=200))
    task = asyncio.ensure_future(run.run())
    deadline = asyncio.get_running_loop().time() + 10
    while run.status.tokens_received < 5 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert run.phase is Phase.STREAMING
    assert run.stop()
    status = await task
    assert status.phase is Phase.STOPPED
    assert form.committed == before and form.document == before
    entry = await demo_request_entry(demo_server.url, since=status.started_at - 0.5)
    assert entry["disconnected"] and not entry["finished"]
    assert entry["tokens_sent"] < entry["tokens_total"]
    assert status.server_note == f"server stopped after {entry['tokens_sent']} of {entry['tokens_total']} tokens"
    assert status.server_note in status.reason



@pytest.mark.parametrize("mode", ["partial", "settled"])
async def test_a_stop_before_the_request_was_sent_ends_the_run_without_waiting_for_the_server(demo_server, mode, monkeypatch):
    """Stop while connecting: the request head never left, so the server's log will never hold it.
    The run used to wait out the whole wait for its note (1 s of Start greyed out after Esc).
    The request is held by patching this process's HTTP stack, so the run reads here."""
    import functools

    import httpcore._async.http11 as http11
    import httpcore2._async.http11 as http11_sdk  # the anthropic SDK's copy

    import livefill.session.run as run_module

    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "inprocess")
    held = asyncio.Event()
    for module in (http11, http11_sdk):
        send_head = module.AsyncHTTP11Connection._send_request_headers

        async def never_sent(self, request, send_head=send_head):  # the run's request hangs before its head
            if request.url.target.endswith(b"/_demo/requests"):
                return await send_head(self, request)  # the request log still answers
            held.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(module.AsyncHTTP11Connection, "_send_request_headers", never_sent)
    monkeypatch.setattr(run_module, "demo_request_entry", functools.partial(run_module.demo_request_entry, wait=30.0))
    form = primed_form()
    before = form.committed
    run = Run(form, config(demo_server, mode))
    task = asyncio.ensure_future(run.run())
    await asyncio.wait_for(held.wait(), 10)
    assert run.phase is Phase.CONNECTING and run.stop()
    stopped_at = asyncio.get_running_loop().time()
    status = await asyncio.wait_for(task, 60)
    assert asyncio.get_running_loop().time() - stopped_at < 10  # not the 30 s the note may wait
    assert status.phase is Phase.STOPPED and not status.server_note
    assert form.committed == before and form.document == before



@pytest.mark.parametrize("fault, opening, once", [
    ("invalid_value", "validation failed at /amount: ", "/amount"),
    ("malformed", "protocol error: ", "offset"),
    ("error", "provider error: ", "overloaded_error"),
])
async def test_a_failure_reads_the_same_through_the_relay_as_direct(demo_server, fault, opening, once):
    # Through the relay the same failures read "validation failed at /amount: relay: /amount: …",
    # "relay: … at offset 357: … (offset 357)" with no "protocol error:", and no "provider error:".
    reasons = {}
    for mode in ("partial", "settled"):
        status = await Run(FormModel(schema_model("invoice")), config(demo_server, mode, fault=fault)).run()
        assert status.phase is Phase.FAILED
        reasons[mode] = status.reason
    for mode, reason in reasons.items():
        assert reason.startswith(opening) and reason.count(once) == 1, (mode, reason)
    assert reasons["settled"].replace("relay: ", "") == reasons["partial"]


@pytest.mark.parametrize("fault, said", [("stall", "only keep-alives for 0.5 s"), ("stall_silent", "nothing arrived for 0.5 s")])
async def test_a_short_idle_limit_says_which_silence_it_was_through_the_relay_too(demo_server, fault, said):
    # The relay watched its upstream for its own 20 s, so a run with a 3 s limit said "relay:
    # nothing arrived for 3.45 s" for both faults: the run now hands its limit to the relay.
    for mode in ("partial", "settled"):
        status = await Run(FormModel(schema_model("invoice")),
                           config(demo_server, mode, speed=0, fault=f"{fault}@0.3", idle_timeout=0.5)).run()
        assert status.phase is Phase.FAILED and status.error_code == "timeout", status.reason
        assert said in status.reason, (mode, status.reason)


async def test_a_value_that_takes_longer_than_the_idle_limit_to_write_does_not_end_a_relay_run(demo_server):
    # The relay sends nothing until a value settles: the ticket's summary, written for longer than
    # the idle limit, ended settled runs with "relay: nothing arrived for 23 s" (partial committed).
    for mode in ("settled", "hybrid"):
        cfg = config(demo_server, mode, scenario="ticket", speed=250, idle_timeout=0.5)
        started = asyncio.get_running_loop().time()
        status = await Run(FormModel(schema_model("ticket")), cfg).run()
        assert status.phase is Phase.COMMITTED, (mode, status.reason)
        assert asyncio.get_running_loop().time() - started > 1.5  # the summary alone took longer than the limit


async def test_the_relay_client_waits_past_the_relays_verdict_and_its_keepalive_period(demo_server, monkeypatch):
    # The relay's last keep-alive may come a quarter of its limit before its upstream fell silent,
    # and its verdict a limit after the silence: the client gave up first in 6 of 20 stalls.
    # (It spies on this process's relay client, so the run reads here.)
    import livefill.relay.client as relay_client

    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "inprocess")

    seen = []
    real = relay_client.open_relay

    def spying(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        seen.append(kw["idle_timeout"])
        return real(*args, **kw)

    monkeypatch.setattr(relay_client, "open_relay", spying)
    for idle in (20.0, 2.0):
        await Run(FormModel(schema_model("invoice")), config(demo_server, "settled", speed=0, idle_timeout=idle)).run()
    assert seen == [20.0 + 3.0 + 5.0, 2.0 + 0.3 + 0.5]


async def test_a_long_idle_limit_is_not_sent_to_the_relay(demo_server):
    # It was always sent: --idle-timeout 7200 failed every settled run with a 400 (the relay takes
    # at most 3600), and a relay older than the key refused every relay run.
    for idle in (20.0, 7200.0):
        status = await Run(FormModel(schema_model("invoice")), config(demo_server, "settled", speed=0, idle_timeout=idle)).run()
        assert status.phase is Phase.COMMITTED, (idle, status.reason)


FAULTS = [
    ("max_tokens", "anthropic", "truncated"),
    ("max_tokens", "openai-chat", "truncated"),
    ("error", "anthropic", "upstream_error"),
    ("error", "ollama", "upstream_error"),
    ("disconnect", "anthropic", None),
    ("disconnect", "openai-responses", None),
    ("stall", "anthropic", "timeout"),
    ("stall_silent", "openai-chat", "timeout"),
    ("invalid_value", "anthropic", "validation_failed"),
    ("malformed", "openai-chat", "protocol_error"),
    ("blank_line", "ollama", "protocol_error"),
]


@pytest.mark.parametrize(("fault", "provider", "code"), FAULTS)
async def test_every_fault_ends_restored_with_its_reason(demo_server, tmp_path, fault, provider, code):
    form = primed_form()
    before, states = form.committed, form.states()
    history = History(tmp_path / "h.jsonl")
    idle = 0.5 if fault.startswith("stall") else 20.0
    run = Run(form, config(demo_server, "partial", provider, speed=0, fault=fault, idle_timeout=idle), history=history)
    status = await run.run()
    assert status.phase is Phase.FAILED, status.reason
    if code is not None:
        assert status.error_code == code, status.reason
    assert status.reason
    assert form.committed == before and form.document == before
    if fault == "invalid_value":
        assert status.pointer == "/amount"
    assert form.states() == states  # restored exactly: the run's error is in its status, not on a field
    assert history.read() == []


@pytest.mark.parametrize("fault", ["max_tokens", "error", "invalid_value"])
async def test_relay_faults_end_restored(demo_server, fault):
    form = primed_form()
    before = form.committed
    status = await Run(form, config(demo_server, "settled", speed=0, fault=fault)).run()
    assert status.phase is Phase.FAILED, status.reason
    assert form.document == before


async def test_naive_keeps_its_wrong_values_after_a_fault(demo_server):
    form = FormModel(schema_model("invoice"), marking=False)
    status = await Run(form, config(demo_server, "naive", speed=0, fault="max_tokens@0.3")).run()
    assert status.phase is Phase.FAILED
    assert form.committed  # whatever it had shown stays
    assert form.committed != get_scenario("invoice").output


async def test_partial_fails_the_moment_an_invalid_value_settles(demo_server):
    """Like the relay, partial mode checks a settled value against its field at once: the run ends
    (and its request is closed) mid-stream, not after the model finished writing."""
    form = primed_form()
    before = form.committed
    status = await Run(form, config(demo_server, "partial", speed=150, fault="invalid_value@0.2")).run()
    assert status.phase is Phase.FAILED and status.error_code == "validation_failed", status.reason
    assert status.pointer == "/amount" and "twelve hundred" in status.reason
    assert form.state("/amount") is not FieldState.INVALID and form.document == before
    entry = await demo_request_entry(demo_server.url, since=0.0, run_id=status.run_id)
    assert entry is not None and entry["disconnected"], entry
    assert entry["tokens_sent"] < entry["tokens_total"]
