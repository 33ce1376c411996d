"""A Start pressed while the app still loads its providers is taken at once (issue 26 item 5, issue
28 "Launch"): Start greys, Stop can be pressed, the main status line says "starting…"; Stop drops
it and leaves the form as it was; once the warm-up is done the run begins. The warm-up is held
by a gate (`Warmup(gate.wait)`), as the real one holds for 5-7 s after launch on a 2-core machine."""

from __future__ import annotations

import asyncio
import threading

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from livefill.gui.warmup import Warmup
from livefill.wire.keys import KeyStore
from tests.gui.conftest import arun, wait_until
from tests.wire.test_keys import MemoryKeyring


def _taken(window) -> bool:
    """What a Start that was taken looks like, now (no event processed in between)."""
    return (not window.start_button.isEnabled() and window.stop_button.isEnabled()
            and window.status_line.text() == "⇄ starting…" and window.status_line.property("phase") == "connecting")


def test_start_clicked_during_the_warmup_is_taken_at_once_and_stop_drops_it(make_window, qloop, qtbot):
    window = make_window(scenario="weather")
    arun(qloop, _run_once(window))  # values on the form, to see they stay
    committed, states, line = dict(window.form.committed), window.field_states(), window.status_line.text()
    assert committed and line.startswith("✓ committed")
    gate = threading.Event()

    async def scenario() -> None:
        held = window.warmup = Warmup(gate.wait).start(asyncio.get_running_loop())
        qtbot.mouseClick(window.start_button, Qt.MouseButton.LeftButton)
        assert _taken(window), (window.start_button.isEnabled(), window.stop_button.isEnabled(), window.status_line.text())
        assert window.statusBar().currentMessage() == "starting as soon as the demo provider is up…"
        assert not window.scenario_combo.isEnabled()  # the run's settings are taken with it
        await asyncio.sleep(0.05)
        assert _taken(window) and not window.active  # still waiting: nothing was sent
        qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
        assert window.start_button.isEnabled() and not window.stop_button.isEnabled()
        assert window.status_line.text() == line and window.statusBar().currentMessage() == ""
        gate.set()
        await held.wait()
        await asyncio.sleep(0.1)

    arun(qloop, scenario())
    assert not window.active and window.controller.last_status.phase.value == "committed"  # no run began
    assert window.form.committed == committed and window.field_states() == states  # the form untouched


def test_ctrl_return_during_the_warmup_is_taken_and_the_run_begins_once_it_is_done(make_window, qloop, qtbot):
    window = make_window(scenario="weather")
    window.activateWindow()
    qtbot.waitActive(window)
    gate = threading.Event()
    began: list[bool] = []
    window.activeChanged.connect(lambda active: began.append(active) if active else None)

    async def scenario() -> None:
        held = window.warmup = Warmup(gate.wait).start(asyncio.get_running_loop())
        QTest.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        assert _taken(window)
        QTest.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # again: still one Start
        await asyncio.sleep(0.05)
        assert _taken(window) and window.controller.last_status is None
        gate.set()
        await held.wait()
        await wait_until(lambda: bool(began))
        assert not window.start_button.isEnabled() and window.stop_button.isEnabled()  # now the run's
        await window.wait_runs()

    arun(qloop, scenario())
    assert began == [True]
    assert window.controller.last_status.phase.value == "committed"
    assert window.status_line.text().startswith("✓ committed")
    assert window.start_button.isEnabled() and not window.stop_button.isEnabled()
    assert window.statusBar().currentMessage() != "starting as soon as the demo provider is up…"


def test_esc_drops_a_start_taken_during_the_warmup_and_shows_the_window_as_it_was(make_window, qloop):
    window = make_window(scenario="weather")
    gate = threading.Event()

    async def scenario() -> None:
        held = window.warmup = Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start_button.click()
        assert _taken(window)
        QTest.keyClick(window, Qt.Key.Key_Escape)
        assert window.start_button.isEnabled() and not window.stop_button.isEnabled()
        assert window.status_line.text() == "○ ready — press Start (Ctrl+Return)" and window.scenario_combo.isEnabled()
        gate.set()
        await held.wait()
        await asyncio.sleep(0.1)

    arun(qloop, scenario())
    assert not window.active and window.controller.last_status is None


def test_a_start_taken_that_cannot_begin_says_why_and_start_is_pressable_again(make_window, qloop, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    window = make_window(scenario="weather", live=True, keys=KeyStore(backend=MemoryKeyring()))
    said: list[str] = []
    monkeypatch.setattr(window, "say", said.append)
    gate = threading.Event()

    async def scenario() -> None:
        held = window.warmup = Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start_button.click()
        assert _taken(window)
        gate.set()
        await held.wait()
        await wait_until(lambda: bool(said))

    arun(qloop, scenario())
    assert not window.active and window.start_button.isEnabled() and not window.stop_button.isEnabled()
    assert window.status_line.text() == "○ ready — press Start (Ctrl+Return)"  # no longer "starting…"


def test_a_start_pressed_before_the_app_has_started_its_warmup_waits_for_it(make_window, qloop):
    window = make_window(scenario="weather")
    gate = threading.Event()
    planned = window.warmup = Warmup(gate.wait, planned=True)  # the app's: started once the window shows
    assert not planned.ready
    window.start_button.click()
    assert _taken(window) and not window.active

    async def scenario() -> None:
        planned.start(asyncio.get_running_loop())
        gate.set()
        await planned.wait()
        await wait_until(lambda: window.controller.last_status is not None)
        await window.wait_runs()

    arun(qloop, scenario())
    assert window.controller.last_status.phase.value == "committed"


async def _run_once(window) -> None:
    window.start_button.click()
    await wait_until(lambda: window.controller.last_status is not None)
    await window.wait_runs()


def test_in_compare_view_a_start_taken_during_the_warmup_starts_every_lane_once_it_is_done(make_window, qloop):
    window = make_window(scenario="weather", compare=["naive", "partial"])
    gate = threading.Event()

    async def scenario() -> None:
        held = window.warmup = Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start_button.click()
        assert _taken(window) and not window.compare_action.isEnabled()
        gate.set()
        await held.wait()
        await wait_until(lambda: all(status is not None for status in window.last_statuses()))
        await window.wait_runs()

    arun(qloop, scenario())
    assert [s.phase.value for s in window.last_statuses()] == ["committed", "committed"]
    assert window.status_line.text().startswith("compare · 2 lanes") and window.start_button.isEnabled()
