"""`livefill extract`: the same run as the window's, printed as JSON lines (or a table) in a terminal.

Most tests call `livefill.cli.extract.main(argv)` in this process against the session's demo server (speed
0); the exit statuses, Ctrl-C and "no Qt imported" are checked with real subprocesses.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from livefill.cli.extract import main
from livefill.cli.extract_output import Change, JsonLines, LiveTable, Outcome
from livefill.extraction.json_doc import get_at
from livefill.wire.keys import KeyStore
from livefill.extraction.scenarios import get_scenario
from tests.conftest import REPO

SCENARIOS = REPO / "assets" / "scenarios"
INVOICE_FAST = ["--scenario", "invoice", "--schema", "invoice", "--speed", "0"]


def expected_output(name: str) -> object:
    return json.loads((SCENARIOS / name / "output.json").read_text(encoding="utf-8"))


def no_keyring() -> object:
    from keyring.backends.null import Keyring

    return Keyring()


def key_store(environ: dict[str, str] | None = None) -> KeyStore:
    """A KeyStore that sees only `environ` and no system keyring (tests never touch real keys)."""
    return KeyStore(backend=no_keyring(), environ=environ or {})


def run_extract(capsys, argv: list[str], demo_server=None, **kwargs) -> tuple[int, list[str], list[str]]:  # noqa: ANN001
    kwargs.setdefault("keys", key_store())
    kwargs.setdefault("environ", {})
    code = main(argv, server=demo_server, **kwargs)
    captured = capsys.readouterr()
    return code, captured.out.split("\n")[:-1], captured.err.split("\n")[:-1]


def parse_lines(lines: list[str]) -> tuple[list[dict], dict]:
    records = [json.loads(line) for line in lines]
    assert records, "no output"
    *changes, final = records
    for change in changes:
        assert list(change) == ["t_ms", "pointer", "state", "value"], change
        assert change["state"] in ("provisional", "settled")
    assert list(final) == ["result", "reason", "object"]
    return changes, final


# ---------------------------------------------------------------------------------------------
# JSON lines


def test_partial_mode_prints_provisional_then_settled_and_the_committed_object(capsys, demo_server) -> None:
    code, out, err = run_extract(capsys, ["--scenario", "invoice", "--schema", "invoice", "--speed", "0"], demo_server)
    assert code == 0, err
    changes, final = parse_lines(out)
    expected = expected_output("invoice")
    assert final == {"result": "committed", "reason": "committed", "object": expected}
    # times from the run's start, in order
    times = [c["t_ms"] for c in changes]
    assert all(isinstance(t, int) and t >= 0 for t in times)
    assert times == sorted(times)
    # a string field grows provisionally, then settles once, to its final value
    name = [c for c in changes if c["pointer"] == "/customer_name"]
    assert name[0]["state"] == "provisional" and name[-1]["state"] == "settled"
    assert [c["state"] for c in name].count("settled") == 1
    assert expected["customer_name"].startswith(name[0]["value"]) and name[0]["value"] != expected["customer_name"]
    assert name[-1]["value"] == expected["customer_name"]
    # every field's last change is the committed value, and every leaf of the result was shown
    last = {c["pointer"]: c for c in changes}
    for pointer, change in last.items():
        assert change["state"] == "settled", change
        assert change["value"] == get_at(expected, pointer)
    assert "/line_items/2/unit_price" in last and "/notes" in last
    # nothing changes twice in the same way
    pairs = [(c["pointer"], c["state"], json.dumps(c["value"])) for c in changes]
    assert len(pairs) == len(set(pairs))
    assert err == []


def test_settled_mode_reads_the_relay_and_shows_only_settled_values(capsys, demo_server) -> None:
    before = len(demo_server.requests())
    code, out, err = run_extract(
        capsys, ["--scenario", "ticket", "--schema", "ticket", "--speed", "0", "--mode", "settled"], demo_server
    )
    assert code == 0, err
    changes, final = parse_lines(out)
    assert final["result"] == "committed" and final["object"] == expected_output("ticket")
    assert changes and {c["state"] for c in changes} == {"settled"}
    assert len({c["pointer"] for c in changes}) == len(changes)  # each value once, whole
    # the relay asked the demo provider upstream, on the anthropic wire
    upstream = demo_server.requests()[before:]
    assert [e["path"] for e in upstream] == ["/v1/messages"] and upstream[0]["finished"]


def test_hybrid_mode_grows_prose_provisionally(capsys, demo_server) -> None:
    code, out, err = run_extract(
        capsys, ["--scenario", "ticket", "--schema", "ticket", "--speed", "0", "--mode", "hybrid"], demo_server
    )
    assert code == 0, err
    changes, final = parse_lines(out)
    assert final["object"] == expected_output("ticket")
    summary = [c["state"] for c in changes if c["pointer"] == "/summary"]
    assert summary[0] == "provisional" and summary[-1] == "settled"
    others = {c["state"] for c in changes if c["pointer"] != "/summary"}
    assert others == {"settled"}


def test_blocking_mode_shows_everything_settled_at_the_end(capsys, demo_server) -> None:
    code, out, err = run_extract(
        capsys, ["--scenario", "weather", "--schema", "weather", "--speed", "0", "--mode", "blocking"], demo_server
    )
    assert code == 0, err
    changes, final = parse_lines(out)
    assert changes == [{"t_ms": changes[0]["t_ms"], "pointer": "/city", "state": "settled", "value": "Lisbon"}]
    assert final["object"] == {"city": "Lisbon"}


def test_a_fault_fails_the_run_with_its_reason(capsys, demo_server) -> None:
    code, out, err = run_extract(
        capsys, ["--scenario", "invoice", "--schema", "invoice", "--speed", "0", "--fault", "disconnect"], demo_server
    )
    assert code == 1
    _, final = parse_lines(out)
    assert final["result"] == "failed" and final["object"] is None
    assert final["reason"].startswith("connection lost:"), final
    assert err == [f"livefill extract: failed: {final['reason']}"]


def test_a_value_the_schema_rejects_fails_validation(capsys, demo_server) -> None:
    code, out, _ = run_extract(
        capsys, [*INVOICE_FAST, "--fault", "invalid_value"], demo_server
    )
    assert code == 1
    changes, final = parse_lines(out)
    scenario = get_scenario("invoice")
    assert final["result"] == "failed" and "validation failed" in final["reason"]
    assert scenario.invalid_pointer not in {c["pointer"] for c in changes if c["state"] == "settled"}


def test_a_document_of_the_scenario_is_read_from_a_file_or_stdin(capsys, demo_server, tmp_path) -> None:
    text = get_scenario("weather").document
    path = tmp_path / "trip.txt"
    path.write_text(text, encoding="utf-8")
    code, out, err = run_extract(capsys, ["--document", str(path), "--schema", "weather", "--speed", "0"], demo_server)
    assert code == 0, err
    assert parse_lines(out)[1]["object"] == {"city": "Lisbon"}
    assert len(err) == 1 and err[0].startswith("livefill extract: document trip.txt · ") and "token" in err[0]

    code, out, err = run_extract(
        capsys, ["--document", "-", "--schema", "weather", "--speed", "0"], demo_server,
        stdin=io.BytesIO(text.encode("utf-8")),
    )
    assert code == 0, err
    assert parse_lines(out)[1]["object"] == {"city": "Lisbon"}
    assert err[0].startswith("livefill extract: document Standard input · ")


def test_the_demo_provider_refuses_your_own_document_with_its_message(capsys, demo_server, tmp_path) -> None:
    path = tmp_path / "mine.md"
    path.write_text("# My trip\nI am flying to Oslo next week.\n", encoding="utf-8")
    code, out, err = run_extract(capsys, ["--document", str(path), "--schema", "weather", "--speed", "0"], demo_server)
    assert code == 1
    changes, final = parse_lines(out)
    assert changes == []
    assert final["result"] == "failed" and final["object"] is None
    assert "knows only its bundled scenarios" in final["reason"]
    assert "Traceback" not in "\n".join(err)
    assert err[-1].startswith("livefill extract: failed: ")


def test_a_live_provider_by_base_url_with_a_key_that_is_never_printed(capsys, demo_server) -> None:
    from livefill.wire.keys import server_env_var

    secret = "sk-test-" + os.urandom(12).hex()
    env = {server_env_var(demo_server.url): secret}
    before = len(demo_server.requests())
    code, out, err = run_extract(
        capsys,
        ["--scenario", "invoice", "--schema", "invoice", "--provider", "openai-chat", "--base-url", demo_server.url,
         "--speed", "0", "--model", "gpt-test"],
        keys=key_store(env), environ=env,
    )
    assert code == 0, err
    assert parse_lines(out)[1]["object"] == expected_output("invoice")
    entries = demo_server.requests()[before:]
    assert [(e["path"], e["auth"], e["model"]) for e in entries] == [("/v1/chat/completions", "bearer", "gpt-test")]
    assert secret not in "\n".join(out + err)


def test_the_run_config_carries_the_key_model_structure_and_no_demo_knobs(capsys, demo_server, monkeypatch) -> None:
    from livefill.wire.keys import server_env_var
    from livefill.session.session import Session

    configs = []
    start = Session.start
    monkeypatch.setattr(Session, "start", lambda self, config=None: configs.append(config) or start(self, config))
    secret = "sk-test-" + os.urandom(12).hex()
    env = {server_env_var(demo_server.url): secret}
    code, _, err = run_extract(
        capsys,
        ["--scenario", "weather", "--schema", "weather", "--provider", "openai-chat", "--base-url", demo_server.url,
         "--model", "m1", "--structured", "json_object", "--idle-timeout", "7"],
        keys=key_store(env), environ=env,
    )
    assert code == 0, err
    (config,) = configs
    assert (config.provider, config.base_url, config.model, config.structured) == (
        "openai-chat", demo_server.url, "m1", "json_object")
    assert config.api_key == secret and config.demo is None and config.idle_timeout == 7.0
    assert config.mode.value == "partial" and config.schema_name == "weather"

    configs.clear()  # the demo provider: its own fake key and the demo knobs, the scenario named
    code, _, err = run_extract(capsys, ["--scenario", "weather", "--schema", "weather", "--seed", "5"], demo_server)
    assert code == 0, err
    (config,) = configs
    assert config.api_key == "demo" and config.structured == "tools"
    assert (config.demo.scenario, config.demo.speed, config.demo.seed) == ("weather", 30.0, 5)
    assert config.base_url == demo_server.url


def test_a_live_provider_in_settled_mode_goes_through_the_embedded_relay_with_the_key(capsys, caplog, demo_server) -> None:
    """The relay started in this process reads the live provider at --base-url (here the session's
    demo server, speaking Anthropic's wire) with the key the run handed it over loopback."""
    from livefill.demo.request_log import credential_fingerprint

    secret = "sk-ant-test-" + os.urandom(12).hex()
    keys = key_store()
    keys.set("anthropic", secret, demo_server.url)
    before = len(demo_server.requests())
    code, out, err = run_extract(
        capsys,
        ["--scenario", "weather", "--schema", "weather", "--provider", "anthropic", "--base-url", demo_server.url,
         "--mode", "settled", "--model", "claude-test"],
        keys=keys,
    )
    assert code == 0, err
    changes, final = parse_lines(out)
    assert final == {"result": "committed", "reason": "committed", "object": expected_output("weather")}
    assert changes and {c["state"] for c in changes} == {"settled"}  # read by the relay's settler
    upstream = demo_server.requests()[before:]
    assert [(e["path"], e["model"]) for e in upstream] == [("/v1/messages", "claude-test")]
    assert upstream[0]["auth_sha256"] == credential_fingerprint({"x-api-key": secret}) and upstream[0]["finished"]
    assert secret not in "\n".join(out + err)
    assert secret not in caplog.text  # nor in any log line of the run, the relay's included


def test_hybrid_mode_with_a_live_provider_grows_prose_through_the_relay(capsys, demo_server) -> None:
    from livefill.wire.keys import server_env_var
    from livefill.demo.request_log import credential_fingerprint

    secret = "sk-test-" + os.urandom(12).hex()
    base = demo_server.url + "/v1"
    env = {server_env_var(base): secret}  # a compatible server's key, as the app reads it
    before = len(demo_server.requests())
    code, out, err = run_extract(
        capsys,
        ["--scenario", "ticket", "--schema", "ticket", "--provider", "openai-compatible",
         "--base-url", base, "--mode", "hybrid", "--idle-timeout", "60"],
        keys=key_store(env), environ=env,
    )
    assert code == 0, err
    changes, final = parse_lines(out)
    assert final["object"] == expected_output("ticket")
    summary = [c["state"] for c in changes if c["pointer"] == "/summary"]
    assert summary[0] == "provisional" and summary[-1] == "settled"
    upstream = demo_server.requests()[before:]
    assert [e["path"] for e in upstream] == ["/v1/chat/completions"]
    assert upstream[0]["auth_sha256"] == credential_fingerprint({"authorization": f"Bearer {secret}"})
    assert secret not in "\n".join(out + err)


def test_openai_compatible_with_json_object_streams_content_into_the_form(capsys, demo_server, monkeypatch) -> None:
    import livefill.wire.providers.openai_chat as chat

    bodies = []
    real = chat.chat_body
    monkeypatch.setattr(chat, "chat_body", lambda request: bodies.append(real(request)) or bodies[-1])
    code, out, err = run_extract(
        capsys,
        ["--scenario", "weather", "--schema", "weather", "--provider", "openai-compatible",
         "--base-url", demo_server.url + "/v1", "--structured", "json_object"],
    )
    assert code == 0, err
    changes, final = parse_lines(out)
    assert final == {"result": "committed", "reason": "committed", "object": expected_output("weather")}
    city = [c["state"] for c in changes if c["pointer"] == "/city"]
    assert city[0] == "provisional" and city[-1] == "settled"
    (body,) = bodies  # the choice reached the request: JSON through message content, no tools
    assert body["response_format"]["type"] == "json_object" and "tools" not in body
    assert demo_server.requests()[-1]["auth"] is None  # a server without a key is sent none


def test_a_failure_reason_that_quotes_the_key_is_redacted(capsys, demo_server, monkeypatch) -> None:
    import livefill.session.run
    from livefill.wire.keys import server_env_var
    from livefill.wire.redaction import REDACTED

    secret = "sk-test-" + os.urandom(12).hex()
    env = {server_env_var(demo_server.url): secret}
    real = livefill.session.run.describe_failure
    # a provider whose error message echoes the key back (some gateways do)
    monkeypatch.setattr(livefill.session.run, "describe_failure", lambda exc: (f"{real(exc)[0]} (key {secret})", real(exc)[1]))
    code, out, err = run_extract(
        capsys,
        ["--scenario", "invoice", "--schema", "invoice", "--provider", "openai-chat", "--base-url", demo_server.url,
         "--speed", "0", "--fault", "error"],
        keys=key_store(env), environ=env,
    )
    assert code == 1
    _, final = parse_lines(out)
    assert final["result"] == "failed" and final["reason"].endswith(f"(key {REDACTED})")
    assert secret not in "\n".join(out + err)
    assert REDACTED in err[-1]


# ---------------------------------------------------------------------------------------------
# Bad usage: exit 2, one line on stderr, nothing on stdout


INVOICE = ["--schema", "invoice", "--scenario", "invoice"]
LOOPBACK = "http://127.0.0.1:9"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--document", "x.txt"], "--document needs --schema NAME|FILE.json"),
        (["--schema", "invoice"], "one of the arguments --document --scenario is required"),
        ([*INVOICE, "--document", "x.txt"], "not allowed with"),
        (["--schema", "nope", "--scenario", "invoice"], "unknown schema 'nope'"),
        (["--schema", "invoice", "--scenario", "nope"], "unknown scenario 'nope'"),
        (["--schema", "weather", "--scenario", "invoice"], "give --schema invoice"),
        (["--schema", "invoice", "--document", "/no/such/file.txt"], "--document:"),
        ([*INVOICE, "--fault", "gremlins"], "--fault"),
        ([*INVOICE, "--speed", "-1"], "--speed"),
        ([*INVOICE, "--mode", "naive"], "--mode"),
        ([*INVOICE, "--base-url", LOOPBACK], "--base-url needs --provider"),
        ([*INVOICE, "--provider", "openai-chat", "--base-url", "ftp://x"], "--base-url:"),
        ([*INVOICE, "--provider", "ollama", "--base-url", "localhost:11434"], "give one like http://127.0.0.1:11434."),
        ([*INVOICE, "--provider", "openai-chat", "--base-url", LOOPBACK, "--mode", "settled", "--speed", "0"],
         "the demo provider's knobs"),
        ([*INVOICE, "--provider", "openai-compatible"], "--provider openai-compatible needs --base-url"),
        ([*INVOICE, "--provider", "anthropic", "--base-url", LOOPBACK, "--structured", "json_object"],
         "--structured json_object: --provider anthropic takes only tools"),
        ([*INVOICE, "--provider", "openai-responses", "--base-url", LOOPBACK, "--structured", "json_object"],
         "takes only tools or json_schema"),
        ([*INVOICE, "--structured", "json_schema"], "the demo provider (without --provider) takes only tools"),
        ([*INVOICE, "--provider", "openai-compatible", "--base-url", LOOPBACK, "--structured", "xml"], "--structured"),
        ([*INVOICE, "--provider", "anthropic"], "No API key for Anthropic: set ANTHROPIC_API_KEY"),
        ([*INVOICE, "--provider", "openai-chat"], "No API key for OpenAI: set OPENAI_API_KEY"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(capsys, argv, needle) -> None:  # noqa: ANN001
    code, out, err = run_extract(capsys, argv)
    assert code == 2
    assert out == []
    assert len(err) == 1, err
    assert err[0].startswith("livefill extract: ") and needle in err[0], err[0]


def test_a_scenario_without_schema_is_read_with_its_own_schema(capsys, demo_server) -> None:
    code, out, err = run_extract(capsys, ["--scenario", "ticket", "--speed", "0"], demo_server)
    assert code == 0, err
    _, final = parse_lines(out)
    assert final["result"] == "committed" and final["object"] == expected_output("ticket")


def test_a_schema_file_drives_the_form_and_the_commit_like_a_bundled_one(capsys, demo_server, tmp_path) -> None:
    from livefill.extraction.schemas import schema_model

    path = tmp_path / "weather.schema.json"
    path.write_text(json.dumps(schema_model("weather").model_json_schema()), encoding="utf-8")
    code, out, err = run_extract(capsys, ["--schema", str(path), "--scenario", "weather", "--speed", "0"], demo_server)
    assert code == 0, err
    changes, final = parse_lines(out)
    assert final["result"] == "committed" and final["object"] == expected_output("weather")
    assert {c["pointer"] for c in changes if c["state"] == "settled"} >= {"/city"}


def test_a_schema_file_with_an_unsupported_keyword_is_named_before_any_request(capsys, tmp_path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps({"type": "object", "properties": {"city": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
        encoding="utf-8",
    )
    code, out, err = run_extract(capsys, ["--schema", str(path), "--scenario", "weather"])
    assert code == 2 and out == [] and len(err) == 1
    assert "/properties/city/anyOf" in err[0] and "anyOf" in err[0], err[0]
    code, out, err = run_extract(capsys, ["--schema", str(tmp_path / "missing.json"), "--scenario", "weather"])
    assert code == 2 and out == [] and len(err) == 1


def test_help_lists_every_option_with_an_example(capsys) -> None:
    code = main(["--help"])
    text = capsys.readouterr().out
    assert code == 0
    assert text.splitlines()[0].startswith("usage: livefill extract")
    options = ["--schema", "--document", "--scenario", "--provider", "--base-url", "--model", "--mode", "--structured",
               "--speed", "--seed", "--fault", "--pretty", "--idle-timeout"]
    body = text.split("\noptions:\n", 1)[1].split("\nexamples:\n", 1)[0]
    entries = re.split(r"\n  (?=--)", body)
    for option in options:
        entry = next((e for e in entries if re.match(rf"\s*{option}[ \n]", e)), None)
        assert entry is not None, option
        assert "e.g. " + option in " ".join(entry.split()), option
    assert text.count("livefill extract --") + text.count("livefill extract \\") >= 3  # three examples
    assert "exit status: 0 committed, 1 failed, 2 bad usage" in text and "130 interrupted" in text
    # it opens with one sentence for users, then examples, before the list of options
    head = text.split("\noptions:\n", 1)[0]
    assert head.split("\n\n")[1].startswith("Run one extraction in the terminal")
    assert "\nexamples:\n" in head


# ---------------------------------------------------------------------------------------------
# --pretty


def test_pretty_without_a_terminal_prints_the_final_table_once(capsys, demo_server) -> None:
    code, out, err = run_extract(
        capsys, ["--scenario", "invoice", "--schema", "invoice", "--speed", "0", "--pretty"], demo_server
    )
    assert code == 0, err
    text = "\n".join(out)
    assert "\x1b[" not in text
    assert not any(line.startswith("{") for line in out)
    assert out[0].split() == ["field", "state", "value"]
    assert text.count("/customer_name") == 1
    row = next(line for line in out if line.startswith("/customer_name"))
    assert row.split(None, 2) == ["/customer_name", "settled", "Martinez SA"]
    assert "provisional" not in text
    total = sum(1 for _ in __import__("livefill.session.metrics", fromlist=["leaves"]).leaves(expected_output("invoice")))
    assert re.fullmatch(rf"{total}/{total} fields settled · \d+\.\d s · \d+(\.\d)? K?B", out[-2]), out[-2]
    assert out[-1] == "committed"


def test_pretty_lists_fields_in_the_schema_order_not_alphabetically(capsys, demo_server) -> None:
    code, out, err = run_extract(capsys, ["--scenario", "invoice", "--speed", "0", "--pretty"], demo_server)
    assert code == 0, err
    rows = [line.split()[0] for line in out[2:-2]]
    expected = []
    for key, value in expected_output("invoice").items():  # output.json is written in schema order
        if isinstance(value, list):
            expected += [f"/{key}/{i}/{column}" for i, item in enumerate(value) for column in item]
        else:
            expected.append(f"/{key}")
    assert rows == expected
    assert rows[:2] == ["/customer_name", "/invoice_number"] and rows[-1] == "/notes"


def test_schema_order_sorts_nested_groups_table_columns_and_chips_as_the_schema_lists_them() -> None:
    from livefill.cli.extract_output import schema_order
    from livefill.extraction.schema import fields_for
    from livefill.extraction.user_schema import model_from_json_schema

    row = {"type": "object", "properties": {"z_sku": {"type": "string"},
                                            "size": {"type": "object", "properties": {"w": {"type": "number"},
                                                                                      "h": {"type": "number"}}},
                                            "a_qty": {"type": "integer"}}}
    model = model_from_json_schema({"type": "object", "properties": {
        "zeta": {"type": "string"},
        "group": {"type": "object", "properties": {"y": {"type": "string"}, "b": {"type": "string"}}},
        "rows": {"type": "array", "items": row},
        "tags": {"type": "array", "items": {"type": "string"}},
        "alpha": {"type": "string"},
    }})
    shuffled = ["/alpha", "/tags/10", "/tags/2", "/rows/1/a_qty", "/rows/0/size/h", "/rows/0/a_qty",
                "/rows/0/size/w", "/rows/0/z_sku", "/group/b", "/group/y", "/zeta"]
    assert sorted(shuffled, key=schema_order(fields_for(model))) == [
        "/zeta", "/group/y", "/group/b", "/rows/0/z_sku", "/rows/0/size/w", "/rows/0/size/h", "/rows/0/a_qty",
        "/rows/1/a_qty", "/tags/2", "/tags/10", "/alpha",
    ]


def test_json_lines_are_one_line_each_whatever_the_text() -> None:
    out = io.StringIO()
    lines = JsonLines(out)
    value = "a\u2028b\u2029c\nd\x85e — ünïcode"
    lines.change(Change(5, "/notes", "provisional", value))
    lines.finish(Outcome("committed", "committed", {"notes": value}))
    text = out.getvalue()
    assert text.count("\n") == 2 and text.splitlines() == text.split("\n")[:-1]  # no other line break
    first, last = (json.loads(line) for line in text.split("\n")[:-1])
    assert first == {"t_ms": 5, "pointer": "/notes", "state": "provisional", "value": value}
    assert last["object"] == {"notes": value}
    assert "ünïcode" in text


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_pretty_on_a_terminal_redraws_in_place() -> None:
    now = [0.0]
    screen = FakeTerminal()
    table = LiveTable(screen, tty=True, expected=2, clock=lambda: now[0])
    table.change(Change(10, "/city", "provisional", "Lis"))
    now[0] += 1
    table.progress(bytes_received=4100, elapsed=3.2)
    now[0] += 1
    table.change(Change(20, "/city", "settled", "Lisbon"))
    table.change(Change(21, "/when", "settled", "2024-05-01"))  # within 1/FPS: not drawn yet
    table.finish(Outcome("committed", "committed", {}))
    text = screen.getvalue()
    frames = re.split(r"\x1b\[\d+F\x1b\[J", text)
    # the first drawing, then three redraws, each moving back over the lines drawn before it
    assert len(frames) == 4
    assert [int(n) for n in re.findall(r"\x1b\[(\d+)F", text)] == [len(f.splitlines()) for f in frames[:-1]]
    assert "0/2 fields settled" in frames[0] and "provisional  Lis\n" in frames[0]
    assert "0/2 fields settled · 3.2 s · 4.1 KB" in frames[1]
    assert "1/2 fields settled · 3.2 s · 4.1 KB" in frames[2] and "/when" not in frames[2]
    last = frames[-1]
    assert "2/2 fields settled · 3.2 s · 4.1 KB" in last and "/when" in last and last.endswith("committed\n")


def test_pretty_on_a_short_terminal_redraws_only_what_fits(monkeypatch) -> None:
    import os as os_module
    import shutil

    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=None: os_module.terminal_size((80, 10)))
    now = [0.0]
    screen = FakeTerminal()
    table = LiveTable(screen, tty=True, clock=lambda: now[0])
    for i in range(20):
        now[0] += 1
        table.change(Change(i, f"/items/{i}", "settled", i))
    frames = re.split(r"\x1b\[\d+F\x1b\[J", screen.getvalue())
    last = frames[-1].splitlines()
    assert len(last) == 9  # one line less than the terminal: the redraw can move back over all of it
    assert last[2] == "… 15 more above" and last[3].startswith("/items/15") and last[7].startswith("/items/19")
    assert last[8] == "20/20 fields settled · 0.0 s · 0 B"
    table.finish(Outcome("failed", "idle timeout: nothing for 20 s"))
    whole = re.split(r"\x1b\[\d+F\x1b\[J", screen.getvalue())[-1].splitlines()
    assert len(whole) == 2 + 20 + 2 and whole[-1] == "failed: idle timeout: nothing for 20 s"
    assert screen.getvalue().endswith("failed: idle timeout: nothing for 20 s\n")


def test_ctrl_c_without_loop_signal_handlers_still_stops_the_run(capsys, demo_server, monkeypatch) -> None:
    """Where the loop cannot take a SIGINT handler (Windows), asyncio.run's own cancels the run's
    coroutine: that is a Stop too, not a crash."""
    import asyncio
    import threading

    def refuse(self, *args) -> None:  # noqa: ANN001
        raise NotImplementedError

    monkeypatch.setattr(asyncio.SelectorEventLoop, "add_signal_handler", refuse)
    before = len(demo_server.requests())
    done = threading.Event()

    def interrupt_once_streaming() -> None:
        while not done.wait(0.02):
            if any(e["tokens_sent"] > 0 for e in demo_server.requests()[before:]):
                signal.raise_signal(signal.SIGINT)  # (handled on the main thread)
                return

    thread = threading.Thread(target=interrupt_once_streaming)
    thread.start()
    try:
        code, out, err = run_extract(capsys, ["--scenario", "invoice", "--schema", "invoice", "--speed", "20"], demo_server)
    finally:
        done.set()
        thread.join()
    assert code == 130, err
    _, final = parse_lines(out)
    assert final["result"] == "stopped" and final["object"] is None
    assert re.fullmatch(r"stopped by the user — server stopped after \d+ of \d+ tokens", final["reason"]), final
    entry = demo_server.requests()[before:][-1]
    assert entry["disconnected"] and entry["tokens_sent"] < entry["tokens_total"]


# ---------------------------------------------------------------------------------------------
# Real processes: exit statuses, no Qt, Ctrl-C


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LIVEFILL_API_KEY_")}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    return env


CLI = [sys.executable, "-m", "livefill.gui.app", "extract"]


@pytest.mark.slow  # a subprocess
def test_the_console_script_runs_extract_without_importing_qt() -> None:
    script = (
        "import sys\n"
        "from livefill.gui.app import main\n"
        "code = main(['extract', '--scenario', 'weather', '--schema', 'weather', '--speed', '0'])\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync', 'widgets'))\n"
        "print('QT', qt, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "QT []" in result.stderr
    final = json.loads(result.stdout.splitlines()[-1])
    assert final == {"result": "committed", "reason": "committed", "object": {"city": "Lisbon"}}


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["--scenario", "weather", "--schema", "weather", "--speed", "0"], 0),
        (["--scenario", "weather", "--schema", "weather", "--speed", "0", "--fault", "error"], 1),
        (["--scenario", "weather", "--schema", "nope"], 2),
        (["--document", "missing.txt"], 2),  # a document needs --schema (a scenario has its own)
    ],
)
def test_exit_status_of_the_process(args, status) -> None:  # noqa: ANN001
    result = subprocess.run([*CLI, *args], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    if status == 2:
        assert result.stdout == "" and len(result.stderr.splitlines()) == 1
    else:
        assert json.loads(result.stdout.splitlines()[-1])["result"] == ("committed" if status == 0 else "failed")


def _interrupt_after_first_line(process: subprocess.Popen) -> tuple[int, list[str], str]:
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith('{"t_ms"'), first + (process.stderr.read() if process.stderr else "")
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, [first.rstrip("\n"), *out.splitlines()], err


@pytest.mark.slow
def test_ctrl_c_stops_the_embedded_demo_run_and_exits_130() -> None:
    process = subprocess.Popen(
        [*CLI, "--scenario", "invoice", "--schema", "invoice", "--speed", "20"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    code, out, err = _interrupt_after_first_line(process)
    assert code == 130, err
    final = json.loads(out[-1])
    assert final["result"] == "stopped" and final["object"] is None
    # the in-process demo provider saw the request close before it was done
    assert re.search(r"server stopped after \d+ of \d+ tokens", final["reason"]), final
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["partial", "settled"])
def test_ctrl_c_is_a_real_http_cancel_the_server_sees(mode: str) -> None:
    """Also through the relay `livefill extract` starts for a live provider in settled mode: the
    relay's upstream request is closed too."""
    server = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server", "--port", "0"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert server.stdout is not None
        match = re.fullmatch(r"livefill-server listening on (http://127\.0\.0\.1:\d+)\n", server.stdout.readline())
        assert match
        url = match.group(1)
        started = time.time()
        process = subprocess.Popen(
            [*CLI, "--scenario", "invoice", "--schema", "invoice", "--provider", "anthropic", "--base-url", url,
             "--mode", mode, *(["--speed", "20"] if mode == "partial" else [])],
            cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        code, out, err = _interrupt_after_first_line(process)
        assert code == 130, err
        final = json.loads(out[-1])
        assert final["result"] == "stopped" and final["object"] is None
        assert "Traceback" not in err
        entries = [e for e in httpx.get(url + "/_demo/requests", timeout=5).json() if e["started_at"] >= started - 1]
        assert len(entries) == 1
        entry = entries[0]
        assert entry["path"] == "/v1/messages" and entry["scenario"] == "invoice"
        assert entry["disconnected"] and not entry["finished"]
        assert 0 < entry["tokens_sent"] < entry["tokens_total"]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        finally:
            if server.poll() is None:
                server.kill()


@pytest.mark.slow
def test_a_closed_output_stops_the_run_quietly() -> None:
    process = subprocess.Popen(
        [*CLI, "--scenario", "invoice", "--schema", "invoice", "--speed", "20"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    assert first.startswith('{"t_ms"'), first
    process.stdout.close()  # `| head -1`
    try:
        err = process.stderr.read()
        code = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 1
    assert err.splitlines() == ["livefill extract: stopped: the output was closed"], err
