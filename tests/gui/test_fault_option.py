"""A fault with a fraction (`max_tokens@0.25`) reaches the demo provider; a bad one is refused."""

from __future__ import annotations

import pytest

from core.run import Phase
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
