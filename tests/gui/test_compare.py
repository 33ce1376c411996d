"""The compare view against the real embedded demo provider over loopback (offscreen).

Lanes get the same generation; one Stop closes every lane's connection; the never-true counter;
the wire inspector shows exactly the bytes the client read, highlights a picked field's bytes, and
stays bounded on the catalog at max speed.
"""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from livefill.wire.events import ArgsDelta
from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.session.compare import MAX_LANES, MIN_LANES, parse_modes
from livefill.session.request_notes import match_entries
from tests.gui.conftest import arun, wait_until

INVOICE = get_scenario("invoice")


def all_done(window):
    return lambda: not window.active and all(s is not None and s.phase.final for s in window.last_statuses())


def args_deltas(lane) -> list[str]:
    return [e.event.text for e in lane.recorder.events() if isinstance(e.event, ArgsDelta)]


class ReadsTap:
    """A second wire tap: every read exactly as the client got it."""

    def __init__(self) -> None:
        self.reads: list[bytes] = []

    def on_read(self, data: bytes) -> None:
        self.reads.append(bytes(data))

    def on_frame(self, frame) -> None:  # noqa: ANN001
        pass

    def on_event(self, event) -> None:  # noqa: ANN001
        pass


def test_parse_modes():
    assert parse_modes("naive, partial,settled") == [Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED]
    with pytest.raises(ValueError):
        parse_modes("naive")
    with pytest.raises(ValueError):
        parse_modes("naive,partial,settled,hybrid,blocking,partial")
    with pytest.raises(ValueError):
        parse_modes("naive,bogus")


def test_default_lanes_add_remove_and_per_lane_mode(make_window):
    window = make_window(compare=["naive", "partial", "settled"])
    view = window.compare_view
    assert window.comparing and [lane.mode for lane in view.lanes] == [Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED]
    assert not window.mode_combo.isEnabled()  # each lane has its own mode
    assert view.lane(0).form is not view.lane(1).form
    assert view.lane(0).form.marking is False and view.lane(1).form.marking is True
    # add up to five, then no more
    while len(view.lanes) < MAX_LANES:
        assert view.add_lane() is not None
    assert view.add_lane() is None and not view.add_button.isEnabled()
    assert view.metrics_table.columnCount() == MAX_LANES
    assert len(view.timeline.lanes) == MAX_LANES
    assert window.inspector_dock.lane_combo.count() == MAX_LANES
    # remove down to two, then no more
    while len(view.lanes) > MIN_LANES:
        view.lane(-1).remove_button.click()
    assert not view.remove_lane(view.lane(0).name)
    assert not view.lane(0).remove_button.isEnabled()
    # a lane's mode combo changes that lane only
    lane = view.lane(1)
    lane.mode_combo.setCurrentIndex(lane.mode_combo.findData("hybrid"))
    assert lane.mode is Mode.HYBRID and lane.header.mode == "hybrid" and view.lane(0).mode is Mode.NAIVE
    assert view.metrics_table.horizontalHeaderItem(1).text() == "hybrid"
    # back to the single form and again
    window.set_compare(False)
    assert not window.comparing and window.mode_combo.isEnabled()
    window.compare_action.trigger()
    assert window.comparing


@pytest.mark.slow
def test_lanes_receive_identical_delta_sequences(make_window, qloop, demo_server):
    window = make_window(compare=["naive", "partial", "blocking", "settled"], provider="openai-chat")
    window.set_slicing("7")
    view = window.compare_view

    async def scenario():
        window.start()
        assert not window.start_button.isEnabled() and window.stop_button.isEnabled()
        await wait_until(all_done(window), timeout=30)
        await view.wait()

    arun(qloop, scenario())
    assert all(s.phase is Phase.COMMITTED for s in window.last_statuses()), [s.reason for s in window.last_statuses()]
    direct = [lane for lane in view.lanes if not lane.mode.needs_relay]
    sequences = [args_deltas(lane) for lane in direct]
    assert len(sequences[0]) > 20
    assert "".join(sequences[0]) == INVOICE.output_text
    for seq in sequences[1:]:
        assert seq == sequences[0]
    # every lane's own request (the relay lane's upstream one too) carried the same knobs
    entries = [e for e in demo_server.requests() if e["started_at"] >= view.t0_wall - 0.5]
    matched = match_entries(view.lanes, entries)
    assert all(matched[lane.name] is not None for lane in view.lanes), matched
    for lane in direct:
        assert matched[lane.name]["tag"] == lane.run.status.run_id
    knobs = [matched[lane.name]["knobs"] for lane in view.lanes]
    assert all(k["seed"] == knobs[0]["seed"] and k["speed"] == knobs[0]["speed"] for k in knobs)
    assert {k["slice"] for k in knobs} == {knobs[0]["slice"]} and "7" in knobs[0]["slice"]
    assert len({matched[lane.name]["tokens_total"] for lane in view.lanes}) == 1
    assert len({matched[lane.name]["id"] for lane in view.lanes}) == len(view.lanes)  # each lane its own request


def test_stop_closes_every_lanes_connection_and_each_lane_ends_as_its_mode_dictates(make_window, qloop, demo_server):
    window = make_window(compare=["naive", "partial", "settled"], speed=40, provider="anthropic")
    view = window.compare_view
    naive, partial, settled = view.lanes
    partial.form.set_value("/customer_name", "Typed before")
    before = partial.form.committed

    async def scenario():
        window.start()
        await wait_until(lambda: all(lane.run is not None and lane.run.status.tokens_received >= 4 for lane in view.lanes))
        window.stop_button.click()
        await wait_until(all_done(window))
        await view.wait()

    arun(qloop, scenario())
    assert [s.phase for s in window.last_statuses()] == [Phase.STOPPED] * 3
    entries = [e for e in demo_server.requests() if e["started_at"] >= view.t0_wall - 0.5]
    matched = match_entries(view.lanes, entries)
    for lane in view.lanes:
        entry = matched[lane.name]
        assert entry is not None and entry["disconnected"], (lane.title, entry)
        assert entry["tokens_sent"] < entry["tokens_total"]
        assert lane.server_note == f"server stopped after {entry['tokens_sent']} of {entry['tokens_total']} tokens"
        assert lane.server_note in lane.status_label.text()
    assert matched[naive.name]["tag"] == naive.run.status.run_id
    assert matched[partial.name]["tag"] == partial.run.status.run_id
    # naive keeps what it showed (wrong or not); the others restore exactly
    assert naive.form.committed and naive.form.committed == naive.form.document
    assert partial.form.committed == before == partial.form.document
    assert partial.field("/customer_name").property("displayValue") == "Typed before"
    assert settled.form.committed == {} == settled.form.document
    for lane in view.lanes:
        s = lane.metrics.summary()
        assert s.outcome == "stopped" and s.elapsed is not None
        assert "stopped after" in lane.header.outcome_label.text()
    assert all(m.outcome == "stopped" for m in view.timeline.stops()) and len(view.timeline.stops()) == 3
    assert sum("stopped" in line for line in window.run_log.lines()) == 3


def test_never_true_counter_on_invoice(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"], provider="anthropic")
    view = window.compare_view

    async def scenario():
        window.start()
        await wait_until(all_done(window), timeout=30)

    arun(qloop, scenario())
    naive, partial, settled = (lane.metrics.summary() for lane in view.lanes)
    assert naive.never_true > 0 and naive.examples
    assert partial.never_true == 0 and partial.provisional_changed > 0  # marked: counted apart
    assert settled.never_true == 0 and settled.provisional_changed == 0
    assert all(s.outcome == "committed" and s.all_settled is not None for s in (naive, partial, settled))
    view.metrics_table.refresh()
    assert view.metrics_table.cell_text("never_true", 0).startswith("⚠ ")
    assert view.metrics_table.cell_text("never_true", 1) == "0" == view.metrics_table.cell_text("never_true", 2)
    view.lane(0).header.refresh()
    assert f"⚠ {naive.never_true}" in view.lane(0).header.counts_label.text()
    assert "committed" in view.lane(2).header.outcome_label.text()


def test_inspector_bytes_equal_the_bytes_read_and_a_picked_field_lights_its_bytes(make_window, qloop):
    window = make_window(compare=["naive", "partial"], provider="anthropic")
    window.set_slicing("5")  # reads that cut frames and characters anywhere
    window.inspector_dock.show()
    view = window.compare_view
    lane = view.lane(1)
    tap = ReadsTap()
    lane.extra_tap = tap

    async def scenario():
        window.start()
        await wait_until(all_done(window), timeout=30)

    arun(qloop, scenario())
    dock = window.inspector_dock
    dock.show_lane(lane.name)
    inspector = dock.inspector
    assert inspector.recorder is lane.recorder
    inspector.refresh()
    assert inspector.byte_view.shown_bytes() == b"".join(tap.reads)
    offsets, at = [], 0
    for read in tap.reads:
        offsets.append(at)
        at += len(read)
    assert inspector.byte_view.boundary_offsets() == offsets
    # press on the customer name's label in the lane's form: its bytes light up
    label = lane.field("/customer_name").label
    QTest.mouseClick(label, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(5, 5))
    assert dock.lane == lane.name and inspector.pointer == "/customer_name"
    spans = [(s.start, s.end) for s in inspector.location().spans]
    assert spans and inspector.byte_view.highlighted_ranges()
    wire = b"".join(tap.reads)
    carried = b"".join(wire[a:b] for a, b in spans).decode("utf-8")
    assert "Martinez SA" in carried, carried
    # the other lane's wire is one click away
    dock.show_lane(view.lane(0).name)
    assert inspector.recorder is view.lane(0).recorder


def test_a_table_cell_press_names_the_cell(make_window, qloop):
    window = make_window(compare=["partial", "settled"])

    async def scenario():
        window.start()
        await wait_until(all_done(window), timeout=30)

    arun(qloop, scenario())
    lane = window.compare_view.lane(0)
    table = lane.field("/line_items").view
    picked = []
    lane.fieldPicked.connect(lambda _lane, pointer: picked.append(pointer))
    rect = table.visualRect(table.model().index(1, 2))
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
    assert picked and picked[-1] == "/line_items/1" + table.model().columns[2].pointer
    assert window.inspector_dock.inspector.pointer == picked[-1]


@pytest.mark.slow
def test_inspector_memory_stays_bounded_on_the_catalog_at_max_speed(make_window, qloop):
    ceiling = 64 * 1024
    window = make_window(compare=["partial", "settled"], scenario="catalog", provider="anthropic", recorder_max_bytes=ceiling)
    window.inspector_dock.show()
    inspector = window.inspector_dock.inspector
    view = window.compare_view
    peak = []

    async def scenario():
        window.start()
        while window.active:
            await asyncio.sleep(0.05)
            for lane in view.lanes:
                if lane.recorder is not None:
                    peak.append(lane.recorder.cost)

    arun(qloop, scenario(), timeout=120)
    assert all(s.phase is Phase.COMMITTED for s in window.last_statuses()), [s.reason for s in window.last_statuses()]
    lane = view.lane(0)
    rec = lane.recorder
    assert rec.total_bytes > 2 * ceiling  # the stream was much larger than the ceiling
    assert max(peak) <= ceiling and rec.cost <= ceiling
    assert rec.dropped.any and "dropped" in rec.dropped.describe()
    window.inspector_dock.show_lane(lane.name)
    inspector.refresh()
    assert len(inspector.byte_view.shown_bytes()) <= inspector.byte_view.view_limit
    assert inspector.frame_model.rowCount() <= inspector.frame_model.max_rows
    assert "dropped" in inspector.stats_label.text()


def test_live_provider_lanes_say_they_made_their_own_request_and_are_judged_after_the_run(make_window, qloop):
    """A lane's header says when it talks to a live provider (no demo knobs); the final values
    then come from a committed lane (here the demo server stands in for the live provider)."""
    from dataclasses import replace

    window = make_window(compare=["naive", "partial"], provider="openai-chat")
    view = window.compare_view
    config = replace(window.run_config(), demo=None)

    async def scenario():
        view.start(config)
        await wait_until(lambda: not view.active, timeout=30)

    arun(qloop, scenario())
    for lane in view.lanes:
        assert lane.header.live_label.isVisibleTo(lane.header)
        assert lane.metrics.summary().final_known
    assert view.lane(1).run.result is not MISSING
    assert view.lane(0).metrics.summary().never_true > 0
