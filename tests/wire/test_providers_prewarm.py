"""livefill.wire.providers.transport.prewarm: after it, a first request imports (almost) nothing.

The app calls prewarm() in a background thread so that the one-off work of a first request (CA
bundle, the SDK's lazy resources, the HTTP stack's lazy modules) does not stall the GUI thread.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # a subprocess

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from livefill.wire.providers import open_stream
    from livefill.wire.providers.request import ExtractionRequest
    from livefill.extraction.schemas import resolve_schema
    from livefill.wire.providers import transport
    from livefill.extraction.scenarios import get_scenario
    from livefill.demo.knobs import DemoDefaults
    from livefill.embedded.server import EmbeddedServer

    server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0), warm=False)
    server.start()
    if sys.argv[1] == "warm":
        transport.prewarm()
    scenario = get_scenario("weather")

    async def main():
        before = set(sys.modules)
        request = ExtractionRequest(provider="anthropic", base_url=server.url,
                                    schema=resolve_schema("weather"), document=scenario.document)
        async with open_stream(request) as events:
            async for _ in events:
                pass
        print(" ".join(sorted(set(sys.modules) - before)))

    asyncio.run(main())
    server.stop()
    """
)


def _new_modules(mode: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_a_first_request_after_prewarm_imports_nothing_of_the_sdk_or_http_stack():
    cold = _new_modules("cold")
    warm = _new_modules("warm")
    heavy = {m for m in cold if m.split(".")[0] in {"anyio", "httpcore", "httpcore2", "certifi", "opentelemetry"}}
    assert heavy, "the cold run should show the lazy imports prewarm exists for"
    assert not warm & heavy, sorted(warm & heavy)
