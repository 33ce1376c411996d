"""A relay stream left early under qasync (the app's loop) leaves nothing to the garbage collector.

qasync installs no asyncgen hooks: unless RelayStream.aclose unwinds the httpx chain inside the
task, leaving `open_relay` mid-body prints "async generator ignored GeneratorExit" at collection.
Run the app's way (QApplication + qasync.run) in a subprocess and require a silent stderr.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.wire.test_providers_qasync import run_silently

pytestmark = pytest.mark.slow  # a subprocess

SCRIPT = textwrap.dedent(
    """
    import gc, sys
    import qasync
    from PySide6.QtWidgets import QApplication
    from livefill.relay.client import open_relay
    from livefill.demo.knobs import DemoDefaults
    from livefill.embedded.server import EmbeddedServer

    async def main(server):
        for provider in ("anthropic", "openai-chat", "ollama"):
            body = {"scenario": "catalog", "provider": provider, "demo": {"speed": 100}}
            async with open_relay(server.url, server.relay_token, body) as records:
                seen = 0
                async for record in records:
                    seen += 1
                    if seen == 3:
                        break
            gc.collect()
        print("relay streams done", flush=True)

    server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0))
    server.start()
    app = QApplication([])
    qasync.run(main(server))
    gc.collect()
    server.stop()
    """
)


def test_leaving_a_relay_stream_early_under_qasync_is_silent() -> None:
    run_silently(SCRIPT, "relay streams done")
