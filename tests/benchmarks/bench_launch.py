"""Launch, first Start and close of the real app on a real X display, watched from outside.

Run:  DISPLAY=:95 python tests/benchmarks/bench_launch.py [--repo /work/main] [--trials 3]

Each trial spawns `python -m livefill.gui.app --compare naive,partial,settled` (as a user does, with a
fresh settings file and history) and watches it through the X server (tests/benchmarks/xprobe.py):

- map:      process start -> its main window is first shown (mapped; and the GUI thread's CPU
            seconds until then, the figure that does not depend on how busy the machine is)
- answer:   process start -> the window answers: the first `_NET_WM_PING` answered (pings every
            `--ping` s, default 5 ms, from the moment the window is mapped; Qt answers them on the
            GUI thread in its event loop, so this is its first event-loop turn after the show)
- Start stall: the first-Start stall, the longest ping wait in the 1 s after the first Start
            (Ctrl+Return sent `--start-after-show` s after the window is mapped, default 0.08 s, as
            a user who presses it at once; or `--start-at` s after launch); target under 50 ms
- run1 stall / run2 stall: the longest ping wait while the first run and then a second run are
            going (from the Start to the run's end painted)
- first value 1 / 2: the lanes' "time to first value" of the first and of the second run, when
            the app reports them (LIVEFILL_REPORT=1 prints one line per lane as a run ends)
- close:    WM_DELETE_WINDOW sent (as a window manager's close button) -> process exited

Bytecode is compiled once per checkout before the trials (into a cache outside the checkouts), as an
installed app has it. Every repository given with `--repo` (default: this one and, if it exists, /work/main) is run in
turn, trial by trial (the first repository first in odd trials, last in even ones), so the figures
stand side by side under the same load; the load average is printed beside each trial. Each
checkout runs its own code, Qt part included: an editable install maps livefill.gui and
livefill.widgets to the checkout it was made from, so each run gets scripts/figures.py's
`sitecustomize` (FIGURES_TREE) that points them at the run's checkout. Needs DISPLAY (an Xvfb is enough) and `xdotool` (for Ctrl+Return).
"""

from __future__ import annotations

import argparse
import os
import queue
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


def _site_dir() -> str | None:
    """A folder holding scripts/figures.py's `sitecustomize` (None if this checkout has none)."""
    figures = HERE / "scripts" / "figures.py"
    if not figures.exists():
        return None
    sys.path.insert(0, str(figures.parent))
    try:
        import figures as figures_script  # noqa: PLC0415 - a script of this checkout, found at run time
    finally:
        sys.path.pop(0)
    site_dir = getattr(figures_script, "_site_dir", None)
    return str(site_dir()) if callable(site_dir) else None


def bench_env(tmp: Path, repo: Path = HERE) -> dict[str, str]:
    """The app's environment: its own data and config folders, compiled bytecode kept (as an
    installed app has it) under one prefix outside the checkouts, so no checkout is written to,
    and `repo`'s own code imported (the module docstring)."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "config"),
               LIVEFILL_REPORT="1", PYTHONPYCACHEPREFIX=str(PYCACHE), FIGURES_TREE=str(repo))
    site_dir = _site_dir()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (site_dir, str(repo), os.environ.get("PYTHONPATH", "")) if p)
    env.pop("QT_QPA_PLATFORM", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_once(repo: Path) -> None:
    """Launch and close the app once, untimed: its bytecode is then cached (see bench_env)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-launch-"))
    subprocess.run([sys.executable, "-m", "livefill.gui.app", "--settings-file", str(tmp / "s.ini"), "--close-after", "0.5"],
                   cwd=repo, env=dict(bench_env(tmp, repo), QT_QPA_PLATFORM="offscreen"), capture_output=True, timeout=120)


def trial(repo: Path, args: argparse.Namespace) -> dict[str, object]:
    probe = XProbe()
    tmp = Path(tempfile.mkdtemp(prefix="bench-launch-"))
    env = bench_env(tmp, repo)
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
        pinger = probe.start_pinging(window, args.ping)
        if args.start_at is None:  # the first Start --start-after-show s after the window is mapped
            probe.run_pings(max(0.0, t_map + args.start_after_show - time.monotonic()))
        else:
            probe.run_pings(30, until=lambda: pinger.first_answer() is not None)
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

            if n == 1:  # the first-Start stall: the longest wait in the second after Start
                probe.run_pings(1.0, until=run_over)
                probe.run_pings(30, until=lambda: all(a is not None for a in pinger.answered))
                lags = pinger.lags(t_start, t_start + 1.0)
                row["start_stall"] = max(lags) if lags else None
                answer = pinger.first_answer()
                row["answer"] = (answer - t0) if answer else None
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
    parser.add_argument("--start-at", type=float, default=None, help="seconds after launch for the first Start (instead of --start-after-show)")
    parser.add_argument("--start-after-show", type=float, default=0.08, help="seconds after the window is shown for the first Start (default 0.08)")
    parser.add_argument("--ping", type=float, default=0.005, help="seconds between pings (default 0.005)")
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
        for repo in (repos if i % 2 == 0 else repos[::-1]):
            row = trial(repo, args)
            rows.append(row)
            print(f"trial {i + 1} {repo}: load {row['load']:.2f}  map {fmt(row.get('map'))} (GUI thread CPU {fmt(row.get('gui_cpu_map'))})  answer {fmt(row.get('answer'))}  "
                  f"Start@{fmt(row.get('start_at'))} Start stall {fmt(row.get('start_stall'), 'ms')}  "
                  f"run stall {fmt(row.get('stall1'), 'ms')} / 2nd run stall {fmt(row.get('stall2'), 'ms')}  "
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
          f"compare naive,partial,settled at {args.speed:g} tokens/s; ranges (min-max) of {args.trials} trials")
    print(f"{'repo':<22} {'map':>11} {'GUI CPU':>11} {'answer':>11} {'Start stall':>13} {'run 1 stall':>13} {'run 2 stall':>13} {'close':>11}")
    for repo in repos:
        mine = [r for r in rows if r["repo"] == str(repo) and "error" not in r]

        def span(key: str, unit: str = "s") -> str:
            vals = [r[key] for r in mine if isinstance(r.get(key), float)]
            if not vals:
                return "–"
            low, high = fmt(min(vals), unit), fmt(max(vals), unit)
            return low if low == high else f"{low.split()[0]}–{high}"

        print(f"{str(repo)[-22:]:<22} {span('map'):>11} {span('gui_cpu_map'):>11} {span('answer'):>11} {span('start_stall', 'ms'):>13} "
              f"{span('stall1', 'ms'):>13} {span('stall2', 'ms'):>13} {span('close'):>11}")
    print("targets: answer < 1.0 s; first-Start stall < 50 ms; close -> exit < 0.5 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
