"""What the docks cost on the GUI thread per paint / refresh during a compare run with the docks shown.

Run:  flock /tmp/livefill-bench.lock python tests/benchmarks/bench_docks.py [--root TREE] [--runs 3]

Runs bench_compare's compare view (naive/partial/settled, catalog at 1,000 tok/s, embedded server,
reads on the GUI thread, the wire inspector and timeline docks shown) and times every call of the
timeline's paint, the metrics table's refresh and the wire inspector's refresh / poll tick
(perf_counter around each call, on the GUI thread). Prints, per run: calls, mean ms over the whole
run and over its last quarter (a cost that grows with the run shows there), the worst call, and the
load average. `--root TREE` runs another checkout of the repository (e.g. an export of the commit
before a change), so before and after are measured in the same sitting.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _use_root(root: Path) -> None:
    """Import livefill from `root` instead of the editable install's tree."""
    import __editable___livefill_0_1_0_finder as finder  # the editable install's path map

    finder.MAPPING.update({"livefill": str(root / "livefill"), "livefill.assets": str(root / "assets"),
                           "livefill.gui": str(root / "gui"), "livefill.widgets": str(root / "widgets")})


def _instrument(calls: dict[str, list[tuple[float, float]]]) -> None:
    from livefill.widgets.metrics_table import MetricsTable
    from livefill.widgets.timeline import TimelineView
    from livefill.widgets.wire_inspector import WireInspector

    def wrap(cls: type, name: str, key: str) -> None:
        inner = getattr(cls, name)

        def timed(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            t = time.perf_counter()
            try:
                return inner(self, *args, **kwargs)
            finally:
                calls.setdefault(key, []).append((t, time.perf_counter() - t))

        setattr(cls, name, timed)

    wrap(TimelineView, "paint", "timeline paint")
    wrap(MetricsTable, "refresh", "metrics refresh")
    wrap(WireInspector, "refresh", "inspector refresh")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=None, help="the repository tree to run (default: the installed one)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--scenario", default="catalog")
    parser.add_argument("--speed", type=float, default=1000.0)
    parser.add_argument("--profile", action="store_true", help="cProfile the measured run; print what the docks' calls spend")
    args = parser.parse_args()
    if args.root is not None:
        _use_root(args.root.resolve())
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    import bench_compare  # noqa: E402 (after the root is chosen)

    calls: dict[str, list[tuple[float, float]]] = {}
    _instrument(calls)
    measure = bench_compare.measure
    window_of_run: list[tuple[float, float]] = []
    profiler = cProfile.Profile() if args.profile else None

    async def measured(window, docks: bool, reads: str = "gui"):  # noqa: ANN001, ANN202
        calls.clear()
        t0 = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        try:
            result = await measure(window, docks, reads)
        finally:
            if profiler is not None:
                profiler.disable()
        window_of_run.append((t0, time.perf_counter()))
        return result

    bench_compare.measure = measured
    from livefill.gui.qt_app import SWITCH_INTERVAL

    sys.setswitchinterval(SWITCH_INTERVAL)
    bargs = argparse.Namespace(scenario=args.scenario, speed=args.speed, provider="anthropic",
                               modes="naive,partial,settled", docks="shown", reads="gui")
    import livefill

    print(f"bench_docks: tree {Path(livefill.__file__).parents[1]}, {args.scenario} at {args.speed:g} tok/s, docks shown")
    for run in range(args.runs):
        calls.clear()
        window_of_run.clear()
        bench_compare.run_once(bargs, "embedded")
        t0, t1 = window_of_run[-1]
        last = t0 + 0.75 * (t1 - t0)
        load = open("/proc/loadavg").read().split()[:3]
        print(f"run {run + 1} ({t1 - t0:.1f} s, load {' '.join(load)}):")
        for key in sorted(calls):
            rows = [(t, dt) for t, dt in calls[key] if t0 <= t <= t1]
            tail = [dt for t, dt in rows if t >= last]
            if not rows:
                continue
            mean = 1000 * sum(dt for _, dt in rows) / len(rows)
            tail_mean = 1000 * sum(tail) / len(tail) if tail else float("nan")
            print(f"  {key:<18} {len(rows):>4} calls  mean {mean:6.2f} ms  last quarter {tail_mean:6.2f} ms ({len(tail)})  "
                  f"max {1000 * max(dt for _, dt in rows):6.2f} ms (at {max(rows, key=lambda r: r[1])[0] - t0:.1f} s)  "
                  f"total {sum(dt for _, dt in rows):5.2f} s")
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_callees(r"\(paint\)|\(refresh\)|summary|append_reads|_paint_")
    return 0


if __name__ == "__main__":
    sys.exit(main())
