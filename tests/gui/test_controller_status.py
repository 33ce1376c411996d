"""gui/controller.py: a lane's status reaches the widgets coalesced — a new phase within a frame,
counts and elapsed time at most every STEADY_MS while the phase stays, the final status at once."""

from __future__ import annotations

import time

from livefill.extraction.modes import Mode
from livefill.session.run_status import Phase, RunStatus
from livefill.session.lane import LaneFinished, LaneStatus
from livefill.gui.controller import RunController


class FakeLane:
    status = None

    def subscribe(self, observer):  # noqa: ANN001, ANN201
        self.observer = observer
        return lambda: None


def status(phase: Phase, deltas: int = 0, run_id: str = "r1") -> RunStatus:
    return RunStatus(run_id=run_id, mode=Mode.PARTIAL, phase=phase, deltas_received=deltas)


def test_a_new_phase_is_told_in_a_frame_and_counts_ten_times_a_second(qtbot, timing):
    lane = FakeLane()
    controller = RunController(lane, frame_ms=16, steady_ms=100)  # type: ignore[arg-type]
    seen: list[tuple[float, RunStatus]] = []
    controller.statusChanged.connect(lambda s: seen.append((time.monotonic(), s)))
    finished: list[RunStatus] = []
    controller.finished.connect(finished.append)

    t0 = time.monotonic()
    lane.observer(LaneStatus("single", status(Phase.CONNECTING)))
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=1000)
    assert seen[-1][1].phase is Phase.CONNECTING
    timing.record("a new phase told (a 16 ms frame)", seen[-1][0] - t0, budget=0.1)

    streaming_at = time.monotonic()
    lane.observer(LaneStatus("single", status(Phase.STREAMING, 1)))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=1000)
    timing.record("a phase change told (no steady interval of 100 ms)", seen[-1][0] - streaming_at, budget=0.1)

    began = time.monotonic()
    for deltas in range(2, 62):  # 60 updates in ~0.6 s (longer on a loaded machine), the phase steady
        lane.observer(LaneStatus("single", status(Phase.STREAMING, deltas)))
        qtbot.wait(10)
    spent = time.monotonic() - began
    steady = [s for _, s in seen[2:]]
    # at most one per steady interval (100 ms) of the time that passed, however long: not one per update
    assert 3 <= len(steady) <= spent / 0.1 + 2 and len(steady) < 60, (len(steady), spent)
    qtbot.waitUntil(lambda: seen[-1][1].deltas_received == 61, timeout=1000)  # the latest is told

    lane.observer(LaneStatus("single", status(Phase.STREAMING, 62)))
    lane.observer(LaneFinished("single", status(Phase.COMMITTED, 62)))
    assert finished and finished[-1].phase is Phase.COMMITTED  # at once, not a frame later
    assert seen[-1][1].phase is Phase.COMMITTED


def test_a_new_run_is_told_at_once_even_in_the_same_phase(qtbot, timing):
    lane = FakeLane()
    controller = RunController(lane, frame_ms=16, steady_ms=2000)  # type: ignore[arg-type]
    seen: list[RunStatus] = []
    controller.statusChanged.connect(seen.append)
    lane.observer(LaneStatus("single", status(Phase.STREAMING, 5, run_id="a")))
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=1000)
    started = time.monotonic()
    lane.observer(LaneStatus("single", status(Phase.STREAMING, 1, run_id="b")))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=1000)
    assert seen[-1].run_id == "b"  # within waitUntil's 1 s, half the steady interval (2 s)
    timing.record("a new run in the same phase told", time.monotonic() - started, budget=0.5)
