"""Benchmark: `livefill animate` on the committed invoice trace in compare view (naive, partial, settled).

    python tests/benchmarks/bench_animate.py                 # render docs/traces/invoice-demo.jsonl, print figures
    python tests/benchmarks/bench_animate.py --record PATH   # first record a fresh invoice demo trace to PATH

Prints the load average, the wall time of the whole command (a fresh process: Qt start-up, the
replay, the captures, the encoding), the file size, the frame count and the animation's length.
The targets: under 30 s and under 5 MB at 1280 px wide for a ~10 s invoice run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "docs" / "traces" / "invoice-demo.jsonl"


async def _record(path: Path, speed: float) -> None:
    from livefill.demo.protocol import DemoKnobs
    from livefill.extraction.form import FormModel
    from livefill.extraction.modes import Mode
    from livefill.session.run import Run
    from livefill.session.run_config import RunConfig
    from livefill.session.run_status import Phase
    from livefill.extraction.scenarios import get_scenario
    from livefill.extraction.schemas import schema_model
    from livefill.embedded.server import EmbeddedServer

    server = EmbeddedServer()
    server.start()
    try:
        sc = get_scenario("invoice")
        config = RunConfig(
            mode=Mode.PARTIAL, provider="anthropic", base_url=server.url, schema_name=sc.schema_name,
            document=sc.document, demo=DemoKnobs(scenario="invoice", speed=speed), relay_token=server.relay_token,
            record_path=str(path), label="invoice",
        )
        status = await Run(FormModel(schema_model(sc.schema_name)), config).run()
        if status.phase is not Phase.COMMITTED:
            raise SystemExit(f"the recording run did not commit: {status.reason}")
    finally:
        server.stop()


def record(path: Path, speed: float = 30.0) -> None:
    """Record a demo run of the invoice scenario (anthropic wire, partial mode) at `speed` tokens/s."""
    path.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(_record(path, speed))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", metavar="PATH", help="record a new invoice trace here first and animate it")
    parser.add_argument("--speed", type=float, default=30.0, help="tokens/s of a --record run (22: a ~10 s run)")
    parser.add_argument("--out", help="where to write the GIF (default: a temporary file)")
    parser.add_argument("--width", default="1280")
    parser.add_argument("--fps", default="10")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    trace = TRACE
    if args.record:
        trace = Path(args.record)
        record(trace, args.speed)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "compare-invoice.gif"
        print("loadavg before:", Path("/proc/loadavg").read_text().strip())
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from livefill.gui.app import main; sys.exit(main())", "animate", str(trace),
             str(out), "--compare", "naive,partial,settled", "--width", args.width, "--fps", args.fps],
            cwd=REPO, env=env, capture_output=True, text=True,
        )
        wall = time.monotonic() - started
        print("loadavg after: ", Path("/proc/loadavg").read_text().strip())
        if done.returncode != 0:
            print(done.stdout, done.stderr, sep="\n")
            return done.returncode
        from PIL import Image

        from livefill.recording.trace import load_trace

        with Image.open(out) as gif:
            frames = gif.n_frames
            total = 0
            for i in range(frames):
                gif.seek(i)
                total += gif.info.get("duration", 0)
            size = gif.size
        recorded = load_trace(trace).duration_ms
        print(done.stdout.strip())
        print(f"render (whole command): {wall:.1f} s   target < 30 s")
        print(f"file size: {out.stat().st_size / 1e6:.2f} MB   target < 5 MB   ({size[0]}x{size[1]} px)")
        print(f"frames: {frames}   animation: {total / 1000:.1f} s   "
              f"recorded run: {recorded / 1000:.1f} s (+2 s final hold)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
