"""Leaving presentation mode gives the window back as it was, whichever way it is left.

View → Presentation mode stayed ticked after Esc left presentation mode; and after F11 / Esc with
a recording loaded the scenario box stayed wide (it had re-measured the recording's long name in
the larger type) and pushed Compare and Save picture into the toolbar's overflow menu; the pickers
it had hidden came back enabled (the recording's provider, a running run's settings). The window
comes back where it was (restoreGeometry put it a frame's width lower under X11: the real program
on Xvfb is measured in tests/gui/test_screen_fit.py).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from livefill.gui.recordings import bundled_traces
from tests.gui.conftest import arun, wait_until
from tests.gui.test_layout import extension_shown, settle, sized


def _active(window) -> None:
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)  # shortcuts go to the active window


@pytest.mark.parametrize("leave", ["Escape", "F11", "menu"])
def test_the_menu_item_follows_presentation_mode_however_it_is_left(make_window, leave):
    window = make_window()
    _active(window)
    window.present_action.trigger()  # View → Presentation mode
    assert window.presenting and window.present_action.isChecked()
    if leave == "menu":
        window.present_action.trigger()
    else:
        QTest.keyClick(window, getattr(Qt.Key, f"Key_{leave}"))
    settle()
    assert not window.presenting
    assert not window.present_action.isChecked()
    QTest.keyClick(window, Qt.Key.Key_F11)  # and F11 enters again, ticked
    assert window.presenting and window.present_action.isChecked()
    QTest.keyClick(window, Qt.Key.Key_Escape)
    assert not window.presenting and not window.present_action.isChecked()


def _toolbar_shown(window) -> dict[str, bool]:
    bar = window.run_toolbar
    return {"compare": bar.widgetForAction(window.compare_action) is not None
            and bar.widgetForAction(window.compare_action).isVisible(),
            "save picture": window.save_picture_button.isVisible(),
            "overflow": extension_shown(window)}


@pytest.mark.parametrize("leave", ["Escape", "F11"])
def test_leaving_presentation_with_a_recording_loaded_gives_the_toolbar_back_at_once(make_window, leave):
    window = make_window()
    sized(window, 1280, 720)
    _active(window)
    name, trace = bundled_traces()[0]
    assert window.recordings.open_trace(trace), name
    settle()
    combo = window.scenario_combo
    assert "replay" in combo.currentText()
    width = combo.width()
    assert _toolbar_shown(window) == {"compare": True, "save picture": True, "overflow": False}
    assert combo.shown_text().endswith("…") and combo.toolTip()  # the long name: cut with "…", whole in the tooltip
    geometry = window.geometry()
    QTest.keyClick(window, Qt.Key.Key_F11)
    settle()
    assert window.presenting
    QTest.keyClick(window, getattr(Qt.Key, f"Key_{leave}"))
    settle()
    assert not window.presenting
    assert window.geometry() == geometry  # where and as large as it was
    assert combo.width() == width
    assert _toolbar_shown(window) == {"compare": True, "save picture": True, "overflow": False}
    assert not window.provider_combo.isEnabled()  # still the recording's provider, greyed


def test_leaving_presentation_during_a_run_keeps_the_run_settings_greyed(make_window, qloop):
    window = make_window(speed=10)
    _active(window)
    pickers = (window.provider_combo, window.speed_combo, window.mode_combo, window.faults_button)

    async def scenario():
        QTest.keyClick(window, Qt.Key.Key_F11)
        window.start()
        await wait_until(lambda: window.active)
        QTest.keyClick(window, Qt.Key.Key_F11)  # leave while the run goes on
        assert not window.presenting and window.active
        assert not any(picker.isEnabled() for picker in pickers)
        window.stop()
        await window.wait_runs()

    arun(qloop, scenario())
    assert all(picker.isEnabled() for picker in pickers)
