"""The pieces a Session is made of: compare lanes, cleared forms, the config from settings, the events."""

from __future__ import annotations

import pytest

from livefill.demo.protocol import DemoKnobs
from livefill.extraction.form import FormModel
from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model
from livefill.session.cleared_forms import ClearedForms
from livefill.session.compare import MAX_LANES, MIN_LANES, CompareLanes, parse_modes
from livefill.session.lane import SessionLane
from livefill.session.run_config import RunConfig
from livefill.session.session_config import expected_output, settings_config, settings_document, settings_schema_name
from livefill.session.session_events import ActiveChanged, LanesChanged, SettingsChanged, UndoChanged, ends_undo
from livefill.session.settings import LIVE_PROVIDERS, PROVIDERS, RunSettings
from livefill.wire.providers.spec import PROVIDER_SPECS


def lanes() -> CompareLanes:
    def make(name, mode, feed):
        lane = SessionLane(name, mode=mode)
        lane.set_timeline(feed)
        lane.show(("invoice", None, None), "invoice")
        return lane

    return CompareLanes(make)


def test_compare_lanes_are_named_once_and_titled_by_their_mode():
    compare = lanes()
    compare.set_modes(["partial", "naive", "partial"])
    assert compare.retitle() == ("lane1", "lane2", "lane3")
    assert [lane.title for lane in compare.lanes] == ["partial", "naive", "partial 2"]
    assert compare.feed.model.lanes == ["lane1", "lane2", "lane3"]
    compare.drop(compare.lanes[0])
    compare.add(Mode.SETTLED)
    assert compare.retitle() == ("lane2", "lane3", "lane4")  # a name is never given out twice
    assert compare.modes == [Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED]
    with pytest.raises(ValueError, match=f"{MIN_LANES} to {MAX_LANES} lanes"):
        compare.set_modes(["partial"])
    assert parse_modes(" naive , settled ") == [Mode.NAIVE, Mode.SETTLED]


def test_cleared_forms_put_back_exactly_what_they_emptied():
    form = FormModel(schema_model("invoice"))
    form.set_value("/customer_name", "Ann")
    cleared = ClearedForms.clear([form], "Undo clear form")
    assert form.value("/customer_name") is MISSING and cleared.undo == "Undo clear form"
    cleared.put_back()
    assert form.value("/customer_name") == "Ann"


def test_the_settings_make_a_demo_config_with_the_scenario_and_its_expected_output():
    s = RunSettings(scenario="invoice", speed=50, seed=3)
    cfg = settings_config(s)
    assert cfg.demo == DemoKnobs(scenario="invoice", speed=50, seed=3, slice="event")
    assert cfg.schema_name == settings_schema_name(s) == "invoice" and cfg.document == settings_document(s)
    assert expected_output(cfg, s) == get_scenario("invoice").output
    own = s.with_(document="Ann", document_name="note.txt")
    assert expected_output(settings_config(own), own) is MISSING  # a document of one's own: not known
    assert settings_config(s.with_(seed=None), comparing=True).demo.seed is not None  # every lane says the seed
    assert expected_output(RunConfig(mode=Mode.PARTIAL), s) is MISSING  # live: not known


def test_the_apps_providers_are_the_specs_offered_in_the_app():
    assert PROVIDERS == tuple(name for name, spec in PROVIDER_SPECS.items() if spec.in_app)
    assert "raw" not in PROVIDERS and set(LIVE_PROVIDERS) <= set(PROVIDERS)


def test_an_undone_clear_ends_with_a_start_a_new_document_or_new_lanes():
    s = RunSettings()
    assert ends_undo(ActiveChanged(True)) and not ends_undo(ActiveChanged(False))
    assert ends_undo(LanesChanged(("lane1",)))
    assert ends_undo(SettingsChanged(s, s, frozenset({"document"})))
    assert not ends_undo(SettingsChanged(s, s, frozenset({"speed"})))
    assert not ends_undo(UndoChanged(None))
