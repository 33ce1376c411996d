"""The wall-clock figures the tests report instead of asserting (the `timing` fixture of
tests/conftest.py): how long a client took to give up on a hostile relay, a server to stop, a
replay to run at 2x, ... each beside the budget it should stay within on an idle machine.

Run:  python tests/benchmarks/bench_timings.py [PYTEST ARGS...]   (e.g. tests/reliability)

It runs those tests in one process (`-n 0`, slow ones included) with `--timings-out`, then prints
one line per figure and the load average. A figure over its budget is flagged, not failed: the
tests themselves assert what happened, never how long it took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="livefill-timings-") as folder:
        out = Path(folder) / "timings.jsonl"
        command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "--timings-out", str(out), *argv]
        env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
        before = os.getloadavg()
        status = subprocess.run(command, cwd=REPO, env=env).returncode
        after = os.getloadavg()
        figures = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    print()
    print(f"{'seconds':>8} {'budget':>7}  what (test)")
    over = 0
    for figure in sorted(figures, key=lambda f: f["test"]):
        flag = "  OVER" if figure["seconds"] >= figure["budget"] else ""
        over += bool(flag)
        print(f"{figure['seconds']:8.3f} {figure['budget']:7.3f}  {figure['what']} ({figure['test']}){flag}")
    print(f"{len(figures)} figures, {over} over budget; load average {before[0]:.2f} before, {after[0]:.2f} after "
          f"({os.cpu_count()} cores); pytest exit status {status}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
