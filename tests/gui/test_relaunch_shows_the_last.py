"""A relaunch reopens exactly what was shown last (issue 26, item 3): the scenario, or the document
of one's own and its schema. Each launch here is made as `livefill.gui.launch` makes it
(`parse_args` -> `remember` -> the session -> `restore_last_document`), on one settings file."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QFileDialog

from livefill.gui.app_args import parse_args
from livefill.gui.launch import remember
from livefill.gui.qsettings_store import QSettingsStore
from livefill.session.app_settings import KEYS, load_settings
from tests.gui.conftest import arun, wait_until


def _launch(make_window, qloop, ini, *options: str):
    """A window launched with `--settings-file ini` and `options`, the last document reopened as the app does."""
    args = parse_args(["--settings-file", str(ini), *options])
    remembered = remember(args)
    window = make_window(store=args.store, remembered=remembered, theme=args.theme, provider=args.provider,
                         scenario=args.scenario, **({"schema_name": args.schema} if args.schema else {}))
    if not args.document and not args.replay and not args.scenario_given:
        task = window.restore_last_document()
        if task is not None:
            arun(qloop, task)
    return window


def _choose_in_file_dialog(window, action, name: str, path) -> None:
    """Trigger `action` (File → Open document… / Open schema…) and pick `path` in its dialog."""
    action.trigger()
    dialog = window.findChild(QFileDialog, name)
    assert dialog is not None and dialog.isVisible()
    dialog.selectFile(str(path))
    dialog.accept()


def _start_and_wait(window, qloop):
    async def run():
        window.start_button.click()
        await wait_until(lambda: window.controller.last_status is not None)
        await window.wait_runs()

    arun(qloop, run())
    return window.controller.last_status


def test_going_back_to_a_scenario_is_what_the_next_launch_shows(make_window, qloop, tmp_path):
    ini = tmp_path / "settings.ini"
    letter = tmp_path / "letter.txt"
    letter.write_text("Dear Ms Smith,\nthank you for your order of 12 March.\n", encoding="utf-8")
    window = _launch(make_window, qloop, ini)
    _choose_in_file_dialog(window, window.open_document_action, "openDocumentDialog", letter)
    arun(qloop, wait_until(lambda: window.session.settings.document_name == "letter.txt"))
    assert window.document_bar.name_text() == "Your document: letter.txt"
    combo = window.scenario_combo
    combo.setCurrentIndex(combo.findData("invoice"))  # back to the invoice scenario
    assert window.session.settings.document is None
    window.close()

    again = _launch(make_window, qloop, ini)
    s = again.session.settings
    assert (s.scenario, s.document, s.document_path, s.schema_name) == ("invoice", None, None, None)
    assert again.scenario_combo.currentData() == "invoice"
    assert again.document_bar.name_text().startswith("Scenario document: invoice")
    status = _start_and_wait(again, qloop)
    assert status.phase.value == "committed", status.reason  # not "The demo provider knows only its bundled scenarios"


def test_the_scenario_shown_last_is_shown_again(make_window, qloop, tmp_path):
    ini = tmp_path / "settings.ini"
    window = _launch(make_window, qloop, ini)
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("weather"))
    window.close()
    again = _launch(make_window, qloop, ini)
    assert again.session.settings.scenario == "weather" and again.scenario_combo.currentData() == "weather"
    assert _start_and_wait(again, qloop).phase.value == "committed"
    # the command line still wins, and a launch that only looks writes nothing
    before = ini.read_text(encoding="utf-8")
    told = _launch(make_window, qloop, ini, "--scenario", "ticket")
    assert told.session.settings.scenario == "ticket"
    told.close()
    assert ini.read_text(encoding="utf-8") == before


def test_a_document_and_schema_of_ones_own_shown_last_are_reopened(make_window, qloop, tmp_path):
    ini = tmp_path / "settings.ini"
    letter = tmp_path / "letter.txt"
    letter.write_text("Order 77 from Ana, total 12.50 EUR\n", encoding="utf-8")
    schema = tmp_path / "order.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"customer": {"type": "string"},
                                                                   "total": {"type": "number"}}}), encoding="utf-8")
    window = _launch(make_window, qloop, ini)
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("ticket"))
    _choose_in_file_dialog(window, window.open_document_action, "openDocumentDialog", letter)
    arun(qloop, wait_until(lambda: window.session.settings.document_name == "letter.txt"))
    _choose_in_file_dialog(window, window.open_schema_action, "openSchemaDialog", schema)
    assert window.session.settings.schema_name == str(schema.resolve())
    window.close()

    again = _launch(make_window, qloop, ini)
    s = again.session.settings
    assert (s.scenario, s.document_path, s.schema_name) == ("ticket", str(letter.resolve()), str(schema.resolve()))
    assert again.document_bar.name_text() == "Your document: letter.txt"
    assert again.document_bar.schema_text() == "schema: order.json"
    assert set(again.form_view.fields) >= {"/customer", "/total"}  # the form of that schema


def test_a_pasted_document_shown_last_leaves_the_scenario_to_the_next_launch(make_window, qloop, tmp_path):
    ini = tmp_path / "settings.ini"
    letter = tmp_path / "letter.txt"
    letter.write_text("Dear Ms Smith\n", encoding="utf-8")
    window = _launch(make_window, qloop, ini)
    _choose_in_file_dialog(window, window.open_document_action, "openDocumentDialog", letter)
    arun(qloop, wait_until(lambda: window.session.settings.document_name == "letter.txt"))
    from livefill.extraction.documents import document_from_text

    window.documents.use(document_from_text("Pasted over the letter", name="Pasted text"))
    window.close()
    saved = load_settings(QSettingsStore(ini))
    assert (saved.scenario, saved.last_document, saved.schema) == ("invoice", None, None)
    again = _launch(make_window, qloop, ini)
    assert again.session.settings.document is None


def test_a_saved_scenario_or_schema_that_cannot_be_used_is_dropped_with_its_reason(tmp_path, capsys):
    ini = tmp_path / "settings.ini"
    store = QSettingsStore(ini)
    store.set_value(KEYS["scenario"], "payslip")
    store.set_value(KEYS["schema"], str(tmp_path / "gone.json"))
    store.sync()
    args = parse_args(["--settings-file", str(ini)])
    saved = remember(args)
    assert (args.scenario, saved.scenario, saved.schema) == ("invoice", "invoice", None)
    err = capsys.readouterr().err
    assert "'payslip' is not one livefill has" in err and "gone.json cannot be used" in err
