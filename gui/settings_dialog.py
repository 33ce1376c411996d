"""File → Settings…: the providers' keys, and the OpenAI-compatible server's and Ollama's addresses.

How this works
--------------
`SettingsDialog(window, session)` renders `session.keys` (a `livefill.wire.keys.KeyStore`) and
`session.settings`, and keeps neither. Each key row (`livefill.widgets.key_field.KeyField`) is one key
slot: Anthropic's, OpenAI's (Chat and Responses share it), and the compatible server's at its
base URL (optional). A row with no key is an empty password box; a typed key goes straight to
`KeyStore.set` and the box is cleared, so the secret is never shown again: the row then shows only
`Key.masked()` and where the key comes from ("from ANTHROPIC_API_KEY", "kept in the system
keyring", "this session only") with Replace… and Forget (not for a key from the environment,
which livefill cannot unset). When the system keyring is not available the dialog says why in
one sentence, and that keys are kept only while livefill runs.

The compatible server's and Ollama's base URL and model fields write `session.replace(...)` when
edited. A base URL that is not one is refused with one line under the fields that says the setting
did not change; the field keeps what was typed (marked `invalid`) so that it can be corrected, and
is left alone by `render()` until it is edited into a base URL or emptied. A vendor's row uses the
vendor's own host, or the base URL paired with it in the environment (`ANTHROPIC_BASE_URL` /
`OPENAI_BASE_URL`), as `livefill.wire.keys.key_slot` does. The wrapped lines (`Note`) never break
an address across lines: a word joiner sits between its characters on screen (`text()` is as said).

Prices: a table of what the person pays per model (livefill.widgets.price_table; empty unless
they fill it in) writes `session.replace(prices=...)`; a row that is not a price yet is said in
the line under the fields and changes nothing. The scoreboard shows a lane's cost from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from livefill.session.app_settings import default_ollama_url
from livefill.wire.providers.base_urls import DEFAULT_HOST as OLLAMA_DEFAULT
from livefill.errors import InputError
from livefill.wire.keys import Key, KeySource, KeyStore, base_url_example, normalize_base_url, shown_url
from livefill.session.session import Session
from livefill.session.session_events import SessionEvent, SettingsChanged
from livefill.widgets.key_field import KeyField
from livefill.widgets.price_table import PriceTable
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = ["Note", "SettingsDialog", "key_source_text", "unbreakable_urls"]

_BARE_HOST = re.compile(r"(?![Hh][Tt][Tt][Pp][Ss]?:)[A-Za-z0-9.\-]+:(\d{1,5})(/\S*)?").fullmatch  # "localhost:11434", "gpu-box:8080/v1"

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"]*[^\s'\".,;:!?)]")
_LONGEST_KEPT_WHOLE = 48  # a longer address (one typed in, quoted back) may still wrap
WORD_JOINER = "\u2060"  # zero width, no line break on either side


def unbreakable_urls(text: str) -> str:
    """`text` with a word joiner between the characters of every address in it (up to
    _LONGEST_KEPT_WHOLE characters), so that a word-wrapped label never breaks one across lines."""
    def join(match: re.Match[str]) -> str:
        url = match.group(0)
        return WORD_JOINER.join(url) if len(url) <= _LONGEST_KEPT_WHOLE else url

    return _URL.sub(join, text)


class Note(QLabel):
    """A word-wrapped line of the dialog whose addresses stay whole on one line; `text()` returns
    what was set (without the word joiners shown)."""

    def __init__(self, text: str = "", name: str = "") -> None:
        super().__init__()
        self.setObjectName(name)
        self.setWordWrap(True)
        self._said = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt naming
        self._said = text
        super().setText(unbreakable_urls(text))

    def text(self) -> str:
        return self._said


_ROW_PROVIDER = {"anthropic": "anthropic", "openai": "openai-chat", "compatible": "openai-compatible"}
"""Each key row's provider (OpenAI Chat and Responses share one key)."""
_VENDOR_ROWS = ("anthropic", "openai")
_PAIRED_URL = {row: PROVIDER_SPECS[_ROW_PROVIDER[row]].base_url_variable or "" for row in _VENDOR_ROWS}
"""A vendor row's base URL variable, whose address its key goes with (`livefill.wire.keys.key_slot`)."""


def key_source_text(key: Key, store: KeyStore) -> str:
    """Where a key comes from, for the dialog: "from ANTHROPIC_API_KEY", "kept in the system
    keyring" or "this session only"."""
    if key.source is KeySource.ENV:
        return f"from {key.env_var}"
    if key.source is KeySource.KEYRING or store.keyring_available:
        return "kept in the system keyring"
    return "this session only"


class SettingsDialog(QDialog):
    """The settings dialog (see the module docstring). `environ` is read for the paired base URLs."""

    def __init__(self, parent: QWidget | None, session: Session, *, say: Callable[[str], None] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        super().__init__(parent)
        self.say_in_window = say  # a line in the window's status bar and run log
        self.setObjectName("settingsDialog")
        self.setWindowTitle("livefill settings")
        if session.keys is None:
            session.keys = KeyStore()
        self.session = session
        self.environ = os.environ if environ is None else environ
        self._refused: set[QLineEdit] = set()  # base URL fields holding a refused entry
        layout = QVBoxLayout(self)

        self.keyring_note = Note(name="keyringNote")
        layout.addWidget(self.keyring_note)
        columns = QHBoxLayout()  # keys on the left, the local servers and the prices on the right:
        left, right = QVBoxLayout(), QVBoxLayout()  # one column would not fit a 720 px screen
        columns.addLayout(left, 1)
        columns.addLayout(right, 1)
        layout.addLayout(columns)

        self.keys: dict[str, KeyField] = {}
        for row, title in (("anthropic", "Anthropic"), ("openai", "OpenAI (Chat Completions and Responses)")):
            note = f"Read from {PROVIDER_SPECS[_ROW_PROVIDER[row]].key_variable} when set."
            box = QGroupBox(title)
            form = QFormLayout(box)
            field = KeyField(row)
            self.keys[row] = field
            form.addRow("API key", field)
            form.addRow("", _hint(note))
            left.addWidget(box)

        box = QGroupBox("OpenAI-compatible server (llama.cpp, vLLM, LM Studio, a gateway…)")
        form = QFormLayout(box)
        self.compatible_url = _line("compatibleBaseUrl", "http://127.0.0.1:8080/v1")
        self.compatible_model = _line("compatibleModel", "the server's model name")
        self.keys["compatible"] = KeyField("compatible", placeholder="optional: the server's key")
        form.addRow("Base URL", self.compatible_url)
        form.addRow("Model", self.compatible_model)
        form.addRow("API key", self.keys["compatible"])
        left.addWidget(box)
        left.addStretch(1)

        box = QGroupBox("Ollama")
        form = QFormLayout(box)
        self.ollama_url = _line("ollamaBaseUrl", default_ollama_url(self.environ))
        self.ollama_model = _line("ollamaModel", "e.g. llama3.2")
        form.addRow("Base URL", self.ollama_url)
        form.addRow("Model", self.ollama_model)
        form.addRow("", _hint(f"Ollama takes no key. Default: {PROVIDER_SPECS['ollama'].base_url_variable}, or {OLLAMA_DEFAULT}."))
        right.addWidget(box)

        box = QGroupBox("Prices (what you pay: the scoreboard's cost)")
        box_layout = QVBoxLayout(box)
        self.prices = PriceTable()
        box_layout.addWidget(self.prices)
        box_layout.addWidget(_hint("Per million tokens, in your currency. livefill ships no prices: a lane's cost "
                                   "is shown only for a model priced here, when its provider reports the tokens."))
        right.addWidget(box)
        right.addStretch(1)

        self.error = Note(name="settingsError")
        self.error.hide()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        for row, field in self.keys.items():
            field.submitted.connect(lambda secret, row=row: self._set_key(row, secret))
            field.forgetRequested.connect(lambda row=row: self._forget_key(row))
        self.compatible_url.editingFinished.connect(lambda: self._set_url(
            "compatible_base_url", self.compatible_url, "the OpenAI-compatible server's", default=None))  # a live run asks for one
        self.ollama_url.editingFinished.connect(lambda: self._set_url(
            "ollama_base_url", self.ollama_url, "Ollama's", default=default_ollama_url(self.environ)))
        self.compatible_model.editingFinished.connect(lambda: self._set_model("compatible_model", self.compatible_model))
        self.ollama_model.editingFinished.connect(lambda: self._set_model("ollama_model", self.ollama_model))
        self.prices.pricesEdited.connect(lambda prices: self._replace(prices=prices))
        self.prices.problem.connect(self._say)
        self._unsubscribe = session.subscribe(self._on_session_event)
        self.destroyed.connect(lambda *_: self._unsubscribe())
        self.render()

    @property
    def store(self) -> KeyStore:
        return self.session.keys  # type: ignore[return-value]

    # -- rendering -------------------------------------------------------------------------------

    def render(self) -> None:
        """Show the store's keys and the session's addresses."""
        reason = self.store.keyring_reason
        self.keyring_note.setVisible(reason is not None)
        if reason is not None:
            self.keyring_note.setText(f"{reason} Keys you type here are kept only while livefill runs.")
        for row in self.keys:
            self._render_key(row)
        s = self.session.settings
        for line, value in ((self.compatible_url, s.compatible_base_url), (self.compatible_model, s.compatible_model),
                            (self.ollama_url, s.ollama_base_url), (self.ollama_model, s.ollama_model)):
            if line not in self._refused and line.text() != (value or ""):
                line.setText(value or "")
        self.prices.show_prices(s.prices)

    def _row_url(self, row: str) -> str | None:
        if row == "compatible":
            return self.session.settings.compatible_base_url or None
        return self.environ.get(_PAIRED_URL[row], "").strip() or None

    def _render_key(self, row: str) -> None:
        field = self.keys[row]
        url = self._row_url(row)
        if row == "compatible" and url is None:
            field.show_entry()
            field.setEnabled(False)
            field.setToolTip("Give the server's base URL first: its key is kept per server.")
            return
        field.setEnabled(True)
        field.setToolTip("")
        try:
            key = self.store.get(_ROW_PROVIDER[row], url)
        except InputError as exc:
            self._say(str(exc))
            field.show_entry()
            return
        if key is None:
            field.show_entry()
        else:
            field.show_key(key.masked(), key_source_text(key, self.store), forgettable=key.source is not KeySource.ENV)

    def _on_session_event(self, event: SessionEvent) -> None:
        if isinstance(event, SettingsChanged) and self.isVisible():  # opening it renders it anew
            self.render()

    def _say(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))
        self._fit()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()  # narrower: the notes wrap onto more lines

    def _fit(self) -> None:
        """Never shorter than every wrapped line needs at the dialog's width: Qt sizes a dialog by
        its layout's minimum, which leaves word-wrapped labels (the notes, the error) cut off and
        lets a person shrink it until the fields are squashed."""
        layout = self.layout()
        layout.activate()
        height = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else layout.sizeHint().height()
        if self.minimumHeight() != height:
            self.setMinimumHeight(height)
        if self.height() < height:
            self.resize(self.width(), height)

    def done(self, result: int) -> None:
        """Closed with an address still refused: said in the window too (the line under the
        fields goes with the dialog)."""
        refused = [shown_url(line.text().strip()) for line in (self.compatible_url, self.ollama_url) if line in self._refused]
        super().done(result)
        if refused and self.say_in_window is not None:
            self.say_in_window(f"Settings: {', '.join(repr(r) for r in refused)} not saved: not a base URL (File → Settings… to correct it)")

    # -- intents ----------------------------------------------------------------------------------

    def _set_key(self, row: str, secret: str) -> None:
        self._say("")
        try:
            self.store.set(_ROW_PROVIDER[row], secret, self._row_url(row))
        except InputError as exc:
            self._say(str(exc))
        del secret
        self.render()

    def _forget_key(self, row: str) -> None:
        self._say("")
        still = self.store.forget(_ROW_PROVIDER[row], self._row_url(row))
        if still is not None:
            self._say(f"The key from {still.env_var} still applies: unset it to stop using it.")
        self.render()

    def _set_url(self, name: str, line: QLineEdit, whose: str, *, default: str | None) -> None:
        """`default`: the address used while the setting is empty (None: there is none); the
        example a refusal gives."""
        example = default or base_url_example("openai-compatible")
        text = line.text().strip()
        bare = _BARE_HOST(text)
        if bare:  # a bare host:port, as OLLAMA_HOST is written (https for the TLS port)
            text = ("https://" if bare.group(1) == "443" else "http://") + text
        if text:
            try:
                text = normalize_base_url(text, example=example)
            except InputError as exc:
                current = getattr(self.session.settings, name)
                still = f"still {current}" if current else f"still the default, {default}" if default else "still not set"
                self._say(f"{exc} {whose[0].upper()}{whose[1:]} base URL is {still}.")
                self._mark_refused(line, True)
                return
        self._mark_refused(line, False)
        self._say("")
        self._replace(**{name: text})

    def _mark_refused(self, line: QLineEdit, refused: bool) -> None:
        if refused == (line in self._refused):
            return
        if refused:
            self._refused.add(line)
        else:
            self._refused.discard(line)
        line.setProperty("state", "invalid" if refused else None)
        line.style().unpolish(line)
        line.style().polish(line)

    def _set_model(self, name: str, line: QLineEdit) -> None:
        self._say("")
        self._replace(**{name: line.text().strip() or None})

    def _replace(self, **changes: Any) -> None:
        try:
            self.session.replace(**changes)
        except (RuntimeError, ValueError) as exc:
            self._say(str(exc))
        self.render()


def _line(name: str, placeholder: str) -> QLineEdit:
    line = QLineEdit()
    line.setObjectName(name)
    line.setPlaceholderText(placeholder)
    return line


def _hint(text: str) -> QLabel:
    return Note(text, "settingsHint")
