"""Compare lanes with run settings of their own, driven through the real widgets (offscreen).

"One document, every demo wire" on the invoice at speed 0: every lane commits, each lane's
request reaches the demo provider on its own wire, Anthropic's default (buffered) wire sends fewer
deltas than fine-grained, OpenAI and Ollama, and the headers name what differs. A lane's settings
edited through its ⚙ dialog change its next run; Stop stops every lane; the lanes survive a
relaunch; the live preset is greyed, saying why, without keys.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from livefill.extraction.json_doc import MISSING
from livefill.gui.app_args import parse_args
from livefill.gui.compare_presets import NO_KEYS
from livefill.session.app_settings import MemoryStore
from livefill.session.lane_settings import PRESETS
from livefill.session.request_notes import match_entries
from livefill.session.run_status import Phase
from livefill.wire.keys import KeyStore
from tests.gui.conftest import arun, wait_until


def null_keys(**environ: str) -> KeyStore:
    from keyring.backends.null import Keyring

    return KeyStore(backend=Keyring(), environ=environ)


def all_done(window):
    return lambda: not window.active and all(s is not None and s.phase.final for s in window.last_statuses())


def entries_of(view, demo_server) -> dict[str, dict]:
    """Each lane's entry in the demo provider's request log (by its run id)."""
    matched = match_entries([lane.model for lane in view.lanes], demo_server.requests())
    assert all(matched.values()), matched
    return {name: entry for name, entry in matched.items() if entry is not None}


def test_every_demo_wire_side_by_side_commits_with_its_own_wire(make_window, qloop, demo_server):
    window = make_window(compare=["naive", "partial"], keys=null_keys())
    view = window.compare_view
    view.preset_button.actions_["wires"].trigger()  # "One document, every demo wire"
    assert [lane.title for lane in view.lanes] == [
        "anthropic", "anthropic · fine-grained", "openai-chat", "openai-responses", "ollama"]
    headers = [lane.header.title_label.text() for lane in view.lanes]
    assert headers == ["anthropic", "anthropic · fine-grained", "openai-chat", "openai-responses", "ollama"]
    assert not any(lane.header.about_label.isVisible() for lane in view.lanes)  # every lane reads partial: said once
    assert "partial" in view.caption.text() and "speed 0" in view.caption.text()

    window.start_button.click()
    arun(qloop, wait_until(all_done(window), timeout=60))
    statuses = window.last_statuses()
    assert [s.phase for s in statuses] == [Phase.COMMITTED] * 5, [s.reason for s in statuses]
    deltas = [s.deltas_received for s in statuses]
    anthropic, fine, chat, responses, ollama = deltas
    assert anthropic < fine and anthropic < chat and anthropic < ollama, deltas  # the default wire buffers
    entries = entries_of(view, demo_server)
    wires = [(entries[lane.name]["wire"], entries[lane.name]["fine_grained"]) for lane in view.lanes]
    assert wires == [("anthropic", False), ("anthropic", True), ("openai-chat", False),
                     ("openai-responses", False), ("ollama", False)]
    assert all(lane.form.document == view.lane(0).form.document for lane in view.lanes)  # one answer, five wires


def test_a_lane_edited_in_its_dialog_runs_with_its_new_settings(make_window, qloop, demo_server):
    window = make_window(compare=["partial", "partial"], keys=null_keys())
    view = window.compare_view
    lane = view.lane(1)
    assert [lane.title for lane in view.lanes] == ["partial", "partial 2"]
    lane.settings_button.click()
    dialog = lane.settings_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.provider.setCurrentIndex(dialog.provider.findData("ollama"))
    assert not dialog.fine_grained.isEnabled()  # Ollama has no fine-grained streaming
    dialog.structured.setCurrentIndex(dialog.structured.findData("json_object"))
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert not dialog.isVisible()
    assert [lane.title for lane in view.lanes] == ["anthropic · tools", "ollama · json_object"]
    assert view.lane(1).header.title_label.text() == "ollama · json_object"

    window.start_button.click()
    arun(qloop, wait_until(all_done(window), timeout=60))
    assert [s.phase for s in window.last_statuses()] == [Phase.COMMITTED] * 2
    entries = entries_of(view, demo_server)
    assert [entries[lane.name]["wire"] for lane in view.lanes] == ["anthropic", "ollama"]
    assert view.lane(1).run.config.structured == "json_object" and view.lane(1).run.config.provider == "ollama"


def test_a_lane_setting_it_cannot_run_is_said_and_the_dialog_stays(make_window, qloop):
    window = make_window(compare=["partial", "settled"], keys=null_keys())
    lane = window.compare_view.lane(0)
    lane.settings_button.click()
    dialog = lane.settings_dialog
    dialog.speed.setText("fast")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.isVisible() and "speed" in dialog.problem.text()
    assert window.session.lane_settings(lane.name).speed is None  # nothing changed
    dialog.reject()


def test_stop_stops_every_lane_of_every_wire(make_window, qloop, demo_server):
    window = make_window(compare=PRESETS["wires"].lanes, keys=null_keys(), speed=20)
    view = window.compare_view
    window.start_button.click()

    def every_lane_streams() -> bool:
        return all(s is not None and s.deltas_received > 0 for s in window.last_statuses())

    try:
        arun(qloop, wait_until(every_lane_streams, timeout=30))
    except AssertionError:  # say which lane did not stream, and why
        raise AssertionError([(lane.title, s and (s.phase.value, s.deltas_received, s.reason))
                              for lane, s in zip(view.lanes, window.last_statuses())]) from None
    arun(qloop, wait_until(lambda: not any(lane.settings_button.isEnabled() for lane in view.lanes), timeout=5))
    assert not view.preset_button.isEnabled() and window.active  # no lane's settings change while it runs
    window.stop_button.click()
    arun(qloop, wait_until(all_done(window), timeout=30))
    assert all(lane.settings_button.isEnabled() for lane in view.lanes) and view.preset_button.isEnabled()
    assert [s.phase for s in window.last_statuses()] == [Phase.STOPPED] * 5
    arun(qloop, wait_until(lambda: all(e["disconnected"] for e in entries_of(view, demo_server).values()), timeout=10))


def test_the_lanes_survive_a_relaunch(make_window, qloop):
    store = MemoryStore()
    first = make_window(store=store, keys=null_keys())
    first.set_compare(True)
    first.compare_view.preset_button.actions_["wires"].trigger()
    first.session.set_lane_settings(first.compare_view.lane(4).name, "provider=ollama,seed=3,mode=blocking")
    first.close()
    again = make_window(store=store, keys=null_keys())
    assert not again.comparing  # the view the launch asks for; the lanes are kept for when compare is shown
    again.compare_action.trigger()
    view = again.compare_view
    assert again.comparing and len(view.lanes) == 5
    assert [lane.title for lane in view.lanes] == [
        "anthropic · partial · seed 7", "anthropic · fine-grained · partial · seed 7", "openai-chat · partial · seed 7",
        "openai-responses · partial · seed 7", "ollama · blocking · seed 3"]  # (7: the seed every compare lane sends)
    assert again.session.lane_settings(view.lane(4).name).seed == 3 and view.lane(4).mode.value == "blocking"


def test_the_live_preset_is_greyed_and_says_why_without_keys(make_window, qloop):
    window = make_window(compare=["naive", "partial"], keys=null_keys())
    button = window.compare_view.preset_button
    arun(qloop, button.wait())
    action = button.live_action()
    assert not action.isEnabled() and action.toolTip() == NO_KEYS
    keyed = make_window(compare=["naive", "partial"], keys=null_keys(ANTHROPIC_API_KEY="sk-ant-x", OPENAI_API_KEY="sk-x"))
    button = keyed.compare_view.preset_button
    arun(qloop, button.wait())
    assert button.live_action().isEnabled() and "anthropic" in button.live_action().toolTip()
    button.live_action().trigger()
    view = keyed.compare_view
    assert [lane.title for lane in view.lanes] == ["anthropic", "openai-chat", "openai-responses"]
    assert all(keyed.session.lane_run_settings(lane.name).live for lane in view.lanes)


def test_compare_preset_on_the_command_line_opens_those_lanes(make_window):
    args = parse_args(["--compare-preset", "wires"])
    window = make_window(compare=args.compare, keys=null_keys())
    assert [lane.title for lane in window.compare_view.lanes] == [
        "anthropic", "anthropic · fine-grained", "openai-chat", "openai-responses", "ollama"]


def test_a_live_lane_beside_a_demo_lane_each_with_its_own_key(make_window, qloop, demo_server, monkeypatch):
    import uuid

    from tests.wire.test_keys import MemoryKeyring

    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", demo_server.url)  # the demo provider addressed as Anthropic's API
    secret = "sk-ant-test-" + uuid.uuid4().hex
    keys = KeyStore(backend=MemoryKeyring(), environ={})
    keys.set("anthropic", secret, demo_server.url)
    window = make_window(keys=keys, scenario="weather", compare=["provider=anthropic,live=true", "provider=ollama"])
    view = window.compare_view
    assert [lane.title for lane in view.lanes] == ["anthropic · live", "ollama · demo"]
    window.start_button.click()
    # each lane's own truth: the demo lane's is known in advance (the scenario's answer), the live
    # lane's only at its own commit (it was given the demo's, and its "all settled" stayed "—")
    live_lane, demo_lane = window.session.compare_lanes
    assert live_lane.final is MISSING and demo_lane.final is not MISSING
    arun(qloop, wait_until(all_done(window), timeout=60))
    assert [s.phase for s in window.last_statuses()] == [Phase.COMMITTED] * 2, [s.reason for s in window.last_statuses()]
    assert live_lane.metrics.summary().final_known and live_lane.metrics.summary().all_settled is not None
    live, demo = (lane.run.config for lane in view.lanes)
    assert live.demo is None and live.api_key == secret and demo.demo is not None and demo.api_key == "demo"
    assert view.lane(0).header.live_label.isVisibleTo(view.lane(0)) and not view.lane(1).header.live_label.isVisibleTo(view.lane(1))
    entries = [e for e in demo_server.requests() if e.get("started_at", 0) >= window.session.t0_wall - 1]
    assert {e["wire"] for e in entries} >= {"anthropic", "ollama"}


def test_compare_preset_options_are_checked_up_front(capsys):
    import pytest

    for argv, needle in ((["--compare-preset", "live"], "unknown preset 'live'"),
                         (["--compare-preset", "wires", "--compare", "naive,partial"], "not with --compare")):
        with pytest.raises(SystemExit) as exit_:
            parse_args(argv)
        assert exit_.value.code == 2 and needle in capsys.readouterr().err
