"""The window renders the session and sends it intents: no setting lives in a widget."""

from __future__ import annotations

from livefill.extraction.modes import Mode
from livefill.session.session import SINGLE
from tests.gui.conftest import error_messages


def test_the_toolbar_shows_the_session_settings(make_window):
    window = make_window()
    session = window.session
    session.replace(scenario="ticket", provider="ollama", mode=Mode.HYBRID, speed=100, fault="error",
                    show_provisional_numbers=True, slicing="coalesce:30")
    assert window.scenario_combo.currentData() == "ticket"
    assert window.provider_combo.currentData() == "ollama"
    assert window.mode_combo.currentData() == "hybrid"
    assert window.speed_combo.currentData() == 100.0
    assert window.fault_actions["error"].isChecked() and "error" in window.faults_button.text()
    assert window.show_numbers_action.isChecked()
    assert window.inspector_dock.inspector.slicing_value() == "coalesce:30"
    assert window.source_view.toPlainText() == session.document()
    assert window.field("/summary") is not None  # the single form shows the ticket now
    assert window.inspector_dock.lane_combo.itemText(0) == "this form (hybrid)"


def test_the_users_choices_become_session_settings(make_window):
    window = make_window()
    s = window.session
    window.provider_combo.setCurrentIndex(window.provider_combo.findData("openai-responses"))
    window.mode_combo.setCurrentIndex(window.mode_combo.findData("naive"))
    window.speed_combo.setCurrentIndex(window.speed_combo.findData(300.0))
    window.fault_actions["disconnect"].trigger()
    window.show_strings_action.setChecked(False)
    assert (s.settings.provider, s.settings.mode, s.settings.speed) == ("openai-responses", Mode.NAIVE, 300.0)
    assert s.settings.fault == "disconnect" and s.settings.show_provisional_strings is False
    assert window.form.marking is False  # the single form follows the mode's table row
    config = window.run_config()
    assert config.provider == "openai-responses" and config.demo.headers()["x-demo-fault"].partition("@")[0] == "disconnect"


def test_the_single_form_and_the_compare_lanes_are_session_lanes(make_window):
    window = make_window(compare=["naive", "settled"])
    session = window.session
    assert [lane.model for lane in window.compare_view.lanes] == session.compare_lanes
    assert window.single_view.model is session.single and window.single_view.name == SINGLE
    session.add_lane("blocking")
    assert [lane.mode for lane in window.compare_view.lanes] == [Mode.NAIVE, Mode.SETTLED, Mode.BLOCKING]
    assert window.compare_view.metrics_table.columnCount() == 3
    session.leave_compare()
    assert not window.comparing and window.compare_action.isChecked() is False
    assert window.mode_combo.isEnabled()


def test_a_refused_intent_is_reported_and_the_control_shows_the_setting(make_window, monkeypatch):
    window = make_window()

    def refuse(**_changes):
        raise RuntimeError("not now")

    monkeypatch.setattr(window.session, "replace", refuse)
    window.speed_combo.setCurrentIndex(window.speed_combo.findData(10.0))
    assert error_messages(window)[-1] == "RuntimeError: not now"
    assert window.speed_combo.currentData() == window.session.settings.speed
