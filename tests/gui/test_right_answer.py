"""The right answer in the window: each lane's fields marked right or wrong at commit, the
scoreboard's new rows (fields right, first settled, wire counts, tokens, cost), prices in the
settings, and marks that go when a new run starts or the form is edited (issue 29, item 2).

Against the real embedded demo provider over loopback, at speed 0 (offscreen).
"""

from __future__ import annotations

import json

from livefill.extraction.scenarios import get_scenario
from livefill.session.app_settings import MemoryStore, load_settings
from livefill.session.metrics import leaves
from livefill.widgets.metrics_table import ROWS
from livefill.widgets.table_model import ANSWER_ROLE
from tests.gui.conftest import arun, wait_until

INVOICE = get_scenario("invoice")
SCORED = [p for p, _ in leaves(INVOICE.expected)]  # 7 scalars + 3 rows × 4 cells


def all_done(window):
    return lambda: not window.active and all(s is not None and s.phase.final for s in window.last_statuses())


def answers(lane) -> dict[str, str]:
    """Every scored pointer of the invoice -> the mark the lane shows for it ("right", "wrong", "")."""
    out = {}
    table = lane.field("/line_items").model
    for pointer in SCORED:
        if pointer.startswith("/line_items/"):
            _, _, row, column = pointer.split("/")
            index = table.index(int(row), [c.pointer for c in table.columns].index("/" + column))
            out[pointer] = table.data(index, ANSWER_ROLE)
        else:
            out[pointer] = lane.field(pointer).property("answer")
    return out


def run(window, qloop) -> None:
    async def scenario():
        window.start()
        await wait_until(all_done(window), timeout=60)

    arun(qloop, scenario())
    window.compare_view.metrics_table.refresh()


def test_every_lane_right_on_every_field_with_tokens_and_wire_counts(make_window, qloop):
    assert len(SCORED) == 19
    window = make_window(compare=["naive", "partial", "settled"], provider="anthropic")
    view = window.compare_view
    run(window, qloop)
    table = view.metrics_table
    for i, lane in enumerate(view.lanes):
        assert answers(lane) == dict.fromkeys(SCORED, "right"), lane.title
        assert lane.field("/amount").marker.text() == "✓ right"
        assert "1200" in lane.field("/amount").toolTip()
        assert lane.field("/line_items").marker.text() == "✓ 12 right"
        assert table.cell_text("fields_right", i) == "✓ 19 / 19"
        if lane.mode.value != "settled":  # read from the provider's own stream, which reports them
            tokens_in, tokens_out = (int(t.replace(",", "")) for t in table.cell_text("tokens", i).split(" / "))
            assert tokens_in > 0 and tokens_out > 0
        else:  # the relay's records carry no token counts: not reported, not invented
            assert table.cell_text("tokens", i) == "—"
        assert table.cell_text("first_settled", i).endswith(" s")
        assert table.cell_text("wire", i).endswith(f" · {lane.model.status.bytes_received:,} bytes") and lane.model.status.bytes_received
        assert table.cell_text("cost", i) == "—"  # no price given: none invented
    assert table.cell_text("wire", 0).startswith(f"{view.lane(0).model.status.deltas_received} deltas · ")
    assert table.cell_text("wire", 2).startswith(f"{view.lane(2).model.status.records_received} relay records · ")
    assert view.lane(1).field("/notes").property("answer") == ""  # not in the expected answer: not scored


def test_a_wrong_answer_is_marked_on_exactly_that_field_with_the_expected_value(make_window, qloop, tmp_path):
    expected = json.loads(json.dumps(INVOICE.expected))
    expected["amount"] = 1250
    expected["line_items"][1]["sku"] = "CHR-99"
    path = tmp_path / "invoice.expected.json"
    path.write_text(json.dumps(expected), encoding="utf-8")
    window = make_window(compare=["naive", "partial"], provider="anthropic")
    view = window.compare_view
    menu = window.menus.expected_answer
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    assert not menu.choose(bad)  # a bad file: one line, nothing changes
    assert "not JSON" in window.statusBar().currentMessage() and "\n" not in window.statusBar().currentMessage()
    assert window.session.scoreboard.expected.chosen is None
    dialog = menu.ask()  # File → Expected answer ▸ Choose a file…: the real (non-modal) dialog
    assert dialog.objectName() == "expectedAnswerDialog" and dialog.isVisible()
    dialog.fileSelected.emit(str(path))
    assert window.session.scoreboard.expected.current().path == str(path)
    menu.render()
    assert menu.now_action.text() == "Now: invoice.expected.json, chosen" and menu.clear_action.isEnabled()
    dialog.close()
    run(window, qloop)
    for i, lane in enumerate(view.lanes):
        marks = answers(lane)
        assert {p for p, a in marks.items() if a == "wrong"} == {"/amount", "/line_items/1/sku"}
        assert {p for p, a in marks.items() if a == "right"} == set(SCORED) - {"/amount", "/line_items/1/sku"}
        amount = lane.field("/amount")
        assert amount.marker.text() == "✗ wrong" and "Expected: 1250" in amount.toolTip() and "shown: 1200" in amount.toolTip()
        assert amount.marker.property("answer") == amount.editor.property("answer") == "wrong"  # for the QSS
        cells = lane.field("/line_items")
        tip = cells.model.data(cells.model.index(1, 0), 3)  # ToolTipRole
        assert "Expected: CHR-99" in tip
        assert cells.marker.text() == "✗ 1 of 12 wrong"
        assert view.metrics_table.cell_text("fields_right", i) == "✗ 17 / 19"
    # cleared: the scenario's own answer again, and the lanes that still show their run are scored again
    assert menu.clear()
    assert answers(view.lane(1)) == dict.fromkeys(SCORED, "right")


def test_marks_go_when_a_new_run_starts_or_the_form_is_edited(make_window, qloop):
    window = make_window(compare=["partial", "settled"], provider="anthropic")
    view = window.compare_view
    run(window, qloop)
    assert all(a == "right" for a in answers(view.lane(0)).values())

    async def restart():
        window.start()
        await wait_until(lambda: window.active)
        marks = [answers(lane) for lane in view.lanes]
        await wait_until(all_done(window), timeout=60)
        return marks

    during = arun(qloop, restart())
    assert all(a == "" for marks in during for a in marks.values())
    lane = view.lane(0)
    assert lane.field("/currency").property("answer") == "right"  # the new run committed: marked again
    lane.form.set_value("/currency", "USD")  # an edit: the marks no longer describe the form
    assert all(a == "" for a in answers(lane).values())
    assert lane.field("/currency").marker.text() != "✗ wrong"
    assert all(a == "right" for a in answers(view.lane(1)).values())  # the other lane's form was not edited


def test_a_price_entered_in_the_settings_makes_a_cost_appear(make_window, qloop):
    store = MemoryStore()
    window = make_window(compare=["partial", "settled"], provider="anthropic", store=store)
    view = window.compare_view
    run(window, qloop)
    table = view.metrics_table
    assert table.cell_text("cost", 0) == "—"
    dialog = window.open_settings()
    prices = dialog.prices
    assert prices.table.rowCount() == 0  # no prices shipped
    prices.add_row()
    prices.set_cell(0, 0, "claude-sonnet-5")  # the demo's Anthropic model (no model chosen)
    assert window.session.settings.prices == ()
    assert "give both prices" in dialog.error.text()
    prices.set_cell(0, 1, "$3")
    prices.set_cell(0, 2, "15")
    assert [(p.model, p.input, p.output) for p in window.session.settings.prices] == [("claude-sonnet-5", 3.0, 15.0)]
    assert not dialog.error.isVisible()
    assert load_settings(store).prices == window.session.settings.prices  # remembered at once
    table.refresh()
    s = view.lane(0).metrics.summary()
    want = (s.facts.tokens_in * 3 + s.facts.tokens_out * 15) / 1e6
    assert table.cell_text("cost", 0) not in ("—", "")
    assert abs(float(table.cell_text("cost", 0)) - want) <= want * 0.01
    assert "claude-sonnet-5" in table.item([k for k, _, _ in ROWS].index("cost"), 0).toolTip()
    assert table.cell_text("cost", 1) == "—"  # the relay lane: no tokens reported, so no cost
    prices.set_cell(0, 1, "three")  # not a price: said, and the setting keeps its value
    assert "a price is a number" in dialog.error.text()
    assert window.session.settings.prices[0].input == 3.0


def test_the_single_form_of_your_document_is_scored_against_the_answer_beside_it(make_window, qloop, tmp_path):
    document = tmp_path / "march.txt"
    document.write_text(INVOICE.document, encoding="utf-8")
    expected = json.loads(json.dumps(INVOICE.expected))
    expected["currency"] = "USD"
    (tmp_path / "march.expected.json").write_text(json.dumps(expected), encoding="utf-8")
    window = make_window(provider="anthropic")

    async def scenario():
        task = window.documents.open_path(document)
        assert task is not None
        await task
        assert window.session.settings.document_path == str(document.resolve())
        window.start()
        await wait_until(all_done(window), timeout=60)

    arun(qloop, scenario())
    assert window.menus.expected_answer.expected.current().source == "march.expected.json, beside the document"
    currency = window.field("/currency")
    assert currency.property("answer") == "wrong" and currency.marker.text() == "✗ wrong"
    assert "Expected: USD (shown: EUR)" in currency.toolTip()
    assert window.field("/customer_name").property("answer") == "right"
    assert window.field("/line_items").marker.text() == "✓ 12 right"
    window.session.clear_forms()  # Clear: no marks on an empty form
    assert currency.property("answer") == "" and window.field("/line_items").marker.text() != "✓ 12 right"
    assert window.session.undo_clear()  # the run's form put back exactly: its marks too
    assert currency.property("answer") == "wrong" and window.field("/line_items").marker.text() == "✓ 12 right"
