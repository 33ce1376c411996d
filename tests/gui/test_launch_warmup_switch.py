"""While the warm-up imports the SDKs, the GIL changes hands every 0.1 ms, not every 1 ms.

Each Python call the GUI thread makes while the warm-up's thread runs (a slot, a paint, a Qt call
from Python that lets the GIL go) first waits for that thread to hand the GIL over, up to the
switch interval: a Start pressed at launch and its repaint stalled the window 95-133 ms at 1 ms and
73-94 ms at 0.1 ms. Once the warm-up is done the interval is the app's own again, before a Start
kept meanwhile begins its run (runs share the GIL with the demo server's thread as always).
"""

from __future__ import annotations

import sys
import threading

import pytest

from livefill.gui.launch import WARMUP_SWITCH_INTERVAL, start_warmup
from livefill.gui.qt_app import SWITCH_INTERVAL
from livefill.gui.warmup import Warmup
from tests.gui.conftest import arun, wait_until


class _Collector:
    """The GUI thread's collector as start_warmup uses it (no gc.freeze in the test process)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def hold(self) -> None:
        self.calls.append("hold")

    def release(self, *, freeze: bool = False) -> None:
        self.calls.append(f"release freeze={freeze}")


@pytest.fixture
def switch_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)  # as make_application sets it
    yield
    sys.setswitchinterval(before)


def test_the_gil_changes_hands_every_tenth_of_a_millisecond_while_the_warmup_runs(make_window, qloop, switch_interval):
    window = make_window(scenario="weather")
    gate = threading.Event()
    seen: list[float] = []
    warmup = window.warmup = Warmup(lambda: (seen.append(sys.getswitchinterval()), gate.wait()), planned=True)
    collector = _Collector()
    began: list[float] = []
    window.activeChanged.connect(lambda active: began.append(sys.getswitchinterval()) if active else None)

    async def scenario() -> None:
        start_warmup(warmup, window, collector)
        assert sys.getswitchinterval() == pytest.approx(WARMUP_SWITCH_INTERVAL)
        window.start()  # taken, kept until the warm-up is done
        assert window.pending_start.waiting and not began
        gate.set()
        await warmup.wait()
        assert seen == [pytest.approx(WARMUP_SWITCH_INTERVAL)]  # what the warm-up's thread ran under
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        await wait_until(lambda: bool(began))

    arun(qloop, scenario())
    assert began == [pytest.approx(SWITCH_INTERVAL)]  # the kept Start's run begins under the app's own
    assert collector.calls == ["hold", "release freeze=True"]
    arun(qloop, window.wait_runs())
    status = window.controller.last_status
    assert status.phase.value == "committed", status.reason
