"""The session's lane intents: show the compare lanes, add, remove, and give each its own settings.

`LaneIntents` is the part of `livefill.session.session.Session` that changes the compare lanes
(a mixin: the session's own state, split out by role). A lane is given as a `Mode`, a mode's name,
a `LaneSettings` or its `--lane` text ("provider=ollama,mode=partial": livefill.session.lane_settings);
each change is checked against the session's settings first (LaneSettingsError, a ValueError,
when a lane cannot run with them) and told as one `LanesChanged`. `remember_lanes(store)` makes the
lanes survive a relaunch: the ones the store holds are the lanes compare starts with, and every
change is written back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from livefill.extraction.modes import Mode, parse_mode
from livefill.session.app_settings import SettingsStore
from livefill.session.compare import DEFAULT_MODES, MAX_LANES, MIN_LANES, CompareLanes
from livefill.session.lane import SessionLane
from livefill.session.lane_settings import (
    PRESETS, LaneSettings, lane_run_settings, live_preset, load_lanes, parse_lane_settings, save_lanes,
)
from livefill.session.session_events import LanesChanged, ViewChanged
from livefill.session.settings import RunSettings
from livefill.wire.keys import KeyStore

__all__ = ["LaneIntents", "LaneLike", "as_lane_settings"]

LaneLike = Mode | str | LaneSettings
"""A lane as an intent names it: its mode, its mode's name, its settings, or their `--lane` text."""


def as_lane_settings(item: LaneLike) -> LaneSettings:
    """`item` as a lane's settings ("partial" and Mode.PARTIAL: the session's settings, read partial)."""
    if isinstance(item, LaneSettings):
        return item
    if isinstance(item, str) and "=" in item:
        return parse_lane_settings(item)
    return LaneSettings(mode=parse_mode(item))


class LaneIntents:
    """The compare-lane intents of a Session (see the module docstring)."""

    compare: CompareLanes
    single: SessionLane
    keys: KeyStore | None
    _comparing: bool
    _settings: RunSettings
    _emit: Callable[[Any], None]
    _require_idle: Callable[[], None]
    lane: Callable[[int | str], SessionLane]
    replace: Callable[..., RunSettings]

    _lane_store: SettingsStore | None = None
    _lane_redact: Callable[[str], str] | None = None
    compare_defaults: tuple[LaneSettings, ...] | None = None
    """The lanes compare starts with when none are kept (None: the default three modes)."""
    lanes_problem: str | None = None
    """Why the remembered lanes could not be used (None: they could, or there were none)."""

    def enter_compare(self, lanes: Iterable[LaneLike] | None = None) -> None:
        """Show the compare lanes (these, if given; else the ones kept, the remembered ones, or
        the default three modes)."""
        self._require_idle()
        if lanes is not None:
            wanted = [as_lane_settings(item) for item in lanes]
            if wanted != self.compare.lane_settings:
                self.set_lanes(wanted)
        elif not self.compare.lanes:
            self.set_lanes(self.compare_defaults or [LaneSettings(mode=m) for m in DEFAULT_MODES])
        if not self._comparing:
            self._comparing = True
            self._emit(ViewChanged(True))

    def leave_compare(self) -> None:
        """Show the single form again (the compare lanes are kept for the next time)."""
        self._require_idle()
        if self._comparing:
            self._comparing = False
            self._emit(ViewChanged(False))

    def set_modes(self, modes: Iterable[Mode | str]) -> None:
        """Replace the compare lanes with one per mode (2 to 5, ValueError otherwise), left to right."""
        self.set_lanes([LaneSettings(mode=parse_mode(m)) for m in modes])

    def set_lanes(self, lanes: Iterable[LaneLike]) -> None:
        """Replace the compare lanes with these (2 to 5; ValueError otherwise, LaneSettingsError
        for a lane the session's settings cannot run), left to right."""
        self._require_idle()
        wanted = [as_lane_settings(item) for item in lanes]
        for lane in wanted:
            lane_run_settings(self._settings, lane)
        self.compare.set_lanes(wanted)
        self._lanes_changed()

    def apply_preset(self, name: str, *, live: Iterable[LaneSettings] | None = None) -> None:
        """Show the lanes of preset `name` (`lane_settings.PRESETS`); "live" takes `live`, the
        lanes `live_lanes()` found (ValueError when there are fewer than two)."""
        preset = PRESETS[name]
        lanes = list(live if live is not None else ()) if name == "live" else list(preset.lanes)
        if len(lanes) < MIN_LANES:
            raise ValueError(f"{preset.title}: {len(lanes)} live provider(s) with a key; compare needs {MIN_LANES}")
        self.enter_compare(lanes)

    def live_lanes(self) -> tuple[LaneSettings, ...]:
        """One lane per live provider the key store has a key for (reads the keyring: off the GUI thread)."""
        return live_preset(self._settings, self.keys)

    def add_lane(self, mode: LaneLike | None = None) -> SessionLane | None:
        """Add a compare lane on the right (default: partial, the session's settings); None if
        there are 5 already."""
        self._require_idle()
        if len(self.compare.lanes) >= MAX_LANES:
            return None
        settings = as_lane_settings(mode if mode is not None else Mode.PARTIAL)
        lane_run_settings(self._settings, settings)
        lane = self.compare.add(settings.mode, settings)
        self._lanes_changed()
        return lane

    def remove_lane(self, name: str) -> bool:
        """Remove compare lane `name` (False if only two are left)."""
        self._require_idle()
        if len(self.compare.lanes) <= MIN_LANES:
            return False
        lane = self.lane(name)
        if lane is self.single:
            raise ValueError("the single form's lane cannot be removed")
        self.compare.drop(lane)
        self._lanes_changed()
        return True

    def set_lane_mode(self, name: str, mode: Mode | str) -> None:
        """Read lane `name`'s next run in `mode` (the single lane: the settings' mode)."""
        lane = self.lane(name)
        if lane is self.single:
            self.replace(mode=parse_mode(mode))
            return
        lane.set_mode(mode)

    def lane_settings(self, name: str) -> LaneSettings:
        """Compare lane `name`'s own settings (its overrides over the session's, and its mode)."""
        return self.compare.settings_of(self.lane(name))

    def set_lane_settings(self, name: str, settings: LaneLike) -> None:
        """Give compare lane `name` these settings for its next runs (LaneSettingsError when
        they cannot run with the session's; RuntimeError while it runs)."""
        lane = self.lane(name)
        if lane is self.single:
            raise ValueError("the single form's lane has the session's settings")
        if lane.active:
            raise RuntimeError("a lane's settings cannot change while it runs")
        wanted = as_lane_settings(settings)
        lane_run_settings(self._settings, wanted)
        if wanted != self.compare.settings_of(lane):
            self.compare.set_overrides(lane, wanted)
            self._lanes_changed()

    def lane_run_settings(self, name: str) -> RunSettings:
        """The RunSettings compare lane `name`'s next run reads with (the session's, its overrides in)."""
        return lane_run_settings(self._settings, self.lane_settings(name))

    def remember_lanes(self, store: SettingsStore | None, *, redact: Callable[[str], str] | None = None) -> None:
        """Start compare with the lanes `store` remembers, and write every change of the lanes to it."""
        self._lane_store, self._lane_redact = store, redact
        if store is None:
            return
        lanes, self.lanes_problem = load_lanes(store)
        if lanes is not None:
            try:
                for lane in lanes:
                    lane_run_settings(self._settings, lane)
            except ValueError as exc:
                self.lanes_problem = f"the saved compare lanes cannot be used ({exc}); using the default"
                lanes = None
        self.compare_defaults = lanes

    def _lanes_changed(self) -> None:
        self._emit(LanesChanged(self.compare.retitle(self._settings)))
        if self._lane_store is not None and self.compare.lanes:
            save_lanes(self._lane_store, self.compare.lane_settings, redact=self._lane_redact)
