"""`livefill extract --record PATH` and `--replay PATH`, and the bundled real-model traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from livefill.cli.extract_args import EXIT_COMMITTED, EXIT_FAILED, EXIT_USAGE
from livefill.extraction.scenarios import get_scenario
from livefill.recording.trace import load_trace
from tests.cli.test_extract_cli import parse_lines, run_extract

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "scenarios"
BUNDLED = sorted(ASSETS.glob("*/trace-*.jsonl"))


def test_record_then_replay_gives_the_same_object(capsys, demo_server, tmp_path) -> None:
    trace = tmp_path / "t.jsonl"
    code, out, err = run_extract(
        capsys, ["--record", str(trace), "--scenario", "invoice", "--schema", "invoice", "--speed", "0"], demo_server
    )
    assert code == EXIT_COMMITTED, err
    _, recorded = parse_lines(out)
    assert f"livefill extract: recorded the run to {trace}" in err
    loaded = load_trace(trace)
    assert loaded.end == "complete" and loaded.reads
    text = trace.read_text(encoding="utf-8").lower()
    assert "authorization" not in text and "x-api-key" not in text and demo_server.relay_token.lower() not in text

    code, out, err = run_extract(capsys, ["--replay", str(trace), "--schema", "invoice"], demo_server)
    assert code == EXIT_COMMITTED, err
    _, replayed = parse_lines(out)
    assert replayed["object"] == recorded["object"] == get_scenario("invoice").output
    entry = demo_server.requests()[-1]
    assert not entry["disconnected"]

    code, out, err = run_extract(capsys, ["--replay", str(trace), "--mode", "settled", "--replay-speed", "0"], demo_server)
    assert code == EXIT_COMMITTED, err
    changes, final = parse_lines(out)
    assert final["object"] == recorded["object"] and all(c["state"] == "settled" for c in changes)


@pytest.mark.parametrize("mode", ["settled", "hybrid"])
def test_a_relay_mode_run_is_recorded_by_the_embedded_relay_and_replays(capsys, demo_server, tmp_path, mode) -> None:
    trace = tmp_path / "t.jsonl"
    code, out, err = run_extract(
        capsys, ["--mode", mode, "--record", str(trace), "--scenario", "invoice", "--schema", "invoice",
                 "--speed", "0"], demo_server,
    )
    assert code == EXIT_COMMITTED, err
    _, recorded = parse_lines(out)
    assert f"livefill extract: recorded the run to {trace}" in err
    loaded = load_trace(trace)
    assert loaded.end == "complete" and loaded.reads and loaded.header["mode"] == mode
    text = trace.read_text(encoding="utf-8").lower()
    assert "authorization" not in text and "x-api-key" not in text and demo_server.relay_token.lower() not in text
    code, out, err = run_extract(capsys, ["--replay", str(trace), "--schema", "invoice"], demo_server)
    assert code == EXIT_COMMITTED, err
    _, replayed = parse_lines(out)
    assert replayed["object"] == recorded["object"] == get_scenario("invoice").output


def test_replay_refuses_bad_traces(capsys, demo_server, tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"trace": "livefill", "version": 99}\n', encoding="utf-8")
    code, out, err = run_extract(capsys, ["--replay", str(bad)], demo_server)
    assert code == EXIT_USAGE and out == []
    assert err == [f"livefill extract: --replay: {bad}: line 1: unknown trace version 99 (this livefill reads version 1)"]
    code, _, err = run_extract(capsys, ["--schema", "invoice"], demo_server)
    assert code == EXIT_USAGE and "--document --scenario is required (or --replay TRACE)" in err[-1]


def test_replay_with_another_schema_is_refused(capsys, demo_server, tmp_path) -> None:
    trace = tmp_path / "w.jsonl"
    code, _, _ = run_extract(
        capsys, ["--record", str(trace), "--scenario", "weather", "--schema", "weather", "--speed", "0"], demo_server
    )
    assert code == EXIT_COMMITTED
    code, _, err = run_extract(capsys, ["--replay", str(trace), "--schema", "invoice"], demo_server)
    assert code == EXIT_USAGE and "recorded with schema weather" in err[-1]


def test_there_are_bundled_real_model_traces() -> None:
    names = {p.parent.name for p in BUNDLED}
    assert {"weather", "ticket"} <= names
    for path in BUNDLED:
        assert path.stat().st_size < 300_000, path


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.parent.name)
def test_each_bundled_trace_loads_and_replays_to_its_recorded_ending(capsys, demo_server, path) -> None:
    trace = load_trace(path)
    assert trace.model == "smollm2" and trace.provider == "openai-compatible"
    assert trace.document == get_scenario(path.parent.name).document
    raw = path.read_text(encoding="utf-8").lower()
    assert "authorization" not in raw and "bearer" not in raw
    code, out, err = run_extract(capsys, ["--replay", str(path), "--replay-speed", "0"], demo_server)
    final = json.loads(out[-1])
    if trace.end == "complete":
        assert code == EXIT_COMMITTED and final["result"] == "committed", err
        assert final["object"] and isinstance(final["object"], dict)
    else:  # the small model wrote something the schema rejects: the replay fails the same way
        assert code == EXIT_FAILED and final["result"] == "failed"
        assert final["reason"] == trace.trailer["reason"]
