"""`livefill compare`: several lanes at once on one document, each its own request, compared.

Most tests call `livefill.cli.compare.main(argv)` in this process against the session's demo
server; the console script (no Qt imported, exit statuses) is checked with a real subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from livefill.cli.compare import main
from livefill.cli.compare_args import build_parser
from livefill.cli.compare_plan import make_compare_plan
from livefill.cli.compare_run import lane_configs, run_lanes
from livefill.extraction.scenarios import get_scenario
from livefill.session.metrics import leaves
from livefill.wire.keys import KeyStore
from tests.conftest import REPO

KEYS = [
    "lane", "provider", "live", "model", "mode", "structured", "fine_grained", "outcome", "reason", "first_value_s",
    "first_settled_s", "all_settled_s", "elapsed_s", "deltas", "records", "bytes", "never_true", "fields_total",
    "fields_right", "wrong_fields", "tokens_in", "tokens_out",
]
FOUR_WIRES = [
    "--lane", "provider=anthropic,speed=0", "--lane", "provider=anthropic,fine_grained=true,speed=0",
    "--lane", "provider=openai-chat,speed=0", "--lane", "provider=ollama,speed=0",
]


def key_store(environ: dict[str, str] | None = None) -> KeyStore:
    """A KeyStore that sees only `environ` and no system keyring (tests never touch real keys)."""
    from keyring.backends.null import Keyring

    return KeyStore(backend=Keyring(), environ=environ or {})


def run_compare(capsys, argv: list[str], demo_server=None, **kwargs) -> tuple[int, list[str], list[str]]:  # noqa: ANN001
    kwargs.setdefault("keys", key_store())
    kwargs.setdefault("environ", {})
    code = main(argv, server=demo_server, **kwargs)
    captured = capsys.readouterr()
    return code, captured.out.split("\n")[:-1], captured.err.split("\n")[:-1]


def server_outcomes(demo_server, before: int) -> list[dict]:  # noqa: ANN001
    """The demo server's log entries since `before`, once none is still being written (the server
    sees a client go away at its next write)."""
    for _ in range(250):
        entries = demo_server.requests()[before:]
        if all(e["outcome"] not in ("pending", "streaming") for e in entries):
            return entries
        time.sleep(0.02)
    return demo_server.requests()[before:]


def lanes_of(out: list[str]) -> list[dict]:
    lanes = [json.loads(line) for line in out]
    for i, lane in enumerate(lanes):
        assert list(lane) == KEYS, lane
        assert lane["lane"] == i
    return lanes


# ---------------------------------------------------------------------------------------------
# the lanes, field by field


def test_four_demo_wires_on_the_invoice_differ_on_the_wire_and_are_all_right(capsys, demo_server) -> None:
    code, out, err = run_compare(capsys, ["--scenario", "invoice", "--json", *FOUR_WIRES], demo_server)
    assert code == 0, err
    lanes = lanes_of(out)
    assert [(x["provider"], x["fine_grained"], x["live"], x["mode"]) for x in lanes] == [
        ("anthropic", False, False, "partial"), ("anthropic", True, False, "partial"),
        ("openai-chat", False, False, "partial"), ("ollama", False, False, "partial"),
    ]
    total = len(list(leaves(get_scenario("invoice").expected)))
    for x in lanes:
        assert (x["outcome"], x["reason"]) == ("committed", "committed")
        assert (x["fields_total"], x["fields_right"], x["wrong_fields"]) == (total, total, [])  # right on every field
        assert x["never_true"] == 0  # partial mode marks what is not yet true
        assert 0 <= x["first_value_s"] <= x["first_settled_s"] <= x["all_settled_s"] <= x["elapsed_s"]
        assert x["records"] == 0 and x["deltas"] > 0 and x["bytes"] > 0
        assert x["model"] is None and x["structured"] == "tools"
    # the point of the comparison: Anthropic's default tool streaming buffers the JSON into a few
    # chunks; fine-grained, OpenAI and Ollama send a fragment per token, each in its own framing
    deltas = [x["deltas"] for x in lanes]
    assert deltas[0] < deltas[1] and deltas[0] < deltas[2] and deltas[0] < deltas[3], deltas
    assert deltas[1] == deltas[2] == deltas[3]  # (one per token of the same output)
    assert len({x["bytes"] for x in lanes}) == 4, [x["bytes"] for x in lanes]
    # every demo wire reports the same usage (the same request, the same output)
    usage = {(x["tokens_in"], x["tokens_out"]) for x in lanes}
    assert len(usage) == 1 and all(isinstance(n, int) and n > 0 for n in usage.pop())


def test_a_disconnected_lane_does_not_commit_the_others_do_exit_1(capsys, demo_server) -> None:
    before = len(demo_server.requests())
    code, out, err = run_compare(
        capsys,
        ["--scenario", "invoice", "--json", "--lane", "provider=anthropic,speed=0",
         "--lane", "provider=openai-chat,speed=0,fault=disconnect@0.5", "--lane", "provider=ollama,speed=0"],
        demo_server,
    )
    assert code == 1
    ok, cut, ok2 = lanes_of(out)
    assert ok["outcome"] == ok2["outcome"] == "committed"
    assert cut["outcome"] not in ("committed", "stopped", "") and cut["reason"]
    assert cut["fields_right"] == 0 and cut["fields_total"] == ok["fields_total"]
    assert cut["all_settled_s"] is None and cut["first_settled_s"] is None
    assert cut["first_value_s"] is not None  # it showed values before the cut
    assert err == [f"livefill compare: lane 1: {cut['outcome']}: {cut['reason']}"]
    # three requests, each its own; only the cut one was aborted by the server
    entries = server_outcomes(demo_server, before)
    assert sorted(e["outcome"] for e in entries) == ["aborted", "finished", "finished"]


def test_naive_lane_shows_values_that_were_never_true_settled_lane_reads_records(capsys, demo_server) -> None:
    code, out, err = run_compare(
        capsys,
        ["--scenario", "invoice", "--json", "--lane", "provider=anthropic,mode=naive,speed=0",
         "--lane", "provider=openai-chat,mode=settled,speed=0"],
        demo_server,
    )
    assert code == 0, err
    naive, settled = lanes_of(out)
    assert naive["never_true"] > 0  # "Mar" for "Martinez SA", judged against its own final values
    assert naive["fields_right"] == naive["fields_total"]
    assert settled["never_true"] == 0
    assert settled["records"] > 0 and settled["deltas"] == 0  # the relay's checked records
    assert settled["first_value_s"] == settled["first_settled_s"]  # settled values only
    assert settled["tokens_in"] is None and settled["tokens_out"] is None  # the relay reports none


def test_an_expected_file_scores_every_lane_against_it(capsys, demo_server, tmp_path) -> None:
    expected = dict(get_scenario("invoice").expected)
    expected["amount"] = 1300
    expected["line_items"] = [*expected["line_items"], {"sku": "XTRA-1"}]
    path = tmp_path / "expected.json"
    path.write_text(json.dumps(expected), encoding="utf-8")
    code, out, err = run_compare(
        capsys, ["--scenario", "invoice", "--json", "--expected", str(path), "--lane", "provider=anthropic,speed=0"],
        demo_server,
    )
    assert code == 0, err
    (lane,) = lanes_of(out)
    assert lane["fields_total"] == 20 and lane["fields_right"] == 18
    assert lane["wrong_fields"] == ["/amount", "/line_items/3/sku"]

    code, out, err = run_compare(
        capsys, ["--scenario", "invoice", "--expected", str(path), "--lane", "provider=anthropic,speed=0"], demo_server
    )
    assert code == 0, err
    assert "18/20" in out[2]
    assert out[-1] == "lane 0: not right: /amount, /line_items/3/sku"


def test_a_document_of_ones_own_is_scored_only_against_an_expected_file(capsys, demo_server, tmp_path) -> None:
    doc = tmp_path / "weather.txt"
    doc.write_text(get_scenario("weather").document, encoding="utf-8")  # (the demo provider answers it)
    argv = ["--document", str(doc), "--schema", "weather", "--json", "--lane", "provider=anthropic,speed=0"]
    code, out, err = run_compare(capsys, argv, demo_server)
    assert code == 0, err
    (lane,) = lanes_of(out)
    assert (lane["fields_right"], lane["wrong_fields"], lane["fields_total"]) == (None, None, 1)  # its own fields
    expected = tmp_path / "weather.expected.json"
    expected.write_text('{"city": "Porto"}', encoding="utf-8")
    code, out, err = run_compare(capsys, [*argv, "--expected", str(expected)], demo_server)
    assert code == 0, err  # committed, though wrong: the exit status says whether lanes committed
    (lane,) = lanes_of(out)
    assert (lane["fields_right"], lane["wrong_fields"], lane["fields_total"]) == (0, ["/city"], 1)


def test_the_expected_answer_beside_a_document_is_used_without_expected(capsys, demo_server, tmp_path) -> None:
    doc = tmp_path / "lisbon.txt"
    doc.write_text(get_scenario("weather").document, encoding="utf-8")
    (tmp_path / "lisbon.expected.json").write_text('{"city": "Lisbon"}', encoding="utf-8")
    code, out, err = run_compare(
        capsys, ["--document", str(doc), "--schema", "weather", "--json", "--lane", "provider=ollama,speed=0"], demo_server
    )
    assert code == 0, err
    (lane,) = lanes_of(out)
    assert (lane["fields_right"], lane["fields_total"], lane["wrong_fields"]) == (1, 1, [])
    assert f"livefill compare: the expected answer is {tmp_path / 'lisbon.expected.json'}" in err


def test_the_table_has_a_row_per_lane_saying_who_and_how(capsys, demo_server) -> None:
    code, out, err = run_compare(capsys, ["--scenario", "weather", *FOUR_WIRES], demo_server)
    assert code == 0, err
    header, rule, *rows = out
    assert header.split()[:4] == ["lane", "provider", "mode", "outcome"] and set(rule) <= {"-", " "}
    assert len(rows) == 4
    assert "anthropic (demo) fine-grained" in rows[1] and "openai-chat (demo)" in rows[2]
    assert all("committed" in row and " 1/1 " in row for row in rows)


def test_a_live_lane_beside_a_demo_lane_sends_its_key_and_model(capsys, demo_server) -> None:
    """A live lane: the real provider at its base URL (here the demo server, reached as a live
    OpenAI-compatible server would be), with the key for that address; the key is never printed."""
    from livefill.wire.keys import server_env_var

    secret = "sk-test-" + os.urandom(12).hex()
    env = {server_env_var(demo_server.url): secret}
    before = len(demo_server.requests())
    code, out, err = run_compare(
        capsys,
        ["--scenario", "weather", "--json", "--lane", f"provider=openai-chat,base_url={demo_server.url},model=gpt-test",
         "--lane", "provider=anthropic,speed=0"],
        demo_server, keys=key_store(env), environ=env,
    )
    assert code == 0, err
    live, demo = lanes_of(out)
    assert (live["live"], live["model"], live["outcome"], live["fields_right"]) == (True, "gpt-test", "committed", 1)
    assert (demo["live"], demo["outcome"]) == (False, "committed")
    entries = demo_server.requests()[before:]
    paths = {e["path"]: (e["auth"], e["model"]) for e in entries}
    assert paths["/v1/chat/completions"] == ("bearer", "gpt-test") and "/v1/messages" in paths
    assert secret not in "\n".join(out + err)


# ---------------------------------------------------------------------------------------------
# one lane stopped: only its request is cancelled


def test_stopping_one_lane_cancels_only_its_request(demo_server) -> None:
    args = build_parser().parse_args(
        ["--scenario", "invoice", "--lane", "provider=anthropic,speed=40", "--lane", "provider=openai-chat,speed=400"]
    )
    keys = key_store()
    plan = make_compare_plan(args, keys=keys, err=sys.stderr, environ={})
    configs = lane_configs(plan, url=demo_server.url, relay_token=demo_server.relay_token, keys=keys)
    before = len(demo_server.requests())

    def stop_lane_0(lanes) -> None:  # noqa: ANN001
        loop = asyncio.get_running_loop()

        def stop_when_streaming() -> None:
            status = lanes[0].status
            if status is not None and status.deltas_received >= 2:
                lanes[0].stop()
            else:
                loop.call_later(0.02, stop_when_streaming)

        stop_when_streaming()

    results, interrupted = asyncio.run(run_lanes(plan, configs, on_started=stop_lane_0, handle_sigint=False))
    assert not interrupted
    stopped, other = results
    assert stopped.outcome == "cancelled" and other.outcome == "committed"
    assert other.fields_right == other.fields_total
    entries = {e["wire"]: e for e in server_outcomes(demo_server, before)}
    assert entries["anthropic"]["outcome"] == "disconnected"  # the server saw this client go away
    assert entries["openai-chat"]["outcome"] == "finished"


def test_ctrl_c_stops_every_lane_and_each_request_is_cancelled(demo_server) -> None:
    import signal

    args = build_parser().parse_args(
        ["--scenario", "invoice", "--lane", "provider=anthropic,speed=40", "--lane", "provider=ollama,speed=40"]
    )
    keys = key_store()
    plan = make_compare_plan(args, keys=keys, err=sys.stderr, environ={})
    configs = lane_configs(plan, url=demo_server.url, relay_token=demo_server.relay_token, keys=keys)
    before = len(demo_server.requests())

    def interrupt_when_both_stream(lanes) -> None:  # noqa: ANN001
        loop = asyncio.get_running_loop()

        def check() -> None:
            if all(one.status is not None and one.status.deltas_received >= 2 for one in lanes):
                os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
            else:
                loop.call_later(0.02, check)

        check()

    results, interrupted = asyncio.run(run_lanes(plan, configs, on_started=interrupt_when_both_stream))
    assert interrupted
    assert [r.outcome for r in results] == ["cancelled", "cancelled"]
    outcomes = sorted(e["outcome"] for e in server_outcomes(demo_server, before))
    assert outcomes == ["disconnected", "disconnected"]  # the server saw both clients go away


def test_the_demo_scripts_which_provider_act_runs_and_says_what_it_shows(capsys, demo_server, tmp_path) -> None:
    import re
    import shlex

    from livefill.cli.compare_args import parse_lane

    text = (REPO / "docs" / "demo-script.md").read_text(encoding="utf-8")
    act = text[text.index("## Encore — Which provider?"):]
    first, live = (shlex.split(c)[2:] for c in re.findall(r"```\n(livefill compare [^\n]+)\n```", act))
    argv = [a + ",speed=0" if a.startswith("provider=") else a for a in first]  # (as fast as possible)
    code, out, err = run_compare(capsys, [*argv, "--json"], demo_server)
    assert code == 0, err
    lanes = lanes_of(out)
    assert len(lanes) == 5 and all(x["fields_right"] == x["fields_total"] == 19 for x in lanes)  # "19/19"
    buffered, *per_token = [x["deltas"] for x in lanes[:4]]
    assert 30 <= buffered <= 50 and all(200 <= d <= 220 for d in per_token)  # "about 40", "about 210"
    assert 15 <= lanes[4]["never_true"] <= 25 and lanes[4]["mode"] == "naive"  # "about 20"
    answer = tmp_path / "invoice.expected.json"
    answer.write_text("{}", encoding="utf-8")
    live = [str(answer) if a == answer.name else a for a in live]
    args = build_parser().parse_args(live)  # the live command is a valid one
    assert [parse_lane(t).live for t in args.lane] == [True, True] and args.document == "invoice.pdf"


# ---------------------------------------------------------------------------------------------
# usage


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--scenario", "invoice"], "at least one --lane"),
        (["--lane", "provider=anthropic"], "--scenario --document is required"),
        (["--scenario", "nope", "--lane", "provider=anthropic"], "unknown scenario"),
        (["--scenario", "invoice", "--lane", "provider=nope"], "unknown provider"),
        (["--scenario", "invoice", "--lane", "colour=red"], "unknown key 'colour'"),
        (["--scenario", "invoice", "--lane", "provider"], "is not KEY=VALUE"),
        (["--scenario", "invoice", "--lane", "mode=fast"], "unknown mode"),
        (["--scenario", "invoice", "--lane", "provider=anthropic,structured=json_object"], "takes tools"),
        (["--scenario", "invoice", "--lane", "provider=ollama,fine_grained=true"], "only provider=anthropic"),
        (["--scenario", "invoice", "--lane", "fine_grained=maybe"], "say true or false"),
        (["--scenario", "invoice", "--lane", "speed=-1"], "speed=-1"),
        (["--scenario", "invoice", "--lane", "fault=melt"], "fault=melt"),
        (["--scenario", "invoice", "--lane", "provider=anthropic,live=true,speed=0"], "demo provider's knobs"),
        (["--scenario", "invoice", "--lane", "provider=anthropic,live=true"], "ANTHROPIC_API_KEY"),
        (["--scenario", "invoice", "--lane", "provider=openai-compatible,live=true"], "needs --base-url"),
        (["--scenario", "invoice", "--schema", "ticket", "--lane", "provider=anthropic"], "--schema goes with --document"),
        (["--document", "x.txt", "--lane", "provider=anthropic"], "needs --schema"),
        (["--scenario", "invoice", "--expected", "missing.json", "--lane", "provider=anthropic"], "missing.json"),
        (["--scenario", "invoice", "--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(capsys, argv, needle) -> None:  # noqa: ANN001
    code, out, err = run_compare(capsys, argv)
    assert code == 2
    assert out == [] and len(err) == 1, err
    assert err[0].startswith("livefill compare: ") and needle in err[0], err


def test_a_bad_expected_file_is_one_line_and_exit_2(capsys, tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "expected.json"
    path.write_text("[1, 2", encoding="utf-8")
    code, out, err = run_compare(capsys, ["--scenario", "invoice", "--expected", str(path), "--lane", "provider=anthropic"])
    assert code == 2 and out == [] and len(err) == 1 and "not JSON" in err[0]


def test_help_names_every_lane_key(capsys) -> None:  # noqa: ANN001
    code, out, _ = run_compare(capsys, ["--help"])
    assert code == 0
    text = "\n".join(out)
    for key in ("provider", "model", "base_url", "structured", "fine_grained", "mode", "live", "speed", "seed",
                "fault", "slice", "--expected", "--json"):
        assert key in text


@pytest.mark.slow  # a subprocess
def test_the_console_script_runs_compare_without_importing_qt() -> None:
    script = (
        "import sys\n"
        "from livefill.gui.app import main\n"
        "code = main(['compare', '--scenario', 'weather', '--json', '--lane', 'provider=anthropic,speed=0',"
        " '--lane', 'provider=ollama,speed=0,fault=disconnect'])\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync', 'widgets'))\n"
        "print('QT', qt, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "QT []" in result.stderr and "Traceback" not in result.stderr
    ok, cut = (json.loads(line) for line in result.stdout.splitlines())
    assert (ok["outcome"], ok["fields_right"], ok["fields_total"]) == ("committed", 1, 1)
    assert cut["outcome"] != "committed"
