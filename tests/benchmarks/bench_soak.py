"""A bounded soak: the demo provider + relay serving N concurrent relay streams, with random cancels.

One `livefill-server` process (`python -m livefill.cli.server`, 127.0.0.1, a free port) serves both
the relay and its demo upstream, so its RSS and open file descriptors can be read from /proc/PID.
This script keeps `--streams` (default 100) settled-mode relay streams open for `--seconds`
(default 60): each a bundled scenario (cycling over `--scenarios`; `catalog` is left out by
default: its 21 KB output takes about 100 s at 50 tokens/s, longer than the run) from a provider wire (cycling) at `--speed`
(default 50) tokens/s; a new stream starts as soon as one ends. `--cancels` (default 50) times
are drawn at random over the run; at each one a random stream that has received at least one
record and has not finished is cancelled (the client leaves `open_relay`, which closes the
response, as the app's Stop does). After `--seconds` no new stream starts and the open ones run
to their end.

Every stream carries `demo.tag` = its own label, which the relay forwards upstream as
`x-demo-tag`; the demo provider's request log (`GET /_demo/requests`, polled during the run since
it is bounded) gives, for a cancelled stream, the moment the relay's upstream request was seen
disconnected. Printed:

- streams completed / cancelled / errors (a completed stream ends with `complete` and the exact
  scenario output; anything else is an error), and whether every stream is one or the other;
- the server's VmRSS and open file count sampled every 2 s during the run (open files count its
  connections: client-side and upstream, live and kept alive), and at start (after a warm-up) and at the end (after the
  streams drained), and the upstream requests the log still shows open at the end;
- cancel (client close) -> upstream disconnect latency p50 / p95 / max (a stream cancelled after
  its upstream request had finished — the relay still sending the last records — is counted apart);
- the server's stderr tracebacks, and `os.getloadavg()` at start and end.

- the server's CPU time over the run and per upstream token (from /proc/PID/stat).

`--compare DIR` (repeatable) soaks a server from another source tree too, with the same settings,
one after the other (`--rounds N` repeats the set, alternating who goes first), and `--streams
10,20,100` runs each count in turn; a side-by-side table with the load average at the start and
end of each run closes the output. E.g. before/after a change: `git archive main | tar -x -C
/tmp/base`, then `--compare /tmp/base`. `--profile PATH` samples the server with py-spy
(`pip install py-spy`) into PATH.<run>.txt (collapsed stacks).

Bounded: every stream has a deadline, the whole run is cut off at `--seconds + 90`, and the
server is stopped at the end whatever happens. Loopback only.

Run: python tests/benchmarks/bench_soak.py [--seconds 60] [--streams 100] [--cancels 50] [--speed 50]
         [--compare DIR] [--rounds N] [--profile PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from livefill.relay.assembler import RecordAssembler
from livefill.relay.client import open_relay
from livefill.relay.records import CompleteRecord
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario

PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "ollama"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


ROOT = Path(__file__).resolve().parents[2]


def start_server(token: str, stderr_file, root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """`livefill-server` from the source tree `root` (this checkout, or another one to compare)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server", "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        text=True,
        cwd=root,
        env={**os.environ, "LIVEFILL_RELAY_TOKEN": token, "PYTHONPATH": str(root)},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    if not first.startswith("livefill-server listening on "):
        proc.kill()
        raise SystemExit(f"server did not start: {first!r}")
    return proc, first.rsplit(" ", 1)[1]


class Soak:
    def __init__(self, args: argparse.Namespace, url: str, token: str, pid: int) -> None:
        self.args = args
        self.pid = pid
        self.samples: list[tuple[float, int, int]] = []  # (seconds into the run, VmRSS KiB, open files)
        self.url = url
        self.token = token
        self.rng = random.Random(args.seed)
        self.outcomes: dict[str, str] = {}  # tag -> complete / cancelled / error kind
        self.closed_at: dict[str, float] = {}  # tag -> wall time the client closed a cancelled stream
        self.progress: dict[str, int] = {}  # tag -> records received, for streams still open
        self.tasks: dict[str, asyncio.Task] = {}
        self.log: dict[str, dict] = {}  # demo provider's request log, by request id, merged over polls
        self.started = 0

    async def stream(self, i: int, client: httpx.AsyncClient, deadline: float) -> None:
        tag = f"soak-{self.args.seed}-{i}"
        scenario = self.args.scenarios[i % len(self.args.scenarios)]
        body = {
            "scenario": scenario,
            "provider": PROVIDERS[i % len(PROVIDERS)],
            "mode": "settled",
            "demo": {"speed": self.args.speed, "seed": i, "ttft": 0, "tag": tag},
        }
        assembler = RecordAssembler()
        last = None
        self.progress[tag] = 0
        try:
            async with asyncio.timeout(max(1.0, deadline - time.monotonic())):
                async with open_relay(self.url, self.token, body, idle_timeout=30, client=client) as records:
                    async for record in records:
                        assembler.apply(record)
                        last = record
                        self.progress[tag] += 1
            ok = isinstance(last, CompleteRecord) and assembler.value == get_scenario(scenario).output
            self.outcomes[tag] = "complete" if ok else "wrong-output"
        except asyncio.CancelledError:
            self.closed_at[tag] = time.time()  # open_relay has closed the response on the way out
            self.outcomes[tag] = "cancelled"
        except TimeoutError:
            self.outcomes[tag] = "deadline"
        except Exception as exc:  # noqa: BLE001 - reported as a count by kind
            self.outcomes[tag] = f"{type(exc).__name__}: {exc}"[:160]
        finally:
            self.progress.pop(tag, None)
            self.tasks.pop(tag, None)

    async def keep_open(self, client: httpx.AsyncClient, slot: int, until: float, deadline: float) -> None:
        """One of the N slots: a stream after another until `until`."""
        await asyncio.sleep(slot * 0.01)  # spread the first wave over a second
        while time.monotonic() < until:
            i = self.started
            self.started += 1
            task = asyncio.create_task(self.stream(i, client, deadline))
            self.tasks[f"soak-{self.args.seed}-{i}"] = task
            await asyncio.gather(task, return_exceptions=True)

    async def cancels(self, start: float, seconds: float) -> int:
        times = sorted(self.rng.uniform(0.05 * seconds, 0.9 * seconds) for _ in range(self.args.cancels))
        done = 0
        for t in times:
            await asyncio.sleep(max(0.0, start + t - time.monotonic()))
            for _ in range(100):  # a stream mid-way: a record received, not finished
                candidates = [tag for tag, n in self.progress.items() if n >= 1 and tag in self.tasks]
                if candidates:
                    self.tasks[self.rng.choice(candidates)].cancel()
                    done += 1
                    break
                await asyncio.sleep(0.05)
        return done

    async def poll_log(self, stop: asyncio.Event) -> None:
        t0 = time.monotonic()
        async with httpx.AsyncClient(timeout=10) as client:
            while True:
                self.samples.append((time.monotonic() - t0, rss_kb(self.pid), open_files(self.pid)))
                for entry in (await client.get(self.url + "/_demo/requests?limit=2000")).json():  # a page: the newest
                    self.log[entry["id"]] = entry
                if stop.is_set():
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 2.0)

    async def run(self) -> int:
        seconds = self.args.seconds
        limits = httpx.Limits(max_connections=self.args.streams + 20, max_keepalive_connections=self.args.streams + 20)
        stop = asyncio.Event()
        poller = asyncio.create_task(self.poll_log(stop))
        async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30, connect=10)) as client:
            start = time.monotonic()
            until = start + seconds
            deadline = until + 60  # a stream started at the very end still has a minute to finish
            slots = [asyncio.create_task(self.keep_open(client, s, until, deadline)) for s in range(self.args.streams)]
            cancels = await self.cancels(start, seconds)
            await asyncio.gather(*slots)
            elapsed = time.monotonic() - start
        await asyncio.sleep(0.5)  # let the last disconnects land in the log
        stop.set()
        await poller
        self.elapsed = elapsed
        return cancels


def start_profiler(args: argparse.Namespace, pid: int, label: str) -> subprocess.Popen | None:
    """py-spy sampling the server for the run (--profile PATH: collapsed stacks, one per line, in
    PATH.<label>-<streams>.txt)."""
    if not args.profile:
        return None
    out = f"{args.profile}.{label.replace(' ', '')}-{args.streams}.txt"
    return subprocess.Popen(
        ["py-spy", "record", "--pid", str(pid), "--format", "raw", "--rate", "200", "--nonblocking",
         "--duration", str(int(args.seconds)), "--output", out],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def stop_profiler(profiler: subprocess.Popen | None) -> None:
    if profiler is None:
        return
    try:
        profiler.wait(timeout=30)
    except subprocess.TimeoutExpired:
        profiler.kill()
        profiler.wait(timeout=10)


async def warm_up(url: str, token: str) -> None:
    """One fast run per provider, so first-use costs (imports, adapters) are not in the figures."""
    for provider in PROVIDERS:
        async with open_relay(url, token, {"scenario": "invoice", "provider": provider, "demo": {"speed": 0}}) as records:
            async for _ in records:
                pass


async def soak_once(args: argparse.Namespace, root: Path, label: str) -> dict:
    """One soak against a server from `root`; prints its details and returns its figures."""
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryFile("w+") as stderr_file:
        proc, url = start_server(token, stderr_file, root)
        try:
            await asyncio.wait_for(warm_up(url, token), 60)
            await asyncio.sleep(1.0)
            rss0, fds0, load0 = rss_kb(proc.pid), open_files(proc.pid), loadavg()
            cpu0 = cpu_seconds(proc.pid)
            soak = Soak(args, url, token, proc.pid)
            profiler = start_profiler(args, proc.pid, label)
            try:
                async with asyncio.timeout(args.seconds + 90):
                    cancels_issued = await soak.run()
            finally:
                stop_profiler(profiler)
            cpu1 = cpu_seconds(proc.pid)
            await asyncio.sleep(1.0)  # idle again, as at the start
            rss1, fds1, load1 = rss_kb(proc.pid), open_files(proc.pid), loadavg()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        stderr_file.seek(0)
        server_stderr = stderr_file.read()

    outcomes = soak.outcomes
    completed = sum(1 for o in outcomes.values() if o == "complete")
    cancelled = sum(1 for o in outcomes.values() if o == "cancelled")
    errors = {tag: o for tag, o in outcomes.items() if o not in ("complete", "cancelled")}
    by_tag = {e["tag"]: e for e in soak.log.values() if e.get("tag", "") and e["tag"].startswith("soak-")}
    latencies, missing, finished_first, never_sent = [], [], [], []
    for tag, closed in soak.closed_at.items():
        entry = by_tag.get(tag)
        if entry is None:
            never_sent.append(tag)  # cancelled after `start`, before the relay's upstream request was logged
            continue
        if entry is not None and entry["finished"] and entry["finished_at"] is not None and entry["finished_at"] <= closed:
            finished_first.append(tag)  # the upstream had written everything before the client closed
            continue
        if entry is None or not entry["disconnected"] or entry["disconnected_at"] is None:
            missing.append((tag, None if entry is None else entry["outcome"]))
            continue
        latencies.append((entry["disconnected_at"] - closed) * 1000)
    still_open = [e["tag"] for e in by_tag.values() if e["outcome"] in ("pending", "streaming")]
    tracebacks = server_stderr.count("Traceback")
    tokens = sum(int(e.get("tokens_sent") or 0) for e in by_tag.values())
    cpu = cpu1 - cpu0

    print(f"[{label}] soak: {args.streams} concurrent relay streams for {args.seconds:g} s (ran {soak.elapsed:.1f} s incl. drain), "
          f"{args.speed:g} tokens/s, settled mode, scenarios {'/'.join(args.scenarios)}, providers {'/'.join(PROVIDERS)}")
    print(f"  server: {root}")
    print(f"  load average at start: {load0}   at end: {load1}   (cores: {os.cpu_count()})")
    print(f"  streams started {soak.started}: completed {completed}, cancelled {cancelled} (cancels issued "
          f"{cancels_issued}/{args.cancels}), errors {len(errors)}")
    print(f"  every stream complete or cancelled: {'yes' if not errors and len(outcomes) == soak.started else 'NO'}")
    for tag, o in list(errors.items())[:10]:
        print(f"    error {tag}: {o}")
    print(f"  server CPU during the run: {cpu:.1f} s over {soak.elapsed:.1f} s ({cpu / soak.elapsed * 100:.0f} % of one core); "
          f"upstream tokens {tokens}: {cpu / max(1, tokens) * 1e6:.0f} us of server CPU per token")
    print(f"  server RSS: start {rss0 / 1024:.1f} MiB  end {rss1 / 1024:.1f} MiB  ({(rss1 - rss0) / 1024:+.1f} MiB)")
    every = max(1, len(soak.samples) // 8)
    series = soak.samples[::every]
    print("  server RSS / open files during the run: " + ", ".join(
        f"{t:.0f}s {kb / 1024:.0f} MiB/{n}" for t, kb, n in series))
    print(f"  server open files: start {fds0}  end {fds1}  ({fds1 - fds0:+d})")
    print(f"  upstream requests logged for soak streams: {len(by_tag)}; still open at the end: {len(still_open)}")
    if latencies:
        p95 = pct(latencies, 95)
        print(f"  cancel -> upstream disconnect ({len(latencies)} matched): p50 {pct(latencies, 50):.2f} ms  "
              f"p95 {p95:.2f} ms  max {max(latencies):.2f} ms  (target p95 < 100 ms: {'met' if p95 < 100 else 'MISSED'})")
    else:
        print("  cancel -> upstream disconnect: no cancel matched")
    if finished_first:
        print(f"  cancelled after their upstream request had already finished (no disconnect to time): "
              f"{len(finished_first)} {finished_first[:5]}")
    if never_sent:
        print(f"  cancelled before the demo provider logged their upstream request (nothing to time): "
              f"{len(never_sent)} {never_sent[:5]}")
    if missing:
        print(f"  cancelled streams whose upstream request finished after the cancel (the cancel arrived too late): "
              f"{len(missing)} {missing[:5]}")
    print(f"  server stderr: {len(server_stderr.splitlines())} lines, {tracebacks} tracebacks", flush=True)
    for line in server_stderr.splitlines()[:3]:
        print(f"    | {line[:160]}")
    ok = not errors and not still_open and cancelled == cancels_issued
    return {
        "label": label, "streams": args.streams, "ok": ok, "load": f"{load0} -> {load1}",
        "cpu_pct": cpu / soak.elapsed * 100, "us_per_token": cpu / max(1, tokens) * 1e6,
        "p50": pct(latencies, 50) if latencies else float("nan"),
        "p95": pct(latencies, 95) if latencies else float("nan"),
        "max": max(latencies) if latencies else float("nan"),
        "matched": len(latencies), "late": len(missing), "errors": len(errors),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main_async(args: argparse.Namespace) -> int:
    roots = [("this tree", ROOT)] + [(f"other {i + 1}", Path(r).resolve()) for i, r in enumerate(args.compare)]
    results = []
    for rnd in range(args.rounds):
        for streams in args.streams_list:
            for label, root in (roots if rnd % 2 == 0 else roots[::-1]):  # alternate who goes first
                run_args = argparse.Namespace(**{**vars(args), "streams": streams})
                results.append(await soak_once(run_args, root, label))
    if len(results) > 1:
        print("\nside by side (cancel -> upstream disconnect; server CPU; load average start -> end):")
        print(f"  {'server':<10} {'streams':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'n':>3} {'late':>4} "
              f"{'CPU %':>6} {'us/token':>8}  load")
        for r in results:
            print(f"  {r['label']:<10} {r['streams']:>7} {r['p50']:>8.1f} {r['p95']:>8.1f} {r['max']:>8.1f} {r['matched']:>3} "
                  f"{r['late']:>4} {r['cpu_pct']:>6.0f} {r['us_per_token']:>8.0f}  {r['load']}")
        for label, root in roots:
            print(f"  {label}: {root}")
    return 0 if all(r["ok"] for r in results) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--streams", default="100", help="concurrent streams; a comma-separated list runs each in turn")
    parser.add_argument("--cancels", type=int, default=50)
    parser.add_argument("--speed", type=float, default=50.0, help="tokens per second of each upstream stream")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", default=None, help="write py-spy collapsed stacks of the server to PATH.<run>.txt")
    parser.add_argument("--compare", action="append", default=[], metavar="DIR",
                        help="also soak a server from this other source tree (e.g. `git archive main`), side by side")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole set (the order alternates)")
    parser.add_argument("--scenarios", default="invoice,weather,ticket,multilingual", help="comma-separated, cycled")
    args = parser.parse_args()
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    try:
        args.streams_list = [int(n) for n in str(args.streams).split(",") if n.strip()]
    except ValueError:
        parser.error(f"--streams: not a list of integers: {args.streams!r}")
    unknown = [s for s in args.scenarios if s not in SCENARIO_NAMES]
    if unknown or not args.scenarios:
        parser.error(f"--scenarios: unknown {unknown}; known: {', '.join(SCENARIO_NAMES)}")
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
