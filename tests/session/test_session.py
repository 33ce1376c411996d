"""The Qt-free session: settings as one frozen value, change events, lanes, and runs from scripted sources."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from contextlib import asynccontextmanager

import pytest

from livefill.wire.events import ArgsDelta, BlockStop, Stop, StopReason
from livefill.extraction.form import FieldState
from livefill.recording.history import History
from livefill.extraction.modes import Mode
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.session.compare import DEFAULT_MODES, MAX_LANES, MIN_LANES, parse_modes
from livefill.session.request_notes import match_entries
from livefill.session.session import SINGLE, Session
from livefill.session.session_events import ActiveChanged, AllDone, LaneDone, LanesChanged, SettingsChanged, ViewChanged
from livefill.session.lane import LaneError, LaneFinished, LaneFormReplaced, LaneStatus, outcome_of
from livefill.wire.taps import tee as tee_taps
from livefill.session.settings import DEFAULT_SEED, FAULT_NAMES, RunSettings, check_fault, check_slicing

INVOICE = get_scenario("invoice")


class Script:
    """Every run gets these events (floats are pauses); `hold` keeps the stream open until cancelled."""

    def __init__(self, events, *, hold: bool = False):
        self.events = events
        self.hold = hold
        self.opened = 0
        self.closed = 0

    def __call__(self, tap):
        @asynccontextmanager
        async def source():
            self.opened += 1

            async def gen():
                for ev in self.events:
                    if isinstance(ev, (int, float)):
                        await asyncio.sleep(ev)
                        continue
                    tap.on_read(b"x" * 4)
                    yield ev
                if self.hold:
                    await asyncio.Event().wait()

            g = gen()
            try:
                yield g
            finally:
                await g.aclose()
                self.closed += 1

        return source()


def complete(text: str = INVOICE.output_text, size: int = 8) -> list:
    return [*(ArgsDelta(text=text[i : i + size]) for i in range(0, len(text), size)), BlockStop(),
            Stop(reason=StopReason.COMPLETE, raw="tool_use")]


def events_of(session):
    seen = []
    session.subscribe(seen.append)
    return seen


# -- settings --------------------------------------------------------------------------------


def test_settings_are_one_frozen_checked_value():
    s = RunSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.speed = 3  # type: ignore[misc]
    assert s.mode is Mode.PARTIAL and s.slicing == "event" and s.fault is None
    assert RunSettings(mode="naive").mode is Mode.NAIVE
    assert RunSettings(speed=10).speed == 10.0
    assert s.with_(speed=100).changed(s) == {"speed"}
    assert RunSettings(fault="Max_Tokens@0.25").fault == "max_tokens@0.25"
    assert RunSettings(fault="none").fault is None
    for bad in ({"provider": "nobody"}, {"speed": -1}, {"slicing": "sometimes"}, {"fault": "nonsense"},
                {"fault": "disconnect@2"}, {"mode": "bogus"}):
        with pytest.raises(ValueError):
            RunSettings(**bad)


def test_fault_and_slicing_checks():
    assert "disconnect" in FAULT_NAMES
    assert check_fault(None) is None and check_fault("error") == "error"
    with pytest.raises(ValueError, match="between 0 and 1"):
        check_fault("disconnect@2")
    with pytest.raises(ValueError, match="unknown fault"):
        check_fault("nonsense")
    assert [check_slicing(x) for x in ("event", "7", "coalesce:50")] == ["event", "7", "coalesce:50"]
    for bad in ("0", "coalesce:", "x"):
        with pytest.raises(ValueError):
            check_slicing(bad)


def test_replace_emits_one_event_naming_what_changed():
    session = Session()
    seen = events_of(session)
    old = session.settings
    new = session.replace(speed=100, seed=3)
    assert session.settings is new and new.speed == 100 and new.seed == 3
    assert seen == [SettingsChanged(new, old, frozenset({"speed", "seed"}))]
    session.replace(speed=100)  # nothing changed: no event
    assert len(seen) == 1
    with pytest.raises(ValueError):
        session.replace(speed=-5)
    assert session.settings is new


def test_a_wire_change_drops_a_fault_the_new_wire_cannot_carry():
    session = Session()
    session.replace(provider="ollama", fault="blank_line")
    seen = events_of(session)
    new = session.replace(provider="anthropic")  # the toolbar's wire choice, or a replay's trace
    assert new.provider == "anthropic" and new.fault is None
    assert seen[-1].changed == frozenset({"provider", "fault"})
    session.replace(fault="disconnect@0.5")
    assert session.replace(provider="openai-chat").fault == "disconnect@0.5"  # one every wire carries stays


def test_the_single_form_is_kept_per_scenario_and_marks_by_mode():
    session = Session()
    invoice = session.form
    invoice.set_value("/customer_name", "Mine")
    session.replace(scenario="ticket")
    assert session.form is not invoice and session.form.spec_for("/summary") is not None
    session.replace(scenario="invoice")
    assert session.form is invoice and invoice.value("/customer_name") == "Mine"
    assert invoice.marking is True
    replaced = []
    session.single.subscribe(lambda e: replaced.append(e) if isinstance(e, LaneFormReplaced) else None)
    session.replace(mode=Mode.NAIVE)
    assert session.single.mode is Mode.NAIVE and invoice.marking is False and replaced
    session.set_lane_mode(SINGLE, "blocking")
    assert session.settings.mode is Mode.BLOCKING and invoice.marking is True


def test_run_config_comes_from_the_settings():
    session = Session(RunSettings(scenario="ticket", provider="ollama", base_url="http://x", speed=80, slicing="7",
                                  fault="max_tokens@0.25", relay_token="t", show_provisional_numbers=True,
                                  model="m1", idle_timeout=3))
    config = session.run_config()
    ticket = get_scenario("ticket")
    assert (config.provider, config.base_url, config.model, config.relay_token) == ("ollama", "http://x", "m1", "t")
    assert (config.schema_name, config.document) == (ticket.schema_name, ticket.document)
    assert config.demo.headers() == {
        "x-demo-scenario": "ticket", "x-demo-speed": "80", "x-demo-slice": "7", "x-demo-fault": "max_tokens@0.25",
    }
    assert config.show_provisional_numbers and config.idle_timeout == 3
    assert config.label == "ticket · ollama · fault max_tokens@0.25"
    session.replace(document="Invoice no. 9", schema_name="invoice", fault=None)
    config = session.run_config()
    assert (config.document, config.schema_name) == ("Invoice no. 9", "invoice")
    assert session.form.spec_for("/customer_name") is not None  # read with the chosen schema
    session.enter_compare()
    assert session.run_config().demo.seed == DEFAULT_SEED  # said explicitly in compare view
    session.replace(seed=11)
    assert session.run_config().demo.seed == 11


# -- lanes -----------------------------------------------------------------------------------


def test_compare_is_the_same_session_with_two_to_five_lanes():
    session = Session()
    seen = events_of(session)
    assert session.lanes == [session.single] and not session.comparing
    session.enter_compare()
    assert session.comparing and session.modes == list(DEFAULT_MODES)
    assert [e for e in seen if isinstance(e, ViewChanged)] == [ViewChanged(True)]
    lanes = session.lanes
    assert len({id(lane.form) for lane in lanes}) == 3
    assert [lane.form.marking for lane in lanes] == [False, True, True]
    while len(session.lanes) < MAX_LANES:
        assert session.add_lane() is not None
    assert session.add_lane() is None
    assert [lane.title for lane in session.lanes] == ["naive", "partial", "settled", "partial 2", "partial 3"]
    assert session.compare_feed.model.lanes == [lane.name for lane in session.lanes]
    while len(session.lanes) > MIN_LANES:
        assert session.remove_lane(session.lanes[-1].name)
    assert not session.remove_lane(session.lanes[0].name)
    session.set_lane_mode(session.lanes[1].name, "hybrid")
    assert session.modes == [Mode.NAIVE, Mode.HYBRID] and session.settings.mode is Mode.PARTIAL
    assert isinstance(seen[-1], LanesChanged) and seen[-1].names == tuple(lane.name for lane in session.lanes)
    with pytest.raises(ValueError):
        session.remove_lane(SINGLE) if len(session.lanes) > MIN_LANES else session.set_modes(["naive"])
    session.leave_compare()
    assert session.lanes == [session.single]
    session.enter_compare()
    assert session.modes == [Mode.NAIVE, Mode.HYBRID]  # kept while the single form was shown
    session.enter_compare(["partial", "blocking", "naive"])
    assert session.modes == [Mode.PARTIAL, Mode.BLOCKING, Mode.NAIVE]


def test_compare_lanes_get_a_fresh_form_for_another_scenario():
    session = Session()
    session.enter_compare(["naive", "partial"])
    lane = session.lanes[1]
    lane.form.set_value("/customer_name", "Typed")
    session.replace(scenario="ticket")
    session.replace(scenario="invoice")
    assert lane.form.value("/customer_name") in (None, "") or lane.form.committed == {}


def test_parse_modes():
    assert parse_modes("naive, partial,settled") == [Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED]
    for bad in ("naive", "naive,partial,settled,hybrid,blocking,partial", "naive,bogus"):
        with pytest.raises(ValueError):
            parse_modes(bad)


# -- runs ------------------------------------------------------------------------------------


async def test_a_single_run_commits_writes_history_and_reports(tmp_path):
    script = Script(complete())
    session = Session(RunSettings(base_url="http://unused"), history=History(tmp_path / "h.jsonl"), source=script)
    seen = events_of(session)
    statuses = []
    session.single.subscribe(lambda e: statuses.append(e.status.phase) if isinstance(e, LaneStatus) else None)
    t0 = session.start()
    assert t0 is not None and session.active and session.start() is None  # a second Start is ignored
    final = await session.wait()
    assert [s.phase for s in final] == [Phase.COMMITTED]
    assert session.form.committed == json.loads(INVOICE.output_text)
    assert len(History(tmp_path / "h.jsonl").read()) == 1
    assert Phase.STREAMING in statuses
    kinds = [type(e) for e in seen]
    assert kinds == [ActiveChanged, LaneDone, ActiveChanged, AllDone]
    assert seen[0] == ActiveChanged(True) and seen[2] == ActiveChanged(False)
    recorder = session.single.recorder
    assert recorder is not None and recorder.bytes_view()
    assert session.single_feed.model.stops  # the timeline closed the lane's bars
    assert session.single.metrics.summary().outcome == "committed"
    assert session.single.metrics.summary().displays == 0  # the single form is not measured


async def test_compare_start_gives_every_lane_the_same_config_and_its_own_mode():
    script = Script(complete())
    session = Session(RunSettings(scenario="invoice", speed=50, slicing="7"), source=script, fetch_notes=False)
    session.enter_compare(["naive", "partial", "blocking"])
    session.start()
    configs = [lane.run.config for lane in session.lanes]
    assert [c.mode for c in configs] == [Mode.NAIVE, Mode.PARTIAL, Mode.BLOCKING]
    assert len({c.demo for c in configs}) == 1 and configs[0].demo.seed == DEFAULT_SEED
    assert [c.label for c in configs] == [f"invoice · anthropic · lane {m}" for m in ("naive", "partial", "blocking")]
    statuses = await session.wait()
    assert [s.phase for s in statuses] == [Phase.COMMITTED] * 3
    assert script.opened == script.closed == 3
    assert session.single.run is None  # the single form did not run
    assert all(lane.metrics.summary().outcome == "committed" for lane in session.lanes)
    assert all(lane.metrics.summary().displays > 0 for lane in session.lanes)


async def test_stop_cancels_every_lane_and_each_ends_as_its_mode_says():
    script = Script(complete()[:20], hold=True)
    session = Session(source=script, fetch_notes=False)
    session.enter_compare(["naive", "partial"])
    naive, partial = session.lanes
    partial.form.set_value("/customer_name", "Before")
    before = partial.form.committed
    session.start()
    await asyncio.sleep(0.05)
    with pytest.raises(RuntimeError):
        session.replace(scenario="ticket")
    with pytest.raises(RuntimeError):
        session.add_lane()
    assert session.stop()
    statuses = await session.wait()
    assert [s.phase for s in statuses] == [Phase.STOPPED, Phase.STOPPED]
    assert script.closed == 2 and not session.active
    assert partial.form.committed == before == partial.form.document
    assert naive.form.committed and naive.form.committed == naive.form.document  # naive keeps what it showed
    assert not session.stop()


async def test_a_run_that_cannot_start_is_reported_as_a_lane_error():
    session = Session(RunSettings(mode="settled", base_url="http://127.0.0.1:9", relay_token=None))
    errors = []
    session.single.subscribe(lambda e: errors.append(e) if isinstance(e, (LaneError, LaneFinished)) else None)
    session.start()
    await session.wait()
    assert errors and isinstance(errors[-1], LaneFinished)
    assert errors[-1].status.phase in (Phase.FAILED, Phase.READY)


async def test_shutdown_closes_every_stream():
    script = Script([ArgsDelta(text='{"customer')], hold=True)
    session = Session(source=script, fetch_notes=False)
    session.start()
    await asyncio.sleep(0.02)
    await session.shutdown()
    assert not session.active and script.closed == 1


def test_outcome_and_tee():
    from livefill.session.run_status import RunStatus

    assert outcome_of(RunStatus(run_id="r", mode=Mode.PARTIAL, phase=Phase.FAILED, reason="idle")) == "failed: idle"
    assert outcome_of(RunStatus(run_id="r", mode=Mode.PARTIAL, phase=Phase.COMMITTED)) == "committed"
    a, b = [], []

    class T:
        def __init__(self, out):
            self.out = out

        def on_read(self, data):
            self.out.append(data)

        def on_frame(self, frame):
            self.out.append(frame)

        def on_event(self, event):
            self.out.append(event)

    tee = tee_taps(T(a), None, T(b))
    tee.on_read(b"x")
    tee.on_frame("y")
    tee.on_event(1)
    assert a == b == [b"x", "y", 1]


def test_match_entries_by_tag_then_relay_lanes_in_order():
    from types import SimpleNamespace as NS

    def lane(name, mode, run_id):
        return NS(name=name, mode=Mode(mode), run=NS(status=NS(run_id=run_id)))

    lanes = [lane("a", "partial", "run_a"), lane("b", "settled", "run_b"), lane("c", "hybrid", "run_c")]
    entries = [{"tag": "run_a", "started_at": 1}, {"tag": None, "started_at": 3}, {"tag": None, "started_at": 2}]
    matched = match_entries(lanes, entries)
    assert matched["a"]["tag"] == "run_a"
    assert matched["b"]["started_at"] == 2 and matched["c"]["started_at"] == 3


def test_marking_follows_the_mode_table_not_a_name():
    session = Session()
    for mode in Mode:
        session.replace(mode=mode)
        assert session.form.marking is mode.spec.marks_states
    assert FieldState.PROVISIONAL  # the form's states are the core's own


class HandClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_the_elapsed_clock_ticks_through_a_stall_and_one_compare_run_has_one_start():
    clock = HandClock()
    script = Script(complete()[:5], hold=True)  # a few deltas, then nothing: a stall
    session = Session(source=script, clock=clock, fetch_notes=False)
    session.enter_compare(["naive", "partial", "blocking"])
    session.start()
    await asyncio.sleep(0.05)
    clock.now += 6.0  # six seconds with no byte
    await asyncio.sleep(0.3)  # the lanes' 10 Hz refresh, not a byte, moves the clock
    assert [lane.status.elapsed for lane in session.lanes] == [6.0, 6.0, 6.0]
    clock.now += 9.4
    await asyncio.sleep(0.3)
    assert [round(lane.status.elapsed, 6) for lane in session.lanes] == [15.4] * 3
    assert session.stop()
    statuses = await session.wait()
    assert all(round(s.elapsed, 6) == 15.4 for s in statuses)  # measured from the one shared start
    ticks = [lane._ticker for lane in session.lanes]
    assert ticks == [None, None, None]  # no refresh left running after the run


async def test_after_a_committed_run_every_container_row_of_the_timeline_has_settled():
    session = Session(RunSettings(mode="partial"), source=Script(complete()), fetch_notes=False)
    session.start()
    statuses = await session.wait()
    assert statuses[0].phase is Phase.COMMITTED
    model = session.single_feed.model
    containers = ["", "/line_items", "/line_items/0", "/line_items/1", "/line_items/2"]
    assert all(p in model.fields for p in containers)
    assert model.fields.index("/line_items") < model.fields.index("/line_items/0") < model.fields.index("/line_items/0/sku")
    for pointer in model.fields:
        bar = model.bar(SINGLE, pointer)
        assert bar is not None and bar.settled is not None, pointer  # every row, containers included
    settled = {p: model.bar(SINGLE, p).settled for p in model.fields}
    for row in ("/line_items/0", "/line_items/1", "/line_items/2"):  # a row settles after its cells
        assert all(settled[row] >= settled[f"{row}/{c}"] for c in ("sku", "description", "qty", "unit_price"))
    assert settled["/line_items"] >= max(settled[r] for r in ("/line_items/0", "/line_items/1", "/line_items/2"))
    assert settled[""] == max(settled.values())  # the object closes last


async def test_clear_all_lanes_and_undo_put_back_exactly_what_each_lane_held():
    from livefill.session.session_events import UndoChanged

    script = Script(complete()[:20], hold=True)
    session = Session(source=script, fetch_notes=False)
    session.enter_compare(["naive", "partial"])
    naive, partial = session.lanes
    partial.form.set_value("/notes", "typed")
    session.start()
    await asyncio.sleep(0.05)
    with pytest.raises(RuntimeError, match="press Stop first"):
        session.clear_forms()
    session.stop()
    await session.wait()
    assert naive.form.committed  # naive kept the wrong values it showed
    before = [(lane.form.document, lane.form.states(), lane.form.origins()) for lane in session.lanes]
    seen = events_of(session)
    assert session.clear_forms() == 2
    assert all(lane.form.document == {} and lane.form.states() == {} for lane in session.lanes)
    assert seen[-1] == UndoChanged("Undo clear all lanes") and session.undo_text == "Undo clear all lanes"
    assert session.undo_clear()
    assert [(lane.form.document, lane.form.states(), lane.form.origins()) for lane in session.lanes] == before
    assert seen[-1] == UndoChanged(None) and not session.undo_clear()
    session.clear_forms()
    session.start()  # a new run ends the undo: its values must not be overwritten later
    assert session.undo_text is None and UndoChanged(None) in seen
    session.stop()
    await session.wait()


def test_clear_form_in_the_single_view_and_a_change_of_view_ends_the_undo():
    session = Session()
    session.form.set_value("/customer_name", "Mine")
    session.clear_forms()
    assert session.undo_text == "Undo clear form" and session.form.document == {}
    session.enter_compare()
    assert session.undo_text is None and session.form.document == {}
