"""A fault with a fraction (`max_tokens@0.25`) reaches the demo provider; a bad one is refused."""

from __future__ import annotations

import pytest

from livefill.session.run_status import Phase
from tests.gui.conftest import arun, wait_until
from tests.gui.test_app_process import run_app
from tests.gui.test_window import finished


def test_fault_with_a_fraction_is_kept_and_sent(make_window, qloop, demo_server):
    window = make_window(fault="max_tokens@0.25")
    assert window.fault == "max_tokens@0.25"
    assert "max_tokens@0.25" in window.faults_button.text()

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.FAILED
    entry = demo_server.requests()[-1]
    assert entry["fault"] == "max_tokens@0.25"
    assert entry["tokens_sent"] == round(0.25 * entry["tokens_total"])


def test_picking_a_fault_from_the_menu_drops_the_fraction(make_window):
    window = make_window(fault="disconnect@0.3")
    window.fault_actions["error"].trigger()
    assert window.fault == "error"


@pytest.mark.slow
def test_an_unknown_fault_or_fraction_is_refused_on_the_command_line(tmp_path):
    for bad, words in (("nonsense", "unknown fault"), ("disconnect@2", "between 0 and 1")):
        proc = run_app(tmp_path, "--fault", bad, "--screenshot", str(tmp_path / "x.png"), timeout=30)
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr


def _offered(window) -> list[str | None]:
    return [a.data() for a in window.toolbar.faults_menu.actions() if a.isVisible()]


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "openai-compatible", "ollama"])
def test_the_fault_menu_offers_only_the_faults_of_the_current_wire(make_window, provider):
    from livefill.session.settings import faults_for

    window = make_window(provider=provider)
    offered = _offered(window)
    assert offered[0] is None and offered[1:] == list(faults_for(provider))
    assert ("blank_line" in offered) == (provider == "ollama")
    assert "disconnect" in offered and "http_429" in offered


def test_switching_the_wire_re_filters_the_menu_and_drops_a_fault_it_cannot_carry(make_window):
    window = make_window(provider="ollama")
    window.fault_actions["blank_line"].trigger()
    assert window.fault == "blank_line"
    combo = window.provider_combo
    combo.setCurrentIndex(combo.findData("anthropic"))  # as a person picks it in the toolbar
    assert window.session.settings.provider == "anthropic"
    assert "blank_line" not in _offered(window)
    assert window.fault is None and "none" in window.faults_button.text()
    assert "blank_line" in window.statusBar().currentMessage() and "no fault" in window.statusBar().currentMessage()
    window.fault_actions["stall"].trigger()
    combo.setCurrentIndex(combo.findData("ollama"))
    assert window.fault == "stall"  # a fault the new wire carries too is kept
    assert "blank_line" in _offered(window)
