"""UI responsiveness of the compare view: three lanes of the catalog at 1,000 tokens/s.

Run:  python tests/benchmarks/bench_compare.py [--modes naive,partial,settled] [--speed 1000]
      [--scenario catalog] [--server embedded|process|both] [--docks hidden,shown]

Every lane reads its own stream of the same generation where `--reads` says (the GUI thread, the
net thread, a worker process each, or as the app reads by default); this measures how late
a 5 ms QTimer probe fires while they run (p50 / p99 / max lag), with the docks hidden and then with
the wire inspector and the timeline shown (they poll / repaint while the lanes stream), and the
CPU share of the process and of the GUI thread. Targets: p99 < 16 ms (one frame at 60 Hz), max
< 50 ms, docks shown or not. Then, per lane, the byte-to-pixel latency (the network read carrying
a value's settling byte → the first paint showing it settled): p50 / p99 / max, target p99 < 16 ms
with the docks shown (the naive lane shows no states: it has none). Helpers (the lag probe's
maths, the server in its own process) come from bench_ui.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

import livefill.wire.providers.transport  # noqa: E402,F401  (import the SDKs before PySide6: see livefill.gui.app)
import livefill.relay.client  # noqa: E402,F401
from bench_ui import process_server, choose_reads, gui_thread_collection, latency_figures, probe_run  # noqa: E402
from livefill.embedded.server import EmbeddedServer  # noqa: E402


async def measure(window, docks: bool, reads: str = "gui") -> dict[str, float | str]:  # noqa: ANN001
    await choose_reads(reads, workers=len(window.session.compare_lanes))
    window.inspector_dock.setVisible(docks)
    window.timeline_dock.setVisible(docks)
    await asyncio.sleep(0.3)
    figures = await probe_run(window.start, lambda: window.active)
    spikes = figures.pop("spikes")
    if os.environ.get("BENCH_SPIKES"):
        print(f"docks {'shown' if docks else 'hidden'}: lags > 15 ms at (s, ms): " + ", ".join(f"({t:.2f}, {v:.0f})" for t, v in spikes), file=sys.stderr)
    await window.wait_runs()
    await asyncio.sleep(0.1)  # the last paints
    statuses = window.last_statuses()
    if os.environ.get("BENCH_LATENCIES"):  # every measured value: pointer, read, paint (s after start)
        for lane in window.session.compare_lanes:
            for pointer, read, paint in lane.metrics.latency_log:
                print(f"{lane.title:<8} {pointer:<28} read {read:7.3f}  paint {paint:7.3f}  {1000 * (paint - read):7.1f} ms", file=sys.stderr)
    return {
        "docks": "shown" if docks else "hidden",
        "reads": reads,
        "outcome": ",".join(s.phase.value if s else "?" for s in statuses),
        "reasons": sorted({s.reason for s in statuses if s and s.reason and s.phase.value != "committed"}),
        "tokens": max((s.tokens_received for s in statuses if s), default=0),
        "lanes": [(lane.title, latency_figures(lane.metrics)) for lane in window.session.compare_lanes],
        **figures,
    }


async def bench(args: argparse.Namespace, server) -> list[dict[str, float | str]]:  # noqa: ANN001
    from livefill.gui.loop import asyncgen_hooks
    from livefill.gui.main_window import MainWindow
    from livefill.session.session import Session
    from livefill.session.settings import RunSettings

    with gui_thread_collection() as collector, asyncgen_hooks(asyncio.get_running_loop()):
        window = MainWindow(Session(RunSettings(base_url=server.url, relay_token=server.relay_token, scenario=args.scenario,
                                                provider=args.provider, speed=args.speed)), compare=args.modes.split(","))
        window.resize(1680, 1000)
        window.show()
        collector.busy = lambda: window.active  # as the app does (livefill.gui.launch), where the collector has it
        results = []
        try:
            window.start()  # a first run pays the SDKs' first-request costs; not measured
            await window.wait_runs()
            collector.freeze_survivors()  # what the app has once it is up (see livefill.gui.gui_thread_gc)
            for docks in (d == "shown" for d in args.docks.split(",")):
                for reads in args.reads.split(","):
                    results.append(await measure(window, docks, reads))
        finally:
            await window.shutdown()
            window.close()
        await asyncio.get_running_loop().shutdown_asyncgens()
    return results


def run_once(args: argparse.Namespace, placement: str) -> list[dict[str, float | str]]:
    server = EmbeddedServer() if placement == "embedded" else process_server()
    if placement == "embedded":
        server.start()
    import qasync
    from PySide6.QtWidgets import QApplication

    from livefill.gui.qt_app import install_qt_message_filter
    from livefill.gui.theme import Theme

    install_qt_message_filter()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    Theme(app, "light")
    try:
        return qasync.run(bench(args, server))
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenario", default="catalog")
    parser.add_argument("--speed", type=float, default=1000.0)
    parser.add_argument("--provider", default="anthropic")
    parser.add_argument("--modes", default="naive,partial,settled")
    parser.add_argument("--server", choices=["embedded", "process", "both"], default="both")
    parser.add_argument("--docks", default="hidden,shown",
                        help="the wire inspector and timeline docks: hidden, shown, or both one after the other (default)")
    parser.add_argument("--reads", default="gui,thread",
                        help="where the lanes read their streams, comma-separated: gui (the GUI thread), thread (the net thread, "
                             "LIVEFILL_READ_THREAD=1), worker (a worker process per lane, LIVEFILL_RUN_WORKER=process), app (the app's default: "
                             "workers while a core is spare for each, else the GUI thread); default gui,thread")
    args = parser.parse_args()
    from livefill.gui.qt_app import SWITCH_INTERVAL

    sys.setswitchinterval(SWITCH_INTERVAL)
    rows = []
    for placement in (["embedded", "process"] if args.server == "both" else [args.server]):
        rows += [dict(r, server=placement) for r in run_once(args, placement)]
    print(f"bench_compare: {args.modes} on {args.scenario} at {args.speed:g} tokens/s via {args.provider}, 5 ms probe, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'server':<9} {'docks':<7} {'reads':<7} {'outcome':<30} {'tokens':>6} {'secs':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'cpu proc':>9} {'cpu gui':>8}")
    for r in rows:
        print(f"{r['server']:<9} {r['docks']:<7} {r['reads']:<7} {r['outcome']:<30} {r['tokens']:>6} {r['seconds']:>6.2f} "
              f"{r['p50']:>7.2f} {r['p99']:>7.2f} {r['max']:>7.2f} {r['cpu_process']:>8.0%} {r['cpu_gui']:>8.0%}")
    print("byte to pixel (ms), per lane: p50 / p99 / max (values measured)")
    for r in rows:
        cells = "   ".join(
            f"{title}: —" if not f["b2p_n"] else f"{title}: {f['b2p_p50']:.1f} / {f['b2p_p99']:.1f} / {f['b2p_max']:.1f} ({f['b2p_n']})"
            for title, f in r["lanes"]
        )
        print(f"{r['server']:<9} {r['docks']:<7} {r['reads']:<7} {cells}")
    for r in rows:
        for reason in r["reasons"]:  # a lane that did not commit: why
            print(f"  {r['server']} docks {r['docks']}: {reason}")
    for r in rows:
        print(f"targets ({r['server']}, docks {r['docks']}, reads: {r['reads']}): lag p99 < 16 ms -> {'met' if r['p99'] < 16 else 'NOT met'}; "
              f"max < 50 ms -> {'met' if r['max'] < 50 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
