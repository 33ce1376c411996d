"""The window's live path: a real provider (the demo provider addressed as the live service, with a
fake key), its model list, structured output, the embedded relay, and a schema of one's own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from livefill.wire.keys import KeyStore
from livefill.extraction.modes import Mode
from livefill.session.run_status import Phase
from livefill.extraction.scenarios import get_scenario
from livefill.session.settings import RunSettings
from livefill.gui.app_args import parse_args
from livefill.gui.run_toolbar import LIVE_PREFIX
from tests.wire.test_keys import MemoryKeyring
from tests.gui.conftest import arun, wait_until

RECEIPT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "receipt.schema.json"


def _keys(**typed: str) -> KeyStore:
    keys = KeyStore(backend=MemoryKeyring(), environ={})
    for provider, secret in typed.items():
        keys.set(provider, secret)
    return keys


def _run(qloop, window):
    async def scenario():
        window.start()
        await window.wait_runs()

    arun(qloop, scenario())
    return window.last_statuses()[0]


def _unset_live_env(monkeypatch) -> None:
    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def spy_requests(monkeypatch):
    """Every request sent by httpx (and the anthropic SDK's httpx2): (method, url, key headers).
    The spy sees this process's clients, so runs read here (as make_window's do unless
    LIVEFILL_RUN_WORKER says otherwise; a worker's requests: tests/gui/test_documents_keys.py)."""
    import httpx2

    monkeypatch.setenv("LIVEFILL_RUN_WORKER", "inprocess")
    sent: list[tuple[str, str, str]] = []
    for client_class in (httpx.AsyncClient, httpx2.AsyncClient):

        async def spy_send(self, request, *args, _send=client_class.send, **kwargs):
            sent.append((request.method, str(request.url),
                         f"{request.headers.get('x-api-key')} {request.headers.get('authorization')}"))
            return await _send(self, request, *args, **kwargs)

        monkeypatch.setattr(client_class, "send", spy_send)
    return sent


def test_live_anthropic_against_the_demo_provider_as_the_live_service(make_window, qloop, demo_server,
                                                                      monkeypatch, spy_requests):
    _unset_live_env(monkeypatch)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", demo_server.url)
    secret = "sk-ant-test-" + uuid.uuid4().hex
    keys = KeyStore(backend=MemoryKeyring(), environ={})
    keys.set("anthropic", secret, demo_server.url)  # the key kept for "Anthropic" at that address
    window = make_window(keys=keys, provider="anthropic", scenario="weather", live=True)
    config = window.run_config()
    assert config.demo is None and config.api_key == secret and config.base_url == ""
    assert config.relay_embedded and config.relay_url == demo_server.url  # for settled / hybrid lanes
    status = _run(qloop, window)
    assert status is not None and status.phase is Phase.COMMITTED, status
    assert window.form.document == get_scenario("weather").output
    messages = [s for s in spy_requests if "/v1/messages" in s[1]]
    assert messages and all(url.startswith(demo_server.url) and secret in headers for _, url, headers in messages)
    assert not any("x-demo" in url for _, url, _ in spy_requests)


def test_demo_runs_ask_no_key_source_and_send_the_placeholder(make_window):
    class Exploding(MemoryKeyring):
        def get_password(self, *_args):  # noqa: ANN002
            raise AssertionError("a demo run asked the keyring")

    window = make_window(keys=KeyStore(backend=Exploding(), environ={"ANTHROPIC_API_KEY": "sk-env"}))
    config = window.run_config()
    assert config.demo is not None and config.api_key == "demo" and config.base_url  # the embedded server


def test_a_missing_key_is_one_line_and_no_request(make_window, qloop, monkeypatch, spy_requests):
    _unset_live_env(monkeypatch)
    window = make_window(keys=_keys(), provider="anthropic", live=True)
    window.start()
    assert not window.active
    line = window.statusBar().currentMessage()
    assert line.startswith("No API key for Anthropic: set ANTHROPIC_API_KEY") and "\n" not in line
    assert window.run_log.item(window.run_log.count() - 1).text() == line
    assert spy_requests == []
    assert window.findChild(object, "errorBox") is None  # a line, not a message box


def test_the_model_combo_fills_from_the_providers_model_list(make_window, qloop, demo_server, monkeypatch):
    _unset_live_env(monkeypatch)
    window = make_window(keys=_keys(), provider="openai-compatible", live=True)
    combo = window.toolbar.model_combo
    assert window.toolbar.models.task is None  # no address yet: nothing to ask, a typed name works

    window.session.replace(compatible_base_url=demo_server.url + "/v1")
    toolbar = window.toolbar
    assert all(a.isVisible() for a in toolbar._live_actions)  # the model combo is shown ...
    assert not any(a.isVisible() for a in toolbar._demo_actions)  # ... the demo-only speed and faults are not
    task = window.toolbar.models.task
    assert task is not None
    names = arun(qloop, task)
    assert names and [combo.itemText(i) for i in range(combo.count())] == names

    combo.lineEdit().setText("my-own-model")  # typing a name always works
    combo.lineEdit().editingFinished.emit()
    assert window.session.settings.compatible_model == "my-own-model"
    assert window.run_config().model == "my-own-model"


def test_a_model_list_failure_is_one_line_in_the_status_bar(make_window, qloop, monkeypatch):
    _unset_live_env(monkeypatch)
    window = make_window(keys=_keys(), provider="ollama", live=True)
    window.session.replace(ollama_base_url="http://127.0.0.1:9")  # nothing listens there
    task = window.toolbar.models.task
    assert task is not None and arun(qloop, task) == []
    line = window.statusBar().currentMessage()
    assert line.startswith("Model list: ") and "\n" not in line and "127.0.0.1:9" in line


def test_the_provider_picker_offers_demo_and_live_and_renders_the_session(make_window):
    window = make_window(keys=_keys())
    combo = window.provider_combo
    labels = [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]
    assert "Anthropic (demo)" in labels and "OpenAI-compat (live)" in labels and "Ollama (live)" in labels
    combo.setCurrentIndex(combo.findData(LIVE_PREFIX + "openai-responses"))
    s = window.session.settings
    assert s.live and s.provider == "openai-responses"
    toolbar = window.toolbar
    assert all(a.isVisible() for a in toolbar._structured_actions)
    assert [toolbar.structured_combo.itemData(i) for i in range(toolbar.structured_combo.count())] == ["tools", "json_schema"]
    assert not toolbar.fine_grained_action.isVisible()
    combo.setCurrentIndex(combo.findData(LIVE_PREFIX + "anthropic"))
    assert not any(a.isVisible() for a in toolbar._structured_actions) and toolbar.fine_grained_action.isVisible()
    toolbar.fine_grained_action.trigger()
    assert window.session.settings.fine_grained
    combo.setCurrentIndex(combo.findData("anthropic"))
    assert not window.session.settings.live and all(a.isVisible() for a in toolbar._demo_actions)
    assert not any(a.isVisible() for a in toolbar._live_actions) and not toolbar.fine_grained_action.isVisible()


def test_openai_compatible_json_object_through_the_demo_provider(make_window, qloop, demo_server, monkeypatch,
                                                                 spy_requests):
    _unset_live_env(monkeypatch)
    window = make_window(keys=_keys(), provider="openai-compatible", live=True, scenario="weather",
                         live_base_url=demo_server.url + "/v1", structured="json_object", model="smollm2")
    config = window.run_config()
    assert config.structured == "json_object" and config.model == "smollm2" and config.api_key == ""
    status = _run(qloop, window)
    assert status is not None and status.phase is Phase.COMMITTED, status
    assert window.form.document == get_scenario("weather").output
    chat = [s for s in spy_requests if s[1].endswith("/v1/chat/completions")]
    assert chat and chat[0][2] == "None None"  # no key for a server that needs none


def test_settled_mode_live_goes_through_the_embedded_relay(make_window, qloop, demo_server, monkeypatch,
                                                           spy_requests):
    _unset_live_env(monkeypatch)
    monkeypatch.setenv("OPENAI_BASE_URL", demo_server.url + "/v1")
    secret = "sk-test-" + uuid.uuid4().hex
    keys = KeyStore(backend=MemoryKeyring(), environ={})
    keys.set("openai-chat", secret, demo_server.url + "/v1")
    window = make_window(keys=keys, provider="openai-chat", live=True, scenario="weather", mode="settled")
    config = window.run_config()
    assert config.demo is None and config.relay_embedded and config.relay_url == demo_server.url
    status = _run(qloop, window)
    assert status is not None and status.phase is Phase.COMMITTED, status
    assert window.form.document == get_scenario("weather").output
    urls = [url for _, url, _ in spy_requests]
    relay = next(i for i, url in enumerate(urls) if url == demo_server.url + "/relay/v1/extract")
    upstream = next(i for i, url in enumerate(urls) if url.endswith("/v1/chat/completions"))
    assert relay < upstream and secret in spy_requests[upstream][2]  # the embedded relay was handed the key
    assert secret not in spy_requests[relay][2]  # ... not as the relay's own authorization


def test_open_schema_bad_keeps_the_old_one_and_says_where(make_window, tmp_path):
    window = make_window(keys=_keys(), scenario="weather")
    bad = tmp_path / "bad.schema.json"
    bad.write_text(json.dumps({"type": "object", "properties": {"when": {"type": "string", "format": "time"}},
                               "patternProperties": {"^x": {"type": "string"}}}), encoding="utf-8")
    assert window.documents.open_schema(bad) is False
    assert window.session.settings.schema_name is None and window.session.schema_name() == "weather"
    line = window.statusBar().currentMessage()
    assert "bad.schema.json" in line and "\n" not in line
    assert "bad.schema.json: /patternProperties: patternProperties is not supported" in line, line
    assert window.document_bar.schema_text() == "schema: weather"


def test_open_schema_good_renders_its_fields_and_a_scenario_restores_its_own(make_window):
    window = make_window(keys=_keys(), scenario="weather")
    assert window.documents.open_schema(RECEIPT) is True
    assert window.session.settings.schema_name == str(RECEIPT.resolve())
    assert window.document_bar.schema_text() == "schema: receipt.schema.json"
    assert window.field("/merchant") is not None and window.field("/items") is not None
    assert window.run_config().schema_name == str(RECEIPT.resolve())
    combo = window.scenario_combo
    combo.setCurrentIndex(combo.findData("invoice"))
    assert window.session.settings.schema_name is None and window.session.schema_name() == "invoice"
    assert window.document_bar.schema_text() == "schema: invoice"


def test_the_live_toolbar_fits_the_default_window(make_window, qapp, tmp_path):
    window = make_window(keys=_keys(), provider="openai-compatible", live=True, structured="json_object",
                         live_base_url="http://127.0.0.1:9/v1", model="smollm2")
    qapp.processEvents()
    bar = window.run_toolbar
    assert window.width() == 1280
    for widget in (window.toolbar.model_combo, window.toolbar.structured_combo, window.start_button, window.stop_button):
        assert widget.isVisibleTo(window), widget.objectName()  # not pushed into the overflow menu
    assert bar.sizeHint().width() <= window.width(), bar.sizeHint().width()
    window.grab().save(str(tmp_path / "live-toolbar.png"))


def test_the_demo_wire_of_an_openai_compatible_server_commits(make_window, qloop):
    window = make_window(keys=_keys(), scenario="weather")
    combo = window.provider_combo
    combo.setCurrentIndex(combo.findData("openai-compatible"))
    assert window.session.settings.provider == "openai-compatible" and not window.session.settings.live
    assert window.run_config().demo is not None
    status = _run(qloop, window)
    assert status is not None and status.phase is Phase.COMMITTED, status


def test_the_menu_has_open_schema(make_window):
    window = make_window(keys=_keys())
    assert window.open_schema_action.objectName() == "openSchemaAction"
    assert window.open_schema_action.text() == "Open schema…"


def test_live_command_line_options_are_checked_up_front(capsys):
    args = parse_args(["--live", "--provider", "openai-compatible", "--base-url", "http://127.0.0.1:8011/v1",
                       "--model", "smollm2", "--structured", "json_object", "--schema", str(RECEIPT)])
    assert args.live and args.base_url == "http://127.0.0.1:8011/v1" and args.model == "smollm2"
    assert args.structured == "json_object" and args.schema == str(RECEIPT.resolve())
    for argv, expected in (
        (["--live", "--base-url", "nope"], "--base-url: 'nope' is not a base URL; give one like http://127.0.0.1:8080/v1."),
        (["--live", "--provider", "ollama", "--base-url", "localhost:11434"],
         "is not a base URL; give one like http://127.0.0.1:11434."),  # Ollama's kind of address
        (["--base-url", "http://127.0.0.1:1"], "--base-url: only for a live run"),
        (["--provider", "anthropic", "--structured", "json_object"], "--structured: anthropic takes tools"),
        (["--schema", "nosuch"], "--schema: unknown schema 'nosuch'"),
        (["--structured", "xml"], "--structured: invalid choice"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse_args(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert expected in err, err


def test_live_settings_need_a_live_provider():
    with pytest.raises(ValueError, match="no live service"):
        RunSettings(provider="raw", live=True)
    assert RunSettings(live=True, mode=Mode.SETTLED).live


def test_live_run_config_per_provider(monkeypatch):
    from livefill.errors import InputError
    from livefill.session.session import Session

    _unset_live_env(monkeypatch)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:11500")
    keys = _keys(anthropic="sk-ant-" + "a" * 30)
    base = RunSettings(base_url="http://127.0.0.1:7000", relay_token="tok", live=True, scenario="weather")
    session = Session(base.with_(provider="ollama", ollama_model="llama3.2", structured="json_schema"), keys=keys)
    config = session.run_config()
    assert config.base_url == "http://127.0.0.1:11500" and config.model == "llama3.2" and config.api_key == ""
    assert config.demo is None and config.structured == "json_schema" and config.label.endswith("ollama (live)")
    session.replace(ollama_base_url="http://10.0.0.2:11434")
    assert session.run_config().base_url == "http://10.0.0.2:11434"

    session.replace(provider="anthropic", structured="json_object", fine_grained=True, model="claude-x")
    config = session.run_config()
    assert config.structured == "tools" and config.fine_grained and config.model == "claude-x"  # what Anthropic takes
    assert config.relay_url == "http://127.0.0.1:7000" and config.relay_embedded and config.relay_token == "tok"

    session.replace(provider="openai-chat", fine_grained=True)
    with pytest.raises(InputError, match="^No API key for OpenAI: set OPENAI_API_KEY"):
        session.run_config()

    session.replace(provider="openai-compatible")
    with pytest.raises(InputError, match="^No base URL for the OpenAI-compatible server"):
        session.run_config()
    session.replace(compatible_base_url="http://127.0.0.1:8011/v1", compatible_model="smollm2")
    config = session.run_config()
    assert (config.base_url, config.model, config.api_key, config.fine_grained) == (
        "http://127.0.0.1:8011/v1", "smollm2", "", False)


# -- the program, in its own process -------------------------------------------------------------


@pytest.mark.slow
def test_the_app_runs_live_from_its_command_line(tmp_path, demo_server):
    from tests.gui.test_app_process import run_app

    picture = tmp_path / "live.png"
    proc = run_app(tmp_path, "--live", "--provider", "openai-compatible", "--base-url", demo_server.url + "/v1",
                   "--model", "smollm2", "--structured", "json_object", "--scenario", "weather",
                   "--settings-file", str(tmp_path / "settings.ini"), "--history", str(tmp_path / "h.jsonl"),
                   "--screenshot", str(picture))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "last run: committed" in proc.stdout and picture.stat().st_size > 0
    ini = (tmp_path / "settings.ini").read_text(encoding="utf-8")
    assert f"base_url={demo_server.url}/v1" in ini and "model=smollm2" in ini  # remembered for the next launch


def _launch_remembering_a_document(tmp_path, *options: str):  # noqa: ANN001, ANN202
    """The app run headless (`--screenshot`) with a settings file that remembers a document of
    one's own from the last launch: (the process, the document, the settings file)."""
    from tests.gui.test_app_process import run_app

    document = tmp_path / "mine.txt"
    document.write_text("Hello, this is not one of the demo scenarios.\n", encoding="utf-8")
    settings = tmp_path / "settings.ini"
    settings.write_text(f"[document]\nlast_path={document}\n", encoding="utf-8")
    proc = run_app(tmp_path, "--settings-file", str(settings), "--history", str(tmp_path / "h.jsonl"),
                   *options, "--screenshot", str(tmp_path / "shot.png"))
    return proc, document, settings


@pytest.mark.slow
def test_the_app_restores_the_last_document_at_launch(tmp_path):
    proc, _document, _settings = _launch_remembering_a_document(tmp_path)
    assert "Cannot enter into task" not in proc.stderr, proc.stderr
    # the remembered document was read: the demo provider says it knows only its scenarios
    assert proc.returncode == 1 and "and this is not one of them" in proc.stdout, proc.stdout + proc.stderr
    from PySide6.QtGui import QImage

    assert QImage(str(tmp_path / "shot.png")).width() == 1280  # the long error line did not widen the window


@pytest.mark.slow
def test_a_scenario_asked_for_on_the_command_line_is_shown_instead_of_the_last_document(tmp_path):
    proc, document, settings = _launch_remembering_a_document(tmp_path, "--scenario", "weather")
    assert proc.returncode == 0 and "last run: committed" in proc.stdout, proc.stdout + proc.stderr
    assert f"last_path={document}" in settings.read_text(encoding="utf-8")  # still remembered for a plain launch
