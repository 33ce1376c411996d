"""livefill/session/metrics.py: time to first value, time to all settled, and the never-true counter."""

from __future__ import annotations

import json

import pytest

from livefill.extraction.form import FieldState, FormModel
from livefill.session.form_probe import FormProbe
from livefill.session.metrics import LaneMetrics, Verdict, leaves, same_value
from livefill.extraction.naive import NaiveReader
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model

INVOICE = get_scenario("invoice")
FINAL = {"customer_name": "Martinez SA", "amount": 1200}


def test_naive_mar_and_12_are_never_true():
    m = LaneMetrics(final=FINAL)
    m.start(100.0)
    for i, text in enumerate(["Mar", "Martinez", "Martinez SA"]):
        m.display("/customer_name", text, provisional=False, t=100.5 + i)
    for i, n in enumerate([12, 1200]):
        m.display("/amount", n, provisional=False, t=104.0 + i)
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.displays) == (3, 0, 5)
    assert s.examples == (("/customer_name", "Mar"), ("/customer_name", "Martinez"), ("/amount", 12))
    assert s.first_value == 0.5
    assert s.all_settled == 5.0 and (s.settled, s.fields) == (2, 2)


def test_partial_with_marking_counts_provisional_values_separately():
    m = LaneMetrics(final=FINAL)
    m.start(0.0)
    m.display("/customer_name", "Mar", provisional=True, t=1.0)
    m.display("/customer_name", "Martinez", provisional=True, t=2.0)
    m.display("/customer_name", "Martinez SA", provisional=True, t=3.0)  # true, still marked
    m.display("/customer_name", "Martinez SA", provisional=False, t=3.5)  # settled
    m.display("/amount", 1200, provisional=False, t=4.0)  # numbers only once settled
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.displays) == (0, 2, 5)
    assert s.all_settled == 4.0 and s.first_value == 1.0


def test_settled_lane_counts_nothing():
    m = LaneMetrics(final=FINAL)
    m.start(0.0)
    m.display("/amount", 1200, provisional=False, t=0.25)
    m.display("/customer_name", "Martinez SA", provisional=False, t=0.75)
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.displays) == (0, 0, 2)
    assert (s.first_value, s.all_settled) == (0.25, 0.75)


def test_repeating_the_same_display_counts_once_and_empty_is_not_a_value():
    m = LaneMetrics(final=FINAL)
    m.start(0.0)
    m.display("/customer_name", None, provisional=False, t=0.1)
    m.display("/customer_name", "", provisional=True, t=0.2)
    m.display("/customer_name", "Ma", provisional=False, t=0.3)
    m.display("/customer_name", "Ma", provisional=False, t=0.4)
    s = m.summary()
    assert (s.displays, s.never_true, s.first_value) == (1, 1, 0.3)


def test_all_settled_needs_every_field_and_the_last_display_unmarked_and_final():
    m = LaneMetrics(final=FINAL)
    m.start(0.0)
    m.display("/customer_name", "Martinez SA", provisional=True, t=1.0)
    m.display("/amount", 1200, provisional=False, t=2.0)
    assert m.summary().all_settled is None and m.summary().settled == 1
    m.display("/customer_name", "Martinez SA", provisional=False, t=3.0)
    assert m.summary().all_settled == 3.0


def test_without_the_final_value_a_replaced_display_is_judged_by_its_replacement():
    m = LaneMetrics()
    m.start(0.0)
    m.display("/amount", 12, provisional=False, t=1)
    assert m.summary().never_true == 0 and m.verdicts()[0][1] is Verdict.UNKNOWN
    m.display("/amount", 1200, provisional=False, t=2)
    m.display("/customer_name", "Mar", provisional=True, t=3)
    m.display("/customer_name", "Martinez SA", provisional=False, t=4)
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.final_known) == (1, 1, False)
    assert s.all_settled is None
    m.set_final(FINAL)  # the same judgement once the final value is known
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.final_known, s.all_settled) == (1, 1, True, 4)


def test_set_final_rejudges_every_display():
    m = LaneMetrics()
    m.start(0.0)
    m.display("/amount", 1200, provisional=False, t=1)
    m.set_final({"amount": 999})
    assert m.summary().never_true == 1
    m.set_final({"amount": 1200})
    assert m.summary().never_true == 0


def test_a_container_display_counts_each_leaf():
    final = {"line_items": [{"sku": "A", "qty": 2}]}
    m = LaneMetrics(final=final)
    m.start(0.0)
    m.display("/line_items/0", {"sku": "A", "qty": 3}, provisional=False, t=1)
    s = m.summary()
    assert (s.displays, s.never_true) == (2, 1)


def test_finish_keeps_the_outcome_and_the_figures():
    m = LaneMetrics(final=FINAL)
    m.start(10.0)
    m.display("/amount", 12, provisional=False, t=11.0)
    m.finish(12.5, "stopped")
    s = m.summary()
    assert s.outcome == "stopped" and s.elapsed == 2.5 and s.never_true == 1
    m.start(20.0)
    assert m.summary().displays == 0 and m.summary().outcome is None


def test_subscribers_hear_every_change():
    m = LaneMetrics()
    seen = []
    unsubscribe = m.subscribe(lambda: seen.append(m.summary().displays))
    m.start(0.0)
    m.display("/a", 1, provisional=False, t=1)
    unsubscribe()
    m.display("/a", 2, provisional=False, t=2)
    assert seen == [0, 1]


@pytest.mark.parametrize(
    ("shown", "final", "same"),
    [
        (1200, 1200.0, True), ("1200", 1200, True), ("1,200.00", 1200, True), (12, 1200, False),
        (True, 1, False), (True, True, True), ("false", False, True), ("Mar", "Martinez SA", False),
        ("", None, False), ([1, 2], [1, 2], True), ({"a": 1}, {"a": 1.0}, True),
    ],
)
def test_same_value(shown, final, same):
    assert same_value(shown, final) is same


def test_leaves_of_the_invoice():
    got = dict(leaves(INVOICE.output))
    assert got["/amount"] == 1200 and got["/line_items/2/sku"] == "LMP-07"
    assert all(not isinstance(v, (dict, list)) or not v for v in got.values())


# --- the invoice scenario, lane by lane -----------------------------------------------------------


def _pieces(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _naive_lane() -> LaneMetrics:
    """What the naive client shows for the invoice stream: every repaired leaf, unmarked."""
    m = LaneMetrics(final=INVOICE.output)
    m.start(0.0)
    reader = NaiveReader()
    for i, piece in enumerate(_pieces(INVOICE.output_text, 1)):
        value = reader.feed(piece)
        if isinstance(value, dict):
            for pointer, v in leaves(value):
                m.display(pointer, v, provisional=False, t=i * 0.01)
    return m


def _partial_lane(show_numbers: bool = False) -> LaneMetrics:
    """A partial reader with marking: strings grow provisionally, numbers appear when settled."""
    m = LaneMetrics(final=INVOICE.output)
    m.start(0.0)
    t = 0.0
    for pointer, value in leaves(INVOICE.output):
        if isinstance(value, str):
            for k in range(1, len(value) + 1):
                t += 0.01
                m.display(pointer, value[:k], provisional=True, t=t)
        elif show_numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
            digits = json.dumps(value)
            for k in range(1, len(digits) + 1):
                t += 0.01
                m.display(pointer, json.loads(digits[:k].rstrip(".")), provisional=True, t=t)
        t += 0.01
        m.display(pointer, value, provisional=False, t=t)
    return m


def _settled_lane() -> LaneMetrics:
    m = LaneMetrics(final=INVOICE.output)
    m.start(0.0)
    for i, (pointer, value) in enumerate(leaves(INVOICE.output)):
        m.display(pointer, value, provisional=False, t=0.1 * (i + 1))
    return m


def test_invoice_naive_lane_shows_values_that_were_never_true():
    s = _naive_lane().summary()
    assert s.never_true > 0 and s.provisional_changed == 0
    shown = {(p, v) for d, verdict in _naive_lane().verdicts() for p, v in [(d.pointer, d.value)]
             if verdict is Verdict.NEVER_TRUE}
    assert ("/customer_name", "Mar") in shown and ("/amount", 12) in shown
    assert s.all_settled is not None  # it ends showing the right values, unmarked


def test_invoice_partial_lane_with_marking_shows_none_unmarked():
    s = _partial_lane().summary()
    strings = [v for _, v in leaves(INVOICE.output) if isinstance(v, str)]
    assert s.never_true == 0
    assert s.provisional_changed == sum(len(v) - 1 for v in strings)  # every proper prefix
    assert s.all_settled is not None and s.settled == s.fields == len(dict(leaves(INVOICE.output)))


def test_invoice_partial_lane_showing_provisional_numbers_counts_12_as_provisional():
    lane = _partial_lane(show_numbers=True)
    assert lane.summary().never_true == 0
    assert any(d.pointer == "/amount" and d.value == 12 and v is Verdict.PROVISIONAL_CHANGED
               for d, v in lane.verdicts())


def test_invoice_settled_lane_counts_zero():
    s = _settled_lane().summary()
    assert (s.never_true, s.provisional_changed) == (0, 0)
    assert s.all_settled == pytest.approx(0.1 * s.fields)


# --- the probe on a real form model --------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.125
        return self.t


def test_form_probe_counts_what_a_naive_form_shows_unmarked():
    form = FormModel(schema_model("invoice"), marking=False)
    m = LaneMetrics(final=INVOICE.output)
    clock = Clock()
    probe = FormProbe(form, m, lane="naive", clock=clock)
    m.start(0.0)
    form.begin_run()
    form.apply("/customer_name", FieldState.PROVISIONAL, "Mar")
    form.apply("/amount", FieldState.PROVISIONAL, 12)
    form.apply("/customer_name", FieldState.PROVISIONAL, "Martinez SA")
    form.apply("/amount", FieldState.PROVISIONAL, 1200)
    form.adopt_draft()
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.displays) == (2, 0, 4)
    assert s.first_value == 0.125
    probe.close()


def test_form_probe_tells_the_metrics_once_an_update_however_many_fields_it_changed():
    form = FormModel(schema_model("invoice"))
    m = LaneMetrics(final=INVOICE.output)
    heard = []
    m.subscribe(lambda: heard.append(1))
    FormProbe(form, m, lane="partial", clock=Clock())
    m.start(0.0)
    form.begin_run()
    heard.clear()
    form.apply_many([("/customer_name", FieldState.SETTLED, "Martinez SA"), ("/amount", FieldState.SETTLED, 1200),
                     ("/currency", FieldState.PROVISIONAL, "EU")])
    assert m.summary().displays == 3
    assert len(heard) == 1  # the old code told them once a field (3)


def test_form_probe_sees_marking_and_ignores_the_restore():
    from livefill.session.timeline import TimelineModel

    form = FormModel(schema_model("invoice"))
    form.set_value("/customer_name", "ACME (typed by the user)")
    m = LaneMetrics(final=INVOICE.output)
    tl = TimelineModel(["partial"])
    clock = Clock()
    FormProbe(form, m, lane="partial", timeline=tl, clock=clock)
    m.start(0.0)
    tl.start(0.0)
    form.begin_run()
    form.apply("/customer_name", FieldState.PENDING)
    form.apply("/customer_name", FieldState.PROVISIONAL, "Mar")
    form.apply("/customer_name", FieldState.SETTLED, "Martinez SA")
    form.apply("/amount", FieldState.PENDING)
    form.restore()  # Stop: the user's value comes back; that is not a display of the stream
    s = m.summary()
    assert (s.never_true, s.provisional_changed, s.displays) == (0, 1, 2)
    bar = tl.bar("partial", "/customer_name")
    assert [seg.state for seg in bar.segments] == ["pending", "provisional"]
    assert bar.settled == pytest.approx(0.375)
    assert tl.bar("partial", "/amount").segments[0].state == "pending"


# --- real runs against the demo provider and the relay (loopback) --------------------------------


@pytest.mark.parametrize("mode", ["naive", "partial", "settled", "blocking"])
async def test_never_true_counter_on_real_invoice_runs(demo_server, mode):
    from livefill.demo.protocol import DemoKnobs
    from livefill.extraction.modes import Mode
    from livefill.session.run import Run
    from livefill.session.run_config import RunConfig
    from livefill.session.timeline import TimelineModel

    form = FormModel(schema_model("invoice"), marking=mode != "naive")
    metrics = LaneMetrics(final=INVOICE.output)
    timeline = TimelineModel([mode])
    probe = FormProbe(form, metrics, lane=mode, timeline=timeline)
    config = RunConfig(
        mode=Mode(mode), provider="anthropic", base_url=demo_server.url, schema_name="invoice",
        document=INVOICE.document, demo=DemoKnobs(scenario="invoice", speed=0, seed=7),
        relay_token=demo_server.relay_token,
    )
    import time

    t0 = time.monotonic()
    metrics.start(t0)
    timeline.start(t0)
    status = await Run(form, config).run()
    metrics.finish(time.monotonic(), status.phase.value)
    timeline.stop(mode, time.monotonic(), status.phase.value)
    probe.close()
    s = metrics.summary()
    assert s.outcome == "committed"
    if mode == "naive":
        assert s.never_true > 0 and s.provisional_changed == 0
    elif mode == "partial":
        assert s.never_true == 0 and s.provisional_changed > 0
        assert not any(d.pointer == "/amount" and d.value != 1200 for d in metrics.log)
    else:
        assert (s.never_true, s.provisional_changed) == (0, 0)
    assert s.all_settled is not None and s.settled == s.fields
    assert s.first_value is not None and s.first_value <= s.all_settled
    bars = timeline.bars()
    assert bars and all(b.settled is not None for b in bars if b.pointer in dict(leaves(INVOICE.output)))


# --- the summary's settled figures are kept incrementally: same as recomputing them ---------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _settled_by_scan(m: LaneMetrics, final: dict) -> tuple[int, float | None]:
    required = {p: v for p, v in leaves(final) if v is not None and v != ""}
    times = []
    last: dict[str, Any] = {}
    for d in m.log:
        last[d.pointer] = d
    for p, v in required.items():
        d = last.get(p)
        if d is not None and not d.provisional and same_value(d.value, v):
            times.append(d.t)
    return len(times), (max(times) if required and len(times) == len(required) else None)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/customer_name", "/amount", "/paid"]),
            st.sampled_from(["Mar", "Martinez SA", 12, 1200, 1200.0, "1200", True, None, ""]),
            st.booleans(),
        ),
        max_size=25,
    ),
    st.booleans(),
)
def test_summary_settled_figures_agree_with_a_scan_of_the_displays(displays, final_first):
    final = {"customer_name": "Martinez SA", "amount": 1200, "paid": True}
    m = LaneMetrics(final=final) if final_first else LaneMetrics()
    m.start(0.0)
    for i, (pointer, value, provisional) in enumerate(displays):
        m.display(pointer, value, provisional=provisional, t=float(i + 1))
    if not final_first:
        m.set_final(final)
    s = m.summary()
    settled, latest = _settled_by_scan(m, final)
    # a cleared field (None / "") is no display but forgets the field's last one
    cleared = {p for p, v, _ in displays if v is None or v == ""}
    if not cleared:
        assert s.settled == settled
        assert s.all_settled == latest
    assert s.fields == 3


# --- byte to pixel --------------------------------------------------------------------------------


def test_byte_to_pixel_is_paint_time_minus_the_settling_read_for_values_shown_settled():
    reads = {"/customer_name": 1.000, "/amount": 1.010, "/paid": 1.020}
    m = LaneMetrics(final=INVOICE.output)
    m.start(0.0)
    m.read_time = reads.get
    m.settled("/customer_name", 1.002)
    m.settled("/amount", 1.011)
    m.painted("/customer_name", 1.016)  # 16 ms after its read
    m.painted("/customer_name", 1.050)  # a later repaint of the same value: not counted
    m.painted("/paid", 1.030)  # never shown settled by the form: not counted
    assert m.latencies == pytest.approx((0.016,))
    m.painted("/amount", 1.014)  # 4 ms
    s = m.summary()
    assert s.painted == 2 and s.unpainted == 0
    p50, p99, worst = s.byte_to_pixel
    assert (p50, p99, worst) == pytest.approx((0.004, 0.016, 0.016))


def test_a_value_settles_once_a_run_so_a_later_report_is_not_waiting_for_a_paint():
    m = LaneMetrics()
    m.start(0.0)
    m.read_time = lambda _p: 1.0
    m.settled("/customer_name", 1.001)
    m.painted("/customer_name", 1.010)
    m.settled("/customer_name", 1.500)  # re-announced with a neighbour's update: the same value
    assert m.summary().unpainted == 0
    m.painted("/customer_name", 1.600)
    assert m.latencies == pytest.approx((0.010,))
    m.start(2.0)  # a new run measures it again
    m.read_time = lambda _p: 2.0
    m.settled("/customer_name", 2.001)
    assert m.summary().unpainted == 1


def test_byte_to_pixel_percentiles_are_nearest_rank():
    m = LaneMetrics()
    m.start(0.0)
    m.read_time = lambda _p: 0.0
    for i in range(1, 201):  # 1 .. 200 ms
        m.settled(f"/v/{i}", 0.0)
        m.painted(f"/v/{i}", i / 1000)
    p50, p99, worst = m.byte_to_pixel()
    assert (p50, p99, worst) == pytest.approx((0.100, 0.198, 0.200))


def test_values_waiting_for_a_paint_are_counted_and_dropped_when_the_run_does_not_commit():
    m = LaneMetrics()
    m.start(0.0)
    m.read_time = lambda _p: 0.0
    m.settled("/a", 0.1)
    m.settled("/b", 0.1)
    assert m.summary().unpainted == 2 and m.summary().byte_to_pixel is None
    m.finish(0.5, "stopped")
    assert m.summary().unpainted == 0
    m.painted("/a", 0.6)  # the restored form's paint is no display of the run
    assert m.latencies == ()
    # a committed run keeps waiting: its values are shown settled by the paint after the commit
    m.start(1.0)
    m.read_time = lambda _p: 1.0
    m.settled("/a", 1.1)
    m.finish(1.2, "committed")
    m.painted("/a", 1.25)
    assert m.latencies == pytest.approx((0.25,))


def test_a_value_whose_read_is_unknown_is_not_measured():
    m = LaneMetrics()
    m.start(0.0)
    m.read_time = {"/a": 0.0}.get
    m.settled("/a", 0.01)
    m.settled("/b", 0.01)
    m.painted("/a", 0.02)
    m.painted("/b", 0.02)
    assert m.latencies == pytest.approx((0.02,))


def test_the_form_probe_reports_settled_values_of_a_marking_form_only():
    seen = {}
    for marking in (True, False):
        form = FormModel(schema_model("invoice"), marking=marking)
        m = LaneMetrics()
        FormProbe(form, m, clock=lambda: 2.0)
        m.start(0.0)
        form.begin_run()
        form.apply("/customer_name", FieldState.PROVISIONAL, "Mar")
        form.apply("/customer_name", FieldState.SETTLED, "Martinez SA")
        form.apply("/amount", FieldState.SETTLED, 1200)
        seen[marking] = m.summary().unpainted
    assert seen == {True: 2, False: 0}  # the naive client never shows a value settled
