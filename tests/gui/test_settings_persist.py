"""Settings persist between launches (QSettings in a temporary INI file), keys excepted."""

from __future__ import annotations

import uuid

import pytest

from livefill.session.app_settings import KEYS, MemoryStore, SavedSettings, default_ollama_url, load_settings, save_settings
from livefill.wire.keys import KeyStore
from livefill.session.prices import Price
from livefill.session.settings import RunSettings
from livefill.gui.app_args import parse_args
from livefill.gui.launch import remember
from livefill.gui.qsettings_store import QSettingsStore
from tests.wire.test_keys import MemoryKeyring
from tests.gui.conftest import arun


@pytest.fixture(autouse=True)
def _no_key_variables(monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)


def test_what_is_remembered_round_trips_through_a_store():
    store = MemoryStore()
    settings = RunSettings(provider="ollama", model="m1", compatible_base_url="http://127.0.0.1:8080/v1",
                           compatible_model="smollm2", ollama_base_url="http://127.0.0.1:11434",
                           ollama_model="llama3.2", document="text", document_name="a.txt", document_path="/d/a.txt",
                           scenario="weather", schema_name="ticket",
                           prices=(Price("claude-sonnet-5", 3, 15), Price("gpt-4o", 2.5, 10)))
    save_settings(store, settings, theme="dark")
    assert set(store.values) == set(KEYS.values())
    saved = load_settings(store)
    assert saved == SavedSettings.of(settings, theme="dark")
    fresh = saved.apply(RunSettings())
    assert (fresh.provider, fresh.model, fresh.compatible_base_url, fresh.compatible_model) == (
        "ollama", "m1", "http://127.0.0.1:8080/v1", "smollm2")
    assert (fresh.ollama_base_url, fresh.ollama_model, fresh.document) == ("http://127.0.0.1:11434", "llama3.2", None)
    assert (fresh.scenario, fresh.schema_name, saved.last_document) == ("weather", "ticket", "/d/a.txt")
    assert fresh.prices == (Price("claude-sonnet-5", 3.0, 15.0), Price("gpt-4o", 2.5, 10.0))
    save_settings(store, RunSettings(), theme=None)  # what is no longer set is removed
    assert set(store.values) == {KEYS["provider"], KEYS["scenario"]}


def test_unusable_saved_values_are_dropped_with_a_reason():
    store = MemoryStore({KEYS["provider"]: "gpt-9", KEYS["theme"]: "neon", KEYS["model"]: " m "})
    saved = load_settings(store)
    assert (saved.provider, saved.theme, saved.model) == (None, None, "m")
    assert len(saved.problems) == 2 and "'gpt-9'" in saved.problems[0] and "'neon'" in saved.problems[1]
    assert saved.apply(RunSettings()).provider == "anthropic"


def test_prices_are_empty_unless_given_and_a_broken_table_is_dropped_with_a_reason():
    assert RunSettings().prices == () and load_settings(MemoryStore()).prices == ()
    saved = load_settings(MemoryStore({KEYS["prices"]: '[{"model": "m", "input": -1, "output": 2}]'}))
    assert saved.prices == () and "prices" in saved.problems[0]
    assert saved.apply(RunSettings()).prices == ()


def test_a_key_typed_into_an_address_is_redacted_before_it_is_saved():
    secret = "sk-test-" + uuid.uuid4().hex
    keys = KeyStore(backend=MemoryKeyring())
    keys.set("anthropic", secret)
    store = MemoryStore()
    save_settings(store, RunSettings(compatible_base_url=f"http://127.0.0.1:8080/{secret}"), redact=keys.redact)
    assert secret not in "".join(store.values.values())


def test_ollama_default_address():
    assert default_ollama_url({}) == "http://127.0.0.1:11434"
    assert default_ollama_url({"OLLAMA_HOST": "0.0.0.0:11500"}) == "http://0.0.0.0:11500"
    assert default_ollama_url({"OLLAMA_HOST": "https://ollama.example:443"}) == "https://ollama.example:443"


def test_the_window_saves_its_settings_and_the_next_one_restores_them(make_window, qloop, qtbot, tmp_path):
    ini = tmp_path / "config" / "livefill.ini"
    secret = "sk-test-" + uuid.uuid4().hex
    document = tmp_path / "mine.md"
    document.write_text("# Mine\nInvoice 12 for 30 EUR\n", encoding="utf-8")
    window = make_window(keys=KeyStore(backend=MemoryKeyring()), store=QSettingsStore(ini), theme="dark")
    dialog = window.open_settings()
    qtbot.keyClicks(dialog.keys["anthropic"].entry, secret)
    dialog.keys["anthropic"].save_button.click()
    window.provider_combo.setCurrentIndex(window.provider_combo.findData("openai-responses"))
    dialog.compatible_url.setText("http://127.0.0.1:8080/v1")
    dialog.compatible_url.editingFinished.emit()
    dialog.ollama_model.setText("qwen2.5")
    dialog.ollama_model.editingFinished.emit()

    async def opening():
        await window.documents.open_path(document)

    arun(qloop, opening())
    dialog.close()
    window.close()

    text = ini.read_text(encoding="utf-8")
    assert secret not in text and secret.encode() not in ini.read_bytes()  # keys excepted
    assert "openai-responses" in text and "qwen2.5" in text and str(document.resolve()) in text and "dark" in text

    saved = load_settings(QSettingsStore(ini))
    assert (saved.provider, saved.theme, saved.ollama_model) == ("openai-responses", "dark", "qwen2.5")
    again = make_window(store=QSettingsStore(ini), remembered=saved)
    assert again.provider_combo.currentData() == "openai-responses"
    assert again.session.settings.compatible_base_url == "http://127.0.0.1:8080/v1"
    assert again.session.settings.document is None

    async def restoring():
        task = again.restore_last_document()
        assert task is not None
        await task

    arun(qloop, restoring())
    assert again.session.settings.document == "# Mine\nInvoice 12 for 30 EUR\n"
    assert again.document_bar.name_text() == "Your document: mine.md"


def test_a_last_document_that_is_gone_is_said_and_nothing_else_changes(make_window, qloop, tmp_path):
    saved = SavedSettings(provider="ollama", last_document=str(tmp_path / "gone.txt"))
    window = make_window(remembered=saved)
    failures: list[str] = []
    window.documents.failed.connect(failures.append)

    async def restoring():
        await window.restore_last_document()

    arun(qloop, restoring())
    assert failures == [f"gone.txt: no such file in {tmp_path}."]
    assert window.session.settings.document is None and window.session.settings.provider == "ollama"


def test_the_command_line_wins_over_what_was_remembered(tmp_path):
    ini = tmp_path / "livefill.ini"
    store = QSettingsStore(ini)
    save_settings(store, RunSettings(provider="ollama"), theme="dark")
    args = parse_args(["--settings-file", str(ini)])
    saved = remember(args)
    assert (args.provider, args.theme, saved.provider) == ("ollama", "dark", "ollama")
    args = parse_args(["--settings-file", str(ini), "--provider", "openai-chat", "--theme", "light"])
    saved = remember(args)
    assert (args.provider, args.theme, saved.provider, saved.theme) == ("openai-chat", "light", "openai-chat", "light")
    args = parse_args(["--settings-file", str(tmp_path / "new.ini")])
    remember(args)
    assert (args.provider, args.theme) == ("anthropic", "system")


def test_document_option_is_checked_before_anything_starts(tmp_path, capsys):
    good = tmp_path / "good.txt"
    good.write_text("hello", encoding="utf-8")
    assert parse_args(["--document", str(good)]).document.text == "hello"
    (tmp_path / "scan.doc").write_bytes(b"x")
    for bad, says in ((tmp_path / "missing.txt", "missing.txt: no such file"),
                      (tmp_path / "scan.doc", "livefill opens .txt, .md and .pdf")):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(["--document", str(bad)])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert "--document: " in err and says in err and "Traceback" not in err


def test_a_launch_that_changes_nothing_writes_nothing_and_a_scenario_forgets_the_last_document(make_window, qloop,
                                                                                             tmp_path):
    # (issue 26 item 3: going back to a scenario used to keep the document, reopened at the next launch)
    ini = tmp_path / "livefill.ini"
    args = parse_args(["--settings-file", str(ini)])
    remembered = remember(args)
    window = make_window(store=args.store, remembered=remembered, provider=args.provider, theme=args.theme)
    window.session.replace(speed=300)  # not remembered
    window.close()
    assert not ini.exists()

    document = tmp_path / "kept.txt"
    document.write_text("kept", encoding="utf-8")
    window = make_window(store=QSettingsStore(ini), remembered=load_settings(QSettingsStore(ini)))

    async def opening():
        await window.documents.open_path(document)

    arun(qloop, opening())
    window.scenario_combo.setCurrentIndex(window.scenario_combo.findData("ticket"))  # back to a scenario
    window.close()
    saved = load_settings(QSettingsStore(ini))
    assert (saved.scenario, saved.last_document) == ("ticket", None)  # what was shown last
