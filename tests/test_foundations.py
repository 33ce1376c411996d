"""The base modules every layer leans on: livefill.observers, livefill.switches, and the provider
table livefill.wire.providers.spec (with the views of it the wire keeps)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from livefill import switches
from livefill.observers import Observers
from livefill.switches import SWITCHES
from livefill.wire.keys import _OFFICIAL, key_slot
from livefill.wire.providers import _WIRES
from livefill.wire.providers.base_urls import BASE_URL_VARIABLES, LIVE_BASE_URLS
from livefill.wire.providers.request import DEFAULT_MODELS, MAX_TOKENS, PROVIDERS, STRUCTURED_CHOICES
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED, spec
from tests.conftest import REPO

# --- observers ------------------------------------------------------------------------------------


def test_observers_are_told_in_the_order_they_subscribed():
    seen: list[tuple[str, int]] = []
    observers: Observers[int] = Observers()
    observers.subscribe(lambda e: seen.append(("a", e)))
    observers.subscribe(lambda e: seen.append(("b", e)))
    observers.notify(1)
    observers.notify(2)
    assert seen == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert len(observers) == 2


def test_unsubscribing_stops_the_calls_and_twice_is_harmless():
    seen: list[int] = []
    observers: Observers[int] = Observers()
    unsubscribe = observers.subscribe(seen.append)
    observers.notify(1)
    unsubscribe()
    unsubscribe()
    observers.notify(2)
    assert seen == [1] and len(observers) == 0


def test_a_callback_that_unsubscribes_during_a_notification_is_not_told_again():
    seen: list[tuple[str, int]] = []
    observers: Observers[int] = Observers()

    def once(event: int) -> None:
        seen.append(("once", event))
        stop_once()

    stop_once = observers.subscribe(once)
    observers.subscribe(lambda e: seen.append(("always", e)))
    observers.notify(1)
    observers.notify(2)
    assert seen == [("once", 1), ("always", 1), ("always", 2)]


def test_a_callback_unsubscribed_by_another_during_a_notification_is_not_called_after_it():
    seen: list[str] = []
    observers: Observers[int] = Observers()
    observers.subscribe(lambda e: (seen.append("first"), stop_second()))
    stop_second = observers.subscribe(lambda e: seen.append("second"))
    observers.notify(1)
    assert seen == ["first"]  # the second was removed before its turn came


def test_a_callback_subscribed_during_a_notification_is_told_from_the_next_one():
    seen: list[tuple[str, int]] = []
    observers: Observers[int] = Observers()

    def adder(event: int) -> None:
        seen.append(("adder", event))
        if event == 1:
            observers.subscribe(lambda e: seen.append(("late", e)))

    observers.subscribe(adder)
    observers.notify(1)
    observers.notify(2)
    assert seen == [("adder", 1), ("adder", 2), ("late", 2)]


def test_clear_forgets_every_callback():
    seen: list[int] = []
    observers: Observers[int] = Observers()
    observers.subscribe(seen.append)
    observers.clear()
    observers.notify(1)
    assert seen == [] and len(observers) == 0


# --- switches -------------------------------------------------------------------------------------


def test_flag_is_off_when_unset_blank_or_a_no_word():
    for value in ("", "  ", "0", "false", "No", "FALSE"):
        assert not switches.flag("LIVEFILL_READ_THREAD", {"LIVEFILL_READ_THREAD": value}), value
    assert not switches.flag("LIVEFILL_READ_THREAD", {})
    for value in ("1", "yes", "true", " on "):
        assert switches.flag("LIVEFILL_READ_THREAD", {"LIVEFILL_READ_THREAD": value}), value


def test_number_falls_back_to_its_default():
    name = "LIVEFILL_HEAD_TIMEOUT"
    assert switches.number(name, 10.0, {}) == 10.0
    assert switches.number(name, 10.0, {name: " 2.5 "}) == 2.5
    assert switches.number(name, 10.0, {name: "soon"}) == 10.0
    assert switches.number(name, 10.0, {name: "0"}) == 10.0  # not > 0
    assert switches.number(name, 10.0, {name: "-1"}) == 10.0
    assert switches.number(name, 10.0, {name: "0"}, positive=False) == 0.0


def test_text_is_none_when_unset_or_blank_and_stripped_otherwise():
    name = "LIVEFILL_RELAY_TOKEN"
    assert switches.text(name, {}) is None
    assert switches.text(name, {name: "   "}) is None
    assert switches.text(name, {name: " s3cret "}) == "s3cret"


def test_switches_are_read_when_asked_not_at_import(monkeypatch):
    monkeypatch.delenv("LIVEFILL_NET_BACKEND", raising=False)
    assert switches.text("LIVEFILL_NET_BACKEND") is None
    monkeypatch.setenv("LIVEFILL_NET_BACKEND", "anyio")
    assert switches.text("LIVEFILL_NET_BACKEND") == "anyio"


@pytest.mark.parametrize("read", [switches.text, switches.flag, lambda name, env: switches.number(name, 1.0, env)])
def test_an_undeclared_switch_is_a_key_error(read):
    with pytest.raises(KeyError, match="LIVEFILL_NOT_A_SWITCH"):
        read("LIVEFILL_NOT_A_SWITCH", {"LIVEFILL_NOT_A_SWITCH": "1"})


def test_every_switch_says_what_it_means():
    for name, switch in SWITCHES.items():
        assert switch.name == name and name.startswith("LIVEFILL_")
        assert len(switch.meaning) > 10, name


#: The per-server API-key variables: LIVEFILL_API_KEY_<HOST_PORT_PATH>, read by livefill.wire.keys.
_KEY_PREFIX = "LIVEFILL_API_KEY_"
_ENV_READS = {("os", "getenv"), ("environ", "get"), ("switches", "text"), ("switches", "flag"), ("switches", "number")}


def livefill_names_read(source: str) -> set[str]:
    """Every LIVEFILL_* name `source` reads: os.environ.get / os.getenv / os.environ[...] / `in
    os.environ` / switches.text|flag|number, and any other string constant naming one."""
    names: set[str] = set()
    tree = ast.parse(source)
    pieces = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in pieces:
            if re.fullmatch(r"LIVEFILL_[A-Z0-9_]+", node.value):
                names.add(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            owner = node.func.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            first = node.args[0]
            if (owner_name, node.func.attr) in _ENV_READS and isinstance(first, ast.JoinedStr):
                prefix = "".join(p.value for p in first.values if isinstance(p, ast.Constant))
                if prefix.startswith("LIVEFILL_"):
                    names.add(prefix + "*")  # a name built at run time: it must be declared too
    return {n for n in names if not n.startswith(_KEY_PREFIX)}


def test_the_scan_sees_every_way_a_switch_is_read():
    source = (
        "import os\nfrom livefill import switches\n"
        "a = os.environ.get('LIVEFILL_A')\nb = os.getenv('LIVEFILL_B', '1')\nc = os.environ['LIVEFILL_C']\n"
        "d = 'LIVEFILL_D' in os.environ\ne = switches.flag('LIVEFILL_E')\nf = os.environ.get(f'LIVEFILL_F_{x}')\n"
        "g = os.environ.get('LIVEFILL_API_KEY_127_0_0_1_8080')\nh = 'livefill_lower'\n"
    )
    assert livefill_names_read(source) == {"LIVEFILL_A", "LIVEFILL_B", "LIVEFILL_C", "LIVEFILL_D", "LIVEFILL_E", "LIVEFILL_F_*"}


def test_every_livefill_variable_read_anywhere_is_declared():
    undeclared: list[str] = []
    for folder in ("livefill", "gui", "widgets"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for name in sorted(livefill_names_read(path.read_text(encoding="utf-8"))):
                if name not in SWITCHES:
                    undeclared.append(f"{Path(path).relative_to(REPO)}: {name}")
    assert undeclared == []


# --- the provider table ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PROVIDER_SPECS))
def test_every_provider_has_a_structured_default_and_known_choices(name):
    provider = PROVIDER_SPECS[name]
    assert provider.name == name and spec(name) is provider
    assert provider.structured, name
    assert provider.structured[0] in STRUCTURED  # the default
    assert set(provider.structured) <= set(STRUCTURED)
    assert len(set(provider.structured)) == len(provider.structured)
    assert provider.wire in PROVIDER_SPECS  # a trace of it replays on a wire the demo provider speaks
    assert provider.default_model and provider.label


def test_an_unknown_provider_names_the_known_ones():
    with pytest.raises(KeyError, match="anthropic"):
        spec("gemini")


def test_the_request_tables_are_views_of_the_specs():
    assert PROVIDERS == tuple(PROVIDER_SPECS)
    assert tuple(_WIRES) == PROVIDERS  # a wire for every provider, in the same order
    assert DEFAULT_MODELS == {n: s.default_model for n, s in PROVIDER_SPECS.items()}
    assert STRUCTURED_CHOICES == {n: s.structured for n, s in PROVIDER_SPECS.items()}
    assert MAX_TOKENS == {n: s.max_tokens for n, s in PROVIDER_SPECS.items() if s.max_tokens}
    assert LIVE_BASE_URLS == {n: s.base_url for n, s in PROVIDER_SPECS.items() if s.base_url}
    assert BASE_URL_VARIABLES == {n: s.base_url_variable for n, s in PROVIDER_SPECS.items() if s.base_url_variable}


def test_the_key_slots_follow_the_specs():
    for name, provider in PROVIDER_SPECS.items():
        if provider.key_variable is None:
            continue
        slot = key_slot(name, environ={})
        assert slot is not None and slot.env_vars == (provider.key_variable,), name
        assert provider.base_url is not None and slot.host in provider.base_url
        label, host, key_variable, url_variable = _OFFICIAL[slot.account]
        assert (host, key_variable, url_variable) == (slot.host, provider.key_variable, provider.base_url_variable)
        assert provider.label.startswith(label)
