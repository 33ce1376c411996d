"""Time for the hostile model answers of issue 27, items 1 and 5, side by side with another checkout.

Each case runs in a child process (`python -c`, with the checkout first on sys.path) and is
killed after `--limit` seconds (printed as "> N s"), so the cubic cases of an old checkout end:

- partial mode (reader + form model) on `{"city": [[[...]]]}`, `city` a string field, at depths
  1,000 / 2,000 / 5,000;
- the same into a free-form field (`Any`);
- the relay's Settler on the string-field answer at depth 3,000 (the issue: 14 s on the loop).

Usage: python tests/benchmarks/bench_hostile_inputs.py [--base PATH_OF_OTHER_CHECKOUT] [--runs 3]
Prints the load average at the start and end; quote ranges, never a best run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CASE = r"""
import sys, time
from typing import Any
from pydantic import BaseModel
from livefill.extraction.form import FormModel
from livefill.extraction.modes import Mode
from livefill.extraction.readers import READERS, ReaderOptions
from livefill.relay.settler import Settler
from livefill.wire.events import ArgsDelta

class Place(BaseModel):
    city: str = ""
    notes: Any = None

what, key, depth = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = '{"%s": ' % key + "[" * depth + "]" * depth + "}"
deltas = [ArgsDelta(text=text[i : i + 5]) for i in range(0, len(text), 5)]
start = time.perf_counter()
try:
    if what == "partial":
        reader = READERS[Mode.PARTIAL](ReaderOptions(), Place)
        form = FormModel(Place)
        form.begin_run()
        for delta in deltas:
            form.apply_many(reader.feed(delta))
    else:
        settler = Settler(Place)
        for delta in deltas:
            settler.feed(delta)
            if settler.done:
                break
    ended = "no error"
except Exception as exc:
    ended = type(exc).__name__
print(f"{time.perf_counter() - start:.3f} {ended}")
"""

CASES = [
    ("partial", "city", 1000), ("partial", "city", 2000), ("partial", "city", 5000),
    ("partial", "notes", 1000), ("partial", "notes", 5000),
    ("settler", "city", 3000),
]


def run_case(checkout: Path, case: tuple[str, str, int], limit: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-c", _CASE, case[0], case[1], str(case[2])]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, env=env, cwd=checkout)
    except subprocess.TimeoutExpired:
        return f"> {limit:.0f} s"
    if done.returncode:
        return "crashed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:60]
    seconds, ended = done.stdout.split(maxsplit=1)
    return f"{float(seconds) * 1000:.1f} ms ({ended.strip()})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout to run side by side (e.g. a git worktree)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before a case is killed")
    args = parser.parse_args()
    checkouts = [("this", ROOT)] + ([("base", args.base.resolve())] if args.base else [])
    print(f"load average at start: {os.getloadavg()}")
    for case in CASES:
        for run in range(args.runs):
            order = checkouts if run % 2 == 0 else list(reversed(checkouts))  # alternate who goes first
            for name, checkout in order:
                print(f"{case[0]:8} {case[1]:6} depth {case[2]:>5}  {name:5} run {run + 1}: "
                      f"{run_case(checkout, case, args.limit)}", flush=True)
    print(f"load average at end: {os.getloadavg()}  ({time.strftime('%H:%M:%S')})")


if __name__ == "__main__":
    main()
