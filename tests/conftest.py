"""Shared test setup: Qt runs headless, and paths to the repository and the shared corpus."""

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def demo_server():
    """A started EmbeddedServer (demo provider + relay) shared by the whole session.

    Its knob defaults are speed 0 (as fast as possible) and no time to first token, so tests are
    fast; a test that needs timing sends `x-demo-speed` / `x-demo-ttft` itself. Use `.url`,
    `.relay_token` and `.requests()` (the request log).
    """
    from core.server.knobs import DemoDefaults
    from core.server.runner import EmbeddedServer

    server = EmbeddedServer(defaults=DemoDefaults(speed=0.0, ttft_ms=0.0))
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _qt_garbage_on_the_gui_thread(request):
    """Qt tests: no automatic garbage collection in other threads (see gui/gui_thread_gc.py).

    A cycle holding a Qt object left by one test could otherwise be collected by the demo
    server's thread, or inside a later test's event processing, and crash Qt.
    """
    if not {"qapp", "qtbot", "qloop"} & set(request.fixturenames):
        yield
        return
    from gui.gui_thread_gc import collect_between

    with collect_between():
        yield
