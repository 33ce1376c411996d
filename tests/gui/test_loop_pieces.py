"""A test runs the qasync loop in pieces (`arun` after `arun`); work left pending when one piece
ends runs in qasync's last pass over Qt's events, and must find the loop running there (see
tests.gui.conftest.TestLoop), as it always does in the app."""

from __future__ import annotations

import asyncio

from tests.gui.conftest import arun


def test_work_left_pending_when_a_piece_ends_finds_the_running_loop(qloop):
    seen: list[object] = []

    def later() -> None:
        try:
            seen.append(asyncio.get_running_loop())
        except RuntimeError as exc:
            seen.append(exc)

    async def piece() -> None:
        # callbacks that queue callbacks: the deeper ones come due after the piece's end has
        # asked the loop to stop, and run in qasync's last pass
        for depth in range(1, 6):
            qloop.call_soon(*[qloop.call_soon] * (depth - 1), later)

    arun(qloop, piece())
    arun(qloop, asyncio.sleep(0.01))
    assert len(seen) == 5
    assert all(s is qloop for s in seen), [s for s in seen if s is not qloop][:1]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # between pieces no loop runs
    else:
        raise AssertionError("a running loop was left set after run_until_complete")
