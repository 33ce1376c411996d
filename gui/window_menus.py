"""The window's File, Edit and View menus, and "Save picture" (a PNG of the window).

`WindowMenus` builds File (Open document…, Open schema…, Expected answer ▸
(`livefill.gui.expected_answer_menu`), Settings…, Record runs, Recordings ▸
(`livefill.gui.recordings`), Export animation… (`livefill.gui.export_animation`), Save picture…,
Export timeline as PNG…, Quit), Edit (Paste document, then `livefill.gui.form_undo`'s Clear, Undo
and Redo) and View (Compare, Wire inspector, Timeline, Legend, History, Presentation mode,
Autoplay), a "Save picture" button on the Run toolbar, and window-level copies of the shortcuts so
they work while the menu bar is hidden (presentation). It owns its actions; the window names the
ones it uses. Whether the legend is shown is remembered in the settings store under `LEGEND_KEY`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QPixmap
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QToolButton, QWidget

from livefill.gui.docks import InspectorDock, TimelineDock
from livefill.gui.document_actions import DocumentActions
from livefill.gui.errors import reporting
from livefill.gui.expected_answer_menu import ExpectedAnswerMenu
from livefill.gui.export_animation import AnimationExport
from livefill.gui.form_undo import FormUndo
from livefill.gui.history_panel import HistoryPanel
from livefill.gui.recordings import Recordings
from livefill.gui.run_toolbar import RunToolbar
from livefill.gui.saves import confirm_saved, save_folder
from livefill.session.app_settings import SettingsStore
from livefill.session.session import Session
from livefill.session.session_events import SessionEvent, SettingsChanged
from livefill.widgets.legend import Legend
from livefill.widgets.run_log import RunLog

__all__ = ["WindowMenus", "save_picture", "save_and_confirm", "LEGEND_KEY"]

LEGEND_KEY = "window/legend"
"""The settings store's name for whether the legend is shown ("shown" / "hidden")."""


def save_picture(window: QWidget, path: str | Path, picture: QPixmap | None = None) -> Path:
    """Write a PNG picture of `window` (as it is now, or `picture` taken of it earlier) to `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not (picture if picture is not None else window.grab()).save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return path


def save_and_confirm(window: QWidget, path: str | Path, picture: QPixmap | None = None) -> Path:
    """Save a picture of `window` (now, or `picture`) to `path` and say where, as a link that opens the folder."""
    written = save_picture(window, path, picture)
    confirm_saved(window, written, "a picture of the window")
    return written


def _ask_and_save(window: QWidget) -> None:
    picture = window.grab()  # the moment asked for (mid-stream, say), not the one the name is confirmed at
    name = time.strftime("livefill-%Y%m%d-%H%M%S.png")
    dialog = QFileDialog(window, "Save a picture of the window", str(save_folder(window) / name), "PNG (*.png)")
    dialog.setObjectName("savePictureDialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setDefaultSuffix("png")
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.fileSelected.connect(reporting(lambda chosen: save_and_confirm(window, chosen, picture) if chosen else None))
    dialog.open()  # never a nested event loop under qasync


def _action(window: QWidget, text: str, name: str, shortcut: QKeySequence | str | None = None,
            tip: str | None = None, *, checkable: bool = False) -> QAction:
    action = QAction(text, window, checkable=checkable)
    action.setObjectName(name)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    if tip is not None:
        action.setToolTip(tip)
    return action


class WindowMenus:
    """The menus of `window` and their actions (see the module docstring).

    The callbacks are the window's intents: `open_settings()` (File → Settings…),
    `toggle_presentation()` (F11) and `autoplay_clicked(checked)` (View → Autoplay)."""

    def __init__(
        self,
        window: QMainWindow,
        session: Session,
        *,
        toolbar: RunToolbar,
        documents: DocumentActions,
        undo: FormUndo,
        legend: Legend,
        run_log: RunLog,
        store: SettingsStore | None,
        inspector: InspectorDock,
        timeline: TimelineDock,
        history: HistoryPanel,
        open_settings: Callable[[], object],
        toggle_presentation: Callable[[], None],
        autoplay_clicked: Callable[[bool], None],
    ) -> None:
        self.session = session
        self.legend = legend
        self.store = store

        file_menu = window.menuBar().addMenu("&File")
        self.open_document_action = _action(window, "Open document…", "openDocumentAction", "Ctrl+O",
                                            "Read your own .txt, .md or .pdf document")
        self.open_document_action.triggered.connect(reporting(lambda _checked=False: documents.ask_open()))
        file_menu.addAction(self.open_document_action)
        self.open_schema_action = _action(window, "Open schema…", "openSchemaAction", "Ctrl+Shift+O",
                                          "Read the document with your own JSON Schema file (.json)")
        self.open_schema_action.triggered.connect(reporting(lambda _checked=False: documents.ask_open_schema()))
        file_menu.addAction(self.open_schema_action)
        self.expected_answer = ExpectedAnswerMenu(window, session.scoreboard.expected, file_menu, self._say(window, run_log))
        self.settings_action = _action(window, "Settings…", "settingsAction", "Ctrl+,",
                                       "API keys, and the addresses of an OpenAI-compatible server and Ollama")
        self.settings_action.triggered.connect(reporting(lambda _checked=False: open_settings()))
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        self.save_picture_action = _action(window, "Save picture…", "savePictureAction", "Ctrl+Shift+S",
                                           "Write a PNG picture of the window")
        self.save_picture_action.triggered.connect(reporting(lambda _checked=False: _ask_and_save(window)))
        file_menu.addAction(self.save_picture_action)
        self.recordings = Recordings(window, session, file_menu, toolbar=toolbar, run_log=run_log,
                                     before=self.save_picture_action)
        self.animation_export = AnimationExport(window, session, file_menu, before=self.save_picture_action)
        self.export_timeline_action = QAction("Export timeline as PNG…", window)
        self.export_timeline_action.triggered.connect(timeline.ask_export)
        file_menu.addAction(self.export_timeline_action)
        file_menu.addSeparator()
        quit_action = QAction("Quit", window)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(window.close)
        file_menu.addAction(quit_action)

        edit = window.menuBar().addMenu("&Edit")
        self.paste_document_action = _action(window, "Paste document", "pasteDocumentAction", "Ctrl+Shift+V",
                                             "Use the text (or the file) on the clipboard as the document")
        self.paste_document_action.triggered.connect(reporting(lambda _checked=False: documents.paste()))
        edit.addAction(self.paste_document_action)
        edit.addSeparator()
        undo.add_to(edit)

        view = window.menuBar().addMenu("&View")
        view.addAction(toolbar.compare_action)
        self.inspector_action = inspector.toggleViewAction()
        self.inspector_action.setText("Wire inspector")
        self.inspector_action.setShortcut(QKeySequence("Ctrl+I"))
        view.addAction(self.inspector_action)
        self.timeline_action = timeline.toggleViewAction()
        self.timeline_action.setText("Timeline")
        self.timeline_action.setShortcut(QKeySequence("Ctrl+T"))
        view.addAction(self.timeline_action)
        self.legend_action = self._build_legend(window, view)
        self.history_action = history.toggleViewAction()
        self.history_action.setText("History")
        self.history_action.setObjectName("historyAction")
        self.history_action.setShortcut(QKeySequence("Ctrl+H"))
        self.history_action.setToolTip("Past runs: open one into the form, delete one; where the history file is")
        view.addAction(self.history_action)
        view.addSeparator()
        self.present_action = _action(window, "Presentation mode", "presentAction", QKeySequence(Qt.Key.Key_F11),
                                      checkable=True)
        self.present_action.triggered.connect(lambda _checked: toggle_presentation())
        view.addAction(self.present_action)
        self.autoplay_action = _action(window, "Autoplay (replay in a loop)", "autoplayAction", checkable=True)
        self.autoplay_action.triggered.connect(autoplay_clicked)
        view.addAction(self.autoplay_action)
        self.save_picture_button = QToolButton()
        self.save_picture_button.setObjectName("savePictureButton")
        self.save_picture_button.setDefaultAction(self.save_picture_action)
        self.save_picture_button.setText("Save picture")
        toolbar.bar.addWidget(self.save_picture_button)
        # window-level copies so the shortcuts work while the menu bar is hidden (presentation)
        for action in (self.open_document_action, self.settings_action, self.paste_document_action,
                       self.save_picture_action, toolbar.compare_action, self.present_action,
                       self.inspector_action, self.timeline_action, self.history_action, undo.clear_action,
                       undo.undo_action, undo.redo_action, self.legend_action):
            window.addAction(action)

    @staticmethod
    def _say(window: QMainWindow, run_log: RunLog) -> Callable[[str], None]:
        """One line in the status bar and the run log."""
        def say(message: str) -> None:
            window.statusBar().showMessage(message, 15000)
            run_log.addItem(message)
            run_log.scrollToBottom()
        return say

    def _build_legend(self, window: QWidget, menu: QMenu) -> QAction:
        """View ▸ Legend: show or hide the legend over the single form; the choice is remembered."""
        store, legend = self.store, self.legend
        shown = (store.value(LEGEND_KEY) if store is not None else None) != "hidden"
        action = _action(window, "Legend", "legendAction", "Ctrl+L", "What the marks beside the fields mean",
                         checkable=True)
        action.setChecked(shown)
        legend.setVisible(shown)

        def toggled(checked: bool) -> None:
            legend.setVisible(checked)
            if store is not None:
                store.set_value(LEGEND_KEY, "shown" if checked else "hidden")
                store.sync()

        action.toggled.connect(toggled)
        self.session.subscribe(self._legend_marking)
        self._legend_marking()
        legend.follow(self.session.single)  # "✓ right / ✗ wrong" explained while its form is scored
        legend.hideRequested.connect(lambda: action.setChecked(False))
        menu.addAction(action)
        return action

    def _legend_marking(self, event: SessionEvent | None = None) -> None:
        """The single form's mode decides whether the legend explains the marks."""
        if event is None or isinstance(event, SettingsChanged) and "mode" in event.changed:
            self.legend.set_marking(self.session.single.mode.spec.marks_states)
