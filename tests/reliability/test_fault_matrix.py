"""The fault matrix: every demo fault x every wire x every mode (naive excepted: it keeps what it
showed, wrong on purpose) against the real demo provider (and embedded relay) on loopback.

Each cell checks: no commit; the form restored exactly (committed values and field states, with
the user's own values loaded before Start); a reason a person can read (one non-empty line, no
traceback, no "internal error"); no asyncio task left behind; every request of the run ended at
the demo provider (its request log shows none still streaming); nothing reached sys.excepthook,
threading.excepthook or the loop's exception handler. The results are printed as a table at the
end of the session and written to the run's temporary folder (tests/reliability/conftest.py); the
committed tests/reliability/fault_matrix.md is written by `python scripts/fault_matrix.py`.

A fault runs only on the wires `livefill.demo.protocol.FAULT_SCOPES` gives it (`blank_line`: Ollama;
the demo provider refuses it elsewhere with a 400): its other cells are not in the matrix. The
full matrix is `slow`; FAST keeps one cell per fault (cycling through the wires and modes) in the
fast loop.
"""

from __future__ import annotations

import pytest

from livefill.demo.protocol import fault_applies
from livefill.session.run_status import Phase
from tests.reliability.matrix import (
    COMMITTED,
    FAULTS,
    MODES,
    PASSING_ROW,
    RESULTS,
    WIRES,
    all_cells,
    full_size,
    report,
    run_cell,
)


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


@pytest.mark.parametrize(("fault", "wire", "mode"), cells())
async def test_fault_cell(demo_server, fault, wire, mode):
    cell = await run_cell(demo_server.url, demo_server.relay_token, fault, wire, mode)
    row, status = cell.row, cell.status
    RESULTS[(fault, wire, mode)] = row
    assert status.phase is Phase.FAILED, f"{status.phase}: {status.reason}"
    assert row["values"], (cell.form.committed, cell.before)
    assert not row["reason"], f"reason is {row['reason']}: {status.reason!r}"
    assert not cell.left, cell.left
    assert row["entries"] >= 1 and row["open"] == 0, (row["entries"], row["open"])
    assert not cell.hooked, cell.hooked
    assert row["states"], (cell.form.states(), cell.states)


def test_the_committed_report_is_the_whole_matrix_fully_restored():
    """tests/reliability/fault_matrix.md is what scripts/fault_matrix.py writes when every cell
    passes (as the cells above assert): a fault, wire or mode added without regenerating it fails
    here. Read only: no test writes into the checkout."""
    expected = report({cell: PASSING_ROW for cell in all_cells()})
    assert COMMITTED.read_text(encoding="utf-8") == expected, "run: python scripts/fault_matrix.py"
