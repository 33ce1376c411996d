"""livefill.serving.runner.LoopbackServer: any ASGI app, built by its factory at start()."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from livefill.errors import UsageError
from livefill.serving.runner import LoopbackServer


def test_the_factory_builds_the_app_at_start_with_the_address_it_is_served_at():
    seen: list[str] = []

    def factory(url: str) -> Starlette:
        seen.append(url)

        async def hello(request: Request) -> PlainTextResponse:
            return PlainTextResponse(f"served at {url}")

        return Starlette(routes=[Route("/hello", hello)])

    server = LoopbackServer(factory, warm=False)
    url = server.bind()
    assert seen == [] and server.app is None  # bind() builds nothing
    with server:
        assert server.url == url and seen == [url] and server.running
        response = httpx.get(f"{url}/hello", timeout=5)
        assert response.text == f"served at {url}"
    assert not server.running
    with pytest.raises(UsageError):
        server.start()


def test_end_responses_runs_on_the_servers_loop_as_stop_begins():
    class Server(LoopbackServer):
        loops: list[asyncio.AbstractEventLoop] = []

        def end_responses(self) -> None:
            self.loops.append(asyncio.get_running_loop())

    server = Server(lambda url: Starlette(), warm=False)
    server.start()
    loop = server._loop
    server.stop()
    assert Server.loops == [loop]
