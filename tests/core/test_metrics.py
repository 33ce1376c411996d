"""core/metrics.py: time to first value, time to all settled, and the never-true counter."""

from __future__ import annotations

import json

import pytest

from core.form import FieldState, FormModel
from core.metrics import FormProbe, LaneMetrics, Verdict, leaves, same_value
from core.naive import NaiveReader
from core.scenarios import get_scenario
from core.schemas import schema_model

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


def test_form_probe_sees_marking_and_ignores_the_restore():
    from core.timeline import TimelineModel

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
    from core.run import DemoKnobs, Mode, Run, RunConfig
    from core.timeline import TimelineModel

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
