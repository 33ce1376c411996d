"""gui.loop.SteadyQEventLoop: qasync's loop keeping one read notifier per descriptor."""

from __future__ import annotations

import asyncio
import socket

import anyio
import pytest
import qasync
from PySide6.QtCore import QSocketNotifier

from gui.loop import SteadyQEventLoop, new_loop


@pytest.fixture
def loop(qapp):
    loop = SteadyQEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


def _pair():
    a, b = socket.socketpair()
    a.setblocking(False)
    return a, b


def test_a_reader_removed_and_added_again_keeps_its_notifier_and_hears_only_while_added(loop):
    a, b = _pair()
    got: list[bytes] = []

    async def scenario() -> None:
        loop.add_reader(a.fileno(), lambda: got.append(a.recv(100)))
        first = loop._read_notifiers[a.fileno()]  # noqa: SLF001
        b.send(b"one")
        await asyncio.sleep(0.05)
        assert loop.remove_reader(a.fileno())
        b.send(b"two")
        await asyncio.sleep(0.05)
        assert got == [b"one"]  # removed: not called, the bytes wait in the socket
        loop.add_reader(a.fileno(), lambda: got.append(a.recv(100).upper()))  # another callback
        await asyncio.sleep(0.05)
        assert loop._read_notifiers[a.fileno()] is first  # noqa: SLF001 - the same notifier, enabled again
        assert got == [b"one", b"TWO"]
        assert not loop.remove_reader(12345)  # never added

    try:
        loop.run_until_complete(scenario())
    finally:
        loop.remove_reader(a.fileno())
        a.close()
        b.close()


def test_a_stream_read_many_times_makes_no_new_notifiers(loop, qapp):
    made: list[int] = []
    real = QSocketNotifier.__init__

    async def echo(reader, writer) -> None:  # noqa: ANN001
        while data := await reader.read(100):
            writer.write(data)
            await writer.drain()
        writer.close()

    async def scenario() -> None:
        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        # anyio's socket stream (what httpcore reads through) resumes reading before each receive
        # and pauses after it: with qasync's own loop each read made and dropped a notifier
        stream = await anyio.connect_tcp("127.0.0.1", port)
        for i in range(50):
            await stream.send(b"x%d" % i)
            assert await stream.receive() == b"x%d" % i
            if i == 4:  # the connections' notifiers exist by now
                made.clear()
                QSocketNotifier.__init__ = lambda self, *a: (made.append(1), real(self, *a))[1]  # type: ignore[method-assign]
        await stream.aclose()
        server.close()
        await server.wait_closed()

    try:
        loop.run_until_complete(scenario())
    finally:
        QSocketNotifier.__init__ = real  # type: ignore[method-assign]
    assert made == []


def test_a_failing_reader_goes_to_the_exception_handler_and_the_loop_goes_on(loop):
    a, b = _pair()
    seen: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    calls: list[int] = []

    def bad() -> None:
        a.recv(100)
        calls.append(1)
        raise RuntimeError("reader broke")

    async def scenario() -> None:
        loop.add_reader(a.fileno(), bad)
        b.send(b"x")
        await asyncio.sleep(0.05)
        b.send(b"y")
        await asyncio.sleep(0.05)

    try:
        loop.run_until_complete(scenario())
    finally:
        loop.remove_reader(a.fileno())
        a.close()
        b.close()
    assert len(calls) == 2  # still enabled after the failure
    assert isinstance(seen[0]["exception"], RuntimeError)


def test_the_stock_loop_on_request(qapp, monkeypatch):
    monkeypatch.setenv("LIVEFILL_STOCK_LOOP", "1")
    stock = new_loop(qapp)
    try:
        assert type(stock) is qasync.QEventLoop
    finally:
        stock.close()
    monkeypatch.delenv("LIVEFILL_STOCK_LOOP")
    steady = new_loop(qapp)
    try:
        assert isinstance(steady, SteadyQEventLoop)
    finally:
        steady.close()
