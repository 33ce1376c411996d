"""Regenerate tests/reliability/fault_matrix.md: run every cell of the fault matrix (every demo
fault x wire x mode, tests/reliability/matrix.py) against an embedded demo server and write the
table. Exits 1 when a cell is not fully restored (the file is still written, naming what broke).

    python scripts/fault_matrix.py [--out PATH]

The tests run the same cells (tests/reliability/test_fault_matrix.py) and check that the committed
file is the all-✓ table, but never write it: a test run's copy goes to its temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.reliability.matrix, when run as `python scripts/fault_matrix.py`
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from livefill.demo.knobs import DemoDefaults  # noqa: E402
from livefill.embedded.server import EmbeddedServer  # noqa: E402
from tests.reliability.matrix import COMMITTED, all_cells, cell_ok, render, report, run_cell  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=COMMITTED, help=f"where to write (default {COMMITTED})")
    args = parser.parse_args(argv)
    server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0))
    server.start()
    results = {}
    try:
        for fault, wire, mode in all_cells():
            cell = asyncio.run(run_cell(server.url, server.relay_token, fault, wire, mode))
            results[(fault, wire, mode)] = cell.row
            print(f"{fault:>14} {wire:<17} {mode:<9} {'✓' if cell_ok(cell.row) else '✗ ' + cell.row['text']}")
    finally:
        server.stop()
    args.out.write_text(report(results), encoding="utf-8")
    print(render(results).splitlines()[-1])
    print(f"written to {args.out}")
    return 0 if all(cell_ok(row) for row in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
