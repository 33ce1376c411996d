"""Write docs/figures.md: the benchmarks in tests/benchmarks, run side by side on a baseline commit
and on the current checkout.

    python scripts/figures.py --baseline dbf4e8a                      # bench_prefix.py, 3 runs each
    python scripts/figures.py --baseline dbf4e8a --runs 5 bench_prefix.py bench_cancel.py
    python scripts/figures.py --baseline de2c6fd "bench_ui.py --reads gui,worker @baseline --reads gui"

The baseline is checked out into a temporary `git worktree` and each of its runs starts with that
tree as the working directory and first on PYTHONPATH (a baseline before commit 8251634 has the
top-level packages core/, gui/, widgets/ instead of livefill/). Runs alternate between the two
trees (baseline first in odd rounds, current first in even ones) so that a machine whose load
drifts slows both alike. Each figure a benchmark prints is shown as the range (min–max) over the
runs, baseline beside current; the machine (CPUs, model, Python) and the load average during the
runs are named once at the top. A benchmark's options after `@baseline` are the baseline's
instead (an option its older benchmark lacks, a mode it cannot run): each output line is matched to
the other side's by its words, so a row only one side printed shows "—" on the other. The page is
overwritten whole: edit this script, not the page.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHES = REPO / "tests" / "benchmarks"
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")

#: Named figures for the benchmarks whose output this script knows line by line: (a regular
#: expression searched in the output, the names of its groups' figures, unit included). A benchmark
#: not listed here gets a table of its output lines, each number a range.
KNOWN: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "bench_prefix.py": [
        (r"~100 KB: jiter partial re-parse\s+(\S+) ms\s+ours\s+\S+ ms\s+ratio\s+(\S+)x",
         ("(a) ~100 KB, jiter partial re-parse per delta, ms",
          "(a) ~100 KB, ours faster than jiter by, × (target ≥ 30×)")),
        (r"~10 KB : partial_json_parser\s+(\S+) ms\s+ours\s+(\S+) ms\s+ratio\s+(\S+)x",
         ("(a) ~10 KB, partial_json_parser re-parse per delta, ms", "(a) ~10 KB, ours incremental, ms",
          "(a) ~10 KB, ours faster than partial_json_parser by, ×")),
        (r"\(b\) ours incremental (\S+) ms vs ours one-shot (\S+) ms\s+ratio (\S+)x",
         ("(b) incremental, 4-character deltas, ms", "(b) one-shot parse, ms",
          "(b) incremental / one-shot, 4-character deltas, × (target ≤ 2.5×)")),
        (r"8-char deltas (\S+) ms \((\S+)x\), 16-char deltas (\S+) ms \((\S+)x, .*?returning one Change per delta: "
         r"(\S+) ms \((\S+)x\)",
         ("(b) incremental, 8-character deltas, ms", "(b) incremental / one-shot, 8-character deltas, ×",
          "(b) incremental, 16-character deltas, ms", "(b) incremental / one-shot, 16-character deltas, × (target ≤ 2×)",
          "(b) a do-nothing feed(), 4-character deltas, ms", "(b) do-nothing feed() / one-shot, ×")),
        (r"\(c\) ours one-shot \S+ ms vs json\.loads (\S+) ms\s+ratio (\S+)x",
         ("(c) json.loads, ms", "(c) one-shot / json.loads, × (aim ≤ 15×)")),
        (r"\(d\) p99 of one feed\(\): ~1 MB (\S+) us vs ~10 KB (\S+) us\s+ratio (\S+)x",
         ("(d) p99 of one feed() on ~1 MB, µs", "(d) p99 of one feed() on ~10 KB, µs",
          "(d) ~1 MB / ~10 KB, × (target ≤ 3×)")),
    ],
}


@dataclass
class Tree:
    """One side of the comparison: where its source is and what its runs printed."""

    label: str
    root: Path
    baseline: bool = False  # runs a benchmark with its `@baseline` options, if it has any
    outputs: dict[str, list[str]] = field(default_factory=dict)  # bench -> stdout of each run
    failures: dict[str, list[str]] = field(default_factory=dict)  # bench -> why a run failed


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def _range(texts: list[str]) -> str:
    """'min–max' of printed numbers, each as the benchmark printed it."""
    if not texts:
        return "—"
    low = min(texts, key=_value)
    high = max(texts, key=_value)
    return low if _value(low) == _value(high) else f"{low}–{high}"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> float:
    return os.getloadavg()[0]


#: A `sitecustomize` for each run: an editable install (`pip install -e`) maps livefill.gui,
#: livefill.widgets and livefill.assets (package-dir in pyproject.toml) to the checkout it was made
#: from, whatever is first on PYTHONPATH, so a baseline's GUI benchmark would run the current Qt code.
#: It points those mappings at the run's tree (FIGURES_TREE).
_SITE = """import os, sys
_tree = os.environ.get("FIGURES_TREE")
for _name, _module in list(sys.modules.items()):
    _mapping = getattr(_module, "MAPPING", None) if _name.startswith("__editable__") else None
    if _tree and isinstance(_mapping, dict) and "livefill" in _mapping:
        _root = os.path.dirname(_mapping["livefill"])
        for _key, _path in list(_mapping.items()):
            if _path.startswith(_root + os.sep):
                _mapping[_key] = os.path.join(_tree, os.path.relpath(_path, _root))
"""


def _site_dir() -> Path:
    site = Path(tempfile.gettempdir()) / f"livefill-figures-site-{os.getuid()}"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITE, encoding="utf-8")
    return site


BASELINE_OPTIONS = "@baseline"


def bench_options(bench: str, baseline: bool) -> list[str]:
    """The options of `bench` ("bench_ui.py --reads gui,worker @baseline --reads gui") for one side."""
    file_and_options, marked, older = bench.partition(BASELINE_OPTIONS)
    if baseline and marked:
        return older.split()
    return file_and_options.split()[1:]


def run_bench(tree: Tree, bench: str, timeout: float) -> None:
    name = bench.split()[0]  # "bench_ui.py --modes partial": the file, then its options
    options = bench_options(bench, tree.baseline)
    script = tree.root / "tests" / "benchmarks" / name
    if not script.exists():
        tree.failures.setdefault(bench, []).append(f"{bench} does not exist in this tree")
        return
    path = [str(_site_dir()), str(tree.root), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path).rstrip(os.pathsep), FIGURES_TREE=str(tree.root))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    print(f"  {tree.label}: {bench} …", file=sys.stderr, flush=True)
    try:
        done = subprocess.run([sys.executable, str(script), *options], cwd=tree.root, env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        tree.failures.setdefault(bench, []).append(f"timed out after {timeout:g} s")
        return
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        tree.failures.setdefault(bench, []).append(f"exit {done.returncode}: {last}")
        return
    tree.outputs.setdefault(bench, []).append(done.stdout)


def _known_rows(bench: str, sides: list[Tree]) -> list[list[str]]:
    rows = []
    for pattern, names in KNOWN[bench]:
        values: list[list[list[str]]] = []  # side -> figure -> printed values
        for side in sides:
            per_figure: list[list[str]] = [[] for _ in names]
            for out in side.outputs.get(bench, []):
                found = re.search(pattern, out)
                if found:
                    for i, text in enumerate(found.groups()):
                        per_figure[i].append(text)
            values.append(per_figure)
        for i, name in enumerate(names):
            base, current = values[0][i], values[1][i]
            change = "—"
            if base and current:
                change = f"{statistics.median(map(_value, current)) / statistics.median(map(_value, base)):.2f}"
            rows.append([name, _range(base), _range(current), change])
    return rows


def _template(line: str) -> tuple[str, list[str]]:
    return NUMBER.sub("…", " ".join(line.split())), NUMBER.findall(line)


def _generic_rows(bench: str, sides: list[Tree]) -> list[list[str]]:
    """One row per output line shape: its text with the numbers cut out, and each number's range."""
    order: list[str] = []
    found: list[dict[str, list[list[str]]]] = []  # side -> template -> per number -> values
    for side in sides:
        table: dict[str, list[list[str]]] = {}
        for out in side.outputs.get(bench, []):
            for line in out.splitlines():
                shape, numbers = _template(line)
                if not numbers:
                    continue
                if shape not in order:
                    order.append(shape)
                slots = table.setdefault(shape, [[] for _ in numbers])
                for i, text in enumerate(numbers[: len(slots)]):
                    slots[i].append(text)
        found.append(table)
    rows = []
    for shape in order:
        cells = [" / ".join(_range(slot) for slot in table[shape]) if shape in table else "—" for table in found]
        rows.append([f"`{shape}`", *cells, ""])
    return rows


def render(benches: list[str], sides: list[Tree], runs: int, loads: list[float], dirty: bool) -> str:
    base, current = sides
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    state = " plus the working tree's uncommitted changes" if dirty else ""
    lines = [
        "# Figures",
        "",
        "<!-- Generated by scripts/figures.py; do not edit by hand: run the script again. -->",
        "",
        f"Produced by `python scripts/figures.py --baseline {base.label} --runs {runs} {' '.join(benches)}` "
        f"on {started}. Each benchmark (`tests/benchmarks/`) ran {runs} times on the baseline commit "
        f"`{base.label}` and {runs} times on the current checkout (`{current.label}`{state}), alternating "
        "the two; each figure is the range, min–max, over those runs. \"current / baseline\" is the ratio "
        "of the medians (below 1: the current code is faster or the figure smaller).",
        "",
        f"**Machine:** {os.cpu_count()} CPUs, {_cpu_model()}, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()} ({platform.python_implementation()}). "
        f"**Load average** (1 min, sampled before each run): {min(loads):.2f}–{max(loads):.2f}. "
        "The machine is shared, so only figures taken side by side in one run compare anything.",
        "",
        "Figures from earlier sessions, taken by hand and not produced by this script, are kept as history "
        "in [figures-history.md](figures-history.md).",
    ]
    for bench in benches:
        lines += ["", f"## {bench}", ""]
        source = BENCHES / bench.split()[0]
        if source.exists():
            doc = source.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
            lines += [f"`tests/benchmarks/{bench.split()[0]}`: {doc}", ""]
        for side in sides:
            for why in side.failures.get(bench, []):
                lines.append(f"- a run on {side.label} failed: {why}")
        if any(side.failures.get(bench) for side in sides):
            lines.append("")
        rows = _known_rows(bench, sides) if bench in KNOWN else _generic_rows(bench, sides)
        lines += [f"| figure | baseline {base.label} | current {current.label} | current / baseline |",
                  "|---|---|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benches", nargs="*", default=["bench_prefix.py"],
                        help="benchmark files in tests/benchmarks (default: bench_prefix.py), each with its "
                             "options in one argument: 'bench_ui.py --modes partial'")
    parser.add_argument("--baseline", required=True, help="the commit to compare with, e.g. dbf4e8a")
    parser.add_argument("--runs", type=int, default=3, help="runs of each benchmark on each side (default 3)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "figures.md", help="the page to write")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one run may take (default 1800)")
    args = parser.parse_args(argv)
    benches = [" ".join([Path(b.split()[0]).name, *b.split()[1:]]) for b in args.benches]
    for bench in benches:
        if not (BENCHES / bench.split()[0]).exists():
            parser.error(f"no such benchmark: tests/benchmarks/{bench}")
    if args.runs < 1:
        parser.error("--runs takes a whole number of at least 1")

    baseline = _git("rev-parse", "--short", args.baseline)
    head = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="livefill-baseline-") as temp:
        worktree = Path(temp) / "tree"
        _git("worktree", "add", "--detach", str(worktree), baseline)
        try:
            sides = [Tree(baseline, worktree, baseline=True), Tree(head, REPO)]
            for round_ in range(args.runs):
                print(f"round {round_ + 1} of {args.runs}", file=sys.stderr)
                for bench in benches:
                    for side in sides if round_ % 2 == 0 else sides[::-1]:
                        loads.append(_load())
                        run_bench(side, bench, args.timeout)
        finally:
            _git("worktree", "remove", "--force", str(worktree))
    args.out.write_text(render(benches, sides, args.runs, loads, dirty), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
