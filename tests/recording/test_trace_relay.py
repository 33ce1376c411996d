"""Recording a settled / hybrid run: the embedded relay writes the provider's wire it reads.

Over real loopback sockets: client -> the embedded relay (the session's demo server) -> the demo
provider. The trace is an ordinary provider trace, so it replays in any mode; a relay deployed on
its own refuses to record (403), and a Run aimed at one refuses at once.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import time

import httpx
import pytest

from livefill.errors import ProviderHTTPError, UsageError
from livefill.relay.client import open_relay
from livefill.relay.records import RECORD_HEADER
from livefill.session.run import Run
from livefill.session.run_config import relay_can_record
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.relay.app import create_relay_app
from livefill.session.replay import lane_record_config
from livefill.recording.trace import load_trace
from tests.relay.test_relay_support import LoopbackServer
from tests.recording.test_trace import _no_secrets_in_traces, fake_key  # noqa: F401, F811 - fixtures: no key in any trace
from tests.recording.test_trace_replay import invoice_form, record_config, replay

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

INVOICE = get_scenario("invoice")


async def _trace_ended(path, limit: float = 10.0):
    """The trace at `path` once the relay (another thread) has written its trailer."""
    deadline = time.monotonic() + limit
    while True:
        if path.exists():
            trace = load_trace(path)
            if not trace.truncated or time.monotonic() > deadline:
                return trace
        assert time.monotonic() < deadline, f"{path} was never written"
        await asyncio.sleep(0.02)


def _assert_clean(path, *secrets: str) -> None:
    raw = path.read_text(encoding="utf-8")
    texts = [raw] + [
        base64.b64decode(json.loads(line)["b64"]).decode("utf-8", "replace")
        for line in raw.splitlines()
        if '"b64"' in line
    ]
    for text in texts:
        lowered = text.lower()
        assert "authorization" not in lowered and "x-api-key" not in lowered and "bearer" not in lowered
        for secret in secrets:
            assert secret not in text


@pytest.mark.parametrize("mode", ["settled", "hybrid"])
@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "ollama"])
async def test_a_relay_run_records_the_provider_wire_and_it_replays_in_partial(
    demo_server, tmp_path, fake_key, mode, provider
):
    path = tmp_path / f"{mode}.jsonl"
    cfg = record_config(demo_server, path, fake_key, mode=mode, provider=provider)
    assert relay_can_record(cfg)
    run = Run(invoice_form(), cfg)
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    assert run.result == INVOICE.output
    trace = await _trace_ended(path)
    assert run.recorder is not None and run.recorder.begun and str(run.recorder.path) == str(path)
    assert trace.end == "complete" and trace.reads and not trace.truncated
    assert trace.provider == provider and trace.status == 200 and trace.header["mode"] == mode
    assert trace.document == INVOICE.document and trace.header["schema_name"] == "invoice"
    _assert_clean(path, fake_key, demo_server.relay_token)
    body = trace.body().decode("utf-8")
    assert '"seq"' not in body and '"type":"start"' not in body  # the provider's wire, not relay records
    if provider != "ollama":
        assert "data:" in body  # an SSE stream

    partial_run, replayed, _, _, _ = await replay(demo_server, trace, mode="partial", speed=0)
    assert replayed.phase is Phase.COMMITTED, replayed.reason
    assert partial_run.result == run.result
    settled_run, settled, _, _, _ = await replay(demo_server, trace, mode="settled", speed=0)
    assert settled.phase is Phase.COMMITTED, settled.reason
    assert settled_run.result == run.result


async def test_a_live_upstream_through_the_embedded_relay_is_recorded_without_its_key(demo_server, tmp_path, fake_key):
    # The demo provider stands in for the live API: the key is handed to the embedded relay over
    # loopback and goes upstream as x-api-key; none of it may reach the trace.
    path = tmp_path / "live.jsonl"
    cfg = dataclasses.replace(
        record_config(demo_server, path, fake_key, mode="settled"),
        demo=None,
        relay_url=demo_server.url,
        relay_embedded=True,
    )
    run = Run(invoice_form(), cfg)
    status = await run.run()
    assert status.phase is Phase.COMMITTED, status.reason
    trace = await _trace_ended(path)
    assert trace.end == "complete" and trace.provider == "anthropic"
    assert trace.header["base_url"] == demo_server.url
    _assert_clean(path, fake_key, demo_server.relay_token)
    replay_run, replayed, _, _, _ = await replay(demo_server, trace, mode="partial", speed=0)
    assert replayed.phase is Phase.COMMITTED, replayed.reason
    assert replay_run.result == run.result == INVOICE.output


async def test_a_relay_trace_can_keep_only_the_document_hash(demo_server, tmp_path, fake_key):
    path = tmp_path / "hash.jsonl"
    cfg = dataclasses.replace(record_config(demo_server, path, fake_key, mode="settled"), record_document=False)
    assert (await Run(invoice_form(), cfg).run()).phase is Phase.COMMITTED
    trace = await _trace_ended(path)
    assert trace.document is None and trace.header["document_sha256"]
    assert INVOICE.document not in path.read_text(encoding="utf-8")


async def test_a_stopped_relay_run_leaves_a_trace_ending_stopped(demo_server, tmp_path, fake_key):
    path = tmp_path / "stop.jsonl"
    run = Run(invoice_form(), record_config(demo_server, path, fake_key, mode="settled", speed=50))
    task = asyncio.ensure_future(run.run())
    deadline = time.monotonic() + 10
    while run.status.tokens_received < 2:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    run.stop()
    assert (await task).phase is Phase.STOPPED
    trace = await _trace_ended(path)
    assert trace.end == "stopped" and trace.reads
    assert trace.trailer["reason"] == "the client disconnected"


async def test_a_failed_upstream_leaves_a_trace_ending_failed(demo_server, tmp_path, fake_key):
    path = tmp_path / "fail.jsonl"
    run = Run(invoice_form(), record_config(demo_server, path, fake_key, mode="settled", fault="http_429"))
    assert (await run.run()).phase is Phase.FAILED
    trace = await _trace_ended(path)
    assert trace.end == "failed" and trace.trailer["reason"] and trace.trailer["code"]
    assert trace.status == 429 and trace.reads == ()


def test_a_run_through_a_relay_deployed_on_its_own_cannot_record(demo_server, tmp_path, fake_key):
    cfg = dataclasses.replace(
        record_config(demo_server, tmp_path / "x.jsonl", fake_key, mode="hybrid"), relay_url="http://127.0.0.1:9"
    )
    assert not relay_can_record(cfg)  # a relay address given, not the app's embedded one
    with pytest.raises(UsageError, match="a relay deployed on its own cannot record; record in partial mode"):
        Run(invoice_form(), cfg)
    lane_cfg, note = lane_record_config(cfg, target=str(tmp_path), lane="hybrid", label="invoice")
    assert lane_cfg.record_path is None and "lane hybrid is not recorded" in note
    embedded = record_config(demo_server, tmp_path / "y.jsonl", fake_key, mode="settled")
    lane_cfg, note = lane_record_config(embedded, target=str(tmp_path), lane="settled", label="invoice")
    assert note is None and lane_cfg.record_path


async def test_a_relay_deployed_on_its_own_answers_403_to_the_record_header(demo_server, tmp_path):
    path = tmp_path / "never.jsonl"
    with LoopbackServer(create_relay_app(token="t", demo_base_url=demo_server.url)) as srv:
        with pytest.raises(ProviderHTTPError) as info:
            async with open_relay(srv.url, "t", {"scenario": "invoice"}, record_path=str(path)) as records:
                async for _ in records:
                    pass
        assert info.value.status == 403 and "cannot record" in str(info.value)
    assert not path.exists()


async def test_the_embedded_relay_wants_an_absolute_path(demo_server, tmp_path):
    async with httpx.AsyncClient() as client:
        response = await client.post(
            demo_server.url + "/relay/v1/extract",
            json={"scenario": "invoice"},
            headers={"authorization": f"Bearer {demo_server.relay_token}", RECORD_HEADER: "relative.jsonl"},
        )
    assert response.status_code == 400 and "absolute path" in response.json()["error"]["message"]


async def test_open_relay_never_sends_the_record_header_off_loopback(tmp_path):
    with pytest.raises(UsageError, match="cannot record"):
        async with open_relay("http://relay.example:8080", "t", {"scenario": "invoice"}, record_path=str(tmp_path / "x")):
            pass
