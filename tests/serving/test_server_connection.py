"""livefill's server protocol (livefill.serving.connection): a client's departure is heard at once.

The protocol is driven by hand over a fake transport, so each assertion is about what happens
inside one call (no timing): the end of the client's bytes marks the request disconnected and runs
the app's disconnect callbacks in the same call that read it; uvicorn's own protocol waits for
`connection_lost`, which asyncio delivers one loop iteration later.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from livefill.serving.connection import DISCONNECT_EXTENSION, DisconnectHook, on_disconnect, protocol_class

REQUEST = b"GET /stream HTTP/1.1\r\nhost: 127.0.0.1:9\r\n\r\n"


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False
        self.written = bytearray()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 9), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def write(self, data: bytes) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _protocol(cls: type, app: Any, loop: asyncio.AbstractEventLoop) -> Any:
    config = uvicorn.Config(app, lifespan="off", log_config=None)
    config.load()
    protocol = cls(config=config, server_state=ServerState(), app_state={}, _loop=loop)
    protocol.connection_made(_Transport())
    return protocol


async def _streaming_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await asyncio.Event().wait()  # a stream that never ends by itself


@pytest.mark.parametrize("cls", [protocol_class(10.0)], ids=["livefill"])
def test_eof_marks_the_request_disconnected_and_runs_the_callbacks_in_the_same_call(cls):
    async def main() -> None:
        loop = asyncio.get_running_loop()
        protocol = _protocol(cls, _streaming_app, loop)
        protocol.data_received(REQUEST)
        hook = on_disconnect(protocol.cycle.scope)
        assert isinstance(hook, DisconnectHook)
        heard: list[str] = []
        hook.add(lambda: heard.append("gone"))
        await asyncio.sleep(0)  # the app starts and sends its head
        protocol.eof_received()
        assert heard == ["gone"]  # synchronously, inside eof_received
        assert protocol.cycle.disconnected
        protocol.connection_lost(None)
        assert heard == ["gone"]  # once
        late: list[str] = []
        hook.add(lambda: late.append("gone"))  # registered after the fact: runs at once
        assert late == ["gone"]
        for task in list(protocol.tasks):
            task.cancel()
        await asyncio.gather(*protocol.tasks, return_exceptions=True)

    asyncio.run(main())


def test_uvicorn_own_protocol_hears_nothing_at_eof():
    # What livefill's protocol improves on: uvicorn marks the request only in connection_lost,
    # which asyncio calls a loop iteration after the EOF was read; and it offers no hook.
    async def main() -> None:
        loop = asyncio.get_running_loop()
        protocol = _protocol(H11Protocol, _streaming_app, loop)
        protocol.data_received(REQUEST)
        assert DISCONNECT_EXTENSION not in (protocol.cycle.scope.get("extensions") or {})
        await asyncio.sleep(0)
        protocol.eof_received()
        assert not protocol.cycle.disconnected
        protocol.connection_lost(None)
        for task in list(protocol.tasks):
            task.cancel()
        await asyncio.gather(*protocol.tasks, return_exceptions=True)

    asyncio.run(main())


def test_a_completed_response_does_not_fire_the_hook():
    async def quick_app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def main() -> None:
        loop = asyncio.get_running_loop()
        protocol = _protocol(protocol_class(10.0), quick_app, loop)
        protocol.data_received(REQUEST)
        hook = on_disconnect(protocol.cycle.scope)
        heard: list[str] = []
        hook.add(lambda: heard.append("gone"))
        await asyncio.gather(*protocol.tasks)
        protocol.eof_received()
        protocol.connection_lost(None)
        assert heard == []

    asyncio.run(main())


def test_a_failing_callback_does_not_stop_the_others(caplog):
    hook = DisconnectHook()
    heard: list[int] = []
    hook.add(lambda: 1 / 0)
    hook.add(lambda: heard.append(1))
    hook.fire()
    assert heard == [1]
    assert "a disconnect callback failed" in caplog.text
