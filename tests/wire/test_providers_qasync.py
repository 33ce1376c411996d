"""Streams closed early under qasync (the app's loop) leave nothing behind for the garbage collector.

qasync installs no asyncgen hooks, so an async generator of the HTTP stack abandoned mid-body is
finalised outside any task, and prints "async generator ignored GeneratorExit", "no running event
loop" or AsyncLibraryNotFoundError. This runs the app's way (a QApplication, `qasync.run`) in a
subprocess against the demo provider and requires a silent stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # a subprocess

SCRIPT = textwrap.dedent(
    """
    import asyncio, gc, sys
    import qasync
    from PySide6.QtWidgets import QApplication
    from livefill.errors import StreamTimeout
    from livefill.wire.events import ArgsDelta
    from livefill.wire.providers import open_stream
    from livefill.wire.providers.request import PROVIDERS, ExtractionRequest
    from livefill.extraction.schemas import resolve_schema
    from livefill.extraction.scenarios import load_scenarios
    from livefill.demo.knobs import DemoDefaults
    from livefill.embedded.server import EmbeddedServer

    async def main(url):
        catalog, weather = load_scenarios()["catalog"], load_scenarios()["weather"]
        for provider in PROVIDERS:
            # left at the first fragment
            request = ExtractionRequest(provider=provider, base_url=url, schema=resolve_schema("catalog"),
                                        document=catalog.document, demo_headers={"x-demo-speed": "200"})
            async with open_stream(request) as events:
                async for event in events:
                    if isinstance(event, ArgsDelta):
                        break
            # left by an idle timeout
            request = ExtractionRequest(provider=provider, base_url=url, schema=resolve_schema("weather"),
                                        document=weather.document, demo_headers={"x-demo-fault": "stall_silent"})
            try:
                async with open_stream(request, idle_timeout=0.2) as events:
                    async for event in events:
                        pass
            except StreamTimeout:
                pass
            gc.collect()
        print("streams done", flush=True)

    server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0))
    url = server.start()
    app = QApplication([])
    qasync.run(main(url))
    gc.collect()
    server.stop()
    """
)


def run_silently(script: str, done_marker: str) -> None:
    """Run `script` the app's way in a subprocess; it must finish and leave stderr empty."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert done_marker in proc.stdout
    noise = [line for line in proc.stderr.splitlines() if line.strip()]
    assert noise == [], "\n".join(noise)


def test_closing_streams_early_under_qasync_is_silent() -> None:
    run_silently(SCRIPT, "streams done")
