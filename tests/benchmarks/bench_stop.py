"""The GUI thread while the app warms up, and from Stop to the form visibly restored.

Run:  DISPLAY=:95 python tests/benchmarks/bench_stop.py [--repo /work/main] [--trials 10]
      (without DISPLAY it runs on Qt's offscreen platform)

Each repository (default: this one and /work/main) runs in its own process, one after the other,
as the app runs: the window on the embedded server's address, then

- warm-up: the event-loop lag of an idle window while the server starts and the SDKs load (this
  repository's `livefill.gui.warmup`; on a checkout without it, the server is started before the window as
  that app did, and its prewarm thread runs as it did), and how long that took;
- Stop: `--trials` runs of the invoice scenario in partial mode at `--speed` tokens/s; each is
  stopped with Esc (a key event through the window's shortcut) once values are streaming, and
  timed from the key to the first paint of the form after the run ended ("visibly restored"),
  with the longest event-loop lag in the 500 ms after the key (the 5 ms PreciseTimer probe of
  bench_ui.py).

Targets: Stop -> restored < 50 ms, no lag over 16 ms. Printed with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def child(args: argparse.Namespace) -> dict[str, object]:
    """Runs inside the measured checkout (cwd); returns the figures."""
    sys.path.insert(0, os.getcwd())
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtCore import QEvent, QObject, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    import livefill.gui.launch as A
    from livefill.embedded import client as demo_client

    has_warmup = Path("gui/warmup.py").exists()
    # the app's own server: in a process of its own where the checkout has it (app_server), else in process
    server = getattr(demo_client, "app_server", demo_client.embedded_server)()
    t_server = time.perf_counter()
    if has_warmup:
        server.bind()
    else:
        server.start()
    server_before_window = time.perf_counter() - t_server
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    out: dict[str, object] = {"platform": app.platformName(), "server_before_window": server_before_window}

    class Lag:
        def __init__(self) -> None:
            self.samples: list[tuple[float, float]] = []
            self.last = time.perf_counter()
            self.timer = QTimer()
            self.timer.setTimerType(Qt.TimerType.PreciseTimer)
            self.timer.setInterval(5)
            self.timer.timeout.connect(self.tick)

        def tick(self) -> None:
            now = time.perf_counter()
            self.samples.append((now, max(0.0, (now - self.last) * 1000 - 5.0)))
            self.last = now

        def start(self) -> None:
            self.last = time.perf_counter()
            self.timer.start()

        def worst(self, since: float, until: float) -> float:
            return max((lag for t, lag in self.samples if since <= t <= until), default=float("nan"))

    class Paints(QObject):
        """When a widget inside the form view was painted with the form restored (no run's draft)."""

        def __init__(self, window) -> None:  # noqa: ANN001
            super().__init__()
            self.window = window
            self.times: list[float] = []

        def eventFilter(self, obj, event) -> bool:  # noqa: ANN001, N802
            if event.type() == QEvent.Type.Paint and obj.isWidgetType():
                root = self.window.form_view
                if (obj is root or root.isAncestorOf(obj)) and not self.window.form.running:
                    self.times.append(time.perf_counter())
            return False

    async def main() -> None:
        from livefill.gui.gui_thread_gc import GuiThreadCollector
        from livefill.gui.loop import asyncgen_hooks
        from livefill.gui.main_window import MainWindow
        from livefill.session.session import Session
        from livefill.session.settings import RunSettings

        collector = GuiThreadCollector(app)
        collector.start()
        with asyncgen_hooks(asyncio.get_running_loop()):
            window = MainWindow(Session(RunSettings(
                base_url=server.bind() if has_warmup else server.url, relay_token=server.relay_token,
                scenario="invoice", mode="partial", speed=args.speed)))
            window.show()
            window.activateWindow()
            app.processEvents()
            lag = Lag()
            lag.start()
            t0 = time.perf_counter()
            if has_warmup:
                warm = window.warmup = A.start_warmup(A.app_warmup(server), window, collector)
                await warm.wait()
            else:
                thread = threading.Thread(target=A._prewarm, daemon=True)
                thread.start()
                while thread.is_alive():
                    await asyncio.sleep(0.01)
            out["warmup_s"] = time.perf_counter() - t0
            out["warmup_lag_max"] = lag.worst(t0, time.perf_counter())
            lags_during = sorted(lg for t, lg in lag.samples if t0 <= t)
            out["warmup_lag_p99"] = lags_during[int(0.99 * (len(lags_during) - 1))] if lags_during else float("nan")
            await asyncio.sleep(0.5)
            paints = Paints(window)
            app.installEventFilter(paints)
            stops, stalls, outcomes = [], [], []
            for _ in range(args.trials):
                window.start()
                while not any(s is not None and s.tokens_received > 20 for s in window.last_statuses()):
                    await asyncio.sleep(0.005)
                await asyncio.sleep(0.1)
                t_key = time.perf_counter()
                QTest.keyClick(window, Qt.Key.Key_Escape)  # through the window's shortcut, as a user's key
                deadline = time.perf_counter() + 0.5
                while time.perf_counter() < deadline:
                    await asyncio.sleep(0.005)
                painted = [t for t in paints.times if t >= t_key]
                stops.append((painted[0] - t_key) if painted else float("nan"))
                stalls.append(lag.worst(t_key, t_key + 0.5))
                status = window.controller.last_status
                outcomes.append(status.phase.value if status else "?")
                await window.wait_runs()
                await asyncio.sleep(0.2)
            out.update(stops=stops, stalls=stalls, outcomes=outcomes)
            lag.timer.stop()
            await window.shutdown()
            window.close()
        collector.stop()

    try:
        qasync.run(main())
    finally:
        server.stop()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", default=None)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--speed", type=float, default=60.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        figures = child(args)
        print("FIGURES " + json.dumps(figures), flush=True)
        os._exit(0)
    repos = [Path(r).resolve() for r in args.repo] if args.repo else [HERE] + ([Path("/work/main")] if Path("/work/main").is_dir() and Path("/work/main").resolve() != HERE else [])
    for repo in repos:
        load = os.getloadavg()[0]
        env = dict(os.environ, PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "livefill-bench-pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # the checkout's own gui/ and widgets/ too: an editable install maps them to the checkout it was
        # made from whatever is on PYTHONPATH (scripts/figures.py's sitecustomize points them at FIGURES_TREE)
        from bench_launch import _site_dir  # (this folder: the same sitecustomize bench_launch gives its runs)

        site = _site_dir()
        env["FIGURES_TREE"] = str(repo)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (site, str(repo), os.environ.get("PYTHONPATH", "")) if p)
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--trials", str(args.trials),
                               "--speed", str(args.speed)], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("FIGURES ")), None)
        if line is None:
            print(f"{repo}: failed\n{proc.stderr[-2000:]}")
            continue
        f = json.loads(line[len("FIGURES "):])
        stops = [s * 1000 for s in f["stops"] if s == s]
        stalls = [s for s in f["stalls"] if s == s]
        print(f"{repo} ({f['platform']}), load average {load:.2f}:")
        print(f"  server started before the window: {f['server_before_window']:.2f} s; warm-up after it: {f['warmup_s']:.2f} s, "
              f"event-loop lag meanwhile p99 {f['warmup_lag_p99']:.1f} ms, max {f['warmup_lag_max']:.1f} ms")
        if stops:
            print(f"  Stop -> form repainted restored ({len(stops)} runs, {', '.join(sorted(set(f['outcomes'])))}): "
                  f"median {statistics.median(stops):.1f} ms, max {max(stops):.1f} ms; "
                  f"longest lag within 500 ms of Stop: median {statistics.median(stalls):.1f} ms, max {max(stalls):.1f} ms")
    print(f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}; targets: Stop -> restored < 50 ms, lag < 16 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
