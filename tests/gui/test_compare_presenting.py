"""Presenting: presentation mode, autoplay, Save picture, the timeline's PNG, light and dark themes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPalette
from PySide6.QtTest import QTest

from livefill.session.run_status import Phase
from livefill.gui.theme import Theme, dark_palette, scheme_of
from tests.gui.conftest import arun, wait_until

PNG = b"\x89PNG\r\n\x1a\n"


def visible_toolbar_widgets(window) -> set[str]:
    bar = window.run_toolbar
    out = set()
    for action in bar.actions():
        if not action.isVisible():
            continue
        widget = bar.widgetForAction(action)
        out.add(widget.objectName() if widget is not None and widget.objectName() else action.text())
    return {name for name in out if name}


@pytest.mark.slow
def test_presentation_mode_toggles_with_f11_and_esc_when_idle(make_window, qloop):
    window = make_window(compare=["naive", "partial", "settled"], speed=40)
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)  # shortcuts go to the active window
    before = visible_toolbar_widgets(window)
    assert {"providerCombo", "modeCombo", "speedCombo", "faultsButton"} <= before
    QTest.keyClick(window, Qt.Key.Key_F11)
    assert window.presenting and window.isFullScreen()
    shown = visible_toolbar_widgets(window)
    assert {"scenarioCombo", "startButton", "stopButton"} <= shown
    assert not shown & {"providerCombo", "modeCombo", "speedCombo", "faultsButton", "settingsButton", "savePictureButton"}
    assert not window.menuBar().isVisible() and not window.run_log.isVisible()
    assert not window.compare_view.lane(0).bar.isVisible()
    assert "font-size" in window.styleSheet()
    base = window.font().pointSizeF()
    assert window.compare_view.lane(0).header.title_label.font().pointSizeF() > base
    # F11 leaves and puts everything back
    QTest.keyClick(window, Qt.Key.Key_F11)
    assert not window.presenting and not window.isFullScreen()
    assert visible_toolbar_widgets(window) == before and window.styleSheet() == ""
    assert window.menuBar().isVisible() and window.compare_view.lane(0).bar.isVisible()
    # Esc while a run is active stops it and stays presenting; Esc when idle leaves
    window.toggle_presentation()
    assert window.presenting

    async def scenario():
        window.start()
        await wait_until(lambda: window.active and any(s and s.tokens_received > 2 for s in window.last_statuses()))
        QTest.keyClick(window, Qt.Key.Key_Escape)
        await wait_until(lambda: not window.active)
        await window.wait_runs()

    arun(qloop, scenario())
    assert window.presenting
    assert all(s.phase is Phase.STOPPED for s in window.last_statuses())
    QTest.keyClick(window, Qt.Key.Key_Escape)
    assert not window.presenting


@pytest.mark.slow
def test_autoplay_runs_two_cycles_with_a_pause_and_stops(make_window, qloop):
    window = make_window(compare=["naive", "partial"])
    cycles = []
    window.autoplay.cycleFinished.connect(cycles.append)

    async def scenario():
        window.start_autoplay(pause=0.2)
        assert window.autoplay.active and window.autoplay_action.isChecked()
        await wait_until(lambda: window.autoplay.cycles >= 2, timeout=30)
        assert window.stop_button.isEnabled()  # Stop is always there to end it
        window.autoplay.stop()
        await wait_until(lambda: not window.autoplay.active and not window.active)

    arun(qloop, scenario())
    assert cycles[:2] == [1, 2]
    assert not window.autoplay_action.isChecked()
    lines = window.run_log.lines()
    assert len(lines) >= 4 and sum("committed" in line for line in lines) >= 4  # two cycles of two lanes


def test_between_autoplay_runs_the_status_says_when_the_next_starts(make_window, qloop):
    # A booth screen said nothing during the pause: it looked stuck.
    window = make_window(speed=0)

    async def scenario():
        window.start_autoplay(pause=5)
        await wait_until(lambda: window.autoplay.cycles >= 1, timeout=30)
        said = window.statusBar().currentMessage()
        assert said == "Autoplay: run 1 ended; the next starts in 5 s (Esc stops autoplay)", said
        assert not window.active and window.autoplay.active
        QTest.keyClick(window, Qt.Key.Key_Escape)  # Esc in the pause ends autoplay
        await wait_until(lambda: not window.autoplay.active)
        assert window.statusBar().currentMessage() == ""  # no next run is coming: not said any more

    arun(qloop, scenario())
    assert window.autoplay.cycles == 1


def test_stop_button_ends_autoplay_mid_run(make_window, qloop, demo_server):
    window = make_window(speed=40, mode="partial")

    async def scenario():
        window.start_autoplay(pause=0.1)
        await wait_until(lambda: window.controller.active and window.controller.run.status.tokens_received > 3)
        window.stop_button.click()
        await wait_until(lambda: not window.autoplay.active and not window.active)
        await window.wait_runs()

    arun(qloop, scenario())
    assert window.controller.last_status.phase is Phase.STOPPED
    assert window.autoplay.cycles <= 1
    assert window.start_button.isEnabled() and not window.stop_button.isEnabled()


def test_save_picture_writes_a_png_of_the_window(make_window, tmp_path):
    window = make_window(compare=["naive", "partial", "settled"])
    out = window.save_picture(tmp_path / "pics" / "window.png")
    assert out.read_bytes()[:8] == PNG
    image = QImage(str(out))
    assert image.width() == window.width() and image.height() == window.height()


def test_timeline_dock_exports_png(make_window, qloop, tmp_path):
    window = make_window(compare=["naive", "settled"])
    window.timeline_dock.show()

    async def scenario():
        window.start()
        await wait_until(lambda: not window.active, timeout=30)

    arun(qloop, scenario())
    timeline = window.compare_view.timeline
    assert timeline.bars() and {b.lane for b in timeline.bars()} == {lane.name for lane in window.lanes}
    assert window.timeline_dock.view.model is timeline
    out = window.timeline_dock.export(tmp_path / "timeline.png")
    assert out.read_bytes()[:8] == PNG and QImage(str(out)).height() >= window.timeline_dock.view.content_height()


@pytest.fixture
def restore_app_look(qapp):
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    yield qapp
    qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)


def test_themes_follow_the_system_palette_and_can_be_forced(restore_app_look):
    app = restore_app_look
    theme = Theme(app, "light")
    assert theme.name == "light" and "dark theme" not in app.styleSheet()
    theme.set_choice("dark")
    assert theme.name == "dark" and "livefill — dark theme" in app.styleSheet()
    assert app.palette().color(QPalette.ColorRole.Window).lightnessF() < 0.5
    # "system": the style sheet follows the palette the platform gives
    theme.set_choice("system")
    assert theme.name == scheme_of(app)
    changes = []
    theme.changed.connect(changes.append)
    app.setPalette(dark_palette())  # the system went dark
    assert theme.name == "dark" and changes[-1] == "dark" and "dark theme" in app.styleSheet()
    with pytest.raises(ValueError):
        theme.set_choice("sepia")
    theme.deleteLater()


def test_a_forced_theme_greys_what_is_disabled(make_window, restore_app_look):
    # With --theme light a greyed Start (a run active) was drawn exactly like a pressable one.
    from livefill.gui.theme import light_palette

    for palette in (light_palette(), dark_palette()):
        for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
            active = palette.color(QPalette.ColorGroup.Active, role)
            disabled = palette.color(QPalette.ColorGroup.Disabled, role)
            assert abs(active.lightnessF() - disabled.lightnessF()) > 0.25, (role, active.name(), disabled.name())
    theme = Theme(restore_app_look, "light")
    window = make_window()
    button = window.start_button

    def pixels() -> set[int]:
        image = button.grab().toImage()
        return {image.pixel(x, y) for x in range(image.width()) for y in range(image.height())}

    enabled = pixels()
    button.setEnabled(False)
    assert pixels() != enabled
    theme.deleteLater()


def test_both_style_sheets_say_every_state_in_shape_not_only_colour():
    from livefill.gui.theme import stylesheet

    for name in ("light", "dark"):
        qss = stylesheet(name)
        assert 'state="provisional"' in qss and "dashed" in qss and "italic" in qss
        assert 'state="invalid"' in qss and "2px solid" in qss
        assert 'neverTrue="true"' in qss
