"""Record a run from the window, then replay it: single form, settled (through the relay), compare
view, speed, Stop, bad traces, the Recordings menu, the bundled real-model traces."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from livefill.recording.history import History
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.recording.trace import load_trace
from tests.gui.conftest import arun, wait_until

INVOICE = get_scenario("invoice").output


@pytest.fixture(autouse=True)
def _data_home(tmp_path, monkeypatch):
    """The recordings folder inside the test's tmp_path (never the user's)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def _idle(window):
    return lambda: not window.active and window.session.statuses() and all(
        s is not None and s.phase.final for s in window.session.statuses()
    )


def _record(window, qloop, target: str = "") -> Path:
    window.recordings.record(target)
    assert window.recordings.record_label.isVisibleTo(window) and window.recordings.record_action.isChecked()

    async def go():
        window.start()
        await wait_until(_idle(window))
        await wait_until(lambda: any(l.startswith("recorded:") for l in window.run_log.lines()), timeout=5)

    arun(qloop, go())
    assert window.controller.last_status.phase is Phase.COMMITTED
    paths = list(window.session.record_paths.values())
    assert len(paths) == 1
    line = [l for l in window.run_log.lines() if l.startswith("recorded:")][-1]
    assert paths[0] in line
    window.recordings.record(None)
    return Path(paths[0])


def _replay(window, qloop):
    async def go():
        window.start()
        await wait_until(_idle(window), timeout=30)

    arun(qloop, go())
    return window.session.statuses()


def _no_secrets(path: Path, *secrets: str) -> None:
    text = path.read_text(encoding="utf-8")
    lowered = text.lower()
    assert "authorization" not in lowered and "x-api-key" not in lowered
    for secret in secrets:
        if secret:
            assert secret not in text


def test_record_then_replay_single_settled_and_compare(make_window, qloop, demo_server, tmp_path):
    window = make_window(speed=0, provider="anthropic")
    path = _record(window, qloop)
    assert path.parent == tmp_path / "data" / "livefill" / "recordings"
    trace = load_trace(path)
    assert trace.end == "complete" and trace.reads and trace.document == get_scenario("invoice").document
    _no_secrets(path, demo_server.relay_token)

    assert window.recordings.open_trace(path)
    assert window.recordings.replay_box.isVisibleTo(window)
    assert window.recordings.replay_label.text().startswith(f"replay: {path.name}")
    assert window.session.settings.document_name == f"replay: {path.name}"
    config = window.run_config()
    assert config.demo.replay and config.demo.scenario is None

    statuses = _replay(window, qloop)
    assert statuses[0].phase is Phase.COMMITTED
    assert window.session.single.run.result == INVOICE

    window.session.replace(mode="settled")  # through the relay: the trace is the relay's upstream
    statuses = _replay(window, qloop)
    assert statuses[0].phase is Phase.COMMITTED, statuses[0].reason
    assert window.session.single.run.result == INVOICE

    window.session.replace(mode="partial")
    window.set_compare(True, ["naive", "partial", "settled"])
    statuses = _replay(window, qloop)
    assert [s.phase for s in statuses] == [Phase.COMMITTED] * 3, [s.reason for s in statuses]
    assert all(lane.run.result == INVOICE for lane in window.session.compare_lanes)
    window.set_compare(False)

    window.recordings.replay_close.click()  # leaving replay: back to the scenario
    assert window.session.replay is None and window.session.settings.document is None
    assert not window.recordings.replay_box.isVisibleTo(window)
    assert window.run_config().demo.replay is None


def test_compare_recording_records_every_lane_the_relay_ones_by_the_embedded_relay(make_window, qloop, demo_server, tmp_path):
    window = make_window(speed=0, compare=["naive", "partial", "settled"])
    window.recordings.record(str(tmp_path / "cmp.jsonl"))

    async def go():
        window.start()
        await wait_until(_idle(window))
        await wait_until(lambda: any(l.startswith("recorded:") for l in window.run_log.lines()), timeout=5)
        settled = tmp_path / "cmp-settled.jsonl"  # written by the relay: its trailer may come just after
        await wait_until(lambda: settled.exists() and not load_trace(settled).truncated, timeout=5)

    arun(qloop, go())
    assert [s.phase for s in window.session.statuses()] == [Phase.COMMITTED] * 3
    paths = sorted(window.session.record_paths.values())
    assert paths == sorted(str(tmp_path / f"cmp-{lane}.jsonl") for lane in ("naive", "partial", "settled"))
    for p in paths:
        assert load_trace(p).end == "complete"
        _no_secrets(Path(p), demo_server.relay_token)
    settled = load_trace(tmp_path / "cmp-settled.jsonl")
    assert settled.header["mode"] == "settled" and settled.provider == load_trace(paths[0]).provider
    assert not window.session.record_notes
    assert not any("not recorded" in l for l in window.run_log.lines())
    assert any("lane settled: trace written to" in l for l in window.run_log.lines())
    # File → Recordings tells the three apart (they were three identical lines)
    from livefill.recording.recordings import summarize
    from livefill.gui.recordings import summary_text

    lines = {summary_text(summarize(p)) for p in paths}
    assert {line.rsplit(" · ", 2)[1] for line in lines} == {"naive mode", "partial mode", "settled mode"}


@pytest.mark.slow  # real-time replay
def test_replay_at_2x_is_faster(make_window, qloop, demo_server, tmp_path, timing):
    window = make_window(speed=60, provider="openai-chat")
    path = _record(window, qloop, str(tmp_path / "slow.jsonl"))
    recorded_ms = load_trace(path).duration_ms
    assert recorded_ms > 300
    window.recordings.open_trace(path)
    elapsed = {}
    for speed in (1.0, 2.0):
        window.recordings.speed_combo.setCurrentIndex(window.recordings.speed_combo.findData(speed))
        assert window.session.settings.replay_speed == speed
        assert window.recordings.speed_action.isVisible()
        t = time.monotonic()
        statuses = _replay(window, qloop)
        elapsed[speed] = time.monotonic() - t
        assert statuses[0].phase is Phase.COMMITTED
    # a replay is never faster than its speed allows (how much faster 2x is: a figure)
    assert elapsed[1.0] * 1000 >= recorded_ms * 0.9 and elapsed[2.0] * 1000 >= recorded_ms / 2 * 0.9, elapsed
    timing.record(f"the app replaying a {recorded_ms / 1000:.2f} s trace at 1x", elapsed[1.0], budget=recorded_ms / 1000 * 1.5)
    timing.record(f"the app replaying a {recorded_ms / 1000:.2f} s trace at 2x", elapsed[2.0], budget=elapsed[1.0] * 0.8)


@pytest.mark.slow  # real-time replay
def test_stop_during_replay_restores_and_the_server_saw_the_cancel(make_window, qloop, demo_server, tmp_path):
    window = make_window(speed=40, provider="anthropic")
    path = _record(window, qloop, str(tmp_path / "stop.jsonl"))
    window.recordings.open_trace(path)
    window.form.load({"customer_name": "Old Customer", "amount": 5})
    before = window.form.committed

    async def go():
        window.start()
        await wait_until(lambda: window.field("/customer_name").property("displayValue") == INVOICE["customer_name"]
                         and window.field("/customer_name").property("state") == "settled")
        window.stop()
        await wait_until(_idle(window))

    arun(qloop, go())
    status = window.controller.last_status
    assert status.phase is Phase.STOPPED
    assert window.form.committed == before and window.form.document == before
    entry = [e for e in demo_server.requests() if e["started_at"] >= status.started_at - 0.5][-1]
    assert entry["disconnected"]


def _damage(path: Path, tmp_path: Path, how: str) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines()
    if how == "truncated":
        lines[3] = lines[3][: len(lines[3]) // 2]
    else:
        obj = json.loads(lines[3])
        obj["b64"] = "!!not base64!!"
        lines[3] = json.dumps(obj)
    bad = tmp_path / f"bad-{how}.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bad


@pytest.mark.parametrize("how,words", [("truncated", "not a JSON line"), ("b64", "not valid base64")])
def test_a_bad_trace_is_one_line_and_changes_nothing(make_window, qloop, tmp_path, how, words):
    window = make_window(speed=0)
    good = _record(window, qloop, str(tmp_path / "good.jsonl"))
    bad = _damage(good, tmp_path, how)
    settings, document = window.session.settings, window.form.document
    assert not window.recordings.open_trace(bad)
    error = window.recordings.last_error
    assert error == f"{bad}: line 4: " + error.split(": line 4: ", 1)[1] and words in error
    assert "\n" not in error and error in window.statusBar().currentMessage()
    assert window.session.settings == settings and window.session.replay is None
    assert window.form.document == document and not window.recordings.replay_box.isVisibleTo(window)


def test_recordings_menu_lists_recordings_bad_ones_and_the_bundled_traces(make_window, qloop, tmp_path):
    window = make_window(speed=0)
    good = _record(window, qloop)
    bad = good.with_name("broken.jsonl")
    bad.write_text('{"t_ms": 1, "b64": ""}\n', encoding="utf-8")
    entries = window.recordings.entries()
    texts = [t for t, _, _ in entries]
    mine = [e for e in entries if "anthropic" in e[0] and "invoice" in e[0]]
    assert mine and mine[0][1] and mine[0][2] == str(good) and mine[0][0].endswith(" · partial mode · complete")
    broken = [e for e in entries if e[0].startswith("broken.jsonl")]
    assert broken and not broken[0][1] and "line 1" in broken[0][2]
    assert "Real model: weather (SmolLM2)" in texts
    # the bundled ticket recording is of a run the check refused: the menu says so beforehand
    ticket = next(e for e in entries if e[0].startswith("Real model: ticket"))
    assert ticket[0] == "Real model: ticket (SmolLM2) — validation failed at /priority"
    assert "greater than or equal to 1 (got 0)" in ticket[2]
    assert texts[-1] == "Open trace…"
    real = next(a for a in window.recordings.menu.actions() if a.text() == "Real model: weather (SmolLM2)")
    real.trigger()
    assert window.session.replay is not None and window.session.replay.name == "weather/trace-smollm2.jsonl"
    assert window.session.settings.document == get_scenario("weather").document
    assert window.statusBar().currentMessage().startswith("replaying ")  # "…: press Start"
    window.session.replace(replay_speed=0)
    statuses = _replay(window, qloop)  # a real model's stream, replayed by the demo provider
    assert not window.statusBar().currentMessage().startswith("replaying ")  # Start was pressed
    assert statuses[0].phase is Phase.COMMITTED, statuses[0].reason
    assert isinstance(window.session.single.run.result.get("city"), str)



def test_recordings_made_into_a_folder_of_ones_own_are_listed_too(make_window, qloop, tmp_path):
    # `--record DIR` recorded there, and File → Recordings said "No recordings yet".
    window = make_window(speed=0)
    folder = tmp_path / "mine"
    folder.mkdir()
    path = _record(window, qloop, str(folder))  # (recording is switched off again after the run)
    assert path.parent == folder
    entries = window.recordings.entries()
    assert any(tip == str(path) and enabled for _text, enabled, tip in entries), entries


def test_a_dropped_trace_opens_for_replay_and_a_scenario_choice_leaves_it(make_window, qloop, tmp_path):
    window = make_window(speed=0)
    path = _record(window, qloop, str(tmp_path / "drop.jsonl"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.session.replay is not None and window.session.replay.name == "drop.jsonl"
    window.session.replace(scenario="weather")
    assert window.session.replay is None and window.session.settings.document is None
    assert window.run_config().demo.scenario == "weather"

    window.recordings.open_trace(path)  # the toolbar's scenario choice (invoice again) leaves replay too
    assert window.session.replay is not None and window.scenario_combo.currentData() != "invoice"
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("invoice"))
    assert window.session.replay is None and window.session.settings.document is None
    assert window.session.settings.schema_name is None and window.run_config().demo.scenario == "invoice"

    window.recordings.open_trace(path)  # a document of one's own leaves replay and stays
    window.session.replace(document="My own text", document_name="Pasted text")
    assert window.session.replay is None and window.session.settings.document == "My own text"
    assert not window.recordings.replay_box.isVisibleTo(window)


def test_app_options_record_replay_and_speed(make_window, qloop, demo_server, tmp_path, capsys):
    from livefill.gui.app_args import parse_args

    window = make_window(speed=0)
    path = _record(window, qloop, str(tmp_path / "opt.jsonl"))
    args = parse_args(["--record", "--replay", str(path), "--replay-speed", "0.5"])
    assert args.record == "" and args.replay_trace.path == str(path) and args.replay_speed == 0.5
    assert parse_args(["--record", str(tmp_path / "r.jsonl")]).record == str(tmp_path / "r.jsonl")
    assert parse_args([]).record is None and parse_args([]).replay is None
    path.rename(path.with_suffix(".moved"))  # the trace the options loaded is the one used: not read again
    window.recordings.apply_args(args, demo_server)
    path.with_suffix(".moved").rename(path)
    assert window.recordings.trace_host == demo_server.add_trace
    assert window.session.record_target == "" and window.recordings.record_action.isChecked()
    assert window.session.replay is not None and window.session.settings.replay_speed == 0.5
    assert window.recordings.speed_combo.currentText() == "0.5×"
    assert window.recordings.replay_label.text() == "replay: opt.jsonl ×0.5"
    statuses = _replay(window, qloop)  # a replay, recorded again into the recordings folder
    assert statuses[0].phase is Phase.COMMITTED
    again = Path(window.session.record_paths["single"])
    assert again.parent == tmp_path / "data" / "livefill" / "recordings" and load_trace(again).end == "complete"
    # named after what the recording was of, not after the recording's file name (a replay of a
    # replay grew "…_invoice_anthropic_anthropic.jsonl")
    assert again.name.endswith("_invoice-replay_anthropic.jsonl"), again.name

    bad = _damage(path, tmp_path, "b64")
    with pytest.raises(SystemExit):
        parse_args(["--replay", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(f"--replay: {bad}: line 4: b64 is not valid base64")


@pytest.mark.slow
def test_the_app_records_then_replays_in_its_own_process(tmp_path):
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_DATA_HOME": str(tmp_path / "data"), "LIVEFILL_REPORT": "1"}
    trace = tmp_path / "app.jsonl"

    def app(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "livefill.gui.app", "--settings-file", str(tmp_path / "s.ini"), *args],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=120)

    proc = app("--speed", "0", "--record", str(trace), "--exit-after-run")
    assert proc.returncode == 0, proc.stderr
    assert load_trace(trace).end == "complete"
    proc = app("--replay", str(trace), "--replay-speed", "0", "--compare", "naive,partial,settled", "--exit-after-run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("last run: committed") == 3, proc.stdout


def test_choosing_a_replay_speed_keeps_the_demo_speed_box_hidden(make_window, tmp_path):
    from livefill.gui.recordings import bundled_traces

    window = make_window()
    bar = window.run_toolbar

    def demo_speed_shown() -> bool:
        return any(a.isVisible() for a in bar.actions() if bar.widgetForAction(a) is window.speed_combo)

    window.recordings.open_trace(bundled_traces()[0][1])
    speeds = window.recordings.speed_combo
    assert window.recordings.speed_action.isVisible() and not demo_speed_shown()  # one speed box at a time
    speeds.setCurrentIndex(speeds.findData(2.0))
    assert window.session.settings.replay_speed == 2.0
    assert window.recordings.speed_action.isVisible() and not demo_speed_shown()
    window.session.replace(scenario="weather")  # a scenario ends the replay: the demo speed is back
    assert not window.recordings.speed_action.isVisible() and demo_speed_shown()


def test_ending_a_replay_takes_back_its_press_start_message(make_window, tmp_path):
    from livefill.gui.recordings import bundled_traces

    window = make_window()
    window.recordings.open_trace(bundled_traces()[0][1])
    assert window.statusBar().currentMessage().startswith("replaying ")
    window.session.replace(scenario="weather")  # a scenario ends the replay
    assert window.session.replay is None
    assert not window.statusBar().currentMessage().startswith("replaying ")


def test_a_replayed_run_opens_again_from_the_history_with_its_recordings_document(make_window, qloop, tmp_path):
    # It could not: "replay: trace-smollm2.jsonl was not read from a file (pasted text is not kept)".
    from livefill.gui.recordings import bundled_traces
    from tests.gui.test_history_panel import _show

    window = make_window(speed=0)
    bundled = dict((p.parent.name, p) for _text, p in bundled_traces())
    path = tmp_path / "mine.jsonl"
    path.write_bytes(bundled["weather"].read_bytes())
    assert window.recordings.open_trace(path)
    window.session.replace(replay_speed=0)
    statuses = _replay(window, qloop)
    assert statuses[0].phase is Phase.COMMITTED, statuses[0].reason
    result = window.session.single.run.result
    record = History(window.history.path).read()[-1]
    assert record["replay_path"] == str(path.resolve())
    window.session.leave_replay(scenario="invoice")  # the user goes on with something else
    window.session.form.load({})
    assert window.session.settings.document != get_scenario("weather").document

    _show(window, qloop)

    async def reopen():
        return await window.history_panel.open_entry(record["run"])

    assert arun(qloop, reopen()) is True, window.run_log.lines()[-1]
    settings = window.session.settings
    assert settings.document == get_scenario("weather").document
    assert settings.document_name == "replay: mine.jsonl"
    assert window.session.form.committed == result
    assert window.session.replay is None  # shown again, not replayed again
    # the file written over with another recording: refused, not the values in another run's form
    path.write_bytes(bundled["invoice"].read_bytes())
    assert arun(qloop, reopen()) is False
    assert window.run_log.lines()[-1].endswith(f"its recording {path.resolve()} now holds another run."
                                               " Its values are shown in the History panel.")


def test_while_a_recording_is_replayed_the_provider_box_shows_the_one_it_was_recorded_from(make_window):
    # It went on showing the settings' provider ("Anthropic (demo)") for an OpenAI-compatible recording.
    from livefill.gui.recordings import bundled_traces

    window = make_window(speed=0, provider="anthropic")
    combo = window.toolbar.provider_combo
    assert combo.currentData() == "anthropic" and combo.isEnabled()
    assert window.recordings.open_trace(next(p for text, p in bundled_traces() if "ticket" in text))
    assert combo.currentData() == "openai-compatible" and not combo.isEnabled()
    assert "recorded from openai-compatible (smollm2) on the openai-chat wire" in combo.toolTip()
    window.session.replace(speed=0)  # another setting changes: still the recording's
    assert combo.currentData() == "openai-compatible" and not combo.isEnabled()
    window.session.leave_replay()
    assert combo.currentData() == "anthropic" and combo.isEnabled()
    assert window.session.settings.provider == "anthropic"

