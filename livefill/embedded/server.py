"""The demo provider and the relay, served in this process: `EmbeddedServer`.

A `livefill.serving.runner.LoopbackServer` whose app is `livefill.embedded.app.build_app`: the
app's own server (in the child process of `livefill.embedded.server_process`, or on a thread of
the app with LIVEFILL_DEMO_SERVER=thread), `livefill-server`'s, and the test suite's. It keeps traces for replay (handed
to the demo provider once it exists) and reads the demo provider's request log in-process.
"""

from __future__ import annotations

import secrets
import threading
from typing import TYPE_CHECKING, Any

from livefill.defaults import HEAD_TIMEOUT
from livefill.errors import UsageError
from livefill.serving.runner import LoopbackServer
from livefill.wire.providers.http_failures import serve_in_process

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from livefill.demo.knobs import DemoDefaults
    from livefill.recording.trace import Trace
    from livefill.serving.guard import GuardLimits

__all__ = ["EmbeddedServer"]


class EmbeddedServer(LoopbackServer):
    """The demo provider (and relay) served by uvicorn on `host:port` in a background thread.

    Use as a context manager, or call `start()` (returns "http://127.0.0.1:PORT") and `stop()`.
    `relay_token`: the relay's bearer token (None: a random one); `defaults`: the demo provider's
    knobs for what a request leaves out; `limits`: the Guard's (None: its defaults).
    `app_headers`: the relay takes `x-livefill-upstream-key` and `x-livefill-record` from a
    loopback peer (True: the app's own relay; `livefill-server` passes False and refuses them).
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        relay_token: str | None = None,
        defaults: DemoDefaults | None = None,
        start_timeout: float = 30.0,
        limits: GuardLimits | None = None,
        head_timeout: float = HEAD_TIMEOUT,
        max_connections: int = 500,
        warm: bool = True,
        app_headers: bool = True,
    ) -> None:
        super().__init__(
            self._build_app,
            host=host,
            port=port,
            start_timeout=start_timeout,
            head_timeout=head_timeout,
            max_connections=max_connections,
            warm=warm,
        )
        self.relay_token = relay_token if relay_token is not None else secrets.token_urlsafe(24)
        self.defaults = defaults  # None: the demo provider's DemoDefaults()
        self.limits = limits  # None: GuardLimits()
        self.app_headers = app_headers
        self._served: Starlette | None = None  # the app, once built (set under _traces_lock)
        self._traces_lock = threading.Lock()
        self._pending_traces: list[tuple[Trace, str]] = []  # added before start()

    def _build_app(self, url: str) -> Starlette:
        from livefill.embedded.app import build_app  # lazy: bind() before a window shows must not pay for it (800-1350 ms)

        app = build_app(
            relay_token=self.relay_token, defaults=self.defaults, limits=self.limits, app_headers=self.app_headers
        )
        app.state.base_url = url
        serve_in_process(url)  # failures there are said without this loopback address
        self.defaults = app.state.demo.defaults
        with self._traces_lock:
            for trace, key in self._pending_traces:
                app.state.demo.add_trace(trace, key)
            self._pending_traces.clear()
            self._served = app
        return app

    def end_responses(self) -> None:
        if self._served is not None:
            self._served.state.demo.shutdown()

    def requests(self) -> list[dict[str, Any]]:
        """The demo provider's request log (same as GET /_demo/requests), oldest first."""
        if self._served is None:
            return []
        return self._served.state.demo.requests()

    def add_trace(self, trace: Trace, trace_id: str | None = None) -> str:
        """Keep a loaded trace (livefill.recording.trace.Trace) for replay; return its id. A request on the
        trace's wire with `x-demo-replay: <id>` (DemoKnobs(replay=id)) is answered by it. A
        trace added before `start()` (a bound server still starting) is handed over by `start()`."""
        with self._traces_lock:
            if self._served is None:
                if self._stopped:
                    raise UsageError("the server was stopped; it keeps no more traces")
                key = trace_id or f"trace_{secrets.token_hex(6)}"
                self._pending_traces.append((trace, key))
                return key
        return self._served.state.demo.add_trace(trace, trace_id)
