"""Cancel latency of the demo provider: 50 streams cancelled mid-way at 30 tokens/s.

For each run a client streams a fine-grained Anthropic response (one token per event) from an
embedded server, reads a few tokens, and closes the response (`aclose()`: the TCP connection is
closed, as the app's Stop button does). The server's request log gives the moment it saw the
disconnect and how many tokens it had written. Printed:

- close -> server-detected disconnect latency, p50 / p95 / max (target p95 < 50 ms);
- tokens the server wrote that the client had not read when it closed (in flight or produced after
  the close; target 0), and how many runs produced a token after the close timestamp.

Both ways the app can run the server are measured side by side: `embedded` (a background thread
of the client's own process, as the app does; the two threads share the GIL) and `process`
(`livefill-server` in a separate process). `--pause` puts an idle gap between runs.

Run: python tests/benchmarks/bench_cancel.py [--runs 50] [--speed 30] [--server both|embedded|process]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

from livefill.extraction.scenarios import get_scenario
from livefill.demo.knobs import DemoDefaults
from livefill.embedded.server import EmbeddedServer


def _body() -> dict:
    s = get_scenario("ticket")
    return {
        "model": "claude-demo",
        "max_tokens": 16000,
        "stream": True,
        "messages": [{"role": "user", "content": s.document}],
        "tools": [{"name": s.tool_name, "input_schema": s.json_schema()}],
        "tool_choice": {"type": "tool", "name": s.tool_name},
    }


async def one_cancel(client: httpx.AsyncClient, url: str, speed: float, read_tokens: int) -> dict:
    headers = {
        "x-api-key": "bench",
        "anthropic-beta": "fine-grained-tool-streaming-2025-05-14",
        "x-demo-speed": str(speed),
        "x-demo-ttft": "0",
    }
    response = await client.send(client.build_request("POST", url + "/v1/messages", json=_body(), headers=headers), stream=True)
    request_id = response.headers["request-id"]
    tokens = -1  # the first input_json_delta is the empty one
    buffer = b""
    async for data in response.aiter_raw():
        buffer += data
        *events, buffer = buffer.split(b"\n\n")
        tokens += sum(1 for e in events if e.startswith(b"event: content_block_delta"))
        if tokens >= read_tokens:
            break
    closed_at = time.time()
    await response.aclose()
    return {"id": request_id, "closed_at": closed_at, "tokens_read": tokens}


@contextlib.contextmanager
def serve(kind: str) -> Iterator[str]:
    """A server's base URL: embedded in this process, or `livefill-server` in a subprocess."""
    if kind == "embedded":
        with EmbeddedServer(defaults=DemoDefaults()) as server:
            yield server.url
        return
    process = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=10)


async def run(kind: str, runs: int, speed: float, seed: int, pause: float) -> dict:
    rng = random.Random(seed)
    with serve(kind) as url:
        results = []
        async with httpx.AsyncClient(timeout=30) as client:
            for _ in range(runs):
                results.append(await one_cancel(client, url, speed, rng.randint(2, 12)))
                if pause:
                    await asyncio.sleep(pause)
            await asyncio.sleep(0.2)  # let the last disconnects land in the log
            log = {e["id"]: e for e in (await client.get(url + "/_demo/requests")).json()}
    latencies, unread, after_close, missed = [], [], 0, 0
    for r in results:
        entry = log[r["id"]]
        if not entry["disconnected"]:
            missed += 1
            continue
        latencies.append((entry["disconnected_at"] - r["closed_at"]) * 1000)
        unread.append(entry["tokens_sent"] - r["tokens_read"])
        if entry["last_token_at"] is not None and entry["last_token_at"] > r["closed_at"]:
            after_close += 1
    latencies.sort()
    p50 = statistics.median(latencies)
    p95 = latencies[max(0, int(round(0.95 * len(latencies))) - 1)]
    print(f"[{kind}, pause {pause * 1000:g} ms] {runs} cancels at {speed:g} tokens/s, detected {runs - missed}/{runs}")
    print(f"  close -> server-detected disconnect: p50 {p50:.2f} ms  p95 {p95:.2f} ms  max {latencies[-1]:.2f} ms"
          f"  (target p95 < 50 ms: {'met' if p95 < 50 else 'MISSED'})")
    print(f"  tokens written but unread at close: total {sum(unread)}, max per run {max(unread)}"
          f"  (target 0: {'met' if sum(unread) == 0 else 'MISSED'})")
    print(f"  runs with a token produced after the close: {after_close}/{runs - missed}")
    return {"server": kind, "pause_ms": pause * 1000, "p50_ms": round(p50, 3), "p95_ms": round(p95, 3),
            "max_ms": round(latencies[-1], 3), "tokens_after_close": sum(unread),
            "runs_producing_after_close": after_close, "missed": missed}


async def run_all(args: argparse.Namespace) -> None:
    kinds = ["embedded", "process"] if args.server == "both" else [args.server]
    summary = []
    for kind in kinds:
        for pause in sorted({0.0, args.pause}):
            summary.append(await run(kind, args.runs, args.speed, args.seed, pause))
    print(json.dumps(summary))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--speed", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server", choices=["both", "embedded", "process"], default="both")
    parser.add_argument("--pause", type=float, default=0.05, help="idle seconds between runs (also run without)")
    args = parser.parse_args()
    asyncio.run(run_all(args))


if __name__ == "__main__":
    main()
