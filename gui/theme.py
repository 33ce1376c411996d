"""Light and dark themes that follow the system palette.

Two style sheets in assets/styles: `livefill.qss` (light) and `livefill-dark.qss` (dark). They
style the same states the same way in words and shapes (markers, dashed outlines, check marks,
warning signs); only the colours differ, so no state is ever shown by colour alone in either.

`Theme(app, choice)` applies one: `choice` "light" or "dark" forces it (and sets a matching Fusion
palette, so widgets no style sheet reaches match too); "system" picks from the platform's colour
scheme (`QStyleHints.colorScheme()`, Qt 6.5+) or, when the platform does not say, from the
lightness of the palette's window colour, and follows changes of either while the app runs.

A change of the application's palette is heard through `QGuiApplication.paletteChanged`, which
Qt emits exactly where it sends `ApplicationPaletteChange` to the application; an event filter on
the application would do the same but runs, in Python, for every event of every object (about
15,000 while the first window is built, ~0.1 s of the launch). The filter stays as the fallback
for a Qt without the signal.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication
from livefill.resources import STYLES_DIR

__all__ = ["STYLES", "Theme", "dark_palette", "light_palette", "scheme_of", "stylesheet"]

STYLES = STYLES_DIR
CHOICES = ("system", "light", "dark")


def stylesheet(name: str) -> str:
    """The style sheet text of theme `name` ("light" or "dark")."""
    file = STYLES / ("livefill-dark.qss" if name == "dark" else "livefill.qss")
    return file.read_text(encoding="utf-8") if file.exists() else ""


def scheme_of(app: QGuiApplication) -> str:
    """"dark" or "light": the platform's colour scheme, else the palette's window lightness."""
    hints = app.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None:
        value = scheme()
        if value == Qt.ColorScheme.Dark:
            return "dark"
        if value == Qt.ColorScheme.Light:
            return "light"
    window = app.palette().color(QPalette.ColorRole.Window)
    return "dark" if window.lightnessF() < 0.5 else "light"


def dark_palette() -> QPalette:
    """A dark Fusion palette (for a forced dark theme)."""
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#1f2328",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#16191d",
        QPalette.ColorRole.AlternateBase: "#1d2126",
        QPalette.ColorRole.ToolTipBase: "#2b3036",
        QPalette.ColorRole.ToolTipText: "#f0f0f0",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#2a2f35",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#2f6fb3",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#6cb6ff",
        QPalette.ColorRole.PlaceholderText: "#8b949e",
        QPalette.ColorRole.Mid: "#3a4047",
        QPalette.ColorRole.Dark: "#111316",
        QPalette.ColorRole.Light: "#3b4148",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7d8590"))
    return p


def light_palette() -> QPalette:
    """A light Fusion palette (for a forced light theme on a dark system)."""
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#f3f3f3",
        QPalette.ColorRole.WindowText: "#1b1b1b",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f6f8fa",
        QPalette.ColorRole.ToolTipBase: "#ffffdc",
        QPalette.ColorRole.ToolTipText: "#1b1b1b",
        QPalette.ColorRole.Text: "#1b1b1b",
        QPalette.ColorRole.Button: "#ececec",
        QPalette.ColorRole.ButtonText: "#1b1b1b",
        QPalette.ColorRole.Highlight: "#3874d8",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.PlaceholderText: "#6e7781",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    # a greyed control must look greyed (setColor above set every group: Start looked pressable mid-run)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#8c959f"))
    return p


class Theme(QObject):
    """Applies the light or dark style sheet to `app` (see the module docstring).

    `name` is the theme applied now ("light" / "dark"); `changed(str)` says when it switches.
    """

    changed = Signal(str)

    def __init__(self, app: QApplication, choice: str = "system") -> None:
        super().__init__(app)
        if choice not in CHOICES:
            raise ValueError(f"theme must be one of {', '.join(CHOICES)}, got {choice!r}")
        self.app = app
        self.choice = choice
        self.name = ""
        self._applying = False
        self._system_palette = QPalette(app.palette())
        hints = app.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(lambda *_: self._follow())
        palette_changed = getattr(app, "paletteChanged", None)
        if palette_changed is not None:
            palette_changed.connect(self._on_palette_changed)
        else:
            app.installEventFilter(self)
        self.apply()

    def set_choice(self, choice: str) -> None:
        """"system", "light" or "dark"."""
        if choice not in CHOICES:
            raise ValueError(f"theme must be one of {', '.join(CHOICES)}, got {choice!r}")
        if self.choice == "system" and choice != "system":
            self._system_palette = QPalette(self.app.palette())
        self.choice = choice
        self.apply()

    def apply(self) -> str:
        """Apply the chosen theme now; the name applied."""
        self._applying = True
        try:
            if self.choice == "system":
                if self.name and self.app.palette() != self._system_palette and self._forced_palette:
                    self.app.setPalette(self._system_palette)
                self._forced_palette = False
                name = scheme_of(self.app)
            else:
                name = self.choice
                if self.app.style().name().lower() != "fusion":
                    self.app.setStyle("Fusion")
                self.app.setPalette(dark_palette() if name == "dark" else light_palette())
                self._forced_palette = True
            changed = name != self.name
            self.name = name
            self.app.setStyleSheet(stylesheet(name))
        finally:
            self._applying = False
        if changed:
            self.changed.emit(name)
        return name

    _forced_palette = False

    def _on_palette_changed(self, *_palette: object) -> None:
        if not self._applying and self.choice == "system":
            self._follow()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if obj is self.app and event.type() == QEvent.Type.ApplicationPaletteChange:
            self._on_palette_changed()
        return False

    def _follow(self) -> None:
        if self.choice != "system" or self._applying:
            return
        if scheme_of(self.app) != self.name:
            self.apply()
