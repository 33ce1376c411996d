"""What the window remembers between launches: `Remembered` saves the session's settings as they change.

The remembered settings (never a key: `livefill.session.app_settings`) and the theme go to the
window's settings store whenever they differ from what it holds. What is remembered is exactly
what the window shows (`SavedSettings.of`): the scenario, or the document of one's own by its
file, the schema chosen, the provider and its models; and the compare lanes with their own
settings (`Session.remember_lanes`: the store's `compare/lanes`). Going back to a scenario forgets the
document; the next launch shows the scenario. `last_document` is the document the launch was
handed to reopen (`MainWindow.restore_last_document`).
"""

from __future__ import annotations

from dataclasses import replace

from livefill.session.app_settings import SavedSettings, SettingsStore, save_settings
from livefill.session.session import Session

__all__ = ["Remembered"]


class Remembered:
    """The remembered settings of `session` in `store` (None: nothing is remembered); `saved` is
    what the launch starts with (what the store held, with the command line's choices put in:
    `livefill.gui.launch.remember`), `theme` the colour theme saved with them."""

    def __init__(self, session: Session, store: SettingsStore | None, saved: SavedSettings | None, theme: str) -> None:
        self.session = session
        self.store = store
        self.saved = saved
        self.theme = theme
        self.last_document = saved.last_document if saved is not None else None
        """The path of the document the last launch showed, to reopen (None: none)."""
        keys = session.keys  # the compare lanes are remembered too (livefill.session.session_lanes)
        session.remember_lanes(store, redact=keys.redact if keys is not None else None)

    def save(self) -> None:
        """Write the remembered settings to the store, if there is one and they differ from what it holds."""
        if self.store is None:
            return
        wanted = SavedSettings.of(self.session.settings, theme=self.theme)
        if self.saved is not None and wanted == replace(self.saved, problems=()):
            return
        keys = self.session.keys
        self.saved = save_settings(self.store, self.session.settings, theme=self.theme,
                                   redact=keys.redact if keys is not None else None)
