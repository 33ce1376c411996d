"""livefill.wire.net_thread: a stream opened and read on the net thread, told and yielded here in order."""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager

import pytest

from livefill.wire import net_thread
from livefill.errors import ConnectionLost, KeyRefused
from livefill.wire.taps import ReadWatch, WireFrame, tee



@pytest.fixture(autouse=True)
def _reads_on_the_net_thread(monkeypatch):
    monkeypatch.setenv("LIVEFILL_READ_THREAD", "1")


def _frame(n: int) -> WireFrame:
    return WireFrame(kind="raw", text=f"f{n}", start=n, end=n + 1, payload=f"f{n}", segments=((0, n),))


class Log:
    """A tap that writes down every call, and on which thread it came."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.threads: set[str] = set()

    def on_read(self, data: bytes) -> None:
        self.calls.append(("read", data))
        self.threads.add(threading.current_thread().name)

    def on_frame(self, frame: WireFrame) -> None:
        self.calls.append(("frame", frame.text))

    def on_event(self, event) -> None:  # noqa: ANN001
        self.calls.append(("event", event))


def fake_source(n: int = 5, *, fail_after: int | None = None, fail_open: BaseException | None = None,
                gap: float = 0.0, where: list | None = None, closed: list | None = None):
    """A source like open_stream: taps told read, frame, event, then the event is yielded."""

    @asynccontextmanager
    async def source(tap):  # noqa: ANN001, ANN202
        if where is not None:
            where.append(threading.current_thread().name)
        if fail_open is not None:
            raise fail_open

        class Events:
            headers = {"content-type": "text/event-stream"}

            def __aiter__(self):  # noqa: ANN202
                return self._gen()

            async def _gen(self):  # noqa: ANN202
                for i in range(n):
                    if fail_after is not None and i == fail_after:
                        raise ConnectionLost("the peer closed the connection")
                    if gap:
                        await asyncio.sleep(gap)
                    if tap is not None:
                        tap.on_read(f"r{i}".encode())
                        tap.on_frame(_frame(i))
                        tap.on_event(f"e{i}")
                    yield f"e{i}"

        try:
            yield Events()
        finally:
            if closed is not None:
                closed.append(threading.current_thread().name)

    return source


async def _consume(source, tap):  # noqa: ANN001, ANN202
    seen = []
    async with net_thread.threaded(source, tap) as events:
        async for event in events:
            seen.append(event)
            tap.calls.append(("yield", event))
    return seen


async def test_taps_and_events_arrive_in_the_order_the_source_made_them():
    direct, threaded = Log(), Log()
    async with fake_source()(direct) as events:
        async for event in events:
            direct.calls.append(("yield", event))
    where: list[str] = []
    seen = await _consume(fake_source(where=where), threaded)
    assert seen == [f"e{i}" for i in range(5)]
    assert threaded.calls == direct.calls
    assert where == ["livefill-net"]  # opened there; the tap is told here
    assert threaded.threads == {threading.current_thread().name}


async def test_a_failure_while_reading_comes_after_the_events_before_it():
    log = Log()
    seen: list[str] = []
    with pytest.raises(ConnectionLost):
        async with net_thread.threaded(fake_source(fail_after=3), log) as events:
            async for event in events:
                seen.append(event)
    assert seen == ["e0", "e1", "e2"]


async def test_a_failure_to_open_raises_on_entering():
    entered = False
    with pytest.raises(KeyRefused):
        async with net_thread.threaded(fake_source(fail_open=KeyRefused("the key was refused")), Log()):
            entered = True
    assert not entered


async def test_a_cancel_closes_the_source_on_the_net_thread_before_it_goes_on():
    closed: list[str] = []
    got_one = asyncio.Event()

    async def consume() -> None:
        async with net_thread.threaded(fake_source(1000, gap=0.01, closed=closed), Log()) as events:
            async for _event in events:
                got_one.set()

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(got_one.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == ["livefill-net"]  # closed (the server would see the disconnect) before the cancel went on


async def test_a_read_keeps_the_time_it_arrived_on_the_net_thread(timing):
    watch = ReadWatch()  # on the monotonic clock
    arrived: list[float] = []

    class Stamp(Log):
        pass

    @asynccontextmanager
    async def source(tap):  # noqa: ANN001, ANN202
        class Events:
            headers: dict = {}

            async def _gen(self):  # noqa: ANN202
                arrived.append(time.monotonic())
                tap.on_read(b"x")
                yield "e"

            def __aiter__(self):  # noqa: ANN202
                return self._gen()

        yield Events()

    async with net_thread.threaded(source, tee(watch, Stamp())) as events:
        time.sleep(0.2)  # this loop is busy (a paint) while the read arrives on the net thread
        async for _event in events:
            told = time.monotonic()
    # stamped on the net thread as it arrived, not when this loop (busy 0.2 s) was told of it
    assert told - watch.last_read > 0.15
    assert watch.last_read >= arrived[0]
    timing.record("a read's stamp after its arrival on the net thread", watch.last_read - arrived[0], budget=0.005)


def test_off_unless_asked(monkeypatch):
    monkeypatch.delenv("LIVEFILL_READ_THREAD", raising=False)
    assert not net_thread.enabled()
    monkeypatch.setenv("LIVEFILL_READ_THREAD", "1")
    assert net_thread.enabled()


async def test_a_run_reads_through_the_net_thread_when_asked(demo_server, monkeypatch):
    from livefill.extraction.form import FormModel
    from livefill.session.run import Run
    from livefill.session.run_status import Phase
    from livefill.extraction.scenarios import get_scenario
    from livefill.extraction.schemas import schema_model
    from tests.session.test_run_demo import config

    opened: list[str] = []
    real = net_thread.threaded

    def spy(source, tap):  # noqa: ANN001, ANN202
        opened.append("threaded")
        return real(source, tap)

    monkeypatch.setattr(net_thread, "threaded", spy)
    for mode in ("partial", "settled"):
        form = FormModel(schema_model("invoice"))
        status = await Run(form, config(demo_server, mode, speed=0)).run()
        assert status.phase is Phase.COMMITTED, status.reason
        assert form.committed == get_scenario("invoice").output
    assert opened == ["threaded", "threaded"]
    monkeypatch.setenv("LIVEFILL_READ_THREAD", "0")
    await Run(FormModel(schema_model("invoice")), config(demo_server, "partial", speed=0)).run()
    assert opened == ["threaded", "threaded"]
