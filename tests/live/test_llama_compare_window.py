"""The window's compare view with a live lane on the real llama-cpp-python server beside a demo
lane, its lanes given on the command line (`livefill --compare-lane ...`, parsed as `livefill
compare --lane`): both lanes run at once, each its own request, and each ends on its own. The
live lane (OpenAI Chat's wire, a forced tool, SmolLM2-135M) gets its key as any live lane does,
from the KeyStore (here the server's own environment variable; llama.cpp takes any key). The tiny
model may not produce a valid invoice: the live lane then fails validation, with a clear reason,
while the demo lane commits regardless; the point is that the lanes are independent."""

from __future__ import annotations

import re

import pytest
from keyring.backends.null import Keyring

from livefill.gui.app_args import parse_args
from livefill.session.run_status import Phase
from livefill.wire.keys import KeyStore, server_env_var
from tests.gui.conftest import _private_user_config, arun, make_window, qloop, wait_until  # noqa: F401 - fixtures

pytestmark = [pytest.mark.realserver, pytest.mark.slow]

COMPLETIONS = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" 200')
RUN_LIMIT = 240.0


def test_a_live_llama_lane_beside_a_demo_lane_runs_at_once_and_ends_on_its_own(make_window, qloop, llama_server):
    live = f"provider=openai-chat,base_url={llama_server.base_url},model={llama_server.model},structured=tools"
    args = parse_args(["--scenario", "invoice", "--compare-lane", live, "--compare-lane", "provider=anthropic,live=false"])
    secret = "sk-local-llama-test"
    keys = KeyStore(backend=Keyring(), environ={server_env_var(llama_server.base_url): secret})
    requests_before = len(COMPLETIONS.findall(llama_server.log_text()))
    # the demo lane at 100 tokens/s streams for about two seconds, beside the live lane
    window = make_window(compare=args.compare, keys=keys, scenario="invoice", speed=100, idle_timeout=90)
    view = window.compare_view
    assert [lane.title for lane in view.lanes] == [
        f"openai-chat · live · {llama_server.model}", "anthropic · demo · default model"]
    both_active: list[bool] = []

    def watch() -> bool:
        live_status, demo_status = window.last_statuses()
        if live_status is not None and demo_status is not None:
            both_active.append(live_status.phase.active and demo_status.phase.active)
        return not window.active and all(s is not None and s.phase.final for s in window.last_statuses())

    window.start_button.click()
    arun(qloop, wait_until(watch, timeout=RUN_LIMIT, interval=0.02), timeout=RUN_LIMIT + 5)
    live_status, demo_status = window.last_statuses()
    live_config, demo_config = (lane.run.config for lane in view.lanes)
    assert live_config.demo is None and live_config.api_key == secret and live_config.base_url == llama_server.base_url
    assert demo_config.demo is not None
    # concurrent: both were running at once (on a slow machine the demo lane ends long before the live one)
    assert any(both_active), "the lanes never ran at the same time"
    # independent: the demo lane committed, right on every field, whatever the live lane did
    assert demo_status.phase is Phase.COMMITTED, demo_status.reason
    table = view.metrics_table
    arun(qloop, wait_until(lambda: table.cell_text("fields_right", 1) == "✓ 19 / 19"))
    assert live_status.deltas_received > 0, live_status  # the model streamed into its lane
    if live_status.phase is not Phase.COMMITTED:  # the small model's invoice did not validate: said why
        assert live_status.phase is Phase.FAILED and live_status.reason.strip(), live_status
        assert live_status.error_code, live_status
    # the live lane's request reached the real server (the demo lane's did not)
    llama_server.wait_for(lambda: len(COMPLETIONS.findall(llama_server.log_text())) >= requests_before + 1)
    assert len(COMPLETIONS.findall(llama_server.log_text())) == requests_before + 1
