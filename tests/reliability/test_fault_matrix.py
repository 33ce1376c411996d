"""The fault matrix: every demo fault x every wire x every mode (naive excepted: it keeps what it
showed, wrong on purpose) against the real demo provider (and embedded relay) on loopback.

Each cell checks: no commit; the form restored exactly (committed values and field states, with
the user's own values loaded before Start); a reason a person can read (one non-empty line, no
traceback, no "internal error"); no asyncio task left behind; every request of the run ended at
the demo provider (its request log shows none still streaming); nothing reached sys.excepthook,
threading.excepthook or the loop's exception handler. The results are printed as a table at the
end of the session (tests/reliability/conftest.py) and written to tests/reliability/fault_matrix.md.

A fault runs only on the wires `livefill.demo.protocol.FAULT_SCOPES` gives it (`blank_line`: Ollama;
the demo provider refuses it elsewhere with a 400): its other cells are not in the matrix. The
full matrix is `slow`; FAST keeps one cell per fault (cycling through the wires and modes) in the
fast loop.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest

from livefill.embedded.client import demo_requests
from livefill.demo.protocol import DemoKnobs, FaultName, fault_applies
from livefill.extraction.form import FormModel
from livefill.session.run import Mode, Phase, Run, RunConfig
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model
from tests.reliability.matrix import MODES, RESULTS, WIRES, full_size
FAULTS = [f.value for f in FaultName]
OPEN = {"pending", "streaming"}


def cells():
    out = []
    for i, fault in enumerate(FAULTS):
        wires = [w for w in WIRES if fault_applies(fault, w)]  # blank_line: Ollama only (FAULT_SCOPES)
        for w, wire in enumerate(wires):
            for m, mode in enumerate(MODES):
                scoped = len(wires) < len(WIRES)
                fast = (scoped and w == 0 and m == i % 4) or (not scoped and w == i % 4 and m == (i // 4) % 4)
                marks = [] if fast else [pytest.mark.slow]
                out.append(pytest.param(fault, wire, mode, marks=marks, id=f"{fault}-{wire}-{mode}"))
    assert len(out) == full_size()
    return out


def user_form() -> FormModel:
    form = FormModel(schema_model("invoice"))
    form.set_value("/customer_name", "Typed by the user")
    form.set_value("/amount", 42.5)
    form.set_value("/notes", "the user's own note")
    return form


def readable(reason: str) -> str:
    """'' when a person can read `reason`, else what is wrong with it."""
    if not reason.strip():
        return "empty"
    if "\n" in reason or "\r" in reason:
        return "more than one line"
    if "Traceback" in reason:
        return "a traceback"
    if "internal error" in reason.lower():
        return "an internal error"
    return ""


async def ended_at_the_provider(url: str, run_id: str, wait: float = 5.0) -> tuple[int, int]:
    """(entries of this run, of which still open) once all have ended or `wait` s passed."""
    deadline = time.monotonic() + wait
    while True:
        mine = [e for e in await demo_requests(url) if e.get("tag") == run_id]
        still = [e for e in mine if e.get("outcome") in OPEN]
        if (mine and not still) or time.monotonic() >= deadline:
            return len(mine), len(still)
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(("fault", "wire", "mode"), cells())
async def test_fault_cell(demo_server, monkeypatch, fault, wire, mode):
    hooked: list[str] = []
    monkeypatch.setattr(sys, "excepthook", lambda *a: hooked.append(f"sys: {a[1]!r}"))
    monkeypatch.setattr(threading, "excepthook", lambda args: hooked.append(f"thread: {args.exc_value!r}"))
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: hooked.append(f"loop: {context.get('message')}"))

    form = user_form()
    before, states = form.committed, form.states()
    tasks_before = set(asyncio.all_tasks())
    sc = get_scenario("invoice")
    idle = 0.5 if fault.startswith("stall") else 20.0
    cfg = RunConfig(
        mode=Mode(mode),
        provider=wire,
        base_url=demo_server.url,
        schema_name=sc.schema_name,
        document=sc.document,
        demo=DemoKnobs(scenario="invoice", speed=0, fault=fault),
        relay_token=demo_server.relay_token,
        idle_timeout=idle,
        label="matrix",
    )
    try:
        status = await asyncio.wait_for(Run(form, cfg).run(), 30)
        left = set()
        for _ in range(100):
            left = {t for t in asyncio.all_tasks() - tasks_before if t is not asyncio.current_task() and not t.done()}
            if not left:
                break
            await asyncio.sleep(0.01)
        entries, still_open = await ended_at_the_provider(demo_server.url, status.run_id)
    finally:
        loop.set_exception_handler(None)

    row = {
        "committed": status.phase is Phase.COMMITTED,
        "failed": status.phase is Phase.FAILED,
        "values": form.committed == before and form.document == before,
        "states": form.states() == states,
        "reason": readable(status.reason),
        "tasks": len(left),
        "open": still_open,
        "entries": entries,
        "hooked": len(hooked),
        "code": status.error_code or "",
        "text": status.reason,
    }
    RESULTS[(fault, wire, mode)] = row
    assert status.phase is Phase.FAILED, f"{status.phase}: {status.reason}"
    assert row["values"], (form.committed, before)
    assert not row["reason"], f"reason is {row['reason']}: {status.reason!r}"
    assert not left, left
    assert entries >= 1 and still_open == 0, (entries, still_open)
    assert not hooked, hooked
    assert row["states"], (form.states(), states)
