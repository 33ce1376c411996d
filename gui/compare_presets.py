"""The compare view's "Lanes" button: the presets of lanes put side by side.

`PresetButton(session)` offers `livefill.session.lane_settings.PRESETS`: "Same request, read five
ways" (the five reading modes), "One document, every demo wire" (Anthropic, Anthropic
fine-grained, OpenAI Chat, OpenAI Responses, Ollama, read partial) and "The live providers you
have keys for". Choosing one is an intent sent to the session (`Session.apply_preset`). The live
providers one has keys for are looked for off the GUI thread (the system keyring may wait) when
the window says so (`check_live_keys`: once the warm-up has chosen the keyring's backend, not
while the window is built) and each time the menu opens; until two are found that preset is
greyed and its tooltip says why.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from livefill.gui.errors import reporting
from livefill.session.compare import MIN_LANES
from livefill.session.lane_settings import PRESETS, LaneSettings
from livefill.session.session import Session

__all__ = ["NO_KEYS", "PresetButton"]

NO_KEYS = "No live provider has a key: add one in File → Settings… (or set ANTHROPIC_API_KEY / OPENAI_API_KEY)"
"""The live preset's tooltip when no live provider has a key."""


class PresetButton(QToolButton):
    """"Lanes" and its menu of presets (see the module docstring)."""

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setObjectName("presetButton")
        self.setText("Lanes")  # (the menu arrow is drawn beside it)
        self.setToolTip("Put a set of lanes side by side: reading modes, demo wires, or your live providers")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu_ = QMenu(self)
        self.menu_.setToolTipsVisible(True)
        self.actions_: dict[str, QAction] = {}
        for preset in PRESETS.values():
            action = self.menu_.addAction(preset.title)
            action.setObjectName(f"preset:{preset.name}")
            action.triggered.connect(lambda _checked=False, name=preset.name: self._chosen(name))
            self.actions_[preset.name] = action
        self.menu_.aboutToShow.connect(self.check_live_keys)
        self.setMenu(self.menu_)
        self.live_lanes: tuple[LaneSettings, ...] | None = None  # None: not looked for yet
        self._check: asyncio.Future[Any] | None = None
        self._show_live()

    def apply(self, name: str) -> None:
        """Show the lanes of preset `name` ("modes", "wires", "live")."""
        if name == "live":
            self.session.apply_preset(name, live=self.live_lanes or ())
        else:
            self.session.apply_preset(name)

    @reporting
    def _chosen(self, name: str) -> None:
        self.apply(name)

    def check_live_keys(self) -> None:
        """Look for the live providers one has keys for, off the GUI thread."""
        if self._check is not None and not self._check.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:  # no event loop runs (a script, a test without one): look now
            self.live_lanes = self.session.live_lanes()
            self._show_live()
            return
        self._check = loop.run_in_executor(None, self.session.live_lanes)
        self._check.add_done_callback(self._checked)

    async def wait(self) -> None:
        """Wait until the keys were looked for (looking now if no one has asked yet)."""
        if self._check is None and self.live_lanes is None:
            self.check_live_keys()
        if self._check is not None:
            await self._check

    def _checked(self, future: asyncio.Future[Any]) -> None:
        if future.cancelled():
            return
        self.live_lanes = () if future.exception() is not None else future.result()
        with contextlib.suppress(RuntimeError):  # the view was closed meanwhile (its C++ side is gone)
            self._show_live()

    def _show_live(self) -> None:
        action = self.actions_["live"]
        lanes = self.live_lanes
        if lanes is None:
            why = "Looking for your keys…"
        elif not lanes:
            why = NO_KEYS
        elif len(lanes) < MIN_LANES:
            why = (f"Only {lanes[0].provider} has a key: a compare needs two lanes "
                   "(add another provider's key in File → Settings…)")
        else:
            why = "One lane per live provider you have a key for: " + ", ".join(str(lane.provider) for lane in lanes)
        action.setEnabled(lanes is not None and len(lanes) >= MIN_LANES)
        action.setToolTip(why)

    def live_action(self) -> QAction:
        """The "live providers you have keys for" item."""
        return self.actions_["live"]
