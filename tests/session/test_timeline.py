"""livefill/session/timeline.py: per lane, per field state transitions -> bars."""

from __future__ import annotations

from enum import Enum

from livefill.extraction.form import FieldState
from livefill.session.timeline import Segment, TimelineModel, normalise_state


def test_a_field_goes_pending_provisional_settled():
    tl = TimelineModel(["partial"])
    tl.start(100.0)
    tl.record("partial", "/customer_name", FieldState.PENDING, 100.5)
    tl.record("partial", "/customer_name", FieldState.PROVISIONAL, 101.0)
    tl.record("partial", "/customer_name", FieldState.PROVISIONAL, 101.2)  # same state: no split
    tl.record("partial", "/customer_name", FieldState.SETTLED, 102.0)
    bar = tl.bar("partial", "/customer_name")
    assert bar.segments == (
        Segment(state="pending", start=0.5, end=1.0),
        Segment(state="provisional", start=1.0, end=2.0),
    )
    assert (bar.start, bar.settled, bar.end) == (0.5, 2.0, 2.0)
    assert tl.fields == ["/customer_name"] and tl.last_time == 2.0


def test_settled_only_lane_gets_a_point_bar():
    tl = TimelineModel()
    tl.start(0.0)
    tl.record("settled", "/amount", "settled", 3.0)
    bar = tl.bar("settled", "/amount")
    assert bar.segments == () and bar.settled == 3.0 and bar.start == 3.0
    assert tl.lanes == ["settled"]


def test_stop_closes_open_segments_and_marks_the_lane():
    tl = TimelineModel(["naive", "partial"])
    tl.start(0.0)
    tl.record("partial", "/notes", "provisional", 1.0)
    tl.record("naive", "/notes", "provisional", 1.0)
    assert tl.bar("partial", "/notes").segments[-1].end is None and tl.running
    tl.stop("partial", 2.5)
    bar = tl.bar("partial", "/notes")
    assert bar.segments == (Segment(state="provisional", start=1.0, end=2.5),)
    assert bar.settled is None and bar.end == 2.5
    assert [(s.lane, s.t, s.outcome) for s in tl.stops()] == [("partial", 2.5, "stopped")]
    assert tl.running  # naive has not stopped
    tl.record("partial", "/notes", FieldState.EMPTY, 2.6)  # the restore after stop changes nothing
    assert tl.bar("partial", "/notes") == bar
    tl.stop("naive", 2.5, "stopped")
    assert not tl.running


def test_rows_follow_the_declared_field_order_then_first_seen():
    tl = TimelineModel(["a", "b"])
    tl.set_fields(["/x", "/y"])
    tl.start(0.0)
    tl.record("b", "/z", "pending", 0.1)
    tl.record("b", "/y", "pending", 0.2)
    tl.record("a", "/y", "pending", 0.3)
    assert tl.fields == ["/x", "/y", "/z"]
    assert [(b.pointer, b.lane) for b in tl.bars()] == [("/y", "a"), ("/y", "b"), ("/z", "b")]


def test_empty_before_anything_is_not_a_bar_and_start_clears():
    tl = TimelineModel(["a"])
    tl.start(0.0)
    tl.record("a", "/x", "empty", 0.1)
    assert tl.bar("a", "/x") is None
    tl.record("a", "/x", "invalid", 0.2)
    assert tl.bar("a", "/x").segments[0].state == "invalid"
    tl.start(5.0)
    assert tl.bars() == [] and tl.stops() == []


def test_states_from_any_enum_or_string():
    class Other(Enum):
        PROVISIONAL = 1

    assert normalise_state(Other.PROVISIONAL) == "provisional"
    assert normalise_state("Settled") == "settled"


def test_subscribers_hear_changes():
    tl = TimelineModel()
    calls = []
    unsubscribe = tl.subscribe(lambda: calls.append(1))
    tl.record("a", "/x", "pending", 0.0)
    unsubscribe()
    tl.record("a", "/x", "settled", 1.0)
    assert calls == [1]
