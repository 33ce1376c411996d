"""The relay under load: one relay process, 200 concurrent streams from a demo upstream at 50 tokens/s.

Three processes on loopback:

- the demo provider: `livefill-server` (its own process, so its work is not charged to the relay);
- the relay: `uvicorn --factory livefill.relay.app:create_relay_app` on a socket this script
  binds (127.0.0.1, a free port) and hands over with `--fd`; its demo upstream is the process
  above; the opt-in timing log (LIVEFILL_RELAY_TIMING_LOG) is on;
- this script: N concurrent `open_relay` clients (default 200), the scenario `invoice` at 50
  tokens/s, providers in rotation (anthropic, openai-chat, openai-responses, ollama), every run
  checked to end `complete` with the exact scenario output.

Printed:

- relay-added latency per settled record (`field` / `item`): from the moment the relay's read of
  the upstream bytes that settled the value returned, to the moment the record's `send` returned
  (handed to the socket) — p50 / p99 / max (target p99 < 20 ms). Measured inside the relay by
  its timing log, not guessed;
- the same, to the moment this script's client had the record parsed (adds the socket and the
  client's own loop; CLOCK_MONOTONIC is system-wide, so the two processes' clocks agree);
- end to end on the wall clock: the demo provider's log time of its last token -> the relay's
  `send` of `complete` (the Stop follows the last token at once), which also counts the time the
  bytes waited in the socket while the relay's event loop was busy (loop lag under load);
- the relay process's peak memory (ru_maxrss of the child, and VmHWM from /proc before it exits),
  with its RSS before the load for comparison;
- cancel: K clients closed after their first field; the demo provider's log gives the moment the
  relay's upstream request was seen disconnected (close -> upstream disconnect, p50 / max).

Bounded: every client has a deadline; the whole load phase is cut off after --max-seconds.

Run: python tests/benchmarks/bench_relay.py [--streams 200] [--speed 50] [--cancels 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from livefill.relay.assembler import RecordAssembler
from livefill.relay.client import open_relay
from livefill.relay.records import CompleteRecord, FieldRecord
from livefill.extraction.scenarios import get_scenario

PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "ollama"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def ms(x: float) -> str:
    return f"{x * 1000:.2f} ms"


def start_demo() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    if not first.startswith("livefill-server listening on "):
        proc.kill()
        raise SystemExit(f"demo provider did not start: {first!r}")
    return proc, first.rsplit(" ", 1)[1]


def start_relay(demo_url: str, token: str, timing_log: str, workers: int) -> tuple[subprocess.Popen, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    env = {
        **os.environ,
        "LIVEFILL_RELAY_TOKEN": token,
        "LIVEFILL_RELAY_DEMO_URL": demo_url,
        "LIVEFILL_RELAY_TIMING_LOG": timing_log,
        "LIVEFILL_RELAY_IDLE_TIMEOUT": "30",
    }
    cmd = [
        sys.executable, "-m", "uvicorn", "--factory", "livefill.relay.app:create_relay_app",
        "--fd", str(sock.fileno()), "--log-level", "warning", "--no-access-log", "--backlog", "1024",
    ]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(cmd, env=env, pass_fds=[sock.fileno()], stderr=subprocess.PIPE, text=True)
    sock.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the socket is already listening: wait until it answers
        try:
            r = httpx.post(url + "/relay/v1/extract", json={}, timeout=1.0)
            if r.status_code == 401:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("relay did not start: " + (proc.stderr.read() if proc.stderr else ""))


def tree(pid: int) -> list[int]:
    """`pid` and its live descendants (uvicorn --workers: the supervisor and its workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            todo += [int(c) for c in task.read_text().split()]
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process tree (threads included), from /proc."""
    total = 0
    for p in tree(pid):
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int, field: str) -> int:
    """The largest `field` (VmRSS, VmHWM) of the processes in the tree, in KiB."""
    best = 0
    for p in tree(pid):
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                best = max(best, int(line.split()[1]))
    return best


async def one_stream(
    i: int, client: httpx.AsyncClient, url: str, token: str, speed: float, deadline: float, received: dict,
    durations: list, runs: dict,
) -> str:
    sc = get_scenario("invoice")
    t0 = time.monotonic()
    body = {"scenario": "invoice", "provider": PROVIDERS[i % 4], "demo": {"speed": speed, "seed": 1000 + i}}
    assembler = RecordAssembler()
    try:
        async with asyncio.timeout(max(1.0, deadline - time.monotonic())):
            async with open_relay(url, token, body, idle_timeout=60, client=client) as records:
                async for record in records:
                    received[(records.start.run, record.seq)] = time.monotonic()
                    runs[records.start.run] = 1000 + i
                    assembler.apply(record)
                    last = record
        if not isinstance(last, CompleteRecord) or assembler.value != sc.output:
            return "wrong"
        durations.append(time.monotonic() - t0)
        return "ok"
    except TimeoutError:
        return "deadline"
    except Exception as exc:  # noqa: BLE001 - reported as a count
        return type(exc).__name__


async def one_cancel(url: str, token: str, demo_url: str, seed: int) -> float | None:
    body = {"scenario": "invoice", "provider": "anthropic", "demo": {"speed": 10, "seed": seed, "ttft": 0}}
    async with open_relay(url, token, body) as records:
        async for record in records:
            if isinstance(record, FieldRecord):
                break
        closed = time.time()
    async with httpx.AsyncClient() as client:
        for _ in range(200):
            entries = (await client.get(demo_url + "/_demo/requests")).json()
            mine = [e for e in entries if e.get("knobs", {}).get("seed") == seed]
            if mine and mine[0]["disconnected"]:
                return mine[0]["disconnected_at"] - closed
            await asyncio.sleep(0.01)
    return None


async def warm_up(url: str, token: str) -> None:
    """One fast run per provider, so first-use costs (imports, schema adapters) are not timed."""
    for provider in PROVIDERS:
        async with open_relay(url, token, {"scenario": "invoice", "provider": provider, "demo": {"speed": 0}}) as records:
            async for _ in records:
                pass


async def load(args: argparse.Namespace, url: str, token: str, demo_url: str) -> tuple[dict, dict, list]:
    received: dict = {}
    runs: dict[str, int] = {}
    durations: list[float] = []
    deadline = time.monotonic() + args.max_seconds
    t0 = time.monotonic()
    limits = httpx.Limits(max_connections=args.streams + 10, max_keepalive_connections=args.streams + 10)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30.0, read=60.0)) as client:
        outcomes = await asyncio.gather(
            *(one_stream(i, client, url, token, args.speed, deadline, received, durations, runs)
              for i in range(args.streams))
        )
    elapsed = time.monotonic() - t0
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o] = counts.get(o, 0) + 1
    async with httpx.AsyncClient() as client:
        log = [e for e in (await client.get(demo_url + "/_demo/requests?limit=2000")).json() if e.get("knobs", {}).get("seed", 0) >= 1000]
    cancels = [await one_cancel(url, token, demo_url, 50_000 + k) for k in range(args.cancels)]
    return {"elapsed": elapsed, "durations": durations, "upstream": log, "runs": runs, **counts}, received, cancels


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=200)
    ap.add_argument("--speed", type=float, default=50.0, help="demo tokens per second")
    ap.add_argument("--cancels", type=int, default=20)
    ap.add_argument("--max-seconds", type=float, default=120.0, help="bound on the load phase")
    ap.add_argument("--workers", type=int, default=1, help="relay worker processes (1 = one process)")
    args = ap.parse_args()
    args.streams = min(args.streams, 1000)

    token = secrets.token_urlsafe(16)
    timing_log = tempfile.NamedTemporaryFile(prefix="relay_timing_", suffix=".jsonl", delete=False).name
    demo, demo_url = start_demo()
    relay = None
    try:
        relay, url = start_relay(demo_url, token, timing_log, args.workers)
        rss_cold = rss_kb(relay.pid, "VmRSS")
        asyncio.run(warm_up(url, token))
        time.sleep(0.2)
        warm_lines = len(Path(timing_log).read_text().splitlines())
        rss_before = rss_kb(relay.pid, "VmRSS")
        cpu0 = {"relay": cpu_seconds(relay.pid), "demo": cpu_seconds(demo.pid), "clients": time.process_time()}
        summary, received, cancels = asyncio.run(load(args, url, token, demo_url))
        cpu = {"relay": cpu_seconds(relay.pid), "demo": cpu_seconds(demo.pid), "clients": time.process_time()}
        cpu = {k: cpu[k] - cpu0[k] for k in cpu}
        hwm = rss_kb(relay.pid, "VmHWM")
        relay.send_signal(signal.SIGTERM)
        relay.wait(timeout=30)
        maxrss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the relay: the only child reaped
    finally:
        if relay is not None and relay.poll() is None:
            relay.kill()
        demo.send_signal(signal.SIGTERM)
        try:
            demo.wait(timeout=10)
        except subprocess.TimeoutExpired:
            demo.kill()

    rows = [json.loads(line) for line in Path(timing_log).read_text().splitlines()[warm_lines:] if line.strip()]
    os.unlink(timing_log)
    settled = [r for r in rows if r["type"] in ("field", "item")]
    inside = [r["written_at"] - r["read_at"] for r in settled]
    to_client = [received[(r["run"], r["seq"])] - r["read_at"] for r in settled if (r["run"], r["seq"]) in received]

    print(f"relay benchmark: {args.streams} concurrent streams, invoice at {args.speed:g} tokens/s, "
          f"providers in rotation, relay workers: {args.workers}")
    durations = summary.pop("durations")
    upstream = summary.pop("upstream")
    runs = summary.pop("runs")
    print(f"  load phase: {summary.pop('elapsed'):.1f} s; outcomes: {summary}")
    if durations:
        from livefill.demo.generation import tokenize

        tokens = len(tokenize(get_scenario("invoice").output_text))
        print(f"  one stream ({tokens} tokens, {tokens / args.speed:.1f} s at the nominal rate): "
              f"p50 {statistics.median(durations):.1f} s, max {max(durations):.1f} s "
              "(includes the demo's time to first token; longer = the upstream fell behind on 2 cores)")
    gen = [e["last_token_at"] - e["first_token_at"] for e in upstream if e.get("last_token_at") and e.get("first_token_at")]
    starts = [e["started_at"] for e in upstream]
    if gen and starts:
        print(f"  upstream (demo provider log): {len(upstream)} requests arrived over {max(starts) - min(starts):.1f} s; "
              f"first->last token p50 {statistics.median(gen):.1f} s, max {max(gen):.1f} s")
    print("  CPU seconds during the load (2 cores): " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))
    print(f"  settled records (field/item) timed: {len(inside)}")
    if inside:
        print(f"  relay-added latency (upstream read -> record written):  p50 {ms(pct(inside, 50))}  "
              f"p99 {ms(pct(inside, 99))}  max {ms(max(inside))}  (target p99 < 20 ms)")
    if to_client:
        print(f"  upstream read -> record parsed by the client:            p50 {ms(pct(to_client, 50))}  "
              f"p99 {ms(pct(to_client, 99))}  max {ms(max(to_client))}")
    by_seed = {e["knobs"]["seed"]: e for e in upstream}
    e2e = [
        r["written_wall"] - by_seed[runs[r["run"]]]["last_token_at"]
        for r in rows
        if r["type"] == "complete" and r["run"] in runs and by_seed.get(runs[r["run"]], {}).get("last_token_at")
    ]
    if e2e:
        print(f"  demo wrote its last token -> relay wrote `complete` (wall clock, includes the kernel and the "
              f"relay's loop lag): p50 {ms(pct(e2e, 50))}  p99 {ms(pct(e2e, 99))}  max {ms(max(e2e))}")
    print(f"  relay process memory: RSS at start {rss_cold / 1024:.1f} MiB, after a warm-up run per provider "
          f"{rss_before / 1024:.1f} MiB; peak VmHWM "
          f"{hwm / 1024:.1f} MiB; ru_maxrss of the child {maxrss_children / 1024:.1f} MiB"
          + ("  (workers: the largest process)" if args.workers > 1 else ""))
    seen = [c for c in cancels if c is not None]
    if cancels:
        print(f"  cancel, client close -> upstream disconnect seen by the demo provider ({len(seen)}/{len(cancels)} seen): "
              + (f"p50 {ms(statistics.median(seen))}  max {ms(max(seen))}" if seen else "none seen"))
    return 0 if summary.get("ok", 0) == args.streams else 1


if __name__ == "__main__":
    sys.exit(main())
