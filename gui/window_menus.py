"""The window's File and View menus, and "Save picture" (a PNG of the window).

`build_menus(window)` adds File (Open document…, Open schema…, Settings…, Record runs, Recordings ▸
(`livefill.gui.recordings`), Export animation… (`livefill.gui.export_animation`), Save picture…, Export timeline as PNG…,
Quit), Edit (Paste document, Clear form / Clear all lanes, Undo, Redo: the window's undo stack,
and the last clear) and View (Compare, Wire inspector, Timeline, History (`livefill.gui.history_panel`),
Legend, Presentation mode, Autoplay) to the window's menu bar, a "Save picture"
button to its Run toolbar, and window-level copies of the shortcuts so they work while the menu
bar is hidden (presentation). The actions are kept on the window (`save_picture_action`,
`present_action`, `autoplay_action`, `inspector_action`, `timeline_action`, `clear_action`,
`undo_action`, `legend_action`, ...). Clear, Undo and Redo are `livefill.gui.form_undo`'s (one undo
stack for the window). Whether the legend is shown
is remembered in the window's settings store under `LEGEND_KEY`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QPixmap
from PySide6.QtWidgets import QFileDialog, QToolButton, QWidget

from livefill.gui.errors import reporting
from livefill.gui.form_undo import add_clear, add_undo

__all__ = ["build_menus", "save_picture", "save_and_confirm", "LEGEND_KEY"]

LEGEND_KEY = "window/legend"
"""The settings store's name for whether the legend is shown ("shown" / "hidden")."""


def save_picture(window: QWidget, path: str | Path, picture: QPixmap | None = None) -> Path:
    """Write a PNG picture of `window` (as it is now, or `picture` taken of it earlier) to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not (picture if picture is not None else window.grab()).save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return path


def _ask_and_save(window: Any) -> None:
    from livefill.gui.saves import save_folder

    picture = window.grab()  # the moment asked for (mid-stream, say), not the one the name is confirmed at
    name = time.strftime("livefill-%Y%m%d-%H%M%S.png")
    dialog = QFileDialog(window, "Save a picture of the window", str(save_folder(window) / name), "PNG (*.png)")
    dialog.setObjectName("savePictureDialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setDefaultSuffix("png")
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.fileSelected.connect(reporting(lambda chosen: save_and_confirm(window, chosen, picture) if chosen else None))
    dialog.open()  # never a nested event loop under qasync


def save_and_confirm(window: Any, path: str | Path, picture: QPixmap | None = None) -> Path:
    """Save a picture of `window` (now, or `picture`) to `path` and say where, as a link that opens the folder."""
    from livefill.gui.saves import confirm_saved

    written = window.save_picture(path, picture)
    confirm_saved(window, written, "a picture of the window")
    return written


def build_menus(window: Any) -> None:
    """The File and View menus of `window` (see the module docstring)."""
    file_menu = window.menuBar().addMenu("&File")
    window.open_document_action = QAction("Open document…", window)
    window.open_document_action.setObjectName("openDocumentAction")
    window.open_document_action.setShortcut(QKeySequence("Ctrl+O"))
    window.open_document_action.setToolTip("Read your own .txt, .md or .pdf document")
    window.open_document_action.triggered.connect(reporting(lambda _checked=False: window.documents.ask_open()))
    file_menu.addAction(window.open_document_action)
    window.open_schema_action = QAction("Open schema…", window)
    window.open_schema_action.setObjectName("openSchemaAction")
    window.open_schema_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
    window.open_schema_action.setToolTip("Read the document with your own JSON Schema file (.json)")
    window.open_schema_action.triggered.connect(reporting(lambda _checked=False: window.documents.ask_open_schema()))
    file_menu.addAction(window.open_schema_action)
    window.settings_action = QAction("Settings…", window)
    window.settings_action.setObjectName("settingsAction")
    window.settings_action.setShortcut(QKeySequence("Ctrl+,"))
    window.settings_action.setToolTip("API keys, and the addresses of an OpenAI-compatible server and Ollama")
    window.settings_action.triggered.connect(reporting(lambda _checked=False: window.open_settings()))
    file_menu.addAction(window.settings_action)
    file_menu.addSeparator()
    window.save_picture_action = QAction("Save picture…", window)
    window.save_picture_action.setObjectName("savePictureAction")
    window.save_picture_action.setShortcut(QKeySequence("Ctrl+Shift+S"))
    window.save_picture_action.setToolTip("Write a PNG picture of the window")
    window.save_picture_action.triggered.connect(reporting(lambda _checked=False: _ask_and_save(window)))
    file_menu.addAction(window.save_picture_action)
    from livefill.gui.recordings import Recordings

    window.recordings = Recordings(window, file_menu, before=window.save_picture_action)
    from livefill.gui.export_animation import AnimationExport

    window.animation_export = AnimationExport(window, file_menu, before=window.save_picture_action)
    window.export_timeline_action = QAction("Export timeline as PNG…", window)
    window.export_timeline_action.triggered.connect(window.timeline_dock.ask_export)
    file_menu.addAction(window.export_timeline_action)
    file_menu.addSeparator()
    quit_action = QAction("Quit", window)
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    quit_action.triggered.connect(window.close)
    file_menu.addAction(quit_action)

    edit = window.menuBar().addMenu("&Edit")
    window.paste_document_action = QAction("Paste document", window)
    window.paste_document_action.setObjectName("pasteDocumentAction")
    window.paste_document_action.setShortcut(QKeySequence("Ctrl+Shift+V"))
    window.paste_document_action.setToolTip("Use the text (or the file) on the clipboard as the document")
    window.paste_document_action.triggered.connect(reporting(lambda _checked=False: window.documents.paste()))
    edit.addAction(window.paste_document_action)
    edit.addSeparator()
    add_clear(window, edit)
    add_undo(window, edit)

    view = window.menuBar().addMenu("&View")
    view.addAction(window.compare_action)
    window.inspector_action = window.inspector_dock.toggleViewAction()
    window.inspector_action.setText("Wire inspector")
    window.inspector_action.setShortcut(QKeySequence("Ctrl+I"))
    view.addAction(window.inspector_action)
    window.timeline_action = window.timeline_dock.toggleViewAction()
    window.timeline_action.setText("Timeline")
    window.timeline_action.setShortcut(QKeySequence("Ctrl+T"))
    view.addAction(window.timeline_action)
    _build_legend(window, view)
    window.history_action = window.history_panel.toggleViewAction()
    window.history_action.setText("History")
    window.history_action.setObjectName("historyAction")
    window.history_action.setShortcut(QKeySequence("Ctrl+H"))
    window.history_action.setToolTip("Past runs: open one into the form, delete one; where the history file is")
    view.addAction(window.history_action)
    view.addSeparator()
    window.present_action = QAction("Presentation mode", window, checkable=True)
    window.present_action.setObjectName("presentAction")
    window.present_action.setShortcut(QKeySequence(Qt.Key.Key_F11))
    window.present_action.triggered.connect(lambda _checked: window.toggle_presentation())
    view.addAction(window.present_action)
    window.autoplay_action = QAction("Autoplay (replay in a loop)", window, checkable=True)
    window.autoplay_action.setObjectName("autoplayAction")
    window.autoplay_action.triggered.connect(window._autoplay_clicked)
    view.addAction(window.autoplay_action)
    window.save_picture_button = QToolButton()
    window.save_picture_button.setObjectName("savePictureButton")
    window.save_picture_button.setDefaultAction(window.save_picture_action)
    window.save_picture_button.setText("Save picture")
    window.run_toolbar.addWidget(window.save_picture_button)
    # window-level copies so the shortcuts work while the menu bar is hidden (presentation)
    for action in (window.open_document_action, window.settings_action, window.paste_document_action,
                   window.save_picture_action, window.compare_action, window.present_action,
                   window.inspector_action, window.timeline_action, window.history_action, window.clear_action,
                   window.undo_action, window.redo_action, window.legend_action):
        window.addAction(action)


def _build_legend(window: Any, menu: Any) -> None:
    """View ▸ Legend: show or hide the legend over the single form; the choice is remembered."""
    store = getattr(window, "store", None)
    shown = (store.value(LEGEND_KEY) if store is not None else None) != "hidden"
    window.legend_action = QAction("Legend", window, checkable=True)
    window.legend_action.setObjectName("legendAction")
    window.legend_action.setShortcut(QKeySequence("Ctrl+L"))
    window.legend_action.setToolTip("What the marks beside the fields mean")
    window.legend_action.setChecked(shown)
    window.legend.setVisible(shown)

    def toggled(checked: bool) -> None:
        window.legend.setVisible(checked)
        if store is not None:
            store.set_value(LEGEND_KEY, "shown" if checked else "hidden")
            store.sync()

    window.legend_action.toggled.connect(toggled)

    def marking(event: Any = None) -> None:  # the single form's mode decides whether it marks
        from livefill.session.session import SettingsChanged

        if event is None or isinstance(event, SettingsChanged) and "mode" in event.changed:
            window.legend.set_marking(window.session.single.mode.spec.marks_states)

    window.session.subscribe(marking)
    marking()
    window.legend.hideRequested.connect(lambda: window.legend_action.setChecked(False))
    menu.addAction(window.legend_action)
