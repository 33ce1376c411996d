"""Launch, first Start and close of the real app on a real X display, watched from outside.

Run:  DISPLAY=:95 python tests/benchmarks/bench_launch.py [--repo /work/main] [--trials 3]

Each trial spawns `python -m livefill.gui.app --compare naive,partial,settled` (as a user does, with a
fresh settings file and history) and watches it through the X server (tests/benchmarks/xprobe.py):

- map:      launch -> its main window is mapped (and the GUI thread's CPU seconds until then,
            the figure that does not depend on how busy the machine is)
- answer:   launch -> the first `_NET_WM_PING` answered (pings every 10 ms from the moment the
            window is mapped; Qt answers them on the GUI thread, so this is the first moment the
            window answers input)
- start1 stall / start2 stall: the longest ping wait while the first run (Ctrl+Return sent
            `--start-at` s after launch, default 1.5: within 4 s of launch) and then a second run
            are going (target: under 50 ms)
- first value 1 / 2: the lanes' "time to first value" of the first and of the second run, when
            the app reports them (LIVEFILL_REPORT=1 prints one line per lane as a run ends)
- close:    WM_DELETE_WINDOW sent (as a window manager's close button) -> process exited

Bytecode is compiled once per checkout before the trials (into a cache outside the checkouts), as an
installed app has it. Every repository given with `--repo` (default: this one and, if it exists, /work/main) is run in
turn, trial by trial, so the figures stand side by side under the same load; the load average
is printed beside each trial. Needs DISPLAY (an Xvfb is enough) and `xdotool` (for Ctrl+Return).
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from xprobe import XProbe  # noqa: E402

HERE = Path(__file__).resolve().parents[2]


def _reader(stream, lines: queue.Queue) -> None:  # noqa: ANN001
    for line in stream:
        lines.put((time.monotonic(), line.rstrip("\n")))
    lines.put((time.monotonic(), None))


def _drain(lines: queue.Queue, into: list) -> None:  # noqa: ANN001
    while True:
        try:
            into.append(lines.get_nowait())
        except queue.Empty:
            return


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, tid: int | None = None) -> float | None:
    """CPU seconds (user + system) of process `pid` (all its threads), or of its thread `tid`."""
    path = f"/proc/{pid}/task/{tid}/stat" if tid is not None else f"/proc/{pid}/stat"
    try:
        fields = Path(path).read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


PYCACHE = Path(tempfile.gettempdir()) / "livefill-bench-pycache"


def bench_env(tmp: Path) -> dict[str, str]:
    """The app's environment: its own data and config folders, and compiled bytecode kept (as an
    installed app has it) under one prefix outside the checkouts, so no checkout is written to."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "config"),
               LIVEFILL_REPORT="1", PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("QT_QPA_PLATFORM", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_once(repo: Path) -> None:
    """Launch and close the app once, untimed: its bytecode is then cached (see bench_env)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-launch-"))
    subprocess.run([sys.executable, "-m", "livefill.gui.app", "--settings-file", str(tmp / "s.ini"), "--close-after", "0.5"],
                   cwd=repo, env=dict(bench_env(tmp), QT_QPA_PLATFORM="offscreen"), capture_output=True, timeout=120)


def trial(repo: Path, args: argparse.Namespace) -> dict[str, object]:
    probe = XProbe()
    tmp = Path(tempfile.mkdtemp(prefix="bench-launch-"))
    env = bench_env(tmp)
    sampler = [str(Path(__file__).resolve().parent / "stack_sampler.py"), str(tmp / "stacks.txt")] if args.sample else []
    cmd = [sys.executable, *sampler, "-m", "livefill.gui.app", "--settings-file", str(tmp / "settings.ini"),
           "--history", str(tmp / "history.jsonl"), "--speed", str(args.speed),
           "--compare", "naive,partial,settled"]
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, out), daemon=True).start()
    err: list[str] = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    row: dict[str, object] = {"repo": str(repo), "load": load}
    lines: list = []
    try:
        mapped = probe.wait_mapped(proc.pid, 60, alive=lambda: proc.poll() is None)
        if mapped is None:
            row["error"] = f"no window (exit {proc.poll()}): {''.join(err)[-300:]}"
            return row
        t_map, window = mapped
        row["map"] = t_map - t0
        row["gui_cpu_map"] = cpu_seconds(proc.pid, proc.pid)  # the GUI thread's CPU until its window was mapped
        pinger = probe.start_pinging(window, 0.01)
        probe.run_pings(30, until=lambda: pinger.first_answer() is not None)
        answer = pinger.first_answer()
        row["answer"] = (answer - t0) if answer else None
        # first Start at --start-at s after launch (or at once if the window answered later)
        probe.run_pings(max(0.0, t0 + args.start_at - time.monotonic()))
        for n in (1, 2):
            subprocess.run(["xdotool", "windowfocus", "--sync", str(window)], check=False, timeout=10)
            t_start = time.monotonic()
            subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+Return"], check=False, timeout=10)
            if n == 1:
                row["start_at"] = t_start - t0
            finished = []

            def run_over() -> bool:
                _drain(out, lines)
                finished[:] = [ln for t, ln in lines if t > t_start and ln and ln.startswith("run finished")]
                return bool(finished)

            probe.run_pings(args.run_seconds, until=run_over)
            probe.run_pings(0.3)  # the end of the run, painted
            lags = pinger.lags(t_start, time.monotonic())
            row[f"stall{n}"] = max(lags) if lags else None
            firsts = [ln for t, ln in lines if t > t_start and ln and ln.startswith("run lane")]
            row[f"first{n}"] = "; ".join(ln.split(": ", 1)[1] for ln in firsts) or "n/a"
            probe.run_pings(0.5)
        t_close = time.monotonic()
        probe.delete_window(window)
        code = proc.wait(60)
        row["close"] = time.monotonic() - t_close
        row["exit"] = code
        _drain(out, lines)
        if code != 0 or err:
            row["stderr"] = "".join(err)[-400:]
        if args.sample:
            row["stalls"] = stall_stacks(tmp / "stacks.txt", pinger, t_map)
        return row
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        probe.close()


def stall_stacks(path: Path, pinger, since: float, over: float = 0.04) -> list[str]:  # noqa: ANN001
    """What the GUI thread was doing during each ping that waited over `over` s (from --sample)."""
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        t, _, stack = line.partition(" ")
        samples.append((float(t), stack))
    out, seen = [], set()
    for sent, answered in zip(pinger.sent, pinger.answered):
        end = answered if answered is not None else sent + 1.0
        if sent < since or end - sent < over:
            continue
        inside = [st for t, st in samples if sent <= t <= end]
        counts: dict[str, int] = {}
        for st in inside:
            counts[st] = counts.get(st, 0) + 1
        for st, n in sorted(counts.items(), key=lambda kv: -kv[1])[:2]:
            key = (round(sent, 1), st)
            if key not in seen:
                seen.add(key)
                out.append(f"{(end - sent) * 1000:.0f} ms stall at +{sent - since:.2f} s after map, {n} samples: {st}")
    return out


def fmt(value: object, unit: str = "s") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value * 1000:.0f} ms" if unit == "ms" else f"{value:.2f} s"
    return str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", default=None, help="a checkout to run (repeatable)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--speed", type=float, default=200.0)
    parser.add_argument("--start-at", type=float, default=1.5, help="seconds after launch for the first Start")
    parser.add_argument("--run-seconds", type=float, default=20.0, help="longest wait for a run to end")
    parser.add_argument("--sample", action="store_true", help="sample the GUI thread's stack (stack_sampler.py) and show it for each stall")
    args = parser.parse_args()
    if not os.environ.get("DISPLAY"):
        print("bench_launch: needs DISPLAY (e.g. Xvfb :95 & DISPLAY=:95)", file=sys.stderr)
        return 2
    repos = [Path(r).resolve() for r in args.repo] if args.repo else [HERE] + ([Path("/work/main")] if Path("/work/main").is_dir() and Path("/work/main").resolve() != HERE else [])
    for repo in repos:
        compile_once(repo)
    rows = []
    for i in range(args.trials):
        for repo in repos:
            row = trial(repo, args)
            rows.append(row)
            print(f"trial {i + 1} {repo}: load {row['load']:.2f}  map {fmt(row.get('map'))} (GUI thread CPU {fmt(row.get('gui_cpu_map'))})  answer {fmt(row.get('answer'))}  "
                  f"start@{fmt(row.get('start_at'))} stall {fmt(row.get('stall1'), 'ms')} / 2nd run stall {fmt(row.get('stall2'), 'ms')}  "
                  f"close->exit {fmt(row.get('close'))} (exit {row.get('exit')})", flush=True)
            for key in ("first1", "first2"):
                if row.get(key) not in (None, "n/a"):
                    print(f"    {'first run ' if key == 'first1' else 'second run'}: {row[key]}", flush=True)
            for stall in row.get("stalls", [])[:12]:
                print(f"    {stall}", flush=True)
            for key in ("error", "stderr"):
                if row.get(key):
                    print(f"    {key}: {row[key]}", flush=True)
    print(f"\nbench_launch: {os.cpu_count()} CPUs, load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"compare naive,partial,settled at {args.speed:g} tokens/s; medians of {args.trials} trials")
    print(f"{'repo':<22} {'map':>8} {'GUI CPU':>8} {'answer':>8} {'stall 1st':>10} {'stall 2nd':>10} {'close':>8}")
    for repo in repos:
        mine = [r for r in rows if r["repo"] == str(repo) and "error" not in r]

        def med(key: str) -> float | None:
            vals = [r[key] for r in mine if isinstance(r.get(key), float)]
            return statistics.median(vals) if vals else None

        print(f"{str(repo)[-22:]:<22} {fmt(med('map')):>8} {fmt(med('gui_cpu_map')):>8} {fmt(med('answer')):>8} {fmt(med('stall1'), 'ms'):>10} "
              f"{fmt(med('stall2'), 'ms'):>10} {fmt(med('close')):>8}")
    print("targets: answer < 1.0 s; stall < 50 ms (first Start within 4 s of launch); close -> exit < 0.5 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
