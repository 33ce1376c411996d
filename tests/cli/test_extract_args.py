"""`livefill extract`'s options are views of the one tables: MODES, PROVIDER_SPECS, the defaults."""

from __future__ import annotations

import pytest

from livefill.cli.extract_args import (
    EXTRACT_MODES,
    PROVIDERS,
    UsageProblem,
    build_parser,
    structured_choices,
)
from livefill.cli.extract_plan import check_structured
from livefill.defaults import IDLE_TIMEOUT
from livefill.extraction.modes import MODES, Mode
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED


def _choices(option: str) -> tuple[str, ...]:
    action = next(a for a in build_parser()._actions if option in a.option_strings)
    return tuple(action.choices or ())


def test_the_modes_are_the_mode_table_but_naive() -> None:
    assert EXTRACT_MODES == ("partial", "settled", "hybrid", "blocking")
    assert set(EXTRACT_MODES) == {m.value for m in MODES} - {Mode.NAIVE.value}
    assert _choices("--mode") == EXTRACT_MODES


def test_the_providers_are_the_specs_offered_in_the_app() -> None:
    assert PROVIDERS == ("anthropic", "openai-chat", "openai-responses", "openai-compatible", "ollama")
    assert PROVIDERS == tuple(name for name, s in PROVIDER_SPECS.items() if s.in_app)
    assert _choices("--provider") == PROVIDERS


def test_structured_choices_come_from_each_providers_spec() -> None:
    assert _choices("--structured") == STRUCTURED
    for provider in PROVIDERS:
        assert structured_choices(provider) == PROVIDER_SPECS[provider].structured
    assert structured_choices(None) == ("tools",)  # the demo provider speaks Anthropic's wire
    text = " ".join(build_parser().format_help().split())
    assert "anthropic: tools; openai-chat: tools/json_schema/json_object; openai-responses: tools/json_schema;" in text


def test_check_structured_defaults_to_a_tool_and_names_what_a_provider_takes() -> None:
    assert check_structured(None, None) == "tools"
    assert check_structured(None, "ollama") == "tools"
    assert check_structured("json_object", "openai-compatible") == "json_object"
    with pytest.raises(UsageProblem, match="--structured json_schema: the demo provider .* takes only tools"):
        check_structured("json_schema", None)
    with pytest.raises(UsageProblem, match="--provider openai-responses takes only tools or json_schema"):
        check_structured("json_object", "openai-responses")


def test_the_idle_timeout_default_is_the_one_default() -> None:
    args = build_parser().parse_args(["--scenario", "invoice", "--schema", "invoice"])
    assert args.idle_timeout == IDLE_TIMEOUT
    assert args.mode == "partial"
    text = " ".join(build_parser().format_help().split())
    assert f"(default {IDLE_TIMEOUT:g}; 0 = none)" in text
    assert "(default partial; settled and hybrid go through the relay)" in text
