"""The History panel, the record-all choice, and saves that say where they went (offscreen, real widgets).

Nothing is opened for real: `QDesktopServices.openUrl` is replaced and the URL asked for is checked.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox

from livefill.session.app_settings import MemoryStore
from livefill.extraction.form import FieldState
from livefill.recording.history import History
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.gui.saves import saved_note
from livefill.gui.window_menus import save_and_confirm
from tests.gui.conftest import arun, wait_until

WEATHER = get_scenario("weather")


@pytest.fixture
def opened_urls(monkeypatch):
    urls: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: urls.append(url.toString()) or True))
    return urls


def _link(label) -> str:
    text = label.text()
    return text[text.index('href="') + 6:text.index('">')]


def _records(window) -> list[dict]:
    return History(window.history.path).read()


def _rows(panel) -> list[list[str]]:
    items = [panel.list.topLevelItem(i) for i in range(panel.list.topLevelItemCount())]
    return [[item.text(c) for c in range(5)] for item in items]


def _show(window, qloop):
    async def go():
        loaded: list[int] = []
        window.history_panel.loaded.connect(loaded.append)
        window.history_action.trigger()
        await wait_until(lambda: loaded)
    arun(qloop, go())


def test_the_panel_lists_runs_newest_first_and_shows_the_file_it_reads(make_window, qloop, opened_urls):
    window = make_window()
    path = window.history.path
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_old", "label": "weather · ollama",
                           "schema": "weather", "provider": "ollama", "mode": "blocking",
                           "extraction": WEATHER.output})

    async def run_once():
        window.start()
        await window.wait_runs()
    arun(qloop, run_once())
    assert window.controller.last_status.phase is Phase.COMMITTED
    _show(window, qloop)
    panel = window.history_panel
    assert panel.isVisible() and window.history_action.isChecked()
    rows = _rows(panel)
    assert len(rows) == 2
    assert rows[0][1:4] == ["invoice", "partial", "anthropic"] and rows[0][4].startswith("committed · ")
    assert rows[1][1:4] == ["weather", "blocking", "ollama"]  # older, below
    assert panel.path_field.text() == str(path)
    panel.folder_button.click()
    assert opened_urls == [QUrl.fromLocalFile(str(path.parent)).toString()]
    assert json.loads(panel.preview.toPlainText()) == _records(window)[1]["extraction"]  # the newest selected

    async def another():  # a run while the panel is shown is listed when it ends
        window.start()
        await window.wait_runs()
        await wait_until(lambda: panel.list.topLevelItemCount() == 3)
    arun(qloop, another())


def test_open_into_form_is_exact_and_undo_puts_everything_back(make_window, qloop):
    window = make_window()
    values = {**WEATHER.output, "city": "Porto"}
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_w", "label": "weather · anthropic",
                           "schema": "weather", "provider": "anthropic", "mode": "partial", "extraction": values,
                           "view": "single", "scenario": "weather"})
    form = window.session.form  # the invoice form, with the user's own value and a mark
    form.set_value("/customer_name", "Ms Typed")
    form.set_value("/amount", 42.5, invalid_reason="too large")
    before = (form.committed, form.states(), form.reason("/amount"))
    _show(window, qloop)
    panel = window.history_panel
    assert panel.select("run_w")

    async def go():
        assert await panel.open_selected() is True
    arun(qloop, go())
    assert window.session.settings.scenario == "weather" and window.scenario_combo.currentText().startswith("weather")
    opened = window.session.form
    assert opened.committed == values  # exactly the run's values
    assert {opened.state(p) for p in ("/city",)} == {FieldState.SETTLED}
    window.refresh_now()
    assert window.field("/city").property("displayValue") == "Porto"
    assert window.undo_action.isEnabled()
    window.undo_action.trigger()
    assert window.session.settings.scenario == "invoice"
    assert window.statusBar().currentMessage().startswith("Undone: open run of")
    assert window.session.form is form
    assert (form.committed, form.states(), form.reason("/amount")) == before  # marks included
    assert opened.committed == {}  # the weather form as it was before the open
    window.redo_action.trigger()
    assert window.session.settings.scenario == "weather" and window.session.form.committed == values


def test_open_from_compare_shows_the_single_form_and_a_run_that_cannot_be_opened_says_why(make_window, qloop):
    window = make_window(compare=["naive", "partial"])
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_p", "document_name": "Pasted text",
                           "schema": "invoice", "provider": "anthropic", "mode": "partial",
                           "extraction": {"customer_name": "Pasted"}})
    window.history.append({"at": "2026-01-01T11:00:00+0000", "run": "run_i", "label": "invoice · anthropic",
                           "schema": "invoice", "provider": "anthropic", "mode": "partial",
                           "extraction": {"customer_name": "From history"}})
    _show(window, qloop)
    panel = window.history_panel

    async def go():
        assert await panel.open_entry("run_p") is False
        assert "pasted" in window.run_log.item(window.run_log.count() - 1).text()
        assert window.comparing  # nothing changed
        assert await panel.open_entry("run_i") is True
    arun(qloop, go())
    assert not window.comparing and not window.compare_action.isChecked()
    assert window.session.form.committed == {"customer_name": "From history"}


def test_delete_asks_then_removes_only_that_run_for_good(make_window, qloop):
    window = make_window()
    for i in range(3):
        window.history.append({"at": f"2026-01-01T1{i}:00:00+0000", "run": f"run_{i}", "label": "invoice · anthropic",
                               "schema": "invoice", "provider": "anthropic", "mode": "partial",
                               "extraction": {"customer_name": f"Person {i}"}})
    _show(window, qloop)
    panel = window.history_panel
    assert panel.select("run_1")

    async def go(answer):
        deleted: list[str] = []
        panel.deleted.connect(deleted.append)
        panel.delete_button.click()
        box = window.findChild(QMessageBox, "historyDeleteBox")
        assert box is not None and box.toolTip() == str(window.history.path)  # on a line of its own: test_history_delete_prompt.py
        assert "partial" in box.text()  # the run named by its mode too: two runs may share a minute
        box.button(answer).click()
        if answer == QMessageBox.StandardButton.Yes:
            await wait_until(lambda: deleted and panel.list.topLevelItemCount() == 2)
        await panel.wait()
    arun(qloop, go(QMessageBox.StandardButton.Cancel))
    assert [r["run"] for r in _records(window)] == ["run_0", "run_1", "run_2"]
    arun(qloop, go(QMessageBox.StandardButton.Yes))
    assert [r["run"] for r in _records(window)] == ["run_0", "run_2"]
    assert b"Person 1" not in window.history.path.read_bytes()
    assert [e.key for e in panel.entries] == ["run_2", "run_0"] and len(_rows(panel)) == 2  # newest first


def test_a_torn_line_is_shown_in_the_panel_and_said_once(make_window, qloop):
    window = make_window()
    window.history.append({"run": "run_a", "label": "invoice", "schema": "invoice", "mode": "partial",
                           "provider": "anthropic", "extraction": {"customer_name": "A"}})
    with open(window.history.path, "ab") as fh:
        fh.write(b'{"run":"run_b","extraction":{"cust\n')
    _show(window, qloop)
    panel = window.history_panel
    assert panel.problems_label.isVisible() and "1 damaged line" in panel.problems_label.text()
    said = [window.run_log.item(i).text() for i in range(window.run_log.count())]
    assert sum("line 2" in s for s in said) == 1

    async def again():
        await panel.refresh()
    arun(qloop, again())
    said = [window.run_log.item(i).text() for i in range(window.run_log.count())]
    assert sum("line 2" in s for s in said) == 1  # once
    assert panel.problems_label.isVisible() and panel.list.topLevelItemCount() == 1


@pytest.mark.slow  # real seconds of streaming; CI runs it
def test_compare_and_autoplay_runs_are_recorded_only_when_asked(make_window, qloop):
    window = make_window(compare=["naive", "partial"], store=MemoryStore())
    panel = window.history_panel
    assert not panel.record_all.isChecked() and not window.session.record_all_runs

    async def compare_run():
        window.start()
        await window.wait_runs()
    arun(qloop, compare_run())
    assert _records(window) == []

    async def autoplay(cycles):
        window.start_autoplay(pause=0.05, max_cycles=cycles)
        await window.autoplay.wait()
        await window.wait_runs()
    window.set_compare(False)
    window.compare_action.setChecked(False)
    arun(qloop, autoplay(2))
    assert window.autoplay.cycles == 2 and _records(window) == []  # no line per loop
    assert not window.session.autoplaying

    panel.record_all.click()  # the user asks
    assert window.session.record_all_runs and window.store.value("history_record_all_runs") == "1"
    arun(qloop, autoplay(2))
    assert [r["view"] for r in _records(window)] == ["autoplay", "autoplay"]
    window.set_compare(True)
    window.compare_action.setChecked(True)
    arun(qloop, compare_run())
    assert sorted((r["view"], r.get("lane")) for r in _records(window)[2:]) == [("compare", "naive"), ("compare", "partial")]
    window.set_compare(False)
    window.compare_action.setChecked(False)
    arun(qloop, compare_run())  # the single form: recorded as always
    assert _records(window)[-1]["view"] == "single"


def test_save_picture_opens_in_pictures_remembers_the_folder_and_confirms_with_a_link(
        make_window, qloop, tmp_path, monkeypatch, opened_urls):
    import livefill.gui.saves

    pictures = tmp_path / "home" / "Pictures"  # not there yet: made, not the working directory
    monkeypatch.setattr(livefill.gui.saves, "_pictures", lambda: pictures)
    window = make_window()
    window.store = MemoryStore()
    window.save_picture_action.trigger()
    dialog = window.findChild(QFileDialog, "savePictureDialog")
    assert dialog is not None and pictures.is_dir()
    assert dialog.directory().absolutePath() == str(pictures)
    dialog.reject()

    target = tmp_path / "elsewhere" / "shot.png"
    save_and_confirm(window, target)
    assert target.is_file()
    note = saved_note(window)
    assert note.isVisible() and str(target) in note.text() and "open folder" in note.text()
    assert window.run_log.item(window.run_log.count() - 1).text() == f"Saved a picture of the window to {target}"
    note.linkActivated.emit(_link(note))
    assert opened_urls == [QUrl.fromLocalFile(str(target.parent)).toString()]
    window.save_picture_action.trigger()  # the next save opens where the last one went
    dialog = [d for d in window.findChildren(QFileDialog, "savePictureDialog") if d.isVisible()][-1]
    assert dialog.directory().absolutePath() == str(target.parent)
    dialog.reject()



def test_save_picture_saves_the_window_as_it_was_when_asked_not_when_the_name_is_confirmed(
        make_window, qloop, tmp_path, monkeypatch):
    # Asked mid-stream, the picture came out as the end state: it was taken once the file dialog
    # was confirmed.
    import livefill.gui.saves
    from PySide6.QtGui import QImage

    monkeypatch.setattr(livefill.gui.saves, "_pictures", lambda: tmp_path)
    window = make_window()
    window.session.form.set_value("/customer_name", "As it was when asked")
    window.refresh_now()
    asked = window.grab().toImage()
    window.save_picture_action.trigger()
    dialog = [d for d in window.findChildren(QFileDialog, "savePictureDialog") if d.isVisible()][-1]
    window.session.form.set_value("/customer_name", "Changed while the dialog was open")
    window.refresh_now()
    target = tmp_path / "asked.png"
    dialog.fileSelected.emit(str(target))
    saved = QImage(str(target))
    assert saved.convertToFormat(asked.format()) == asked
    assert saved.convertToFormat(asked.format()) != window.grab().toImage()
    dialog.reject()


def test_undo_never_throws_away_an_edit_made_after_the_open(make_window, qloop):
    window = make_window()
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_i", "label": "invoice · anthropic",
                           "schema": "invoice", "provider": "anthropic", "mode": "partial",
                           "extraction": {"customer_name": "From history"}})
    _show(window, qloop)

    async def go():
        assert await window.history_panel.open_entry("run_i") is True
    arun(qloop, go())
    form = window.session.form
    form.set_value("/invoice_number", "typed after")  # the user's own work, after the open
    window.undo_action.trigger()
    assert form.committed == {"customer_name": "From history", "invoice_number": "typed after"}
    assert "nothing was undone" in window.run_log.item(window.run_log.count() - 1).text()
    assert not window.undo_action.isEnabled() and not window.redo_action.isEnabled()  # the step is gone



def test_undo_never_goes_back_over_a_run_that_committed_the_same_values(make_window, qloop):
    # Open a past invoice run over the weather form, run the invoice again (it commits exactly the
    # values shown), Undo: the window went back to the weather document, the run's result gone.
    window = make_window(speed=0)
    invoice = get_scenario("invoice").output
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_i", "label": "invoice · anthropic",
                           "schema": "invoice", "provider": "anthropic", "mode": "partial", "extraction": invoice,
                           "view": "single", "scenario": "invoice"})
    window.session.replace(scenario="weather")
    _show(window, qloop)

    async def go():
        assert await window.history_panel.open_entry("run_i") is True
        assert window.session.settings.scenario == "invoice"
        window.start()
        await wait_until(lambda: not window.active)
        await window.wait_runs()
    arun(qloop, go())
    assert window.controller.last_status.phase is Phase.COMMITTED
    assert window.session.form.committed == invoice
    window.undo_action.trigger()
    assert window.session.settings.scenario == "invoice" and window.session.form.committed == invoice
    assert "nothing was undone" in window.run_log.item(window.run_log.count() - 1).text()


def test_a_start_waiting_for_the_warm_up_is_dropped_when_a_past_run_is_opened(make_window, qloop, monkeypatch):
    """Start pressed while the demo provider still starts, then Open into form: the held Start would
    run over the opened values once the warm-up ends; it is dropped instead, and said."""
    import threading

    from livefill.gui import warmup

    window = make_window()
    window.history.append({"at": "2026-01-01T10:00:00+0000", "run": "run_w", "label": "weather · anthropic",
                           "schema": "weather", "provider": "anthropic", "mode": "partial",
                           "extraction": {"city": "Porto"}, "view": "single", "scenario": "weather"})
    _show(window, qloop)
    gate = threading.Event()
    said: list[str] = []
    monkeypatch.setattr(window, "say", lambda line, *a, **k: said.append(line))

    async def scenario():
        held = window.warmup = warmup.Warmup(gate.wait).start(asyncio.get_running_loop())
        window.start_button.click()  # deferred until the warm-up ends
        assert await window.history_panel.open_entry("run_w") is True
        gate.set()
        await held.wait()
        await asyncio.sleep(0.2)

    arun(qloop, scenario())
    assert not window.active and window.controller.last_status is None  # no run started
    assert window.session.form.committed == {"city": "Porto"}
    assert said and "Start waiting for the demo provider was cancelled" in said[0]


def test_a_line_that_is_not_a_runs_record_says_so_and_can_be_deleted(make_window, qloop):
    # It was listed as a run "bad ? ? ?" with "committed · 0 values".
    window = make_window()
    window.history.append({"run": "run_a", "at": "2026-01-01T10:00:00+0000", "label": "invoice", "schema": "invoice",
                           "mode": "partial", "provider": "anthropic", "extraction": {"customer_name": "A"}})
    window.history.append({"note": "bad"})
    _show(window, qloop)
    panel = window.history_panel
    junk = next(row for row in _rows(panel) if row[0] == "")
    assert junk == ["", "line 2", "", "", "not a run's record"]
    key = next(e.key for e in panel.entries if "note" in e.record)
    assert panel.select(key)

    async def go():
        panel.delete_button.click()
        box = window.findChild(QMessageBox, "historyDeleteBox")
        assert box.text().startswith("Delete line 2, not a run's record, from ")
        box.button(QMessageBox.StandardButton.Yes).click()
        await wait_until(lambda: panel.list.topLevelItemCount() == 1)
        await panel.wait()
    arun(qloop, go())
    assert [r.get("run") for r in _records(window)] == ["run_a"]
