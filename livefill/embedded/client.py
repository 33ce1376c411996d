"""The app's side of the demo provider: start one in this process, and read its request log.

The request log (`GET /_demo/requests`) says what the server saw of each request: tokens sent of
the total, whether the client disconnected or the response finished, and the request's
`x-demo-tag` (a run sends its run id there, so it can find its own entry among other lanes').

The log is read right after a Stop, on the app's GUI thread, so its HTTP client must be cheap to
make: `log_client()` shares the transport's TLS context (a default httpx client loads the CA bundle,
50–150 ms, every time it is made), and one client serves every poll of one wait.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from livefill import switches
from livefill.embedded.server import EmbeddedServer
from livefill.embedded.server_process import ServerProcess
from livefill.wording import unit

if TYPE_CHECKING:
    import httpx

__all__ = ["ARRIVAL_WAIT", "app_server", "demo_request_entry", "demo_requests", "embedded_server", "log_client", "server_note"]


# A request reaches the log as soon as the server has read its head (a loopback hop): one the log
# has not seen this long after the run ended was never sent (see demo_request_entry).
ARRIVAL_WAIT = 0.2


def embedded_server(**options: Any) -> EmbeddedServer:
    """A demo provider (and relay) to run in this process, not yet started (`.start()` gives its
    URL). `options` are `livefill.embedded.server.EmbeddedServer`'s (host, port, relay_token, defaults)."""
    return EmbeddedServer(**options)


def app_server() -> EmbeddedServer | ServerProcess:
    """The app's demo provider and relay, not yet started: in a process of its own (its thread
    would take the GUI process's GIL for every token it sends: docs/figures-placement.md), or in
    this process with LIVEFILL_DEMO_SERVER=thread, and always on a platform that cannot hand a
    socket to a child by its descriptor (Windows)."""
    chosen = (switches.text("LIVEFILL_DEMO_SERVER") or "process").lower()
    if chosen == "thread" or not ServerProcess.supported():
        return EmbeddedServer()
    return ServerProcess()


def server_note(entry: Mapping[str, Any]) -> str:
    """'server stopped after 37 of 120 tokens' from one /_demo/requests entry."""
    sent, total = entry.get("tokens_sent"), entry.get("tokens_total")
    if sent is None or total is None:
        return ""
    tokens = unit(total, "token")
    if entry.get("disconnected"):
        return f"server stopped after {sent} of {total} {tokens}"
    if entry.get("finished"):
        return f"server finished: {sent} of {total} {tokens}"
    return f"server still sending: {sent} of {total} {tokens}"


def log_client() -> httpx.AsyncClient:
    """An HTTP client for the request log (close it: `async with log_client() as client`)."""
    import httpx  # lazy: with the next, kept off the window's start-up (httpx ~690 ms)

    from livefill.wire.providers.transport import _ssl_context  # lazy: it imports the anthropic SDK (seconds)

    return httpx.AsyncClient(timeout=5.0, verify=_ssl_context())


async def demo_requests(base_url: str, *, client: httpx.AsyncClient | None = None) -> list[dict[str, Any]]:
    """GET /_demo/requests of the demo provider at `base_url` (oldest first).

    `client`: an open httpx.AsyncClient to reuse (when polling); None: one for this call."""
    url = base_url.rstrip("/") + "/_demo/requests"
    if client is None:
        async with log_client() as own:
            response = await own.get(url)
    else:
        response = await client.get(url, timeout=5.0)
    response.raise_for_status()
    data = response.json()
    return data if isinstance(data, list) else list(data.get("requests", []))


async def demo_request_entry(
    base_url: str,
    *,
    since: float,
    run_id: str | None = None,
    wait: float = 1.0,
    client: httpx.AsyncClient | None = None,
) -> dict[str, Any] | None:
    """The newest request-log entry started after `since`, waiting up to `wait` s for it to be
    disconnected or finished. With `run_id`: the entry tagged with it (else the newest untagged
    one: an older relay forwards no tag), never another run's. A request the log has not seen
    within `ARRIVAL_WAIT` s never reached the server (a Stop while connecting): None then, without
    waiting the rest of `wait`. One HTTP client serves every poll (`client`, else one opened here)."""
    if client is None:
        async with log_client() as own:
            return await demo_request_entry(base_url, since=since, run_id=run_id, wait=wait, client=own)
    began = time.monotonic()
    deadline, arrival = began + wait, began + min(wait, ARRIVAL_WAIT)
    while True:
        entries = [e for e in await demo_requests(base_url, client=client) if float(e.get("started_at") or 0) >= since]
        if run_id:
            entries = [e for e in entries if e.get("tag") == run_id] or [e for e in entries if not e.get("tag")]
        entry = entries[-1] if entries else None
        if entry is not None and (entry.get("disconnected") or entry.get("finished")):
            return entry
        now = time.monotonic()
        if now >= deadline or (entry is None and now >= arrival):
            return entry
        await asyncio.sleep(0.02)
