"""The whole session without Qt: the settings of the next run, and the lanes that run.

How this works
--------------
A `Session` owns the current `RunSettings` (one frozen value, replaced whole by `replace(...)` /
`set_settings(...)`) and its lanes (`livefill.session.lane.SessionLane`). The single form is the
session's one `single` lane; compare is the same session showing 2 to 5 `compare_lanes` instead
(each with its own mode). A window renders the session and sends it intents (the methods below);
it keeps no setting of its own. Every change is told to subscribers as a small frozen event
(`SettingsChanged`, `LanesChanged`, `ViewChanged`, `ActiveChanged`, `LaneDone`, `AllDone`, `NotesReady`) by plain
callbacks; a lane's own run events come from `lane.subscribe`.

`start()` builds one `RunConfig` from the settings (`run_config()`) and starts every lane shown
with it at one shared `t0`: with the demo provider every lane's request carries the same x-demo-*
knobs (in compare view the seed is sent explicitly, the demo default if none was chosen), each lane
puts in its own mode. With `settings.live` the same run goes to the real provider instead (no demo
knobs; its key from the KeyStore; settled / hybrid lanes through the app's embedded relay). `stop()` stops every lane (each closes its own connection). When the last
lane of a compare run ends, the session judges the lanes of a live run against the first committed
result, and asks the demo provider's request log what it saw of each lane (`livefill.session.request_notes`).

`clear_forms()` empties the forms shown (the single form, or every compare lane) and keeps an
exact snapshot of each (values, states, marks, origins); `undo_clear()` puts them back. The undo
lasts until the next Start, another clear, or a change of view, lanes or document (`UndoChanged`
says what Undo would do now).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from livefill.extraction.form import MISSING, FormModel, FormSnapshot
from livefill.recording.history import History
from livefill.wire.keys import KeyStore
from livefill.extraction.modes import Mode, parse_mode
from livefill.wire.providers.request import BASE_URL_VARIABLES, STRUCTURED_CHOICES
from livefill.session.request_notes import match_entries, request_notes, spec_leaves
from livefill.demo.protocol import DemoKnobs
from livefill.session.run import RunConfig, Source
from livefill.session.run_status import Phase, RunStatus
from livefill.extraction.scenarios import get_scenario
from livefill.session.lane import LaneEvent, LaneFinished, LaneModeChanged, SessionLane
from livefill.session.replay import (
    RecordChanged, ReplayChanged, ReplaySource, lane_record_config, recorded_structured, trace_settings,
)
from livefill.session.settings import DEFAULT_SEED, RunSettings, base_url_setting, fault_problem, model_setting
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed, rows_of
from livefill.recording.wiretap import DEFAULT_MAX_BYTES

__all__ = [
    "Session",
    "SessionEvent",
    "SettingsChanged",
    "LanesChanged",
    "ViewChanged",
    "ActiveChanged",
    "LaneDone",
    "AllDone",
    "NotesReady",
    "UndoChanged",
    "SINGLE",
    "DEFAULT_MODES",
    "MIN_LANES",
    "MAX_LANES",
    "parse_modes",
    "match_entries",
]

SINGLE = "single"
"""The name of the single form's lane (in the inspector and the timeline)."""

DEFAULT_MODES: tuple[Mode, ...] = (Mode.NAIVE, Mode.PARTIAL, Mode.SETTLED)
MIN_LANES = 2
MAX_LANES = 5


@dataclass(frozen=True, slots=True)
class SettingsChanged:
    settings: RunSettings  # the new value
    old: RunSettings
    changed: frozenset[str]  # the names of the fields that differ


@dataclass(frozen=True, slots=True)
class LanesChanged:
    names: tuple[str, ...]  # the compare lanes, left to right (added, removed, re-moded or re-titled)


@dataclass(frozen=True, slots=True)
class ViewChanged:
    comparing: bool  # the compare lanes are shown (else the single form)


@dataclass(frozen=True, slots=True)
class ActiveChanged:
    active: bool  # some lane runs / none does


@dataclass(frozen=True, slots=True)
class LaneDone:
    lane: str
    status: RunStatus  # one lane's run ended


@dataclass(frozen=True, slots=True)
class AllDone:
    statuses: tuple[RunStatus | None, ...]  # the last lane of a start ended (notes may follow)


@dataclass(frozen=True, slots=True)
class NotesReady:
    lanes: tuple[str, ...]  # these compare lanes now carry the demo provider's `server_note`


@dataclass(frozen=True, slots=True)
class UndoChanged:
    undo: str | None  # what Undo would do now ("Undo clear form", "Undo clear all lanes"), None: nothing


SessionEvent = (
    SettingsChanged | LanesChanged | ViewChanged | ActiveChanged | LaneDone | AllDone | NotesReady
    | ReplayChanged | RecordChanged | UndoChanged
)

_DOCUMENT_FIELDS = frozenset({"scenario", "document", "schema_name"})


def _ends_undo(event: SessionEvent) -> bool:
    """True for an event after which an undone clear would put values where they no longer belong."""
    if isinstance(event, (ViewChanged, LanesChanged)):
        return True
    if isinstance(event, ActiveChanged):
        return event.active  # a run started
    return isinstance(event, SettingsChanged) and bool(event.changed & _DOCUMENT_FIELDS)


def parse_modes(text: str) -> list[Mode]:
    """"naive,partial,settled" -> [Mode.NAIVE, ...] (2 to 5 of them; ValueError otherwise)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    modes = [parse_mode(name) for name in names]
    if not MIN_LANES <= len(modes) <= MAX_LANES:
        raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} modes, got {len(modes)}")
    return modes


class Session:
    """The settings and the lanes of one window (see the module docstring).

    `history` receives the single form's committed runs; compare lanes and autoplay runs only
    with `record_all_runs` (`records_history`). `source`
    replaces the network for every run (tests, replays). `clock` stamps t0 and the lanes' ends.
    `keys` (a `livefill.wire.keys.KeyStore`) gives each live run the API key of its provider at its base
    URL (None: a store reading the environment and the keyring when a live run needs a key);
    a demo run sends the demo provider's placeholder key and asks no key source.
    """

    def __init__(
        self,
        settings: RunSettings | None = None,
        *,
        history: History | None = None,
        recorder_max_bytes: int = DEFAULT_MAX_BYTES,
        source: Source | None = None,
        clock: Callable[[], float] = time.monotonic,
        fetch_notes: bool = True,
        keys: KeyStore | None = None,
    ) -> None:
        self._settings = settings or RunSettings()
        self.keys = keys
        self.history = history
        self.recorder_max_bytes = recorder_max_bytes
        self.source = source
        self.clock = clock
        self.fetch_notes = fetch_notes
        self._callbacks: list[Callable[[SessionEvent], None]] = []
        self._counter = 0
        self._comparing = False
        self._running = False
        self._notes_task: asyncio.Task[Any] | None = None
        self._cleared: tuple[str, list[tuple[FormModel, FormSnapshot]]] | None = None  # (undo text, forms)
        self.t0 = 0.0
        self.t0_wall = 0.0
        self.config: RunConfig | None = None
        self.last_seed: int | None = None
        self.single_feed = TimelineFeed(TimelineModel([SINGLE]))
        self.compare_feed = TimelineFeed(TimelineModel())
        self.single = self._make_lane(SINGLE, self._settings.mode, keep_forms=True, measure=False, feed=self.single_feed)
        self.compare_lanes: list[SessionLane] = []
        self.single_feed.model.add_lane(SINGLE, self.single.title)
        self.replay: ReplaySource | None = None  # the trace Start replays (livefill.session.replay)
        self.record_target: str | None = None  # None: not recording; "": the recordings folder
        self.record_paths: dict[str, str] = {}  # the last start's trace file of each recorded lane
        self.record_notes: list[str] = []  # the last start's lanes that could not be recorded, why
        #: compare and autoplay runs reach the history too (off: only the single form's runs do)
        self.record_all_runs = False
        self.autoplaying = False  # set by the app's autoplay loop while it runs

    # -- record and replay ----------------------------------------------------------------------

    def open_replay(self, source: ReplaySource) -> None:
        """Show `source.trace`'s document and schema; Start replays it until `leave_replay()`."""
        self._require_idle()
        self.replay = None
        self.replace(**trace_settings(source.trace))
        self.replay = source
        self._emit(ReplayChanged(source))

    def leave_replay(self, *, keep_document: bool = False, **changes: Any) -> None:
        """Back to the settings' provider and the scenario (or `changes`, e.g. scenario=...);
        `keep_document`: keep the document and schema shown (one the user chose meanwhile)."""
        self._require_idle()
        if self.replay is None:
            if changes:
                self.replace(**changes)
            return
        self.replay = None
        if not keep_document:
            changes = {"document": None, "document_name": None, "document_path": None, "schema_name": None, **changes}
        if changes:
            self.replace(**changes)
        self._emit(ReplayChanged(None))

    def set_record(self, target: str | None) -> None:
        """Record every run from now on (None: stop recording; see livefill.session.replay)."""
        if target != self.record_target:
            self.record_target = target
            self._emit(RecordChanged(target))

    # -- observing ------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[SessionEvent], None]) -> Callable[[], None]:
        """Call `callback(event)` for every session event; returns an unsubscribe function."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def _emit(self, event: SessionEvent) -> None:
        if self._cleared is not None and _ends_undo(event):
            self._cleared = None
            self._emit(UndoChanged(None))
        for cb in list(self._callbacks):
            cb(event)

    # -- clear and undo -------------------------------------------------------------------------

    @property
    def undo_text(self) -> str | None:
        """What Undo would do now ("Undo clear form" / "Undo clear all lanes"), or None."""
        return self._cleared[0] if self._cleared is not None else None

    def clear_forms(self) -> int:
        """Empty every form shown (values, states, marks, origins), undoably; how many were
        emptied. RuntimeError while a run is active."""
        if self.active:
            raise RuntimeError("the form cannot be cleared while a run is active: press Stop first")
        cleared = [(lane.form, lane.form.clear()) for lane in self.lanes if lane.has_form]
        text = "Undo clear all lanes" if self._comparing else "Undo clear form"
        self._cleared = (text, cleared)
        self._emit(UndoChanged(text))
        return len(cleared)

    @property
    def last_cleared(self) -> tuple[tuple[FormModel, FormSnapshot], ...]:
        """What the last clear emptied, (form, what it held) per form, while it can be undone."""
        return tuple(self._cleared[1]) if self._cleared is not None else ()

    def forget_clear(self) -> None:
        """Drop the clear that Undo would put back (something else was done since)."""
        if self._cleared is not None:
            self._cleared = None
            self._emit(UndoChanged(None))

    def undo_clear(self) -> bool:
        """Put back exactly what the last clear emptied; False if there is nothing to undo."""
        if self._cleared is None:
            return False
        if self.active:
            raise RuntimeError("a clear cannot be undone while a run is active")
        _, cleared = self._cleared
        self._cleared = None
        for form, snapshot in cleared:
            form.put_back(snapshot)
        self._emit(UndoChanged(None))
        return True

    # -- reading --------------------------------------------------------------------------------

    @property
    def settings(self) -> RunSettings:
        """The settings of the next run."""
        return self._settings

    @property
    def comparing(self) -> bool:
        """True while the compare lanes are shown."""
        return self._comparing

    @property
    def lanes(self) -> list[SessionLane]:
        """The lanes shown: the compare lanes, or the single form's one."""
        return list(self.compare_lanes) if self._comparing else [self.single]

    @property
    def modes(self) -> list[Mode]:
        """The compare lanes' modes, left to right."""
        return [lane.mode for lane in self.compare_lanes]

    @property
    def feed(self) -> TimelineFeed:
        """The timeline feed of the lanes shown."""
        return self.compare_feed if self._comparing else self.single_feed

    @property
    def active(self) -> bool:
        """True while any lane (shown or not) runs."""
        return any(lane.active for lane in (self.single, *self.compare_lanes))

    @property
    def form(self) -> FormModel:
        """The single form's form model (of the document shown)."""
        return self.single.form

    def lane(self, key: int | str) -> SessionLane:
        """A lane shown, by position or by name (the single lane by its name, always)."""
        if isinstance(key, int):
            return self.lanes[key]
        for lane in (self.single, *self.compare_lanes):
            if lane.name == key:
                return lane
        raise KeyError(key)

    def statuses(self) -> list[RunStatus | None]:
        """The latest status of each lane shown, left to right."""
        return [lane.status for lane in self.lanes]

    def document_key(self) -> tuple[str, str | None, str | None]:
        """What names the document shown (a form is kept per key)."""
        s = self._settings
        return (s.scenario, s.document, s.schema_name)

    def schema_name(self) -> str:
        """The schema the document is read with (the scenario's unless one was chosen)."""
        return self._settings.schema_name or get_scenario(self._settings.scenario).schema_name

    def document(self) -> str:
        """The source document (the scenario's unless one was given)."""
        s = self._settings
        return s.document if s.document is not None else get_scenario(s.scenario).document

    # -- settings intents -----------------------------------------------------------------------

    def replace(self, **changes: Any) -> RunSettings:
        """Change some settings (`session.replace(speed=100)`); the new settings."""
        return self.set_settings(self._settings.with_(**changes))

    def set_settings(self, settings: RunSettings) -> RunSettings:
        """Make `settings` the current settings. The document and the single form's mode cannot
        change while a run is active (RuntimeError)."""
        old = self._settings
        if settings.provider != old.provider and fault_problem(settings.fault, settings.provider):
            settings = settings.with_(fault=None)  # a fault the new wire cannot carry (a replay's, or blank_line off Ollama)
        changed = settings.changed(old)
        if not changed:
            return old
        if self.active and changed & (_DOCUMENT_FIELDS | {"mode"}):
            raise RuntimeError("the document and the mode cannot change while a run is active")
        self._settings = settings
        if changed & _DOCUMENT_FIELDS:
            self.show_document()
        if "mode" in changed:
            self.single.set_mode(settings.mode)
            self.single.title = settings.mode.value
            self.single_feed.model.add_lane(SINGLE, self.single.title)
        self._emit(SettingsChanged(settings, old, changed))
        return settings

    def show_document(self) -> None:
        """Every lane shows the current document (the single form its kept one, compare lanes fresh)."""
        key, schema = self.document_key(), self.schema_name()
        for lane in (self.single, *self.compare_lanes):
            lane.show(key, schema)

    # -- lane intents ---------------------------------------------------------------------------

    def enter_compare(self, modes: Iterable[Mode | str] | None = None) -> None:
        """Show the compare lanes (one per mode of `modes`, if given; else the ones kept, or the
        default three)."""
        self._require_idle()
        if modes is not None:
            wanted = [parse_mode(m) for m in modes]
            if wanted != self.modes:
                self.set_modes(wanted)
        elif not self.compare_lanes:
            self.set_modes(DEFAULT_MODES)
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
        """Replace the compare lanes with one per mode (2 to 5), left to right."""
        wanted = [parse_mode(m) for m in modes]
        if not MIN_LANES <= len(wanted) <= MAX_LANES:
            raise ValueError(f"compare needs {MIN_LANES} to {MAX_LANES} lanes, got {len(wanted)}")
        self._require_idle()
        for lane in list(self.compare_lanes):
            self._drop(lane)
        for mode in wanted:
            self._add(mode)
        self._lanes_changed()

    def add_lane(self, mode: Mode | str | None = None) -> SessionLane | None:
        """Add a compare lane on the right (default mode: partial); None if there are 5 already."""
        self._require_idle()
        if len(self.compare_lanes) >= MAX_LANES:
            return None
        lane = self._add(parse_mode(mode) if mode is not None else Mode.PARTIAL)
        self._lanes_changed()
        return lane

    def remove_lane(self, name: str) -> bool:
        """Remove compare lane `name` (False if only two are left)."""
        self._require_idle()
        if len(self.compare_lanes) <= MIN_LANES:
            return False
        lane = self.lane(name)
        if lane is self.single:
            raise ValueError("the single form's lane cannot be removed")
        self._drop(lane)
        self._lanes_changed()
        return True

    def set_lane_mode(self, name: str, mode: Mode | str) -> None:
        """Read lane `name`'s next run in `mode` (the single lane: the settings' mode)."""
        lane = self.lane(name)
        if lane is self.single:
            self.replace(mode=parse_mode(mode))
            return
        lane.set_mode(mode)

    def _require_idle(self) -> None:
        if self.active:
            raise RuntimeError("the lanes cannot change while they run")

    def _make_lane(self, name: str, mode: Mode, *, keep_forms: bool, feed: TimelineFeed, measure: bool = True) -> SessionLane:
        lane = SessionLane(
            name, mode=mode, keep_forms=keep_forms, measure=measure, recorder_max_bytes=self.recorder_max_bytes,
            source=self.source, clock=self.clock,
        )
        lane.set_timeline(feed)
        lane.subscribe(lambda event, lane=lane: self._on_lane_event(lane, event))
        lane.show(self.document_key(), self.schema_name())
        return lane

    def _add(self, mode: Mode) -> SessionLane:
        self._counter += 1
        lane = self._make_lane(f"lane{self._counter}", mode, keep_forms=False, feed=self.compare_feed)
        self.compare_lanes.append(lane)
        return lane

    def _drop(self, lane: SessionLane) -> None:
        self.compare_lanes.remove(lane)
        lane.release()

    def _lanes_changed(self) -> None:
        counts: dict[str, int] = {}
        for lane in self.compare_lanes:
            base = lane.mode.value
            counts[base] = counts.get(base, 0) + 1
            lane.title = base if counts[base] == 1 else f"{base} {counts[base]}"
        model = TimelineModel()
        for lane in self.compare_lanes:
            model.add_lane(lane.name, lane.title)
        self.compare_feed.model = model
        self._emit(LanesChanged(tuple(lane.name for lane in self.compare_lanes)))

    # -- runs -----------------------------------------------------------------------------------

    def run_config(self) -> RunConfig:
        """The RunConfig of the next run, from the settings (each lane puts its own mode in).

        Demo (`settings.live` False): the embedded demo provider at `base_url`, with the demo
        knobs and its placeholder key; no key source is asked. Live: the real provider
        (`live_endpoint()`), no demo knobs, its key (`MissingKey`, an InputError, before any
        request when Anthropic's or OpenAI's is missing), a structured-output choice the provider
        takes, and for settled / hybrid the app's embedded relay (the only relay handed the key)."""
        s = self._settings
        if self.replay is not None:
            from livefill.recording.trace import replay_config

            return replay_config(
                self.replay.trace, self.replay.trace_id, base_url=self.replay.base_url or s.base_url, mode=s.mode,
                speed=s.replay_speed, relay_token=s.relay_token, idle_timeout=s.idle_timeout,
                show_provisional_strings=s.show_provisional_strings,
                show_provisional_numbers=s.show_provisional_numbers, label=f"replay {self.replay.name}",
                structured=recorded_structured(self.replay.trace),
            )
        if s.live:
            return self._live_config()
        seed = s.seed
        if seed is None and self._comparing:
            seed = DEFAULT_SEED  # said explicitly, so every lane's request shows the same seed
        label = f"{self._what()} · {s.provider}" + (f" · fault {s.fault}" if s.fault else "")
        return replace(
            self._common_config(),
            base_url=s.base_url,
            model=s.model,
            api_key="demo",
            demo=DemoKnobs(scenario=s.scenario, speed=s.speed, seed=seed, slice=s.slicing or None, fault=s.fault),
            structured=s.structured,
            relay_url=s.relay_url,
            relay_embedded=s.relay_embedded,
            fine_grained=s.fine_grained,
            label=label,
        )

    def _common_config(self) -> RunConfig:
        """The part of a run's config that a demo and a live run take alike from the settings."""
        s = self._settings
        return RunConfig(
            mode=s.mode,
            provider=s.provider,
            schema_name=self.schema_name(),
            document=self.document(),
            relay_token=s.relay_token,
            idle_timeout=s.idle_timeout,
            show_provisional_strings=s.show_provisional_strings,
            show_provisional_numbers=s.show_provisional_numbers,
        )

    def _what(self) -> str:
        s = self._settings
        return s.document_name if s.document is not None and s.document_name else s.scenario

    def live_address(self, settings: RunSettings | None = None) -> tuple[str, str | None]:
        """Where a live run of the provider chosen goes, without its key: (base_url, model).

        base_url "" is Anthropic's / OpenAI's own address (or the one their environment variable
        names); an OpenAI-compatible server needs its base URL (InputError without one); Ollama
        defaults to OLLAMA_HOST, else http://127.0.0.1:11434. Reads no keyring."""
        from livefill.session.app_settings import default_ollama_url
        from livefill.errors import InputError

        s = settings if settings is not None else self._settings
        base_url = getattr(s, base_url_setting(s.provider))
        model = getattr(s, model_setting(s.provider))
        if s.provider == "openai-compatible" and not base_url:
            raise InputError(
                "No base URL for the OpenAI-compatible server: enter one in Settings (or start with --base-url)"
            )
        if s.provider == "ollama":
            base_url = base_url or default_ollama_url()
        return base_url, model

    def live_endpoint(
        self, *, require_key: bool = True, settings: RunSettings | None = None
    ) -> tuple[str, str, str | None]:
        """`live_address()` and the key: (base_url, api_key, model). api_key "" when there is none
        (`MissingKey` instead, with `require_key`, when the provider needs one). The key may come
        from the system keyring: call this off the GUI thread where it can wait (`settings`: the
        snapshot to read, default the current one)."""
        s = settings if settings is not None else self._settings
        provider = s.provider
        base_url, model = self.live_address(s)
        keys = self.keys if self.keys is not None else KeyStore()
        if provider == "ollama":
            key = None
        elif provider == "openai-compatible":
            key = keys.get(provider, base_url)
        else:
            # the vendor's key, or the key kept for the address its environment variable moves it
            # to (as the settings dialog keeps it: livefill.wire.keys.key_slot)
            slot_url = base_url or os.environ.get(BASE_URL_VARIABLES[provider], "").strip() or None
            key = keys.require(provider, slot_url) if require_key else keys.get(provider, slot_url)
        return base_url, key.secret if key is not None else "", model

    def _live_config(self) -> RunConfig:
        s = self._settings
        base_url, api_key, model = self.live_endpoint()
        choices = STRUCTURED_CHOICES[s.provider]
        structured = s.structured if s.structured in choices else choices[0]
        return replace(
            self._common_config(),
            base_url=base_url,
            model=model,
            api_key=api_key,
            demo=None,
            structured=structured,
            relay_url=s.base_url,  # the embedded relay: used by the lanes whose mode needs one
            relay_embedded=True,
            fine_grained=s.fine_grained and s.provider == "anthropic",
            label=f"{self._what()} · {s.provider} (live)",
        )

    def start(self, config: RunConfig | None = None) -> float | None:
        """Start every lane shown at one shared t0 (returned) with `config` (default: the one the
        settings make); None (nothing started) while a run is active."""
        if self.active:
            return None
        config = config if config is not None else self.run_config()
        t0 = self.clock()
        self.t0, self.t0_wall, self.config = t0, time.time(), config
        self.last_seed = config.demo.seed if config.demo is not None else None
        final: Any = MISSING
        if config.demo is not None and config.demo.scenario and self._settings.document is None:
            final = get_scenario(config.demo.scenario).output
            fields = rows_of(final)
        else:
            fields = spec_leaves(self.lanes[0].form)
        feed = self.feed
        feed.set_fields(fields)
        feed.model.start(t0)
        self._running = True
        started: list[SessionLane] = []
        self.record_paths, self.record_notes, taken = {}, [], set()
        try:
            for lane in self.lanes:
                lane_config = config
                if self.record_target is not None:
                    lane_config, note = lane_record_config(
                        replace(config, mode=lane.mode), target=self.record_target, lane=lane.title if self._comparing else None,
                        label=self._record_label(),
                        taken=taken,
                    )
                    if note:
                        self.record_notes.append(note)
                    if lane_config.record_path:
                        self.record_paths[lane.name] = lane_config.record_path
                history = self._history_for(lane, config)
                if self._comparing:
                    label = f"{config.label} · lane {lane.title}" if config.label else f"lane {lane.title}"
                    lane.start(lane_config, t0, label=label, final=final, history=history)
                else:
                    lane.start(lane_config, t0, final=final, history=history)
                started.append(lane)
        except Exception:
            self._running = False
            for lane in started:
                lane.stop()
            raise
        self._emit(ActiveChanged(True))
        return t0

    def _history_for(self, lane: SessionLane, config: RunConfig) -> Any:
        """Where `lane`'s committed run is recorded: the history, tagged with the view, the lane and
        the document (livefill.recording.history_entries), or None when this kind of run is not recorded."""
        if self.history is None:
            return None
        view = "autoplay" if self.autoplaying else "compare" if self._comparing else "single"
        if not self.records_history(view):
            return None
        from livefill.recording.history_entries import recording_id, run_fields

        trace = self.replay.trace if self.replay is not None else None
        kept = trace is not None and bool(trace.path) and Path(trace.path).is_file()  # (not a trace posted over HTTP)
        return self.history.tagged(**run_fields(
            self._settings, view=view, lane=lane.title if self._comparing else None, document_text=config.document,
            replay_path=str(Path(trace.path).resolve()) if kept else None,  # type: ignore[union-attr]
            replay_id=recording_id(trace) if kept else None,
        ))

    def _record_label(self) -> str:
        """What a recording's file is named after: the scenario or document; for a replay, what its
        recording was named after (not the recording's file name: a replay of a replay grew
        "…_invoice_ollama_ollama.jsonl")."""
        if self.replay is not None:
            return f"{self.replay.trace.header.get('schema_name') or 'trace'}-replay"
        if self._settings.document is None:
            return self._settings.scenario
        return self._settings.document_name or "document"

    def records_history(self, view: str) -> bool:
        """Whether a committed run of `view` ("single", "compare", "autoplay") reaches the history:
        the single form's always; compare and autoplay runs only with `record_all_runs`."""
        return self.history is not None and (view == "single" or self.record_all_runs)

    def stop(self) -> bool:
        """Stop every lane's run (each closes its own connection); False if none was running."""
        stopped = False
        for lane in (self.single, *self.compare_lanes):
            stopped = lane.stop() or stopped
        return stopped

    async def wait(self) -> list[RunStatus | None]:
        """Wait until no lane runs (and the server notes were fetched); each shown lane's status."""
        while True:
            for lane in (self.single, *self.compare_lanes):
                await lane.wait()
            task = self._notes_task
            if task is not None and not task.done():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.shield(task)
            if not self.active:
                return self.statuses()
            await asyncio.sleep(0.01)

    async def shutdown(self) -> None:
        """Cancel every run and wait until every stream is closed."""
        task = self._notes_task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for lane in (self.single, *self.compare_lanes):
            await lane.shutdown()

    def _on_lane_event(self, lane: SessionLane, event: LaneEvent) -> None:
        if isinstance(event, LaneModeChanged) and lane is not self.single:
            self._lanes_changed()
        elif isinstance(event, LaneFinished):
            self._emit(LaneDone(lane.name, event.status))
            if self.active or not self._running:
                return
            self._running = False
            config = self.config
            if self._comparing:
                self._judge_live()
                if self.fetch_notes and config is not None and config.demo is not None and config.base_url:
                    self._notes_task = asyncio.ensure_future(self._fetch_notes(config.base_url))
            self._emit(ActiveChanged(False))
            self._emit(AllDone(tuple(self.statuses())))

    def _judge_live(self) -> None:
        """With a live provider: judge every lane against the first committed result."""
        config = self.config
        if config is None or config.demo is not None:
            return
        result: Any = MISSING
        for lane in self.compare_lanes:
            run = lane.run
            if run is not None and run.status.phase is Phase.COMMITTED and run.result is not MISSING:
                result = run.result
                break
        for lane in self.compare_lanes:
            if result is not MISSING:
                lane.metrics.set_final(result)
            elif not lane.mode.spec.restores_on_failure and lane.has_form:
                lane.metrics.set_final(lane.form.document)  # a lane that keeps what it showed

    async def _fetch_notes(self, base_url: str) -> None:
        """Note under each lane what the demo provider saw of its request."""
        lanes = list(self.compare_lanes)
        notes = await request_notes(lanes, base_url, since=self.t0_wall - 0.5)
        for lane in lanes:
            if lane.name in notes:
                lane.set_server_note(notes[lane.name])
        self._emit(NotesReady(tuple(lane.name for lane in lanes)))
