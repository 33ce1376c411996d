"""Memory and loop figures for the hostile cases of issue 27, item 3, against a real `livefill-server`.

One `livefill-server` process (127.0.0.1, a free port, no token needed for any of this); its VmRSS
is read from /proc/PID/status after each case (the issue's own measurements were RSS too):

1. 120 POSTs of a ~1.9 MB trace to `/_demo/traces` (before: +171 MB, never released; now the
   newest 32 / 16 MB are kept);
2. 2,100 provider requests each with a 100 KB `x-demo-tag` (before: RSS 93 -> 290 MB; now 431
   at the head limit, or h11's 400 / a reset past its buffer (status 0), nothing logged) and 2,100 with a 200-character tag and a 1 KB-echoing
   scenario name (the log's worst kept entries);
3. one `GET /_demo/requests?limit=2000` (before: 206 MB rendered on the loop, a 6.7 s stall): its
   size and time, and the waits of `GET /api/tags` sent around it;
4. 40 `GET /_demo/requests?limit=2000` whose clients never read (before: +370 MB pinned).

Printed with `os.getloadavg()` at the start and end. Bounded: every socket has a timeout and the
server is killed at the end. Run: python tests/benchmarks/bench_hostile_stores.py
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def trace_body(size: int) -> bytes:
    header = {
        "trace": "livefill", "version": 1, "provider": "anthropic", "wire": "anthropic", "schema": {"type": "object"},
        "request": {"model": "m"}, "started_at": "2026-12-01T00:00:00.000Z", "status": 200,
        "headers": {"content-type": "text/event-stream"}, "document": "x",
    }
    read = json.dumps({"t_ms": 1.0, "b64": base64.b64encode(b"event: ping\ndata: {}\n\n" * 40).decode()})
    lines = [json.dumps(header)] + [read] * (size // (len(read) + 1))
    lines.append(json.dumps({"end": "complete", "reason": None, "t_ms": 2.0}))
    return ("\n".join(lines) + "\n").encode()


def main() -> int:
    load0 = os.getloadavg()
    proc = subprocess.Popen(
        [sys.executable, "-m", "livefill.cli.server"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "LIVEFILL_RELAY_TOKEN": "bench-token-0123456789"},
    )
    try:
        line = proc.stdout.readline()
        url = line.split()[-1]
        port = int(url.rsplit(":", 1)[1])
        messages = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        with httpx.Client(timeout=60) as client:
            client.get(url + "/_demo/scenarios")
            print(f"start: RSS {rss_mb(proc.pid):.0f} MB")
            body = trace_body(1_900_000)
            for _ in range(120):
                client.post(url + "/_demo/traces", content=body)
            print(f"1. 120 x {len(body) / 1e6:.1f} MB traces posted: RSS {rss_mb(proc.pid):.0f} MB")
            codes: dict[int, int] = {}
            for _ in range(2100):
                try:
                    status = client.post(url + "/v1/messages", headers={"x-demo-tag": "t" * 100_000}, json=messages).status_code
                except httpx.TransportError:
                    status = 0  # h11 refused a head past its buffer and closed (a reset): counted as 0
                codes[status] = codes.get(status, 0) + 1
            print(f"2a. 2,100 x 100 KB x-demo-tag: statuses {codes}: RSS {rss_mb(proc.pid):.0f} MB")
            for _ in range(2100):
                client.post(url + "/v1/messages", headers={"x-demo-tag": "t" * 200, "x-demo-scenario": "s" * 1200}, json=messages)
            print(f"2b. 2,100 kept entries at their largest: RSS {rss_mb(proc.pid):.0f} MB")
            waits: list[float] = []
            stop = threading.Event()

            def probe() -> None:
                with httpx.Client(timeout=30) as other:
                    while not stop.is_set():
                        t = time.monotonic()
                        other.get(url + "/api/tags")
                        waits.append(time.monotonic() - t)

            prober = threading.Thread(target=probe, daemon=True)
            prober.start()
            time.sleep(0.3)
            t = time.monotonic()
            page = client.get(url + "/_demo/requests?limit=2000")
            took = time.monotonic() - t
            time.sleep(0.3)
            stop.set()
            prober.join(30)
            ordered = sorted(waits)
            print(
                f"3. GET /_demo/requests?limit=2000: {len(page.content) / 1e3:.0f} KB, {len(page.json())} entries, "
                f"{took * 1000:.0f} ms; {len(waits)} GET /api/tags around it: median "
                f"{ordered[len(ordered) // 2] * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
            )
        before = rss_mb(proc.pid)
        slow = []
        for _ in range(40):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(b"GET /_demo/requests?limit=2000 HTTP/1.1\r\nhost: 127.0.0.1:%d\r\n\r\n" % port)
            slow.append(sock)
        time.sleep(2.0)
        print(f"4. 40 GETs that never read: RSS {before:.0f} -> {rss_mb(proc.pid):.0f} MB")
        for sock in slow:
            sock.close()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(f"load average: start {load0[0]:.1f}, end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
