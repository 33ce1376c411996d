"""Scoring an extraction against the right answer (livefill.session.scoring), and the expected
answers every bundled scenario ships (assets/scenarios/*/expected.json)."""

from __future__ import annotations

import json

import pytest

from livefill.errors import InputError
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.extraction.schemas import schema_model
from livefill.resources import SCENARIOS_DIR
from livefill.session.metrics import leaves
from livefill.session.scoring import Verdict, expected_beside, load_expected, same_answer, score


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario_ships_an_expected_answer_its_own_output_gets_all_right(name: str) -> None:
    scenario = get_scenario(name)
    assert (SCENARIOS_DIR / name / "expected.json").is_file()
    assert scenario.expected == json.loads((SCENARIOS_DIR / name / "expected.json").read_text(encoding="utf-8"))
    result = score(scenario.expected, scenario.output)
    assert result.total == len(list(leaves(scenario.expected))) > 0
    assert result.right == result.total, result.of(Verdict.WRONG)
    # prose is never scored: it has no single right answer
    prose = [k for k, f in schema_model(scenario.schema_name).model_fields.items()
             if (f.json_schema_extra or {}).get("x-prose")]
    assert not any(k in scenario.expected for k in prose)


def test_the_invoice_answer_is_the_documents_as_read_by_hand() -> None:
    expected = get_scenario("invoice").expected
    assert expected["customer_name"] == "Martinez SA" and expected["invoice_number"] == "NW-2024-0417"
    assert (expected["amount"], expected["currency"], expected["paid"]) == (1200, "EUR", False)
    assert (expected["issue_date"], expected["due_date"]) == ("2024-03-04", "2024-04-03")
    assert [(r["sku"], r["qty"], r["unit_price"]) for r in expected["line_items"]] == [
        ("DSK-140", 2, 385.0), ("CHR-22", 2, 180.0), ("LMP-07", 2, 35.0)]
    assert "notes" not in expected  # prose


def test_the_invoice_scores_19_fields_table_cells_by_row_index() -> None:
    result = score(get_scenario("invoice").expected, get_scenario("invoice").output)
    pointers = [f.pointer for f in result.fields]
    assert len(pointers) == 19
    assert "/line_items/0/sku" in pointers and "/line_items/2/unit_price" in pointers
    assert pointers[:3] == ["/customer_name", "/invoice_number", "/amount"]


def test_a_wrong_a_missing_and_an_extra_field_each_say_so() -> None:
    expected = {"a": "x", "n": 1200, "rows": [{"q": 1}, {"q": 2}], "b": True}
    actual = {"a": "y", "n": 1200.0, "rows": [{"q": 1}], "b": True, "z": "more"}
    result = score(expected, actual)
    assert result.verdicts() == {
        "/a": Verdict.WRONG, "/n": Verdict.RIGHT, "/rows/0/q": Verdict.RIGHT, "/rows/1/q": Verdict.MISSING,
        "/b": Verdict.RIGHT,
    }
    assert (result.right, result.total) == (3, 5)
    assert result.extra == ("/z",)
    (wrong,) = result.of(Verdict.WRONG)
    assert (wrong.expected, wrong.actual) == ("x", "y")
    (missing,) = result.of(Verdict.MISSING)
    assert (missing.expected, missing.actual) == (2, None)


def test_nothing_extracted_is_every_field_missing() -> None:
    result = score({"a": 1, "b": [1, 2]}, None)
    assert [f.verdict for f in result.fields] == [Verdict.MISSING] * 3 and result.right == 0


def test_a_different_shape_is_wrong_not_missing() -> None:
    assert score({"a": "x"}, {"a": ["x"]}).verdicts() == {"/a": Verdict.WRONG}
    assert score({"a": ["x"]}, {"a": "x"}).verdicts() == {"/a/0": Verdict.MISSING}


@pytest.mark.parametrize(
    ("actual", "expected", "right"),
    [
        (1200, 1200.0, True),  # numbers as numbers
        (1200.0, 1200, True),
        (1200, 1201, False),
        ("1200", 1200, False),  # a string is not a number
        (True, 1, False),  # a bool is not a number
        (False, 0, False),
        ("  Martinez SA ", "Martinez SA", True),  # trimmed
        ("martinez sa", "Martinez SA", False),  # case counts
        ("Martinez  SA", "Martinez SA", False),  # inner spacing counts
        (None, None, True),
        (None, "", False),
        ([], [], True),
    ],
)
def test_values_compare_as_the_docs_say(actual: object, expected: object, right: bool) -> None:
    assert same_answer(actual, expected) is right


def test_load_expected_reads_a_json_object_and_says_in_one_line_what_is_wrong(tmp_path) -> None:  # noqa: ANN001
    good = tmp_path / "good.json"
    good.write_text('{"city": "Lisbon"}', encoding="utf-8")
    assert load_expected(good) == {"city": "Lisbon"}
    for name, text, needle in [
        ("bad.json", "{nope", "not JSON"),
        ("list.json", "[1, 2]", "must be a JSON object"),
    ]:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=needle) as info:
            load_expected(path)
        assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="missing.json"):
        load_expected(tmp_path / "missing.json")


def test_a_documents_expected_answer_is_looked_for_beside_it() -> None:
    assert str(expected_beside("/docs/invoice.pdf")) == "/docs/invoice.expected.json"
    assert str(expected_beside("mail.txt")) == "mail.expected.json"


def test_wrong_lists_the_fields_not_right_in_the_answers_order() -> None:
    # one home for "which fields are not right": the scoreboard and `livefill compare` both use it
    expected = {"a": 1, "b": "x", "c": [{"d": 2}, {"d": 3}]}
    result = score(expected, {"a": 2, "b": "x", "c": [{"d": 2}]})
    assert result.wrong == ("/a", "/c/1/d")  # a wrong value, a missing one
    assert result.of(Verdict.MISSING)[0].pointer == "/c/1/d"
    assert score(expected, expected).wrong == ()
