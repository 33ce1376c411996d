"""The session a launch starts with (livefill.gui.launch_session): command line, remembered settings, live options."""

from __future__ import annotations

from livefill.extraction.modes import Mode
from livefill.gui.app_args import parse_args
from livefill.gui.launch_session import first_settings, launch_session, live_choices
from livefill.recording.history import History
from livefill.session.app_settings import SavedSettings
from livefill.session.settings import RunSettings


def test_live_options_go_to_the_providers_own_settings():
    assert live_choices("ollama", live=True, base_url="http://gpu:11434", model="qwen", structured=None,
                        schema_name=None) == {"live": True, "ollama_base_url": "http://gpu:11434", "ollama_model": "qwen"}
    assert live_choices("openai-compatible", live=True, base_url="http://x:8080/v1", model="m", structured="json_object",
                        schema_name="weather") == {"live": True, "compatible_base_url": "http://x:8080/v1",
                                                   "compatible_model": "m", "structured": "json_object",
                                                   "schema_name": "weather"}
    # a model without --live is the demo request's model name
    assert live_choices("anthropic", live=False, base_url=None, model="m", structured=None, schema_name=None) == {"model": "m"}


def test_the_remembered_settings_go_over_the_defaults_and_the_live_options_over_both():
    remembered = SavedSettings(provider="ollama", ollama_base_url="http://old:11434", ollama_model="llama3.2")
    settings = first_settings(RunSettings(), remembered)
    assert (settings.provider, settings.ollama_base_url, settings.ollama_model) == ("ollama", "http://old:11434", "llama3.2")
    live = first_settings(RunSettings(), remembered, live=True, model="qwen")
    assert (live.live, live.ollama_base_url, live.ollama_model) == (True, "http://old:11434", "qwen")
    assert first_settings(RunSettings(scenario="weather")) == RunSettings(scenario="weather")


def test_a_launch_session_holds_the_command_lines_settings(tmp_path):
    args = parse_args(["--scenario", "weather", "--mode", "settled", "--provider", "openai-chat", "--speed", "100",
                       "--seed", "7", "--slice", "5", "--idle-timeout", "3", "--show-provisional-numbers",
                       "--history", str(tmp_path / "h.jsonl")])
    session = launch_session(args, base_url="http://127.0.0.1:1", relay_token="t", remembered=None, keys=None)
    s = session.settings
    assert (s.scenario, s.mode, s.provider, s.speed, s.seed, s.slicing, s.idle_timeout) == (
        "weather", Mode.SETTLED, "openai-chat", 100.0, 7, "5", 3.0)
    assert s.show_provisional_numbers and (s.base_url, s.relay_token) == ("http://127.0.0.1:1", "t")
    assert isinstance(session.history, History) and session.history.path == tmp_path / "h.jsonl"
    plain = parse_args(["--provider", "ollama", "--history", str(tmp_path / "h.jsonl")])
    remembered = SavedSettings(provider="ollama", ollama_model="llama3.2")
    defaults = launch_session(plain, base_url="http://127.0.0.1:1", relay_token=None, remembered=remembered, keys=None)
    assert (defaults.settings.slicing, defaults.settings.speed, defaults.settings.ollama_model) == ("event", 30.0, "llama3.2")
