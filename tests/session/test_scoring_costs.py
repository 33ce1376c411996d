"""What scoring a run at its end costs (on the GUI thread), counted, not timed: a hundred-row
catalog is scored in a number of calls that grows with its fields, not with their square."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from livefill.extraction.scenarios import load_scenarios
from livefill.session.metrics import leaves
from livefill.session.scoring import Verdict, score


def _calls(fn: Callable[[], Any], events: tuple[str, ...] = ("call", "c_call")) -> int:
    """How many Python and builtin calls `fn()` makes (sys.setprofile counts every one; a
    generator's resumption is a Python "call")."""
    count = 0

    def profile(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal count
        if event in events:
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_scoring_the_catalog_costs_calls_in_proportion_to_its_fields() -> None:
    catalog = load_scenarios()["catalog"]
    fields = len(list(leaves(catalog.output))) + len(list(leaves(catalog.expected)))
    assert fields > 1500
    result = score(catalog.expected, catalog.output)
    assert (result.right, result.total) == (703, 703)
    assert len(result.extra) == 391  # the rows' tags: not scored
    # the old code asked, for each of the 391 extra leaves, every one of the 703 expected fields
    # whether it sits under it: about 575,000 calls. Now a few per field.
    assert _calls(lambda: score(catalog.expected, catalog.output)) < 20 * fields


def test_the_leaves_of_a_row_are_not_passed_up_through_a_generator_per_level() -> None:
    catalog = load_scenarios()["catalog"]
    found = list(leaves(catalog.output))
    assert len(found) == 1094
    assert found[:3] == [("/supplier", catalog.output["supplier"]), ("/season", catalog.output["season"]),
                         ("/item_count", catalog.output["item_count"])]
    # the old recursive generator resumed one generator per level for each leaf (8,266 Python
    # calls here); now one resumption and the pointer's making
    assert _calls(lambda: list(leaves(catalog.output)), ("call",)) < 3 * len(found)
    assert list(leaves({"a": [], "b": [1, {"c~/": None}], "d": {}}, "/x")) == [
        ("/x/a", []), ("/x/b/0", 1), ("/x/b/1/c~0~1", None), ("/x/d", {})]
    assert list(leaves(5)) == [("", 5)] and list(leaves([])) == [("", [])]


def test_shapes_still_score_as_before() -> None:
    # a list where a scalar was expected: wrong; a scalar where a list was: the list's items
    # missing; nothing at all: missing
    expected = {"a": 1, "b": [1, 2], "c": "x", "d": {"e": "f"}}
    actual = {"a": [1], "b": 3, "d": {"e": " f "}, "z": {"y": 1}}
    result = score(expected, actual)
    verdicts = result.verdicts()
    assert verdicts == {"/a": Verdict.WRONG, "/b/0": Verdict.MISSING, "/b/1": Verdict.MISSING,
                        "/c": Verdict.MISSING, "/d/e": Verdict.RIGHT}
    assert set(result.extra) == {"/a/0", "/z/y"}  # "/b" is not: expected fields sit under it
    assert score({"a": {"b": 1}}, {"a": 2}).extra == ()  # "/a" is covered by /a/b: not an extra
    assert score(5, {"x": 1}).verdicts() == {"": Verdict.WRONG}
