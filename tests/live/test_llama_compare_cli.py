"""`livefill compare` against the real llama-cpp-python server: lanes run concurrently, each its
own request (a forced tool, json_object, and a settled lane read through the relay the command
starts in its own process), and stopping one lane cancels only that lane's request: the server's
log shows one client gone and the other generation run to its end."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import pytest

from livefill.cli.compare_args import build_parser
from livefill.cli.compare_plan import make_compare_plan
from livefill.cli.compare_run import lane_configs, run_lanes
from livefill.wire.keys import KeyStore
from tests.live.conftest import REPO
from tests.live.test_llama_extract_cli import RUN_LIMIT, cli_env

pytestmark = [pytest.mark.realserver, pytest.mark.slow]

CLI = [sys.executable, "-m", "livefill.gui.app", "compare"]
COMPLETIONS = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" 200')


def lane(server, **more: str) -> str:  # noqa: ANN001
    keys = {"provider": "openai-compatible", "base_url": server.base_url, "model": server.model, **more}
    return ",".join(f"{k}={v}" for k, v in keys.items())


def test_three_lanes_run_concurrently_each_its_own_request(llama_server) -> None:  # noqa: ANN001
    requests_before = len(COMPLETIONS.findall(llama_server.log_text()))
    args = [
        *CLI, "--scenario", "weather", "--json", "--idle-timeout", "60",
        "--lane", lane(llama_server, structured="tools"),
        "--lane", lane(llama_server, structured="json_object"),
        "--lane", lane(llama_server, structured="tools", mode="settled"),
    ]  # fmt: skip
    result = subprocess.run(args, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=RUN_LIMIT)
    assert "Traceback" not in result.stderr
    lanes = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, (result.stderr, lanes)
    assert [(x["structured"], x["mode"], x["live"], x["model"]) for x in lanes] == [
        ("tools", "partial", True, llama_server.model), ("json_object", "partial", True, llama_server.model),
        ("tools", "settled", True, llama_server.model),
    ]
    for x in lanes:
        assert x["outcome"] == "committed", x
        assert x["fields_total"] == 1 and x["fields_right"] in (0, 1)  # scored against "Lisbon"
        assert x["first_value_s"] is not None and x["all_settled_s"] is not None
    tools, json_object, settled = lanes
    assert tools["deltas"] > 0 and json_object["deltas"] > 0 and settled["records"] > 0 and settled["deltas"] == 0
    # every lane sent its own request to the server (the settled one through the relay)
    llama_server.wait_for(lambda: len(COMPLETIONS.findall(llama_server.log_text())) >= requests_before + 3)
    assert len(COMPLETIONS.findall(llama_server.log_text())) == requests_before + 3


def test_stopping_one_lane_cancels_only_its_request(llama_server) -> None:  # noqa: ANN001
    finished_before = llama_server.finished_generations()
    disconnects_before = llama_server.disconnects()
    argv = [
        "--scenario", "invoice", "--idle-timeout", "60",
        "--lane", lane(llama_server, structured="tools"), "--lane", lane(llama_server, structured="json_object"),
    ]  # fmt: skip
    from keyring.backends.null import Keyring

    keys = KeyStore(backend=Keyring(), environ={})  # no key of this machine, no system keyring
    plan = make_compare_plan(build_parser().parse_args(argv), keys=keys, err=sys.stderr, environ={})
    assert not plan.needs_server  # live partial lanes: no demo provider, no relay
    configs = lane_configs(plan, url=None, relay_token=None, keys=keys)
    stopped: list[int] = []
    other_deltas: list[int] = []  # the other lane's deltas when the first was stopped

    def stop_the_first_that_streams(lanes) -> None:  # noqa: ANN001
        loop = asyncio.get_running_loop()

        def check() -> None:
            for i, one in enumerate(lanes):
                status = one.status
                if status is not None and status.deltas_received >= 3:
                    stopped.append(i)
                    others = lanes[1 - i].status
                    other_deltas.append(others.deltas_received if others is not None else 0)
                    one.stop()
                    return
            loop.call_later(0.02, check)

        check()

    results, _ = asyncio.run(run_lanes(plan, configs, on_started=stop_the_first_that_streams, handle_sigint=False))
    (index,) = stopped
    other = results[1 - index]
    assert results[index].outcome == "cancelled", results[index]
    assert other.outcome != "cancelled" and other.deltas > other_deltas[0], other  # it ran on after the stop
    if other.outcome == "committed":
        assert other.fields_total == 19
    # the server saw the stopped lane's client go away, and each request end once. The other's
    # generation ran to its end if that lane read it to the end; the tiny model may write a value
    # that does not validate, and that lane's reader then ends its own request early (a client gone
    # too, as CI saw once): a failure of its own, never a cancel
    llama_server.wait_for(lambda: llama_server.disconnects() > disconnects_before)

    def ended() -> int:  # requests the server has seen end since the test began, either way
        return (llama_server.disconnects() - disconnects_before) + (llama_server.finished_generations() - finished_before)

    llama_server.wait_for(lambda: ended() >= 2, limit=RUN_LIMIT)
    if other.outcome == "committed":
        assert llama_server.disconnects() == disconnects_before + 1
        assert llama_server.finished_generations() == finished_before + 1
    else:
        assert other.outcome not in ("stopped", "disconnected"), other
        assert llama_server.disconnects() <= disconnects_before + 2
