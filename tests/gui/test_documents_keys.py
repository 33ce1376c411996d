"""Your own document in the window, the settings dialog's keys, and a key that never leaks."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import keyring.backends.fail
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QLineEdit, QStyle, QStyleOptionComboBox

from livefill.demo.request_log import credential_fingerprint
from livefill.extraction.documents import describe_size, load_document
from livefill.session import run_remote
from livefill.wire.keys import KeyStore
from livefill.wire.redaction import mask
from livefill.extraction.modes import Mode
from livefill.wire.providers.request import ExtractionRequest
from livefill.extraction.schemas import resolve_schema
from livefill.session.run_config import RunConfig
from livefill.session.run_status import Phase
from livefill.gui.document_actions import BUSY
from livefill.gui.qsettings_store import QSettingsStore
from livefill.gui.run_toolbar import OWN_DOCUMENT
from tests.extraction.test_documents import make_pdf
from tests.wire.test_keys import MemoryKeyring
from tests.gui.conftest import arun, wait_until


@pytest.fixture(autouse=True)
def _no_key_variables(monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)


def _open(qloop, window, path) -> None:
    async def opening():
        task = window.documents.open_path(path)
        assert task is not None
        await task

    arun(qloop, opening())


# -- your document -------------------------------------------------------------------------------


def test_an_opened_file_is_exactly_what_is_sent_and_its_size_is_shown(make_window, qloop, tmp_path):
    path = tmp_path / "letter.txt"
    path.write_bytes(b"Dear ACME,\r\nplease pay invoice 4711.\r\nTotal: 1,200.00 EUR\r\n")
    window = make_window()
    _open(qloop, window, path)
    s = window.session.settings
    expected = "Dear ACME,\nplease pay invoice 4711.\nTotal: 1,200.00 EUR\n"
    assert (s.document, s.document_name, s.document_path) == (expected, "letter.txt", str(path.resolve()))
    assert window.source_view.toPlainText() == expected == window.run_config().document
    doc = load_document(path)
    assert window.document_bar.size_label.text() == describe_size(doc, "anthropic")
    assert window.document_bar.name_text() == "Your document: letter.txt"
    assert window.scenario_combo.currentData() == OWN_DOCUMENT
    combo = window.scenario_combo
    assert combo.currentText() == "✎ letter.txt"  # the name, marked yours ("Your docume" said nothing)
    window.show()
    room = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, _combo_option(combo),
                                        QStyle.SubControl.SC_ComboBoxEditField, combo).width()
    assert combo.fontMetrics().horizontalAdvance(combo.currentText()) <= room  # shown whole
    assert window.run_config().label.startswith("letter.txt · anthropic")


def test_the_size_line_follows_the_provider(make_window, qloop, tmp_path):
    path = tmp_path / "long.md"
    path.write_text("# Notes\n" + "word " * 4000, encoding="utf-8")
    window = make_window()
    _open(qloop, window, path)
    doc = load_document(path)
    assert describe_size(doc, "anthropic") != describe_size(doc, "openai-chat")  # the estimate differs
    window.provider_combo.setCurrentIndex(window.provider_combo.findData("openai-chat"))
    assert window.document_bar.size_label.text() == describe_size(doc, "openai-chat")
    window.session.replace(provider="ollama")
    assert window.document_bar.size_label.text() == describe_size(doc, "ollama")


def test_a_pdf_is_read_off_the_gui_thread_with_its_pages(make_window, qloop, tmp_path):
    path = tmp_path / "scan-free.pdf"
    path.write_bytes(make_pdf(["Invoice 4711", "Total 1200 EUR"]))
    window = make_window()
    seen: list[str] = []

    async def opening():
        task = window.documents.open_path(path)
        while not task.done():  # the loop (and so the window) runs while the PDF is read
            seen.append(window.document_bar.size_label.text())
            await asyncio.sleep(0)
        await task

    arun(qloop, opening())
    assert seen and seen[0] == "reading scan-free.pdf…"
    assert "Invoice 4711" in window.source_view.toPlainText() and "Total 1200 EUR" in window.source_view.toPlainText()
    assert "2 pages" in window.document_bar.size_label.text()


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("missing.txt", None, "missing.txt: no such file"),
        ("photo.png", b"\x89PNG", "livefill opens .txt, .md and .pdf"),
        ("latin1.txt", "café".encode("latin-1"), "is not UTF-8 text"),
        ("scan.pdf", make_pdf([None]), "no text"),
        ("empty.md", b"  \n", "nothing to extract"),
    ],
)
def test_a_bad_document_is_one_line_and_the_previous_one_stays(make_window, qloop, tmp_path, name, data, says):
    good = tmp_path / "good.txt"
    good.write_text("The good document.\n", encoding="utf-8")
    window = make_window()
    _open(qloop, window, good)
    failures: list[str] = []
    window.documents.failed.connect(failures.append)
    bad = tmp_path / name
    if data is not None:
        bad.write_bytes(data)
    _open(qloop, window, bad)
    assert len(failures) == 1 and "\n" not in failures[0] and says in failures[0], failures
    assert window.statusBar().currentMessage() == failures[0]
    assert window.run_log.item(window.run_log.count() - 1).text() == f"document: {failures[0]}"
    assert window.session.settings.document == "The good document.\n"
    assert window.source_view.toPlainText() == "The good document.\n"
    assert window.document_bar.name_text() == "Your document: good.txt"


def test_a_new_document_says_the_values_shown_before_are_kept(make_window):
    # The form emptied under the user (a new document has a form of its own) without a word.
    window = make_window()
    window.session.form.load({"customer_name": "Kept GmbH"})
    QApplication.clipboard().setText("Pasted: invoice 7")
    window.paste_document_action.trigger()
    assert window.session.form.committed == {}
    assert window.statusBar().currentMessage() == (
        "Pasted text has a form of its own; the values of invoice are kept and come back with it")
    QApplication.clipboard().setText("Pasted: invoice 8")
    window.paste_document_action.trigger()  # the form it leaves is empty: nothing to say ...
    assert window.statusBar().currentMessage() == ""  # ... and the line about the last one is gone
    window.session.replace(scenario="invoice", document=None, document_name=None, document_path=None)
    assert window.session.form.committed == {"customer_name": "Kept GmbH"}  # as said
    # in compare view the lanes' results go (each lane reads the new document afresh): said so
    window.set_compare(True, ["naive", "partial"])
    for lane in window.session.compare_lanes:
        lane.form.load({"customer_name": "Lane result"})
    QApplication.clipboard().setText("Pasted: invoice 9")
    window.paste_document_action.trigger()
    assert all(not lane.form.committed for lane in window.session.compare_lanes)
    assert window.statusBar().currentMessage() == "Every lane now reads Pasted text: the lanes' results for invoice are cleared"


def test_a_value_still_being_typed_goes_with_its_form_when_the_document_changes(make_window, qtbot):
    # Text typed in Notes (the cursor still there) was lost on Paste and Open; Start kept it.
    window = make_window()
    editor = window.field("/notes").editor
    editor.setFocus()
    qtbot.keyClicks(editor, "NOTE X")
    assert window.session.form.value("/notes") != "NOTE X"  # not sent yet: the cursor is in the field
    QApplication.clipboard().setText("Pasted: invoice 10")
    window.paste_document_action.trigger()
    window.session.replace(scenario="invoice", document=None, document_name=None, document_path=None)
    assert window.session.form.value("/notes") == "NOTE X"


def test_paste_and_drop_make_the_document(make_window, qloop, tmp_path):
    window = make_window()
    QApplication.clipboard().setText("Pasted:\r\ninvoice 99")
    window.paste_document_action.trigger()
    s = window.session.settings
    assert (s.document, s.document_name, s.document_path) == ("Pasted:\ninvoice 99", "Pasted text", None)
    assert window.source_view.toPlainText() == "Pasted:\ninvoice 99"

    QApplication.clipboard().setText("   ")
    window.document_bar.paste_button.click()
    assert "nothing to extract" in window.statusBar().currentMessage()
    assert window.session.settings.document == "Pasted:\ninvoice 99"  # nothing lost
    QApplication.clipboard().setText("Pasted again")
    window.document_bar.paste_button.click()
    assert window.statusBar().currentMessage() == ""  # the complaint about the last try is gone

    path = tmp_path / "dropped.txt"
    path.write_text("Dropped file text", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)

    async def dropping():
        window.dropEvent(event)
        await window.documents.wait()

    arun(qloop, dropping())
    assert window.session.settings.document == "Dropped file text"
    assert window.session.settings.document_name == "dropped.txt"

    text = QMimeData()
    text.setText("dropped words")
    window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, text, Qt.MouseButton.LeftButton,
                                Qt.KeyboardModifier.NoModifier))
    assert (window.session.settings.document, window.session.settings.document_name) == ("dropped words", "Dropped text")


def test_one_click_in_the_scenario_picker_goes_back_to_a_scenario(make_window, qloop, tmp_path):
    window = make_window(scenario="invoice")
    QApplication.clipboard().setText("my own text")
    window.documents.paste()
    assert window.scenario_combo.itemData(0) == OWN_DOCUMENT
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("invoice"))  # the same scenario
    s = window.session.settings
    assert (s.scenario, s.document, s.document_name, s.document_path) == ("invoice", None, None, None)
    assert window.scenario_combo.findData(OWN_DOCUMENT) < 0
    assert window.source_view.toPlainText() == window.session.document() != "my own text"
    assert window.document_bar.name_text().startswith("Scenario document: invoice")


def test_the_document_cannot_change_while_a_run_is_active(make_window, qloop, tmp_path):
    window = make_window(speed=5)
    path = tmp_path / "later.txt"
    path.write_text("later", encoding="utf-8")

    async def scenario():
        window.start()
        await wait_until(lambda: window.active)
        assert window.documents.open_path(path) is None
        assert window.statusBar().currentMessage() == BUSY
        assert not window.document_bar.open_button.isEnabled()
        window.stop()
        await window.wait_runs()

    arun(qloop, scenario())
    assert window.session.settings.document is None


# -- the settings dialog ---------------------------------------------------------------------------


def _labels(widget) -> str:
    return "\n".join([w.text() for w in widget.findChildren(QLabel)] + [w.text() for w in widget.findChildren(QLineEdit)])


def test_a_typed_key_is_masked_at_once_and_kept_in_the_keyring(make_window, qtbot):
    backend = MemoryKeyring()
    window = make_window(keys=KeyStore(backend=backend))
    dialog = window.open_settings()
    field = dialog.keys["anthropic"]
    assert field.entry.isVisible() and not field.has_key
    assert field.entry.echoMode() == QLineEdit.EchoMode.Password
    assert dialog.keyring_note.isHidden()
    secret = "sk-ant-api03-" + uuid.uuid4().hex
    qtbot.keyClicks(field.entry, secret)
    qtbot.keyClick(field.entry, Qt.Key.Key_Return)
    assert field.entry.text() == "" and field.entry.isHidden()
    assert field.text() == f"{mask(secret)}  ·  kept in the system keyring"
    assert secret not in _labels(dialog)
    assert backend.data[("livefill", "anthropic")] == secret
    assert field.forget_button.isVisible() and field.replace_button.isVisible()
    field.replace_button.click()
    assert field.entry.isVisible() and field.entry.text() == "" and field.cancel_button.isVisible()
    field.cancel_button.click()
    assert field.has_key and field.masked.isVisible()
    field.forget_button.click()
    assert not field.has_key and field.entry.isVisible()
    assert ("livefill", "anthropic") not in backend.data


def test_a_key_from_the_environment_names_its_variable_and_cannot_be_forgotten(make_window, monkeypatch):
    env_key = "sk-proj-" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    window = make_window(keys=KeyStore(backend=MemoryKeyring()))
    dialog = window.open_settings()
    field = dialog.keys["openai"]
    assert field.text() == f"{mask(env_key)}  ·  from OPENAI_API_KEY"
    assert field.forget_button.isHidden() and field.replace_button.isVisible()
    assert env_key not in _labels(dialog)


def test_without_a_keyring_the_dialog_says_so_and_keys_last_this_session(make_window, qtbot):
    window = make_window(keys=KeyStore(backend=keyring.backends.fail.Keyring()))
    dialog = window.open_settings()
    assert dialog.keyring_note.isVisible()
    note = dialog.keyring_note.text()
    assert note.startswith(dialog.store.keyring_reason) and "kept only while livefill runs" in note
    field = dialog.keys["openai"]
    qtbot.keyClicks(field.entry, "sk-proj-" + uuid.uuid4().hex)
    field.save_button.click()
    assert field.text().endswith("this session only")


def test_a_bad_key_is_refused_in_one_line_without_quoting_it(make_window, qtbot):
    window = make_window(keys=KeyStore(backend=MemoryKeyring()))
    dialog = window.open_settings()
    field = dialog.keys["anthropic"]
    qtbot.keyClicks(field.entry, "sk-ant bad key")
    field.save_button.click()
    assert dialog.error.isVisible() and "space" in dialog.error.text() and "bad key" not in dialog.error.text()
    assert not field.has_key and field.entry.text() == ""


def test_the_local_servers_addresses_are_session_settings(make_window, qtbot, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "192.0.2.7:11434")
    window = make_window(keys=KeyStore(backend=MemoryKeyring()))
    dialog = window.open_settings()
    assert dialog.ollama_url.placeholderText() == "http://192.0.2.7:11434"
    server_key = dialog.keys["compatible"]
    assert not server_key.isEnabled()  # kept per server: the base URL comes first
    dialog.compatible_url.setText("HTTP://127.0.0.1:8080/v1/")
    dialog.compatible_url.editingFinished.emit()
    dialog.compatible_model.setText("smollm2")
    dialog.compatible_model.editingFinished.emit()
    s = window.session.settings
    assert (s.compatible_base_url, s.compatible_model) == ("http://127.0.0.1:8080/v1", "smollm2")
    assert dialog.compatible_url.text() == "http://127.0.0.1:8080/v1"
    assert server_key.isEnabled()
    qtbot.keyClicks(server_key.entry, "local-" + uuid.uuid4().hex)
    server_key.save_button.click()
    assert server_key.has_key and dialog.store.get("openai-compatible", "http://127.0.0.1:8080/v1") is not None

    dialog.ollama_url.setText("not a url")
    dialog.ollama_url.editingFinished.emit()
    said = dialog.error.text()
    assert "is not a base URL; give one like http://192.0.2.7:11434." in said  # Ollama's kind of address
    assert "Ollama's base URL is still the default, http://192.0.2.7:11434." in said
    # the typed text stays to be corrected (marked), and the setting did not change
    assert window.session.settings.ollama_base_url == "" and dialog.ollama_url.text() == "not a url"
    assert dialog.ollama_url.property("state") == "invalid"
    window.session.replace(ollama_model="llama3.2")  # the dialog renders the session ...
    assert dialog.ollama_model.text() == "llama3.2"
    assert dialog.ollama_url.text() == "not a url"  # ... but leaves the refused entry alone
    dialog.ollama_url.setText("http://")  # no host: still refused
    dialog.ollama_url.editingFinished.emit()
    assert dialog.ollama_url.text() == "http://" and dialog.error.isVisible()
    dialog.ollama_url.setText("ollama.example.com:443")  # the TLS port: https
    dialog.ollama_url.editingFinished.emit()
    assert window.session.settings.ollama_base_url == "https://ollama.example.com"
    dialog.ollama_url.setText("localhost:11435")  # a bare host:port, as OLLAMA_HOST takes it
    dialog.ollama_url.editingFinished.emit()
    assert window.session.settings.ollama_base_url == "http://localhost:11435"
    assert dialog.ollama_url.text() == "http://localhost:11435" and dialog.ollama_url.property("state") is None
    assert dialog.error.isHidden()

    dialog.compatible_url.setText("ftp://example")
    dialog.compatible_url.editingFinished.emit()
    said = dialog.error.text()
    assert "give one like http://127.0.0.1:8080/v1." in said
    assert "The OpenAI-compatible server's base URL is still http://127.0.0.1:8080/v1." in said
    assert dialog.compatible_url.text() == "ftp://example"
    assert window.session.settings.compatible_base_url == "http://127.0.0.1:8080/v1"
    window.session.replace(compatible_base_url="")  # it has no default: "not set", not "the default, …"
    dialog.compatible_url.setText("nope")
    dialog.compatible_url.editingFinished.emit()
    assert dialog.error.text().endswith("The OpenAI-compatible server's base URL is still not set.")


def test_the_settings_dialog_shows_every_wrapped_line_whole(make_window, qloop):
    """Qt sizes a dialog by its layout's minimum, which cut the Ollama note and the error line."""
    window = make_window(keys=KeyStore(backend=keyring.backends.fail.Keyring()))  # the keyring note shows too
    dialog = window.open_settings()
    qloop.run_until_complete(asyncio.sleep(0.05))

    def cut() -> list[str]:
        return [label.text() for label in dialog.findChildren(QLabel)
                if label.isVisible() and label.wordWrap() and label.height() < label.heightForWidth(label.width())]

    assert cut() == []
    dialog.ollama_url.setText("not a url")
    dialog.ollama_url.editingFinished.emit()
    qloop.run_until_complete(asyncio.sleep(0.05))
    assert dialog.error.isVisible() and cut() == []
    dialog.resize(dialog.width() - 60, 100)  # a person shrinks it: it stays tall enough for every line
    qloop.run_until_complete(asyncio.sleep(0.05))
    assert cut() == [] and dialog.height() >= dialog.layout().totalHeightForWidth(dialog.width())
    dialog.ollama_url.setText("http://bob:s3cretPW@gpu box:11434")
    dialog.ollama_url.editingFinished.emit()
    dialog.close()  # closed with the address still refused: the window says so, without its password
    assert window.statusBar().currentMessage() == (
        "Settings: 'http://gpu box:11434' not saved: not a base URL (File → Settings… to correct it)")


def test_run_config_and_request_reprs_never_show_a_key():
    secret = "sk-test-" + uuid.uuid4().hex
    config = RunConfig(mode=Mode.PARTIAL, api_key=secret)
    request = ExtractionRequest(provider="anthropic", base_url="http://127.0.0.1:1", schema=resolve_schema("invoice"),
                                document="x", api_key=secret)
    assert config.api_key == request.api_key == secret
    assert secret not in repr(config) and secret not in str(config)
    assert secret not in repr(request) and secret not in str(request)


# -- a key never leaks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("reads", ["inprocess", "process"])
def test_a_unique_key_never_reaches_a_file_or_the_output(make_window, qloop, qtbot, demo_server, tmp_path,
                                                         monkeypatch, capfd, caplog, reads):
    """A run with a unique fake key against the demo provider as if it were Anthropic's API, read
    in this process and in a worker (the app's default: the key crosses the pipe); every file the
    app wrote and everything it or the worker printed or logged is searched for the key."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("LIVEFILL_RUN_WORKER", reads)
    secret = "sk-test-" + uuid.uuid4().hex
    monkeypatch.setenv("ANTHROPIC_BASE_URL", demo_server.url)  # "Anthropic" lives at the demo server
    store = QSettingsStore(tmp_path / "config" / "livefill.ini")
    keys = KeyStore(backend=MemoryKeyring())
    document = tmp_path / "mine.txt"
    document.write_text("Invoice NW-2024-0417 for Martinez SA, 1200 EUR.\n", encoding="utf-8")
    window = make_window(keys=keys, store=store, provider="anthropic", mode="partial", live=True)

    dialog = window.open_settings()
    field = dialog.keys["anthropic"]
    qtbot.keyClicks(field.entry, secret)
    qtbot.keyClick(field.entry, Qt.Key.Key_Return)
    assert field.has_key and field.entry.text() == ""
    dialog.grab().save(str(tmp_path / "settings-dialog.png"))
    assert window.run_config().api_key == secret  # the run gets the key ...
    assert secret not in repr(window.run_config())

    async def scenario():
        window.start()
        await window.wait_runs()

    in_workers = run_remote.pool().runs
    arun(qloop, scenario())
    status = window.last_statuses()[0]
    assert status is not None and status.phase is Phase.COMMITTED, status
    assert run_remote.pool().runs - in_workers == (reads == "process")
    fingerprint = credential_fingerprint({"x-api-key": secret})  # ... and it went on the wire
    assert any(entry.get("auth_sha256") == fingerprint for entry in demo_server.requests())
    _open(qloop, window, document)  # the last document's path is remembered
    window.session.replace(ollama_base_url="http://127.0.0.1:11434")
    window.save_picture(tmp_path / "pictures" / "window.png")
    dialog.close()
    window.close()
    QApplication.processEvents()

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"history.jsonl", "livefill.ini", "window.png", "settings-dialog.png"} <= names, names
    ini = (tmp_path / "config" / "livefill.ini").read_text(encoding="utf-8")
    assert "mine.txt" in ini and "provider=anthropic" in ini  # the settings were written ...
    assert (tmp_path / "history.jsonl").stat().st_size > 0
    for path in written:  # ... and no file holds the key
        assert secret.encode() not in path.read_bytes(), path
    out, err = capfd.readouterr()
    assert secret not in out and secret not in err
    logged = "\n".join(r.getMessage() + str(r.args) + (r.exc_text or "") for r in caplog.records)
    assert secret not in logged and secret not in caplog.text


def test_the_menus_open_a_document_and_the_settings(make_window, qloop, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    from livefill.gui.settings_dialog import SettingsDialog

    path = tmp_path / "chosen.txt"
    path.write_text("chosen text", encoding="utf-8")
    window = make_window(keys=KeyStore(backend=MemoryKeyring()))
    assert window.open_document_action.shortcut().toString() == "Ctrl+O"
    assert window.settings_action.shortcut().toString() == "Ctrl+,"

    async def choosing():
        window.open_document_action.trigger()
        dialog = window.findChild(QFileDialog, "openDocumentDialog")
        assert dialog is not None and dialog.isVisible() and ".pdf" in dialog.nameFilters()[0]
        dialog.fileSelected.emit(str(path))
        dialog.close()
        await window.documents.wait()

    arun(qloop, choosing())
    assert window.session.settings.document == "chosen text"
    window.settings_action.trigger()
    dialog = window.findChild(SettingsDialog, "settingsDialog")
    assert dialog is window.settings_dialog and dialog.isVisible()
    window.settings_action.trigger()
    assert window.findChildren(SettingsDialog) == [dialog]  # one dialog


def test_the_open_dialog_starts_in_a_folder_that_exists(make_window, qloop, tmp_path, monkeypatch):
    # Given a folder that is not there, Qt's dialog started elsewhere with "Documents" typed as the file name.
    from PySide6.QtCore import QStandardPaths
    from PySide6.QtWidgets import QFileDialog

    from livefill.gui.document_actions import start_folder

    gone = tmp_path / "gone"
    monkeypatch.setattr(QStandardPaths, "writableLocation", staticmethod(lambda _where: str(tmp_path / "Documents")))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert start_folder(gone) == str(tmp_path)  # neither the file's folder nor Documents exists: home
    (tmp_path / "Documents").mkdir()
    assert start_folder(gone) == str(tmp_path / "Documents")
    assert start_folder(tmp_path) == str(tmp_path)
    window = make_window()
    window.session.replace(document="text", document_name="x.txt", document_path=str(gone / "x.txt"))
    window.open_document_action.trigger()
    dialog = window.findChild(QFileDialog, "openDocumentDialog")
    assert dialog.directory().absolutePath() == str(tmp_path / "Documents")
    assert dialog.selectedFiles() == []  # nothing typed in the file name box
    dialog.close()


def _combo_option(combo: QComboBox) -> QStyleOptionComboBox:
    option = QStyleOptionComboBox()
    option.initFrom(combo)
    option.currentText = combo.currentText()
    return option
