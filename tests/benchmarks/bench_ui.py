"""UI responsiveness while the catalog scenario streams at 1,000 tokens/s in partial mode.

Run:  python tests/benchmarks/bench_ui.py [--speed 1000] [--scenario catalog] [--modes partial,naive]

A 5 ms QTimer (PreciseTimer) probes the event loop: each firing records how late it came
(interval between firings minus 5 ms). Printed per mode: p50 / p99 / max lag (targets for
partial: p99 < 4 ms, max < 16 ms), the run's outcome and length, and CPU: the whole process (which
also hosts the demo server's thread) and the GUI thread alone, as a share of one core (target for
partial: < 20 %). Then the byte-to-pixel latency of every value shown settled (from the network
read that carried its settling byte to the first paint showing it settled; livefill.session.metrics): p50 /
p99 / max and how many values were measured (the single form measures nothing in the app; here it
is switched on, as in a compare lane, unless --no-latency).

`--server both` (default) measures with the demo server in this process's background thread (it
shares the GIL with the GUI thread; LIVEFILL_DEMO_SERVER=thread) and then in its own process (as
the app runs it). `--reads` says where the stream is read (`app`: as the app does by default).
BENCH_SPIKES=1 prints when each lag over 15 ms happened. The first run of a
process used to pay the anthropic SDK's first-request cost on the GUI thread; `prewarm()` (run
here as the app runs it) does that work beforehand.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import livefill.wire.providers.transport  # noqa: E402,F401  (import the SDKs before PySide6: see livefill.gui.app)
import livefill.relay.client  # noqa: E402,F401
from livefill.embedded.server import EmbeddedServer  # noqa: E402

livefill.wire.providers.transport.prewarm()  # as the app does in its prewarm thread before a first run

CLK_TCK = os.sysconf("SC_CLK_TCK")


def thread_cpu(native_id: int) -> float:
    """CPU seconds (user + system) of one thread of this process, from /proc."""
    try:
        with open(f"/proc/self/task/{native_id}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except OSError:
        return float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


class StallSampler:
    """While a lag probe is late by more than `threshold_ms`, sample the GUI thread's Python stack
    every millisecond from a helper thread (BENCH_STALLS=1); `report()` prints the stacks seen most
    during stalls. It needs the GIL to sample, so a stall inside C code is seen where it returns."""

    def __init__(self, threshold_ms: float = 12.0) -> None:
        import collections

        self.threshold = threshold_ms / 1000
        self.last_tick = time.perf_counter()
        self.counts: collections.Counter[str] = collections.Counter()
        self.stalls = 0
        self._in_stall = False
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._loop, name="stall-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        import traceback

        while not self._stop.wait(0.001):
            late = time.perf_counter() - self.last_tick > self.threshold
            if late and not self._in_stall:
                self.stalls += 1
            self._in_stall = late
            if not late:
                continue
            frame = sys._current_frames().get(self._main)
            if frame is None:
                continue
            stack = traceback.extract_stack(frame)[-14:]
            self.counts[" <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack))] += 1

    def report(self, label: str, top: int = 12) -> None:
        total = sum(self.counts.values())
        print(f"{label}: {self.stalls} stalls, {total} samples (1 ms) inside them", file=sys.stderr)
        for stack, n in self.counts.most_common(top):
            print(f"  {n:5d}  {stack}", file=sys.stderr)


class EventCounter:
    """Counts the Qt events the application delivers while installed (BENCH_EVENTS=1): by type,
    and by receiver class for the types named in BENCH_EVENTS_BY_CLASS (default Paint);
    `report()` prints them per second, on stderr."""

    def __init__(self) -> None:
        import collections

        from PySide6.QtCore import QEvent, QObject
        from PySide6.QtWidgets import QApplication

        self.types: collections.Counter[str] = collections.Counter()
        self.by_class: collections.Counter[str] = collections.Counter()
        watched = {getattr(QEvent.Type, name) for name in os.environ.get("BENCH_EVENTS_BY_CLASS", "Paint").split(",")}
        counter = self

        class _Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: ANN001, N802 (Qt's signature)
                kind = event.type()
                counter.types[kind.name] += 1
                if kind in watched:
                    name = type(obj).__name__
                    if name == "QWidget" and obj.parent() is not None:  # a viewport: name its view
                        name = f"QWidget in {type(obj.parent()).__name__} {obj.parent().objectName()}".rstrip()
                    counter.by_class[f"{kind.name} {name}"] += 1
                return False

        self._filter = _Filter()
        self._app = QApplication.instance()
        self._app.installEventFilter(self._filter)

    def report(self, seconds: float, top: int = 12) -> None:
        self._app.removeEventFilter(self._filter)
        print("events per second: " + ", ".join(f"{k} {v / seconds:.0f}" for k, v in self.types.most_common(top)), file=sys.stderr)
        print("by receiver class, per second: " + ", ".join(f"{k} {v / seconds:.0f}" for k, v in self.by_class.most_common(2 * top)), file=sys.stderr)


async def probe_run(start, active) -> dict[str, float | str]:  # noqa: ANN001 (callables)
    """Call `start()`, then sample event-loop lag with a 5 ms PreciseTimer until `active()` is false.

    Returns the lag figures (ms: p50, p99, max; samples), the wall time, and CPU as a share of one
    core for the whole process and for the GUI thread alone; `spikes` lists (s, ms) lags over 15 ms.
    """
    from PySide6.QtCore import Qt, QTimer

    lags: list[float] = []
    spikes: list[tuple[float, float]] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        lag = max(0.0, (now - last[0]) * 1000 - 5.0)
        lags.append(lag)
        if lag > 15:
            spikes.append((now - wall0, lag))
        last[0] = now
        if sampler is not None:
            sampler.last_tick = now

    sampler = StallSampler() if os.environ.get("BENCH_STALLS") else None
    events = EventCounter() if os.environ.get("BENCH_EVENTS") else None
    probe = QTimer()
    probe.setTimerType(Qt.TimerType.PreciseTimer)
    probe.setInterval(5)
    probe.timeout.connect(tick)
    main_id = threading.main_thread().native_id
    wall0, cpu0, gui0 = time.perf_counter(), time.process_time(), thread_cpu(main_id)
    start()
    last[0] = time.perf_counter()
    probe.start()
    if sampler is not None:
        sampler.last_tick = last[0]
        sampler.start()
    while active():
        await asyncio.sleep(0.05)
    probe.stop()
    if events is not None:
        events.report(time.perf_counter() - wall0)
    if sampler is not None:
        sampler.stop()
        sampler.report(f"stalls over {sampler.threshold * 1000:g} ms")
    wall = time.perf_counter() - wall0
    return {
        "seconds": wall,
        "samples": len(lags),
        "p50": statistics.median(lags) if lags else float("nan"),
        "p99": percentile(lags, 99),
        "max": max(lags) if lags else float("nan"),
        "cpu_process": (time.process_time() - cpu0) / wall,
        "cpu_gui": (thread_cpu(main_id) - gui0) / wall,
        "spikes": spikes,  # type: ignore[dict-item]
    }


def latency_figures(metrics) -> dict[str, float | int]:  # noqa: ANN001 (livefill.session.metrics.LaneMetrics)
    """Byte-to-pixel p50 / p99 / max (ms) and how many values were measured / not painted."""
    s = metrics.summary()
    p50, p99, worst = (x * 1000 for x in s.byte_to_pixel) if s.byte_to_pixel else (float("nan"),) * 3
    return {"b2p_p50": p50, "b2p_p99": p99, "b2p_max": worst, "b2p_n": s.painted, "b2p_unpainted": s.unpainted}


def measure_latency(lane) -> None:  # noqa: ANN001 (livefill.session.lane.SessionLane)
    """Switch a lane's metrics on (the single form has none in the app) so its latency is measured."""
    if not lane.measure:
        lane.measure = True
        lane._set_form(lane.form)  # noqa: SLF001 - a fresh FormProbe feeding the metrics


async def choose_reads(reads: str, workers: int = 1) -> None:
    """Where the next runs read: "gui", "thread" (LIVEFILL_READ_THREAD), "worker"
    (LIVEFILL_RUN_WORKER=process) or "app" (the app's default, livefill.session.run_remote.usable:
    in a warm worker while fewer than `worker_cores()` runs read in one, else on the GUI thread);
    with workers, returns once `workers` warm workers wait, as the app keeps them."""
    from livefill.session import run_remote

    os.environ["LIVEFILL_READ_THREAD"] = "1" if reads == "thread" else "0"  # livefill.wire.net_thread.enabled()
    os.environ["LIVEFILL_RUN_WORKER"] = {"worker": "process", "app": ""}.get(reads, "inprocess")  # run_remote.enabled()
    run_remote.use_by_default(reads == "app")
    if reads in ("worker", "app"):
        pool = run_remote.pool()
        pool.want(max(0, workers - pool.wanted))
        while len(pool.idle) < pool.keep() or not pool.warm():  # (the app's default keeps fewer: worker_cores)
            await asyncio.sleep(0.05)


async def measure(window, mode: str, reads: str = "gui") -> dict[str, float | str]:  # noqa: ANN001 (MainWindow)
    await choose_reads(reads)
    window.mode_combo.setCurrentIndex(window.mode_combo.findData(mode))
    await asyncio.sleep(0.3)
    figures = await probe_run(window.start, lambda: window.controller.active)
    await asyncio.sleep(0.1)  # the last paints
    figures.update(latency_figures(window.session.single.metrics))
    spikes = figures.pop("spikes")
    if os.environ.get("BENCH_SPIKES"):
        print(f"{mode}: lags > 15 ms at (s, ms): " + ", ".join(f"({t:.2f}, {v:.0f})" for t, v in spikes), file=sys.stderr)
    status = window.controller.last_status
    return {
        "mode": mode,
        "reads": reads,
        "outcome": status.phase.value if status else "?",
        "reason": status.reason if status else "",
        "tokens": status.tokens_received if status else 0,
        **figures,
    }


@contextmanager
def gui_thread_collection() -> Iterator[object]:
    """The app's cyclic collector on the GUI thread (livefill.gui.gui_thread_gc) for the block; then how many
    full (generation 2) collections ran there and the longest, on stderr."""
    from PySide6.QtWidgets import QApplication

    from livefill.gui.gui_thread_gc import GuiThreadCollector

    collector = GuiThreadCollector(QApplication.instance())
    collector.start()
    gen2: list[float] = []
    started = [0.0]

    def note_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif info.get("generation") == 2:
            gen2.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(note_gc)
    try:
        yield collector
    finally:
        collector.stop()
        gc.callbacks.remove(note_gc)
    if gen2:
        print(f"full (generation 2) collections on the GUI thread: {len(gen2)}, longest {max(gen2):.1f} ms", file=sys.stderr)


async def bench(args: argparse.Namespace, server: EmbeddedServer) -> list[dict[str, float | str]]:
    from livefill.gui.loop import asyncgen_hooks
    from livefill.gui.main_window import MainWindow
    from livefill.session.session import Session
    from livefill.session.settings import RunSettings

    with gui_thread_collection() as collector, asyncgen_hooks(asyncio.get_running_loop()):
        window = MainWindow(Session(RunSettings(base_url=server.url, relay_token=server.relay_token, scenario=args.scenario,
                                                mode="partial", provider=args.provider, speed=args.speed)))
        window.show()
        collector.busy = lambda: window.active  # as the app does (livefill.gui.launch), where the collector has it
        if args.latency:
            measure_latency(window.session.single)
        await asyncio.sleep(0.3)
        collector.freeze_survivors()  # what the app has once it is up (see livefill.gui.gui_thread_gc)
        results = []
        try:
            for mode in args.modes.split(","):
                for reads in args.reads.split(","):
                    results.append(await measure(window, mode, reads))
        finally:
            await window.shutdown()
            window.close()
        await asyncio.get_running_loop().shutdown_asyncgens()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenario", default="catalog")
    parser.add_argument("--speed", type=float, default=1000.0)
    parser.add_argument("--provider", default="anthropic")
    parser.add_argument("--modes", default="partial,naive,blocking")
    parser.add_argument("--reads", default="gui,thread",
                        help="where the stream is read, comma-separated: gui (on the GUI thread), thread "
                             "(the net thread, livefill.wire.net_thread, LIVEFILL_READ_THREAD=1), worker (a worker process that "
                             "also parses and keeps a form mirror, livefill.session.run_remote, LIVEFILL_RUN_WORKER=process), "
                             "app (the app's default: a worker while a core is spare for it, else the GUI thread); default gui,thread")
    parser.add_argument("--no-latency", dest="latency", action="store_false",
                        help="leave the single form's metrics off, as the app does (no byte-to-pixel figures; "
                             "the GUI thread's CPU as the app spends it)")
    parser.add_argument("--switch-interval", type=float, default=None,
                        help="sys.setswitchinterval (seconds) for this process; default: what livefill.gui.app sets")
    parser.add_argument("--server", choices=["embedded", "process", "both"], default="both",
                        help="the demo server in this process's background thread (as the app runs it), "
                             "in its own process (the GUI thread alone), or both one after the other")
    args = parser.parse_args()
    from livefill.gui.qt_app import SWITCH_INTERVAL

    sys.setswitchinterval(args.switch_interval if args.switch_interval is not None else SWITCH_INTERVAL)
    placements = ["embedded", "process"] if args.server == "both" else [args.server]
    rows = []
    for placement in placements:
        rows += [dict(r, server=placement) for r in run_once(args, placement)]
    print(f"bench_ui: {args.scenario} at {args.speed:g} tokens/s via {args.provider}, 5 ms QTimer lag probe, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, GIL switch interval {sys.getswitchinterval() * 1000:g} ms")
    print(f"{'server':<9} {'mode':<9} {'reads':<7} {'outcome':<10} {'tokens':>6} {'secs':>6} {'samples':>7} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'cpu proc':>9} {'cpu gui':>8}"
          f"  | byte to pixel: {'p50':>6} {'p99':>6} {'max':>6} {'values':>6}")
    for r in rows:
        print(f"{r['server']:<9} {r['mode']:<9} {r['reads']:<7} {r['outcome']:<10} {r['tokens']:>6} {r['seconds']:>6.2f} {r['samples']:>7} "
              f"{r['p50']:>7.2f} {r['p99']:>7.2f} {r['max']:>7.2f} {r['cpu_process']:>8.0%} {r['cpu_gui']:>8.0%}"
              f"  |                {r['b2p_p50']:>6.1f} {r['b2p_p99']:>6.1f} {r['b2p_max']:>6.1f} {r['b2p_n']:>6}")
    for r in rows:
        if r["outcome"] != "committed":
            print(f"  {r['server']} {r['mode']}: {r['outcome']} — {r['reason']}")
    for r in rows:
        if r["mode"] == "partial":
            print(f"targets (partial, {r['server']} server, reads: {r['reads']}): p99 < 4 ms -> {'met' if r['p99'] < 4 else 'NOT met'}; "
                  f"max < 16 ms -> {'met' if r['max'] < 16 else 'NOT met'}; "
                  f"GUI CPU < 20 % -> {'met' if r['cpu_gui'] < 0.20 else 'NOT met'}")
    return 0


def process_server():  # noqa: ANN201 (livefill.embedded.server_process.ServerProcess)
    """The embedded server in its own process, started: the app's own placement
    (livefill.embedded.server_process; LIVEFILL_DEMO_SERVER=thread keeps it in the app)."""
    from livefill.embedded.server_process import ServerProcess

    server = ServerProcess()
    server.start()
    return server


def run_once(args: argparse.Namespace, placement: str) -> list[dict[str, float | str]]:
    """One window, the given modes, the server placed as asked."""
    if placement == "embedded":
        server = EmbeddedServer()
        server.start()
    else:
        server = process_server()
    import qasync
    from PySide6.QtWidgets import QApplication

    from livefill.gui.qt_app import install_qt_message_filter
    from livefill.gui.theme import stylesheet

    install_qt_message_filter()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    app.setStyleSheet(stylesheet("light"))
    try:
        return qasync.run(bench(args, server))
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
