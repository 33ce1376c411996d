"""The window's File and View menus, and "Save picture" (a PNG of the window).

`build_menus(window)` adds File (Open document…, Open schema…, Settings…, Record runs, Recordings ▸
(`gui.recordings`), Export animation… (`gui.export_animation`), Save picture…, Export timeline as PNG…,
Quit), Edit (Paste document, Undo, Redo: the window's undo stack) and View (Compare,
Wire inspector, Timeline, History (`gui.history_panel`), Presentation mode, Autoplay) to the window's menu bar, a "Save picture"
button to its Run toolbar, and window-level copies of the shortcuts so they work while the menu
bar is hidden (presentation). The actions are kept on the window (`save_picture_action`,
`present_action`, `autoplay_action`, `inspector_action`, `timeline_action`, ...).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QToolButton, QWidget

from gui.errors import reporting

__all__ = ["build_menus", "save_picture", "save_and_confirm"]


def save_picture(window: QWidget, path: str | Path) -> Path:
    """Write a PNG picture of `window` to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return path


def _ask_and_save(window: Any) -> None:
    from gui.saves import save_folder

    name = time.strftime("livefill-%Y%m%d-%H%M%S.png")
    dialog = QFileDialog(window, "Save a picture of the window", str(save_folder(window) / name), "PNG (*.png)")
    dialog.setObjectName("savePictureDialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setDefaultSuffix("png")
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.fileSelected.connect(reporting(lambda chosen: save_and_confirm(window, chosen) if chosen else None))
    dialog.open()  # never a nested event loop under qasync


def save_and_confirm(window: Any, path: str | Path) -> Path:
    """Save a picture of `window` to `path` and say where, as a link that opens the folder."""
    from gui.saves import confirm_saved

    written = window.save_picture(path)
    confirm_saved(window, written, "a picture of the window")
    return written


def _add_undo(window: Any, edit: Any) -> None:
    """Edit → Undo / Redo on the window's undo stack (refused, with a line, while a run is active)."""
    from gui.history_panel import undo_stack_of

    stack = undo_stack_of(window)

    def step(forward: bool) -> None:
        if window.active:
            window.say("Stop the run before undoing or redoing a change to the form.")
        elif forward:
            stack.redo()
        else:
            stack.undo()

    window.undo_action = QAction("Undo", window)
    window.undo_action.setObjectName("undoAction")
    window.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
    window.undo_action.setEnabled(stack.canUndo())
    window.undo_action.triggered.connect(reporting(lambda _checked=False: step(False)))
    stack.canUndoChanged.connect(window.undo_action.setEnabled)
    stack.undoTextChanged.connect(lambda text: window.undo_action.setText(f"Undo {text}".strip()))
    window.redo_action = QAction("Redo", window)
    window.redo_action.setObjectName("redoAction")
    window.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
    window.redo_action.setEnabled(stack.canRedo())
    window.redo_action.triggered.connect(reporting(lambda _checked=False: step(True)))
    stack.canRedoChanged.connect(window.redo_action.setEnabled)
    stack.redoTextChanged.connect(lambda text: window.redo_action.setText(f"Redo {text}".strip()))
    edit.addSeparator()
    edit.addAction(window.undo_action)
    edit.addAction(window.redo_action)


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
    from gui.recordings import Recordings

    window.recordings = Recordings(window, file_menu, before=window.save_picture_action)
    from gui.export_animation import AnimationExport

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
    _add_undo(window, edit)

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
                   window.inspector_action, window.timeline_action, window.history_action,
                   window.undo_action, window.redo_action):
        window.addAction(action)
