"""The window's part for documents and settings: drops, File → Settings…, and what is remembered.

`WindowDocuments` is mixed into `livefill.gui.main_window.MainWindow`: a file or text dropped on the
window becomes the document (`livefill.gui.document_actions`), `open_settings()` shows the one settings
dialog (`livefill.gui.settings_dialog`), `save_settings()` writes the remembered settings (never a key:
`livefill.session.app_settings`) to the window's store, and `restore_last_document()` reopens the document
the last launch had.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent

from livefill.session.app_settings import SavedSettings, save_settings
from livefill.wire.keys import KeyStore
from livefill.gui.document_actions import DocumentActions

__all__ = ["WindowDocuments"]


class WindowDocuments:
    """Mixed into the main window (see the module docstring)."""

    session: Any
    store: Any
    remembered: Any
    theme_choice: str
    settings_dialog: Any
    documents: DocumentActions

    def save_settings(self) -> None:
        """Write the remembered settings (never a key) to the settings store, if there is one and
        they differ from what it holds."""
        if self.store is None:
            return
        last = self.remembered.last_document if self.remembered is not None else None
        wanted = SavedSettings.of(self.session.settings, theme=self.theme_choice, last_document=last)
        if self.remembered is not None and wanted == replace(self.remembered, problems=()):
            return
        keys = self.session.keys
        self.remembered = save_settings(self.store, self.session.settings, theme=self.theme_choice, last_document=last,
                                        redact=keys.redact if keys is not None else None)

    def open_settings(self) -> Any:
        """File → Settings…: the keys and the local servers' addresses (one dialog, non-modal)."""
        from livefill.gui.settings_dialog import SettingsDialog

        if self.session.keys is None:
            self.session.keys = KeyStore()
        if self.settings_dialog is None:
            self.settings_dialog = SettingsDialog(self, self.session)
        self.settings_dialog.render()
        self.settings_dialog.show()
        self.settings_dialog.raise_()
        return self.settings_dialog

    def restore_last_document(self) -> Any:
        """Open the document the last launch had (if any, and none is shown); the loading task."""
        path = self.remembered.last_document if self.remembered is not None else None
        if not path or self.session.settings.document is not None:
            return None
        return self.documents.open_path(path)

    # -- drag and drop ----------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt API)
        if DocumentActions.accepts(event.mimeData()) and not self.active:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 (Qt API)
        if DocumentActions.accepts(event.mimeData()) and not self.active:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt API)
        if self.documents.take_mime(event.mimeData(), text_name="Dropped text"):
            event.acceptProposedAction()
        else:
            event.ignore()
