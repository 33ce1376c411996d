"""A compare lane's own run settings (livefill.session.lane_settings) and the session's lane intents.

The text form round-trips; a lane's overrides go over the session's settings (and only what its
provider can take); the titles name what differs and nothing all lanes share; the presets; the
lanes remembered in a store; each compare lane starts with its own RunConfig.
"""

from __future__ import annotations

import pytest

from livefill.extraction.modes import Mode
from livefill.session.app_settings import MemoryStore
from livefill.session.lane_settings import (
    LANES_KEY, PRESETS, LaneSettings, LaneSettingsError, lane_run_settings, lane_titles, live_preset, load_lanes,
    parse_lane_settings, save_lanes, shared_words,
)
from livefill.session.session import Session
from livefill.session.session_events import LanesChanged
from livefill.session.settings import RunSettings
from livefill.wire.keys import KeyStore


def null_keys(**environ: str) -> KeyStore:
    from keyring.backends.null import Keyring

    return KeyStore(backend=Keyring(), environ=environ)


def test_a_lane_text_parses_back_to_the_same_lane() -> None:
    lane = parse_lane_settings("provider=anthropic,fine_grained=true,mode=settled,speed=12.5,seed=7,fault=none")
    assert lane == LaneSettings(provider="anthropic", fine_grained=True, mode=Mode.SETTLED, speed=12.5, seed=7,
                                fault="none")
    assert parse_lane_settings(lane.text()) == lane
    assert parse_lane_settings("base_url=http://127.0.0.1:8080/v1,provider=openai-compatible").live is True
    for bad, needle in (("provider=ollama,fine_grained=true", "only provider=anthropic"),
                        ("colour=red", "unknown key"), ("provider=anthropic,structured=json_object", "takes tools"),
                        ("live=true,speed=3", "demo provider's knobs"), ("provider=ollama,fault=melt", "fault=melt")):
        with pytest.raises(LaneSettingsError, match=needle):
            parse_lane_settings(bad)


def test_a_lane_overrides_only_what_it_says_and_what_its_provider_takes() -> None:
    base = RunSettings(provider="openai-chat", structured="json_schema", model="gpt-x", speed=40)
    ollama = lane_run_settings(base, LaneSettings(provider="ollama", speed=5))
    assert (ollama.provider, ollama.speed, ollama.structured, ollama.model) == ("ollama", 5.0, "json_schema", None)
    anthropic = lane_run_settings(base, LaneSettings(provider="anthropic", fine_grained=True))
    assert anthropic.structured == "tools" and anthropic.fine_grained  # json_schema: not Anthropic's
    same = lane_run_settings(base, LaneSettings(mode=Mode.NAIVE))
    assert same == base.with_(mode=Mode.NAIVE)  # nothing said: the session's, its model kept
    with pytest.raises(LaneSettingsError, match="takes tools"):
        lane_run_settings(base, LaneSettings(provider="anthropic", structured="json_schema"))


def test_titles_name_what_differs_and_nothing_shared() -> None:
    base = RunSettings(speed=0)
    wires = [lane_run_settings(base, lane) for lane in PRESETS["wires"].lanes]
    assert lane_titles(wires) == ["anthropic", "anthropic · fine-grained", "openai-chat", "openai-responses", "ollama"]
    assert "partial" in shared_words(wires) and "speed 0" in shared_words(wires)
    modes = [lane_run_settings(base, lane) for lane in PRESETS["modes"].lanes]
    assert lane_titles(modes) == ["naive", "partial", "settled", "hybrid", "blocking"]
    twins = [base, base, base.with_(provider="ollama")]
    assert lane_titles(twins) == ["anthropic", "anthropic 2", "ollama"]
    assert lane_titles([base, base]) == ["partial", "partial 2"]


def test_the_live_preset_has_one_lane_per_provider_with_a_key() -> None:
    assert live_preset(RunSettings(), null_keys()) == ()
    lanes = live_preset(RunSettings(), null_keys(ANTHROPIC_API_KEY="sk-ant-test", OPENAI_API_KEY="sk-test"))
    assert [lane.provider for lane in lanes] == ["anthropic", "openai-chat", "openai-responses"]
    assert all(lane.live for lane in lanes)


def test_lanes_are_remembered_in_a_store() -> None:
    store = MemoryStore()
    lanes = PRESETS["wires"].lanes
    save_lanes(store, lanes)
    assert load_lanes(store) == (lanes, None)
    store.set_value(LANES_KEY, "[1, 2")
    got, problem = load_lanes(store)
    assert got is None and "cannot be used" in problem


def test_each_compare_lane_starts_with_its_own_config() -> None:
    session = Session(RunSettings(base_url="http://127.0.0.1:9", speed=0), keys=null_keys())
    events = []
    session.subscribe(events.append)
    session.apply_preset("wires")
    assert session.comparing and isinstance(events[0], LanesChanged)
    configs = session.lane_configs()
    assert [(c.provider, c.fine_grained, c.mode) for c in configs] == [
        ("anthropic", False, Mode.PARTIAL), ("anthropic", True, Mode.PARTIAL), ("openai-chat", False, Mode.PARTIAL),
        ("openai-responses", False, Mode.PARTIAL), ("ollama", False, Mode.PARTIAL),
    ]
    assert len({c.demo.seed for c in configs}) == 1  # one seed said for every demo lane
    name = session.compare_lanes[4].name
    session.set_lane_settings(name, "provider=openai-chat,structured=json_object,mode=naive")
    assert session.lane_configs()[4].structured == "json_object" and session.compare_lanes[4].mode is Mode.NAIVE
    assert session.compare_lanes[4].title == "openai-chat · json_object · naive"
    with pytest.raises(LaneSettingsError):
        session.set_lane_settings(name, LaneSettings(provider="ollama", fine_grained=True))
    session.replace(provider="ollama")  # the lanes that said no provider follow the session
    session.set_lanes(["mode=partial", "provider=anthropic"])
    assert [lane.title for lane in session.compare_lanes] == ["ollama", "anthropic"]
    session.replace(provider="openai-chat")
    assert [lane.title for lane in session.compare_lanes] == ["openai-chat", "anthropic"]  # retitled


def test_the_session_remembers_its_lanes() -> None:
    store = MemoryStore()
    first = Session(RunSettings())
    first.remember_lanes(store)
    first.apply_preset("wires")
    again = Session(RunSettings())
    again.remember_lanes(store)
    again.enter_compare()
    assert again.compare.lane_settings == list(PRESETS["wires"].lanes)
    assert [lane.title for lane in again.compare_lanes][:2] == ["anthropic", "anthropic · fine-grained"]
