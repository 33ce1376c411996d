"""The main window against the real embedded demo provider over loopback (offscreen)."""

from __future__ import annotations

import json

import pytest

from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from tests.gui.conftest import Recorder, arun, error_messages, wait_until

INVOICE = get_scenario("invoice")
NAME = "Martinez SA"


def finished(window):
    return lambda: not window.controller.active and window.controller.last_status is not None and window.controller.last_status.phase.final


def test_object_names_and_initial_buttons(make_window):
    window = make_window()
    from PySide6.QtWidgets import QWidget

    for name in ("startButton", "stopButton", "scenarioCombo", "providerCombo", "modeCombo", "statusLine", "runLog"):
        assert window.findChild(QWidget, name) is not None, name
    for spec in window.form.fields:
        assert window.findChild(QWidget, f"field:{spec.pointer}") is not None
    assert window.start_button.isEnabled() and not window.stop_button.isEnabled()
    assert window.source_view.toPlainText() == INVOICE.document
    assert window.field("/customer_name").property("state") == "empty"


@pytest.mark.slow
def test_partial_provisional_name_then_settled_and_amount_never_partial(make_window, qloop):
    window = make_window(speed=40, provider="openai-chat", mode="partial")
    rec = Recorder(window, ["/customer_name", "/amount"])

    async def scenario():
        window.start_button.click()
        assert not window.start_button.isEnabled() and window.stop_button.isEnabled()
        await wait_until(lambda: window.field("/amount").property("state") == "settled")
        window.stop_button.click()
        await wait_until(finished(window))

    arun(qloop, scenario())
    names = rec.seen["/customer_name"]
    settled_at = names.index(("settled", NAME))
    provisional = [v for s, v in names[:settled_at] if s == "provisional"]
    assert provisional, names
    assert all(v.endswith("…") and NAME.startswith(v[:-1]) and v[:-1] != NAME for v in provisional[:1])
    assert set(rec.values("/amount")) <= {"", "1200"}
    assert "provisional" not in rec.states("/amount")
    assert ("settled", "1200") in rec.seen["/amount"]
    assert window.start_button.isEnabled() and not window.stop_button.isEnabled()


def test_partial_commit_shows_every_field_settled_and_writes_one_history_line(make_window, qloop, tmp_path):
    window = make_window(mode="partial")

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.COMMITTED
    states = window.field_states()
    assert set(states.values()) == {"settled"}, states
    assert window.field("/customer_name").property("displayValue") == NAME
    table = window.field("/line_items")
    model = table.model
    assert model.rowCount() == len(INVOICE.output["line_items"])
    assert {model.data(model.index(r, c), 0x0101) for r in range(model.rowCount()) for c in range(model.columnCount())} == {"settled"}
    lines = (tmp_path / "history.jsonl").read_text(encoding="utf-8").split("\n")
    assert len(lines) == 2 and lines[1] == ""
    assert json.loads(lines[0])["extraction"] == INVOICE.output
    assert "committed" in window.status_line.text()
    assert "committed" in window.run_log.lines()[-1]


def test_settled_mode_never_shows_a_provisional_field(make_window, qloop):
    window = make_window(mode="settled", speed=300)
    pointers = [s.pointer for s in window.form.fields]
    rec = Recorder(window, pointers)

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.COMMITTED, window.controller.last_status.reason
    for p in pointers:
        assert "provisional" not in rec.states(p), (p, rec.seen[p])
    assert window.form.committed == INVOICE.output


def test_blocking_mode_shows_everything_at_once(make_window, qloop):
    window = make_window(mode="blocking", speed=300)
    rec = Recorder(window, ["/customer_name", "/notes"])

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert rec.states("/customer_name") == ["empty", "settled"] or rec.states("/customer_name")[-1] == "settled"
    assert "provisional" not in rec.states("/customer_name") + rec.states("/notes")
    # the name and the notes appeared in the same repaint
    assert len(rec.seen["/customer_name"]) == len(rec.seen["/notes"])


@pytest.mark.slow
def test_naive_shows_fragments_as_values_and_keeps_them_after_stop(make_window, qloop):
    window = make_window(mode="naive", speed=40, provider="openai-chat")
    window.form.set_value("/customer_name", "Previous SA")
    rec = Recorder(window, ["/customer_name", "/amount"])

    async def scenario():
        window.start()
        await wait_until(lambda: window.field("/amount").property("displayValue") not in ("", None))
        await wait_until(lambda: window.controller.run.status.tokens_received > 40)
        window.stop()
        await wait_until(finished(window))

    arun(qloop, scenario())
    assert "Marti" in rec.values("/customer_name")  # a fragment shown as if it were the value
    assert "120" in rec.values("/amount")  # 120 for 1200: the naive client's lie
    assert "provisional" not in rec.states("/customer_name")
    assert window.controller.last_status.phase is Phase.STOPPED
    assert window.form.committed["customer_name"] == NAME  # no restore: it kept what it showed
    assert window.findChild(__import__("PySide6.QtWidgets", fromlist=["QLabel"]).QLabel, "naiveBanner") is not None


def test_stop_mid_stream_restores_committed_values_and_user_edits(make_window, qloop, demo_server):
    window = make_window(speed=40, provider="anthropic")
    window.form.load({"customer_name": "Old Customer", "amount": 5})
    window.form.set_value("/notes", "typed by the user")
    before, states = window.form.committed, window.form.states()

    async def scenario():
        window.start()
        name = window.field("/customer_name")  # settled already before Start ("Old Customer"): wait for the run's value
        await wait_until(lambda: name.property("displayValue") == NAME and name.property("state") == "settled")
        window.stop()
        await wait_until(finished(window))
        await wait_until(lambda: "server stopped after" in window.status_line.text(), timeout=3)

    arun(qloop, scenario())
    status = window.controller.last_status
    assert status.phase is Phase.STOPPED
    assert window.form.committed == before and window.form.document == before and window.form.states() == states
    assert window.field("/customer_name").property("displayValue") == "Old Customer"
    assert window.field("/notes").property("displayValue") == "typed by the user"
    entry = [e for e in demo_server.requests() if e["started_at"] >= status.started_at - 0.5][-1]
    assert entry["disconnected"] and entry["tokens_sent"] < entry["tokens_total"]
    assert f"server stopped after {entry['tokens_sent']} of {entry['tokens_total']} tokens" in window.status_line.text()
    assert "stopped" in window.run_log.lines()[-1]
    assert not (window.history.path).exists()


FAULTS = [
    ("max_tokens", "anthropic", "truncated"),
    ("error", "anthropic", "provider error"),
    ("disconnect", "openai-chat", "failed"),
    ("stall", "anthropic", "idle timeout"),
    ("stall_silent", "openai-responses", "idle timeout"),
    ("invalid_value", "anthropic", "validation failed at /amount"),
    ("malformed", "openai-chat", "protocol error"),
    ("blank_line", "ollama", "protocol error"),
]


@pytest.mark.parametrize(("fault", "provider", "words"), FAULTS)
def test_every_fault_ends_restored_with_its_reason(make_window, qloop, fault, provider, words):
    window = make_window(provider=provider, idle_timeout=0.5 if fault.startswith("stall") else 20.0)
    window.form.set_value("/customer_name", "Kept SA")
    before, states = window.form.committed, window.form.states()
    window.set_fault(fault)

    async def scenario():
        window.start()
        await wait_until(finished(window))

    arun(qloop, scenario())
    status = window.controller.last_status
    assert status.phase is Phase.FAILED, status.reason
    assert words in window.status_line.text(), window.status_line.text()
    assert window.form.document == before
    assert window.field("/customer_name").property("displayValue") == "Kept SA"
    assert window.form.states() == states  # restored exactly: the reason is in the status line
    if fault == "invalid_value":
        assert "twelve hundred" not in window.field("/amount").toolTip()
    assert "failed" in window.run_log.lines()[-1]
    assert not window.history.path.exists()


def test_exceptions_in_slots_reach_the_user(make_window, qloop, monkeypatch):
    window = make_window()

    def broken(*_a, **_k):
        raise RuntimeError("boom in a slot")

    monkeypatch.setattr(window.session, "start", broken)
    before = error_messages(window)
    window.start_button.click()
    assert error_messages(window)[len(before):] == ["RuntimeError: boom in a slot"]


def test_user_edit_in_a_field_reaches_the_model(make_window, qtbot):
    window = make_window()
    editor = window.field("/customer_name").editor
    editor.setFocus()
    qtbot.keyClicks(editor, "Typed GmbH")
    editor.editingFinished.emit()
    window.form_view.signals.flush()
    assert window.form.committed == {"customer_name": "Typed GmbH"}
    assert window.field("/customer_name").property("state") == "settled"


def test_switching_scenario_rebuilds_the_form_and_keeps_each_forms_values(make_window):
    window = make_window()
    window.form.set_value("/customer_name", "Mine")
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("ticket"))
    assert window.field("/summary").spec.kind.value == "prose"
    assert window.source_view.toPlainText() == get_scenario("ticket").document
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("invoice"))
    assert window.field("/customer_name").property("displayValue") == "Mine"
