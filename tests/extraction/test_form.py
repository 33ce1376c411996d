"""The form model: fields derived from the schema, draft over committed values, exact restore."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from livefill.errors import UsageError
from livefill.extraction.form import FieldState, FormModel, FormUpdate
from livefill.extraction.json_doc import MISSING, get_at
from livefill.extraction.schema import FieldKind, fields_for
from livefill.extraction.schemas import SCHEMAS

S = FieldState


def kinds(specs):
    return {s.pointer: s.kind for s in specs}


# -- schema -> fields ------------------------------------------------------------------------


def test_invoice_fields_are_derived_from_the_json_schema():
    specs = fields_for(SCHEMAS["invoice"])
    assert kinds(specs) == {
        "/customer_name": FieldKind.STRING,
        "/invoice_number": FieldKind.STRING,
        "/amount": FieldKind.NUMBER,
        "/currency": FieldKind.ENUM,
        "/issue_date": FieldKind.DATE,
        "/due_date": FieldKind.DATE,
        "/paid": FieldKind.BOOLEAN,
        "/line_items": FieldKind.TABLE,
        "/notes": FieldKind.PROSE,
    }
    by = {s.pointer: s for s in specs}
    assert by["/currency"].choices == ("EUR", "USD", "GBP", "CHF")
    assert by["/customer_name"].label == "Customer name"
    assert by["/amount"].description == "Total amount due"
    assert kinds(by["/line_items"].children) == {
        "/sku": FieldKind.STRING,
        "/description": FieldKind.STRING,
        "/qty": FieldKind.INTEGER,
        "/unit_price": FieldKind.NUMBER,
    }


def test_catalog_table_flattens_nested_objects_and_keeps_scalar_arrays_as_chips():
    by = {s.pointer: s for s in fields_for(SCHEMAS["catalog"])}
    cols = kinds(by["/items"].children)
    assert cols["/tags"] is FieldKind.CHIPS
    assert cols["/dimensions/width_cm"] is FieldKind.NUMBER
    assert "/dimensions" not in cols


def test_ticket_has_chips_enum_integer_and_prose():
    by = kinds(fields_for(SCHEMAS["ticket"]))
    assert by["/tags"] is FieldKind.CHIPS
    assert by["/category"] is FieldKind.ENUM
    assert by["/priority"] is FieldKind.INTEGER
    assert by["/summary"] is FieldKind.PROSE


class Address(BaseModel):
    street: str
    city: str


class Custom(BaseModel):
    essay: str = Field(max_length=5000)
    short: str = Field(max_length=20)
    address: Address
    maybe: int | None = None
    colour: Literal["red", "green"]


def test_nested_object_is_a_group_long_maxlength_is_prose_optional_is_unwrapped():
    by = {s.pointer: s for s in fields_for(Custom)}
    assert by["/essay"].kind is FieldKind.PROSE
    assert by["/short"].kind is FieldKind.STRING
    assert by["/address"].kind is FieldKind.OBJECT
    assert [c.pointer for c in by["/address"].children] == ["/address/street", "/address/city"]
    assert by["/maybe"].kind is FieldKind.INTEGER and not by["/maybe"].required
    assert by["/colour"].kind is FieldKind.ENUM


def test_spec_for_maps_array_indices_to_columns():
    form = FormModel(SCHEMAS["catalog"])
    assert form.spec_for("/items/7/price").kind is FieldKind.NUMBER
    assert form.spec_for("/items/7/dimensions/depth_cm").name == "depth_cm"
    assert form.spec_for("/items/7/tags/2").kind is FieldKind.STRING
    assert form.spec_for("/items").kind is FieldKind.TABLE
    assert form.spec_for("/nope") is None


def test_get_at_follows_rfc6901():
    doc = {"a/b": [{"x": 1}], "c~d": 2}
    assert get_at(doc, "/a~1b/0/x") == 1
    assert get_at(doc, "/c~0d") == 2
    assert get_at(doc, "/a~1b/1") is MISSING
    with pytest.raises(UsageError):
        get_at(doc, "nope")


# -- user edits, runs, commit, restore -------------------------------------------------------


@pytest.fixture
def form():
    return FormModel(SCHEMAS["invoice"])


def test_fresh_form_is_empty(form):
    assert form.state("/customer_name") is S.EMPTY
    assert form.value("/customer_name") is MISSING
    assert form.display("/customer_name") == ""
    assert not form.running


def test_user_edit_is_committed_and_settled(form):
    form.set_value("/customer_name", "ACME")
    assert form.value("/customer_name") == "ACME"
    assert form.state("/customer_name") is S.SETTLED
    assert form.committed == {"customer_name": "ACME"}


def test_user_edit_with_invalid_reason(form):
    form.set_value("/amount", "lots", invalid_reason="not a number")
    assert form.state("/amount") is S.INVALID
    assert form.reason("/amount") == "not a number"


def test_draft_starts_empty_and_committed_values_stay_aside(form):
    form.set_value("/customer_name", "ACME")
    form.begin_run()
    assert form.running
    assert form.value("/customer_name") is MISSING
    assert form.state("/customer_name") is S.EMPTY
    assert form.committed == {"customer_name": "ACME"}


def test_edits_are_refused_during_a_run(form):
    form.begin_run()
    with pytest.raises(UsageError):
        form.set_value("/customer_name", "x")
    with pytest.raises(UsageError):
        form.begin_run()


def test_provisional_then_settled_display(form):
    form.begin_run()
    form.apply("/customer_name", S.PENDING)
    assert form.state("/customer_name") is S.PENDING
    assert form.display("/customer_name") == ""
    form.apply("/customer_name", S.PROVISIONAL, "Mar")
    assert form.display("/customer_name") == "Mar…"
    form.apply("/customer_name", S.SETTLED, "Martinez SA")
    assert form.display("/customer_name") == "Martinez SA"
    assert form.state("/customer_name") is S.SETTLED


def test_restore_brings_back_committed_values_and_user_edits_exactly(form):
    form.load({"customer_name": "Old", "amount": 5})
    form.set_value("/notes", "typed by me")
    form.set_value("/amount", "x", invalid_reason="bad")
    before_doc, before_states = form.committed, form.states()
    form.begin_run()
    form.apply("", S.PROVISIONAL, {})
    form.apply("/customer_name", S.PROVISIONAL, "Mar")
    form.apply("/amount", S.SETTLED, 1200)
    form.restore()
    assert form.committed == before_doc
    assert form.document == before_doc
    assert form.states() == before_states
    assert form.reason("/amount") == "bad"
    assert not form.running


def test_restore_can_mark_the_failing_field_invalid_until_next_run(form):
    form.begin_run()
    form.restore(invalid={"/amount": "Input should be a valid number"})
    assert form.state("/amount") is S.INVALID
    assert form.reason("/amount") == "Input should be a valid number"
    assert form.value("/amount") is MISSING
    form.begin_run()
    assert form.state("/amount") is S.EMPTY


def test_commit_replaces_committed_values_all_settled(form):
    form.set_value("/customer_name", "Old")
    form.begin_run()
    form.apply("", S.PROVISIONAL, {})
    form.apply("/amount", S.SETTLED, 1200)
    form.commit({"amount": 1200, "line_items": [{"qty": 2}]})
    assert form.committed == {"amount": 1200, "line_items": [{"qty": 2}]}
    assert form.value("/customer_name") is MISSING
    assert form.state("/line_items/0/qty") is S.SETTLED
    assert form.state("/line_items") is S.SETTLED


def test_dynamic_rows_appear_as_items_start(form):
    form.begin_run()
    form.apply("", S.PROVISIONAL, {})
    form.apply("/line_items", S.PROVISIONAL, [])
    form.apply("/line_items/0", S.PROVISIONAL, {})
    form.apply("/line_items/0/qty", S.PROVISIONAL, 1)
    assert form.value("/line_items") == [{"qty": 1}]
    form.apply("/line_items/0/qty", S.SETTLED, 12)
    form.apply("/line_items/1/sku", S.PROVISIONAL, "DS")  # parents created as needed
    assert form.value("/line_items") == [{"qty": 12}, {"sku": "DS"}]
    assert form.state("/line_items/1") is S.PROVISIONAL
    assert form.state("/line_items/0/qty") is S.SETTLED


def test_settled_container_marks_its_descendants_settled(form):
    form.begin_run()
    form.apply("/line_items/0", S.SETTLED, {"sku": "A", "qty": 2})
    assert form.value("/line_items/0/qty") == 2
    assert form.state("/line_items/0/sku") is S.SETTLED
    assert form.state("/line_items/0") is S.SETTLED


def test_a_container_settling_with_what_its_children_settled_with_reports_only_what_changes_state(form):
    # The closing bracket of a document whose values have all settled used to mark and report every
    # pointer under it again (1,400 in the catalog), and copy the whole document into the draft once
    # more: a stall at the end of every run. Only what changes state is reported now, and the draft
    # keeps its copy. A container whose JSON differs from what its children said (1.0 where 1 was
    # shown) still replaces and reports everything under it.
    seen: list[FormUpdate] = []
    form.subscribe(seen.append)
    form.begin_run()
    form.apply_many([("", S.PROVISIONAL, {}), ("/line_items", S.PROVISIONAL, []), ("/line_items/0", S.PROVISIONAL, {}),
                     ("/line_items/0/sku", S.SETTLED, "A"), ("/line_items/0/qty", S.SETTLED, 2)])
    draft_row = form._shown.doc["line_items"][0]  # noqa: SLF001
    form.apply("/line_items/0", S.SETTLED, {"sku": "A", "qty": 2})
    assert seen[-1].pointers == {"/line_items/0"}
    assert form._shown.doc["line_items"][0] is draft_row  # noqa: SLF001 - not copied again
    assert form.state("/line_items/0/qty") is S.SETTLED and form.state("/line_items/0") is S.SETTLED

    form.apply("", S.SETTLED, {"line_items": [{"sku": "A", "qty": 2}]})
    assert seen[-1].pointers == {"", "/line_items"}
    assert form.document == {"line_items": [{"sku": "A", "qty": 2}]}

    form.apply_many([("/line_items/1", S.PROVISIONAL, {}), ("/line_items/1/qty", S.SETTLED, 1)])
    form.apply("/line_items/1", S.SETTLED, {"qty": 1.0})  # equal in Python, not the same JSON
    assert seen[-1].pointers == {"/line_items/1", "/line_items/1/qty"}
    assert type(form.value("/line_items/1/qty")) is float


def test_pending_removes_a_value(form):
    form.begin_run()
    form.apply("/amount", S.PROVISIONAL, 12)
    form.apply("/amount", S.PENDING)
    assert form.value("/amount") is MISSING
    assert form.state("/amount") is S.PENDING


def test_adopt_draft_keeps_what_was_shown(form):
    form.set_value("/customer_name", "Old")
    form.begin_run()
    form.apply("/customer_name", S.SETTLED, "Mar")
    form.adopt_draft()
    assert form.committed == {"customer_name": "Mar"}
    assert not form.running


def test_user_can_edit_table_cells_and_add_rows(form):
    form.set_value("/line_items/0/qty", 3)
    form.set_value("/line_items/1/sku", "B")
    assert form.committed == {"line_items": [{"qty": 3}, {"sku": "B"}]}
    with pytest.raises(UsageError):
        form.set_value("/line_items/5/sku", "gap")
    form.clear_value("/line_items/1/sku")
    assert form.value("/line_items/1/sku") is MISSING
    assert form.state("/line_items/1/sku") is S.EMPTY


def test_observers_get_one_update_per_batch_and_can_unsubscribe(form):
    seen: list[FormUpdate] = []
    unsubscribe = form.subscribe(seen.append)
    form.begin_run()
    form.apply_many([("/customer_name", S.PROVISIONAL, "M"), ("/amount", S.SETTLED, 1)])
    form.restore()
    assert [u.reset for u in seen] == [True, False, True]
    assert seen[0].running is True and seen[2].running is False
    assert {"/customer_name", "/amount"} <= seen[1].pointers
    unsubscribe()
    form.set_value("/amount", 2)
    assert len(seen) == 3


def test_full_document_through_the_form_matches_json(form):
    text = (pytest.importorskip("livefill.extraction.scenarios").get_scenario("invoice").output_text)
    doc = json.loads(text)
    form.begin_run()
    form.apply("", S.SETTLED, doc)
    assert form.document == doc
    assert all(st is S.SETTLED for st in form.states().values())
    form.commit()
    assert form.committed == doc


def test_display_formats_per_kind(form):
    form.load({"amount": 1200, "paid": False, "line_items": [{"unit_price": 385.0}], "currency": "EUR"})
    assert form.display("/amount") == "1200"
    assert form.display("/paid") == "no"
    assert form.display("/line_items/0/unit_price") == "385.00"
    assert form.display("/line_items") == "1 row"
    assert form.display("/currency") == "EUR"


def test_naive_form_shows_no_provisional_marker():
    form = FormModel(SCHEMAS["invoice"], marking=False)
    form.begin_run()
    form.apply("/customer_name", S.PROVISIONAL, "Mar")
    assert form.display("/customer_name") == "Mar"


def test_decimal_numbers_show_two_places_or_every_digit_they_have():
    from livefill.extraction.field_text import format_value
    from livefill.extraction.schema import FieldKind, fields_for
    from livefill.extraction.schemas.catalog import Catalog

    price = next(s for s in fields_for(Catalog)[-1].children if s.pointer.endswith("price"))
    assert price.kind is FieldKind.NUMBER
    assert format_value(price, 181.5) == "181.50"
    assert format_value(price, 118.0) == "118.00"
    assert format_value(price, 0.125) == "0.125"  # never rounded away
    assert format_value(price, 1e20) == "1e+20"


# -- where a value came from; clear and put back -------------------------------------------------


def test_typed_values_are_the_users_and_run_values_are_extracted():
    from livefill.extraction.form import Origin

    form = FormModel(SCHEMAS["invoice"])
    form.set_value("/notes", "call first")
    form.set_value("/line_items/0/qty", 3)
    assert form.origin("/notes") is Origin.USER and form.origin("/line_items/0/qty") is Origin.USER
    assert form.state("/notes") is S.SETTLED  # the same state as a settled extracted value...
    assert form.origin("/amount") is None  # no value: no origin
    form.begin_run()
    form.apply("/customer_name", S.PROVISIONAL, "Mar")
    assert form.origin("/customer_name") is Origin.EXTRACTED
    form.apply("/customer_name", S.SETTLED, "Martinez SA")
    assert form.origin("/customer_name") is Origin.EXTRACTED  # ...but not the same origin
    form.commit({"customer_name": "Martinez SA", "amount": 12})
    assert form.origins() == {"": Origin.EXTRACTED, "/customer_name": Origin.EXTRACTED, "/amount": Origin.EXTRACTED}
    form.set_value("/amount", 13)
    assert form.origin("/amount") is Origin.USER and form.origin("/customer_name") is Origin.EXTRACTED


def test_restore_gives_back_origins_and_marks_exactly():
    from livefill.extraction.form import Origin

    form = FormModel(SCHEMAS["invoice"])
    form.load({"customer_name": "From history", "amount": 5})
    form.set_value("/notes", "mine")
    form.set_value("/currency", "XXX", invalid_reason="not a currency")
    before = (form.document, form.states(), form.origins(), form.reason("/currency"))
    assert before[2]["/notes"] is Origin.USER and before[2]["/customer_name"] is Origin.EXTRACTED
    form.begin_run()
    form.apply("/notes", S.PROVISIONAL, "stream")
    assert form.origin("/notes") is Origin.EXTRACTED
    form.restore()
    assert (form.document, form.states(), form.origins(), form.reason("/currency")) == before


def test_clear_empties_everything_and_put_back_restores_it_exactly():
    form = FormModel(SCHEMAS["invoice"])
    form.begin_run()
    form.apply("/customer_name", S.SETTLED, "Mar")
    form.adopt_draft()  # a naive lane keeps what it showed
    form.set_value("/notes", "mine")
    form.set_value("/currency", "XXX", invalid_reason="not a currency")
    before = (form.document, form.states(), form.origins(), form.reason("/currency"))
    updates = []
    form.subscribe(updates.append)
    snapshot = form.clear()
    assert form.document == {} and form.states() == {} and form.origins() == {}
    assert updates[-1].reset and not snapshot.empty and snapshot.document == before[0]
    form.put_back(snapshot)
    assert (form.document, form.states(), form.origins(), form.reason("/currency")) == before
    form.set_value("/notes", "changed after")  # the snapshot is a copy: later edits do not reach it
    assert snapshot.document["notes"] == "mine"
    form.begin_run()
    with pytest.raises(UsageError, match="clear the form while a run is active"):
        form.clear()


def test_a_snapshot_tells_a_committed_run_apart_even_with_the_same_values_but_not_a_restored_one():
    form = FormModel(SCHEMAS["invoice"])
    form.begin_run()
    form.commit({"customer_name": "Ada"})
    before = form.snapshot()
    form.begin_run()
    form.restore()
    assert form.snapshot() == before  # a restored run changed nothing
    form.begin_run()
    form.commit({"customer_name": "Ada"})  # the same values, states and origins again
    assert form.committed == {"customer_name": "Ada"} and form.snapshot() != before  # but a run's result
