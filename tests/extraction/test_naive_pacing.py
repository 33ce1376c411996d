"""The naive lane parses at most once a frame once its buffer is large, and catches up within one."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager

from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason
from livefill.extraction.form import FormModel
from livefill.extraction.naive import naive_parse
from livefill.extraction.readers import NaiveBufferReader
from livefill.extraction.modes import Mode
from livefill.session.run import Run
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model

CATALOG = get_scenario("catalog")


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_small_buffers_are_parsed_on_every_delta_whatever_the_clock():
    clock = FakeClock()  # time stands still: every parse "took 0 s", and no time passes between
    reader = NaiveBufferReader(None, schema_model("catalog"), clock=clock)  # type: ignore[arg-type]
    text = CATALOG.output_text[: NaiveBufferReader.MIN_CHARS - 100]
    for piece in _pieces(text):
        reader.feed(ArgsDelta(text=piece))
        assert reader.deferred is None


class TickingClock(FakeClock):
    """Moves `tick` seconds every time it is read: a parse (two reads) "takes" one tick."""

    def __init__(self, tick: float) -> None:
        super().__init__()
        self.tick = tick

    def __call__(self) -> float:
        self.t += self.tick
        return self.t


def test_a_large_buffer_is_parsed_at_most_once_per_window_and_flush_catches_up():
    clock = TickingClock(0.001)  # a parse takes 1 ms: the next waits min(19 x 1 ms, a frame)
    reader = NaiveBufferReader(None, schema_model("catalog"), clock=clock)  # type: ignore[arg-type]
    text = CATALOG.output_text
    pieces = _pieces(text)
    parse_times = []
    for piece in pieces:
        reader.feed(ArgsDelta(text=piece))
        if reader.deferred is None:
            parse_times.append((reader._chars, clock.t))  # noqa: SLF001
        else:
            assert 0 < reader.deferred <= NaiveBufferReader.FRAME_S
        clock.t += 0.001  # the next delta 1 ms later
    late = [t for chars, t in parse_times if chars >= NaiveBufferReader.MIN_CHARS]
    gaps = [b - a for a, b in zip(late, late[1:])]
    assert gaps and min(gaps) >= NaiveBufferReader.FRAME_S - 1e-9  # at most once a frame
    after = sum(1 for i in range(len(pieces)) if sum(map(len, pieces[: i + 1])) >= NaiveBufferReader.MIN_CHARS)
    assert len(late) < after / 3  # deltas ~3 ms apart, parses >= 16.7 ms apart
    assert reader.deferred is not None  # the last deltas wait for the flush
    reader.flush()
    assert reader.deferred is None
    assert reader._value == naive_parse(text)  # noqa: SLF001


def test_deferred_parse_waits_for_the_cost_ratio_or_a_frame_whichever_is_shorter():
    clock = FakeClock()
    reader = NaiveBufferReader(None, schema_model("catalog"), clock=clock)  # type: ignore[arg-type]
    text = CATALOG.output_text
    reader._reader.append(text[:10_000])  # noqa: SLF001 - a large buffer, as after many deltas
    reader._chars = 10_000  # noqa: SLF001
    # a parse that took 0.2 ms: the next waits 19 x 0.2 = 3.8 ms
    reader._parsed_at, reader._cost = 1.0, 0.0002  # noqa: SLF001
    clock.t = 1.001
    assert reader.feed(ArgsDelta(text=text[10_000:10_010])) == []
    assert abs(reader.deferred - 0.0028) < 1e-9
    # a parse that took 5 ms: capped at one frame
    reader._cost = 0.005  # noqa: SLF001
    clock.t = 1.002
    reader.deferred = None
    reader.feed(ArgsDelta(text=text[10_010:10_020]))
    assert abs(reader.deferred - (NaiveBufferReader.FRAME_S - 0.002)) < 1e-9
    # once the window has passed the delta is parsed at once
    clock.t = 1.0 + NaiveBufferReader.FRAME_S + 0.001
    assert reader.feed(ArgsDelta(text=text[10_020:10_030])) != [] or reader.deferred is None
    assert reader.deferred is None


def test_block_stop_flushes_what_was_put_off():
    clock = TickingClock(0.0001)
    reader = NaiveBufferReader(None, schema_model("catalog"), clock=clock)  # type: ignore[arg-type]
    for piece in _pieces(CATALOG.output_text):
        reader.feed(ArgsDelta(text=piece))  # 0.1 ms per parse, none between deltas
    assert reader.deferred is not None
    reader.feed(BlockStop())
    assert reader.deferred is None
    assert reader.value(None) == json.loads(CATALOG.output_text)


async def test_a_run_shows_a_burst_within_a_frame_of_its_last_delta_even_if_the_stream_goes_silent():
    """Every delta of the catalog arrives at once, then nothing (a silent stall): the deltas the
    reader put off are applied by the run's timer, not left until the next event."""
    text = CATALOG.output_text
    cut = len(text) - 7  # stop inside the last values
    release = asyncio.Event()

    def source(tap):  # noqa: ANN001
        @asynccontextmanager
        async def opened():
            async def gen():
                for piece in _pieces(text[:cut]):
                    tap.on_read(piece.encode())
                    yield ArgsDelta(text=piece)
                await release.wait()  # silent until released
                yield ArgsDelta(text=text[cut:])
                yield BlockStop()
                yield Stop(reason=StopReason.COMPLETE, raw="tool_use")

            g = gen()
            try:
                yield g
            finally:
                await g.aclose()

        return opened()

    form = FormModel(schema_model("catalog"), marking=False)
    run = Run(form, RunConfig(mode=Mode.NAIVE, schema_name="catalog", label="catalog"), source=source)
    task = asyncio.ensure_future(run.run())
    await asyncio.sleep(0.2)  # far more than a frame after the burst
    assert form.document == naive_parse(text[:cut])
    release.set()
    status = await task
    assert status.phase is Phase.COMMITTED
    assert form.committed == json.loads(text)
