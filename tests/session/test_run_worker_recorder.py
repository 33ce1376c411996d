"""A lane's wire recorder (the wire inspector's) is the same whether its run is read in this process
or in a worker process, and with a worker the GUI's side does not parse the wire again.

With LIVEFILL_RUN_WORKER=process the worker runs the lane's recorder (same t0 and ceiling) and
each batch carries its journal; the app's recorder adopts it (livefill.recording.wiretap.adopt):
no per-event parse, no usage frame decoded, on the app's side, unless a tap there wants the wire.
"""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from livefill.extraction.scenarios import get_scenario
from livefill.recording.wire_positions import DocumentSpans
from livefill.recording.wiretap import WireRecorder
from livefill.session import run_remote
from livefill.session.lane import SessionLane
from livefill.session.run_status import Phase
from livefill.wire.usage import UsageTap

from tests.recording.test_wire_adopt import recorder_facts
from tests.session.test_run_demo import config

# what depends on how the bytes were cut into reads (two runs of the same stream cut them apart)
_CUT_DEPENDENT = ("reads", "firsts", "nexts", "cost", "version")


@pytest.fixture
def calls(monkeypatch):
    """How often the app's side called each per-event step of the wire taps."""
    counted: Counter[str] = Counter()
    for cls, name in ((WireRecorder, "on_read"), (WireRecorder, "on_frame"), (WireRecorder, "on_event"),
                      (WireRecorder, "adopt"), (DocumentSpans, "feed"), (UsageTap, "on_frame")):
        method = getattr(cls, name, None)
        if method is None:  # (a recorder that cannot adopt: the code before this test)
            continue

        def spy(self, *args, _method=method, _key=f"{cls.__name__}.{name}"):
            counted[_key] += 1
            return _method(self, *args)

        monkeypatch.setattr(cls, name, spy)
    return counted


async def lane_run(demo_server, mode: str, scenario: str, *, max_bytes: int | None = None, extra: bool = False):
    """One lane run at speed 0: the lane (released) and, with `extra`, a recorder told the wire
    as an observer's tap is (the same t0 and ceiling)."""
    lane = SessionLane(mode, mode=mode)
    if max_bytes is not None:
        lane.recorder_max_bytes = max_bytes
    lane.show(scenario, get_scenario(scenario).schema_name)
    t0 = time.monotonic()
    reference = None
    if extra:
        reference = lane.extra_tap = WireRecorder(t0=t0, max_bytes=lane.recorder_max_bytes)
    lane.start(config(demo_server, mode, scenario=scenario, speed=0), t0)
    status = await lane.wait()
    assert status.phase is Phase.COMMITTED, status.reason
    lane.release()
    return lane, status, reference


_IDS = re.compile(r"(msg_01|toolu_01|chatcmpl-|resp_|run_)([A-Za-z0-9]{8,})")


def same_but_ids(value: object) -> str:
    """`value` as text with the ids each run makes anew (the provider's message id, the relay's
    run id) blanked, at the same length: the bytes of two runs of one scenario differ only there."""
    return _IDS.sub(lambda m: m.group(1) + "x" * len(m.group(2)), repr(value))


POINTERS = ["/customer_name", "/line_items", "/line_items/1/description", "/total", "/items/2", "/products/0/name"]


@pytest.mark.parametrize("mode, scenario", [("partial", "invoice"), ("settled", "invoice"), ("naive", "catalog"),
                                            ("hybrid", "ticket")])
async def test_a_lanes_recorder_read_in_a_worker_is_the_one_read_in_process(demo_server, monkeypatch, calls, mode,
                                                                            scenario):
    monkeypatch.delenv("LIVEFILL_RUN_WORKER", raising=False)
    here, here_status, _ = await lane_run(demo_server, mode, scenario)
    assert calls["WireRecorder.on_event"] > 0 and calls["UsageTap.on_frame"] > 0  # the spies see in-process calls
    calls.clear()
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    there, there_status, _ = await lane_run(demo_server, mode, scenario)
    # the app's side adopted the worker's records: it parsed nothing, decoded no usage frame
    assert calls["WireRecorder.adopt"] > 0, "the run did not read in a worker"
    for step in ("WireRecorder.on_read", "WireRecorder.on_frame", "WireRecorder.on_event", "DocumentSpans.feed",
                 "UsageTap.on_frame"):
        assert calls[step] == 0, step
    rec, ref = there.recorder, here.recorder
    facts, expected = recorder_facts(rec, POINTERS, times=False), recorder_facts(ref, POINTERS, times=False)
    for name in _CUT_DEPENDENT:
        del facts[name], expected[name]
    assert same_but_ids(facts) == same_but_ids(expected)
    assert same_but_ids(rec.bytes_view()) == same_but_ids(ref.bytes_view())
    assert rec.total_bytes == there_status.bytes_received > 0
    assert (rec.next_frame, rec.next_event) == (ref.next_frame, ref.next_event) and rec.next_event > 10
    assert any(loc is not None and loc.spans for loc in facts["located"].values())
    # every time on the run's clock, from its start: reads when they arrived, frames and events when cut
    assert all(0 <= x.t <= there_status.elapsed for x in [*rec.reads(), *rec.frames(), *rec.events()])
    assert [r.t for r in rec.reads()] == sorted(r.t for r in rec.reads())
    assert there.metrics.usage.usage == here.metrics.usage.usage  # the tokens came as figures
    assert (here.metrics.usage.usage is None) == (mode in ("settled", "hybrid"))  # the relay says none


@pytest.mark.parametrize("mode, scenario", [("partial", "catalog"), ("settled", "catalog")])
async def test_an_adopting_recorder_drops_and_answers_as_one_told_every_event(demo_server, monkeypatch, calls, mode,
                                                                              scenario):
    """Under a small ceiling (drops) the lane's recorder, which adopted the worker's journal, is the
    one an observer's tap fed every read, frame and event builds: the same reads with the same
    arrival times, the same drops, the same answers."""
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "process")
    lane, _, reference = await lane_run(demo_server, mode, scenario, max_bytes=30_000, extra=True)
    assert calls["WireRecorder.adopt"] > 0, "the run did not read in a worker"
    rec = lane.recorder
    assert reference.dropped.any and reference.dropped.events > 10
    assert recorder_facts(rec, POINTERS, times=False) == recorder_facts(reference, POINTERS, times=False)
