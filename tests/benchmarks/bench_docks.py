"""What the docks cost on the GUI thread per paint / refresh during a compare run with the docks shown.

Run:  flock /tmp/livefill-bench.lock python tests/benchmarks/bench_docks.py [--root TREE] [--runs 3]

Runs bench_compare's compare view (naive/partial/settled, catalog at 1,000 tok/s, embedded server,
reads on the GUI thread, the wire inspector and timeline docks shown) and times every call of the
timeline's paint, the metrics table's refresh and the wire inspector's refresh / poll tick
(perf_counter around each call, on the GUI thread). Prints, per run: calls, mean ms over the whole
run and over its last quarter (a cost that grows with the run shows there), the worst call, and the
load average. `--root TREE` runs another checkout of the repository (e.g. an export of the commit
before a change), so before and after are measured in the same sitting. `--micro` instead times,
without a run, one clipped timeline paint (a dock's 400 px of a 1,600 px wide timeline, a frame
tick's rectangle) with 32 and with 320 fields, and one metrics-table refresh after each of 200
settled values of three lanes (medians).
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


def micro() -> None:
    """Per-call figures of the docks' paint / refresh without a run (see the module docstring)."""
    import statistics

    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtWidgets import QApplication

    from livefill.session.metrics import LaneMetrics
    from livefill.session.timeline import TimelineModel
    from livefill.widgets.metrics_table import MetricsTable
    from livefill.widgets.timeline import TimelineView

    app = QApplication.instance() or QApplication([sys.argv[0]])
    for fields in (32, 320):
        model = TimelineModel(["naive", "partial", "settled"])
        model.start(0.0)
        for i in range(fields):
            for k, lane in enumerate(model.lanes):
                model.record(lane, f"/items/{i}/sku", "pending", 0.01 * i)
                model.record(lane, f"/items/{i}/sku", "provisional", 0.01 * i + 0.02)
                if k != 1 or i % 2:
                    model.record(lane, f"/items/{i}/sku", "settled", 0.01 * i + 0.05 * (k + 1))
        view = TimelineView(model, clock=lambda: 30.0)
        width, height = 1600, 400
        img = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        x0 = int(view.layout_for(width, height).x0)
        clip = QRectF(x0 - 1, 0, width - x0 + 1, height)
        p = QPainter(img)
        p.setClipRect(clip)
        times = []
        for _ in range(300):
            t = time.perf_counter()
            view.paint(p, width, height, clip)
            times.append(time.perf_counter() - t)
        p.end()
        print(f"  timeline paint, {fields:>3} fields x 3 lanes: median {1000 * statistics.median(times[50:]):.2f} ms")
    lanes = [LaneMetrics(final={"items": [{"sku": f"S-{i}"} for i in range(200)]}) for _ in range(3)]
    table = MetricsTable(refresh_ms=10_000)
    table.set_lanes([(f"lane {k}", m) for k, m in enumerate(lanes)])
    table.resize(1200, table.height())
    table.show()
    app.processEvents()
    times = []
    for m in lanes:
        m.start(0.0)
        m.read_time = lambda pointer: 0.0
    for i in range(200):
        for k, m in enumerate(lanes):
            pointer = f"/items/{i}/sku"
            m.display(pointer, f"S-{i}", provisional=False, t=0.01 * i)
            m.settled(pointer, 0.01 * i)
            m.painted(pointer, 0.01 * i + 0.001 * k)
            m.set_facts(deltas=i * 3 + k, bytes=i * 90)
        t = time.perf_counter()
        table.refresh()
        times.append(time.perf_counter() - t)
        app.processEvents()
    print(f"  metrics refresh, 3 lanes, 200 values: median {1000 * statistics.median(times):.2f} ms, "
          f"last 50 {1000 * statistics.median(times[-50:]):.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=None, help="the repository tree to run (default: the installed one)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--scenario", default="catalog")
    parser.add_argument("--speed", type=float, default=1000.0)
    parser.add_argument("--profile", action="store_true", help="cProfile the measured run; print what the docks' calls spend")
    parser.add_argument("--micro", action="store_true", help="time single paints / refreshes without a run")
    args = parser.parse_args()
    if args.root is not None:
        _use_root(args.root.resolve())
    if args.micro:
        import livefill

        for run in range(args.runs):
            print(f"bench_docks --micro: tree {Path(livefill.__file__).parents[1]}, run {run + 1}, load "
                  + " ".join(open("/proc/loadavg").read().split()[:3]))
            micro()
        return 0
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
