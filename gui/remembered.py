"""What the window remembers between launches: `Remembered` saves the session's settings as they change.

The remembered settings (never a key: `livefill.session.app_settings`) and the theme go to the
window's settings store whenever they differ from what it holds; `last_document` is the document
the last launch had, which the app reopens (`MainWindow.restore_last_document`).
"""

from __future__ import annotations

from dataclasses import replace

from livefill.session.app_settings import SavedSettings, SettingsStore, save_settings
from livefill.session.session import Session

__all__ = ["Remembered"]


class Remembered:
    """The remembered settings of `session` in `store` (None: nothing is remembered); `saved` is
    what the store held at launch, `theme` the colour theme saved with them."""

    def __init__(self, session: Session, store: SettingsStore | None, saved: SavedSettings | None, theme: str) -> None:
        self.session = session
        self.store = store
        self.saved = saved
        self.theme = theme

    @property
    def last_document(self) -> str | None:
        """The path of the document the last launch had open (None: none)."""
        return self.saved.last_document if self.saved is not None else None

    def save(self) -> None:
        """Write the remembered settings to the store, if there is one and they differ from what it holds."""
        if self.store is None:
            return
        last = self.last_document
        wanted = SavedSettings.of(self.session.settings, theme=self.theme, last_document=last)
        if self.saved is not None and wanted == replace(self.saved, problems=()):
            return
        keys = self.session.keys
        self.saved = save_settings(self.store, self.session.settings, theme=self.theme, last_document=last,
                                   redact=keys.redact if keys is not None else None)
