"""The app's remembered settings kept by QSettings (a `livefill.session.app_settings.SettingsStore`).

`QSettingsStore()` uses the user's livefill settings (INI format, organisation and application
"livefill"); `QSettingsStore(path)` an explicit INI file (tests, `--settings-file`), so a test
never touches the real user config.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

__all__ = ["ORGANISATION", "APPLICATION", "QSettingsStore"]

ORGANISATION = "livefill"
APPLICATION = "livefill"


class QSettingsStore:
    """A SettingsStore on QSettings (see the module docstring)."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            self.settings = QSettings(
                QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION, APPLICATION
            )
        else:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.settings = QSettings(str(path), QSettings.Format.IniFormat)

    @property
    def path(self) -> str:
        """The file the settings are kept in."""
        return self.settings.fileName()

    def value(self, name: str) -> str | None:
        value = self.settings.value(name)
        return None if value is None else str(value)

    def set_value(self, name: str, value: str) -> None:
        self.settings.setValue(name, value)

    def remove(self, name: str) -> None:
        self.settings.remove(name)

    def sync(self) -> None:
        self.settings.sync()
