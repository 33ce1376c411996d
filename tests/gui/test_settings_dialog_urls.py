"""The settings dialog never breaks an address across lines (issue 26, item 11: "the Settings
example URL breaks across lines")."""

from __future__ import annotations

import asyncio
import re

import keyring.backends.fail
from PySide6.QtCore import QPointF
from PySide6.QtGui import QTextLayout, QTextOption
from PySide6.QtWidgets import QLabel

from livefill.wire.keys import KeyStore

URL = re.compile(r"[a-z]+://[^\s'\"]*[^\s'\".,;:)]")


def broken_urls(dialog) -> list[tuple[str, str]]:
    """(label text, address) for every address a visible wrapped label of `dialog` lays out over
    more than one line, wrapped as the label wraps it (its shown text, at its width)."""
    out = []
    for label in dialog.findChildren(QLabel):
        if not (label.isVisible() and label.wordWrap()):
            continue
        shown = QLabel.text(label)  # what Qt lays out (the Note's own text() gives what was said)
        plain = shown.replace("\u2060", "")
        layout = QTextLayout(shown, label.font())
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WordWrap)
        layout.setTextOption(option)
        layout.beginLayout()
        starts = []
        while (line := layout.createLine()).isValid():
            line.setLineWidth(label.contentsRect().width())
            line.setPosition(QPointF(0, 0))
            starts.append(line.textStart())
        layout.endLayout()
        shown_at = [i for i, c in enumerate(shown) if c != "\u2060"]  # plain index -> shown index
        for m in URL.finditer(plain):
            first, last = shown_at[m.start()], shown_at[m.end() - 1]
            if any(first < s <= last for s in starts):
                out.append((plain, m.group(0)))
    return out


def test_no_address_in_the_dialog_breaks_across_lines(make_window, qloop, tmp_path):
    window = make_window(keys=KeyStore(backend=keyring.backends.fail.Keyring()))
    dialog = window.open_settings()
    qloop.run_until_complete(asyncio.sleep(0.05))
    hint = next(label for label in dialog.findChildren(QLabel) if "OLLAMA_HOST" in label.text())
    assert hint.text().endswith("or http://127.0.0.1:11434.")  # said plainly, no joiner in it
    dialog.compatible_url.setText("ftp://example")
    dialog.compatible_url.editingFinished.emit()
    assert "give one like http://127.0.0.1:8080/v1." in dialog.error.text()
    widths = [dialog.width(), dialog.width() - 40, dialog.width() - 90, 380]
    for width in widths:
        dialog.resize(width, dialog.height())
        qloop.run_until_complete(asyncio.sleep(0.05))
        assert broken_urls(dialog) == [], (dialog.width(), broken_urls(dialog))
    assert dialog.grab().save(str(tmp_path / "settings-narrow.png"))
