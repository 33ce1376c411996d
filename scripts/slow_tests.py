"""Regenerate tests/slow_tests.txt: the tests of the fast loop that take a quarter second or more.

    python scripts/slow_tests.py [--threshold 0.3]

Runs `python -m pytest -m "not slow" --durations=0` (the README's fast loop), adds up each test's
setup, call and teardown, and writes the node ids at or over the threshold, slowest first.
tests/conftest.py marks those `slow`, so the fast loop stays under a minute on a 2-core machine;
the full suite (CI) still runs them. A test renamed since only goes back into the fast loop.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "slow_tests.txt"
LINE = re.compile(r"^([0-9.]+)s (?:call|setup|teardown)\s+(\S.*)$")


def durations(text: str) -> dict[str, float]:
    total: dict[str, float] = collections.defaultdict(float)
    for line in text.splitlines():
        match = LINE.match(line.strip())
        if match:
            total[match.group(2).strip()] += float(match.group(1))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=0.3, help="seconds (default 0.3)")
    parser.add_argument("--from-file", type=Path, help="read a saved --durations=0 output instead of running")
    args = parser.parse_args()
    if args.from_file:
        text = args.from_file.read_text(encoding="utf-8")
    else:
        command = [sys.executable, "-m", "pytest", "-m", "not slow", "--durations=0", "--ignore-slow-list"]
        text = subprocess.run(command, cwd=REPO, capture_output=True, text=True).stdout
    slow = sorted(((t, n) for n, t in durations(text).items() if t >= args.threshold), reverse=True)
    header = (
        "# Tests of the fast loop that take >= {:g} s (setup + call + teardown), measured by\n"
        "# scripts/slow_tests.py on a 2-core machine; tests/conftest.py marks them slow.\n"
    ).format(args.threshold)
    OUT.write_text(header + "".join(f"{name}\n" for _, name in slow), encoding="utf-8")
    print(f"{len(slow)} tests, {sum(t for t, _ in slow):.0f} s, written to {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
