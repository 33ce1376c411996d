"""livefill/session/expected_answer.py, prices.py, run_facts.py: which right answer applies, a
form's marks against it, the person's prices and a run's cost; LaneMetrics' first settled value."""

from __future__ import annotations

import json
import os

import pytest

from livefill.errors import InputError
from livefill.extraction.form import FormModel
from livefill.extraction.scenarios import get_scenario
from livefill.extraction.schemas import schema_model
from livefill.session.expected_answer import ExpectedAnswer, field_mark, form_marks
from livefill.session.metrics import LaneMetrics
from livefill.session.prices import Price, cost, format_cost, parse_prices, price_of, prices_json
from livefill.session.scoring import score
from livefill.session.settings import RunSettings
from livefill.wire.usage import Usage

INVOICE = get_scenario("invoice")


class Shown:
    """What a session shows (its settings), changed by a test."""

    def __init__(self) -> None:
        self.settings = RunSettings()

    def __call__(self) -> RunSettings:
        return self.settings


def test_the_scenario_answer_then_the_file_beside_your_document_then_one_chosen(tmp_path):
    shown = Shown()
    expected = ExpectedAnswer(shown)
    assert expected.current().value == INVOICE.expected and "invoice scenario" in expected.current().source
    shown.settings = RunSettings(schema_name="ticket")  # the scenario's document read with another schema
    assert expected.current() is None
    document = tmp_path / "march.txt"
    shown.settings = RunSettings(document="text", document_name="march.txt", document_path=str(document))
    assert expected.current() is None and expected.problem is None  # nothing beside it
    beside = tmp_path / "march.expected.json"
    beside.write_text(json.dumps({"amount": 7}), encoding="utf-8")
    assert expected.current().value == {"amount": 7} and expected.current().source == "march.expected.json, beside the document"
    beside.write_text("[1, 2]", encoding="utf-8")
    os.utime(beside, (1, 1))  # another file now (its time changed)
    assert expected.current() is None and "must be a JSON object" in expected.problem
    shown.settings = RunSettings(document="pasted", document_name="Pasted text")  # no file: nothing beside
    assert expected.current() is None and expected.problem is None


def test_a_chosen_answer_belongs_to_its_document_and_a_bad_file_changes_nothing(tmp_path):
    shown = Shown()
    expected = ExpectedAnswer(shown)
    told = []
    expected.subscribe(lambda: told.append(1))
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not JSON"):
        expected.choose(bad)
    with pytest.raises(InputError):
        expected.choose(tmp_path / "missing.json")
    assert expected.chosen is None and told == [] and expected.current().value == INVOICE.expected
    good = tmp_path / "mine.json"
    good.write_text(json.dumps({"currency": "USD"}), encoding="utf-8")
    expected.choose(good)
    assert expected.current().value == {"currency": "USD"} and expected.current().chosen and told == [1]
    shown.settings = RunSettings(scenario="weather")
    assert expected.chosen is None and expected.current().value == get_scenario("weather").expected
    shown.settings = RunSettings()
    assert expected.current().value == {"currency": "USD"}  # back on its document
    assert expected.clear() and not expected.clear()
    assert expected.current().value == INVOICE.expected


def test_a_forms_marks_last_until_the_form_changes():
    form = FormModel(schema_model("invoice"))
    marks = form_marks(form)
    assert form_marks(form) is marks
    result = dict(INVOICE.expected, amount=1250)
    scored = score(INVOICE.expected, result)
    marks.set(scored)
    assert marks.fresh and [f.pointer for f in marks.of("/amount")] == ["/amount"]
    assert len(marks.of("/line_items")) == 12
    assert field_mark(marks.of("/amount"), "/amount").text == "✗ wrong"
    assert field_mark(marks.of("/amount"), "/amount").tip == "Expected: 1200 (shown: 1250)"
    assert field_mark(marks.of("/currency"), "/currency").answer == "right"
    assert field_mark(marks.of("/line_items"), "/line_items").text == "✓ 12 right"
    assert field_mark(marks.of("/notes"), "/notes") is None  # not in the expected answer
    form.set_value("/currency", "USD")  # an edit
    assert marks.score is None and not marks.fresh and marks.of("/amount") == ()


def test_a_table_with_a_wrong_cell_and_a_missing_field_say_so():
    result = json.loads(json.dumps(INVOICE.expected))
    result["line_items"][2]["qty"] = 3
    del result["paid"]
    scored = score(INVOICE.expected, result)
    form = FormModel(schema_model("invoice"))
    marks = form_marks(form)
    marks.set(scored)
    table = field_mark(marks.of("/line_items"), "/line_items")
    assert table.text == "✗ 1 of 12 wrong" and table.tip == "/2/qty: expected 2 (shown: 3)"
    paid = field_mark(marks.of("/paid"), "/paid")
    assert paid.text == "✗ missing" and paid.tip == "Expected: false (missing here)"


def test_prices_are_the_persons_own_and_a_cost_needs_both_counts():
    prices = (Price(" claude-sonnet-5 ", 3, 15),)
    assert prices[0].model == "claude-sonnet-5"
    assert parse_prices(prices_json(prices)) == prices
    assert price_of(prices, "claude-sonnet-5") is prices[0] and price_of(prices, "gpt-4o") is None
    assert cost(prices[0], 1000, 2000) == pytest.approx(0.033)
    assert cost(prices[0], None, 2000) is None and cost(None, 1, 1) is None
    assert (format_cost(0.033), format_cost(12.5), format_cost(None)) == ("0.033", "12.50", "—")
    for bad in ('{"model": "m"}', '[{"model": "", "input": 1, "output": 1}]', '[{"model": "m", "input": "x", "output": 1}]',
                '[{"model": "m", "input": 1, "output": 1}, {"model": "m", "input": 2, "output": 2}]'):
        with pytest.raises(ValueError):
            parse_prices(bad)
    with pytest.raises(ValueError):
        RunSettings(prices=(Price("m", 1, 1), Price("m", 2, 2)))


def test_first_settled_and_a_runs_facts_are_the_runs_own():
    m = LaneMetrics(final={"customer_name": "Martinez SA", "amount": 1200})
    m.start(10.0)
    m.display("/customer_name", "Mar", provisional=True, t=10.5)
    m.display("/amount", 12, provisional=False, t=11.0)  # shown unmarked, not its final value
    m.display("/amount", 1200, provisional=False, t=12.0)
    m.display("/customer_name", "Martinez SA", provisional=False, t=13.0)
    m.set_facts(deltas=5, bytes=900, model="m", price=Price("m", 1, 2), fields_right=2, fields_total=2)
    m.usage.usage = None
    s = m.summary()
    assert s.first_value == 0.5 and s.first_settled == 2.0
    assert (s.facts.deltas, s.facts.fields_right, s.facts.cost) == (5, 2, None)  # no tokens reported: no cost
    m.usage.usage = Usage(tokens_in=1_000_000, tokens_out=500_000)
    assert m.summary().facts.cost == pytest.approx(2.0)
    m.start(20.0)  # a new run: nothing of the last one
    s = m.summary()
    assert s.facts.deltas == 0 and s.facts.fields_right is None and s.facts.tokens_in is None and s.first_settled is None
