"""Where the app's saves go, and the confirmation that says where one went.

How this works
--------------
`save_folder(window)` is the folder a save dialog opens in: the folder of the last save (kept in
the window's settings store as `save_folder`, so it is remembered across launches), else the
user's Pictures folder (QStandardPaths, else platformdirs), created if it is missing (a file
dialog given a folder that does not exist silently falls back to the working directory), else
the home folder. `remember_folder(window, path)` keeps the folder of a file just written.

`confirm_saved(window, path, what)` says "Saved <what> to <full path> — open folder" in the status
bar, as a link (`saved_note(window)`, a label in the status bar): clicking it opens the folder in
the system's file manager (`QDesktopServices.openUrl` of the folder's file URL), and writes the
same line to the run log. `open_folder(path)` is that click (a file's folder, or a folder).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QStandardPaths, Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QListWidget, QStatusBar

from livefill.session.app_settings import SettingsStore

__all__ = ["STORE_KEY", "SavingWindow", "confirm_saved", "open_folder", "remember_folder", "save_folder", "saved_note"]


class SavingWindow(Protocol):
    """What the saves need of the window: its settings store, its run log and its status bar."""

    store: SettingsStore | None
    run_log: QListWidget

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name

STORE_KEY = "save_folder"
NOTE_MS = 30000


def _pictures() -> Path | None:
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.PicturesLocation)
    if not folder:
        try:
            import platformdirs

            folder = platformdirs.user_pictures_dir()
        except Exception:  # noqa: BLE001 - no pictures folder known: the home folder is used
            folder = ""
    return Path(folder) if folder else None


def save_folder(window: SavingWindow) -> Path:
    """The folder a save dialog opens in (see the module docstring)."""
    store = window.store
    remembered = store.value(STORE_KEY) if store is not None else None
    if remembered and Path(remembered).is_dir():
        return Path(remembered)
    pictures = _pictures()
    if pictures is not None:
        try:
            pictures.mkdir(parents=True, exist_ok=True)
            return pictures
        except OSError:
            pass
    return Path.home()


def remember_folder(window: SavingWindow, path: str | Path) -> None:
    """Keep the folder of `path` (a file just written) as where the next save dialog opens."""
    store = window.store
    if store is not None:
        store.set_value(STORE_KEY, str(Path(path).resolve().parent))
        store.sync()


def open_folder(path: str | Path) -> bool:
    """Open the folder of `path` (or `path`, a folder) in the system's file manager."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))))


def saved_note(window: SavingWindow) -> QLabel | None:
    """The status bar's "Saved … — open folder" label, once a save has been confirmed."""
    return window.statusBar().findChild(QLabel, "savedNote")


def _note(window: SavingWindow) -> tuple[QLabel, QTimer]:
    label = saved_note(window)
    if label is None:
        label = QLabel()
        label.setObjectName("savedNote")
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse
                                      | Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        label.setOpenExternalLinks(False)
        label.linkActivated.connect(lambda href: open_folder(QUrl(href).toLocalFile()))
        label.setMinimumWidth(0)
        window.statusBar().addWidget(label, 1)
        timer = QTimer(label)
        timer.setObjectName("savedNoteTimer")
        timer.setSingleShot(True)
        timer.timeout.connect(label.hide)
    timer = label.findChild(QTimer, "savedNoteTimer")
    assert timer is not None  # made with the label, its child
    return label, timer


def confirm_saved(window: SavingWindow, path: str | Path, what: str) -> str:
    """Say where `what` was saved, as a link that opens its folder; the line said."""
    path = Path(path).resolve()
    line = f"Saved {what} to {path}"
    label, timer = _note(window)
    url = QUrl.fromLocalFile(str(path.parent)).toString()
    label.setText(f"{html.escape(line)} — <a href=\"{html.escape(url)}\">open folder</a>")
    label.setToolTip(f"Open {path.parent} in the file manager")
    window.statusBar().clearMessage()
    label.show()
    timer.start(NOTE_MS)
    window.run_log.addItem(line)
    window.run_log.scrollToBottom()
    remember_folder(window, path)
    return line
