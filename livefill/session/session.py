"""The whole session without Qt: the settings of the next run, and the lanes that run.

A `Session` owns the current `RunSettings` (one frozen value, replaced whole) and its lanes: the
single form's `single` lane, and 2 to 5 compare lanes (livefill.session.compare) shown instead in
compare view, each with run settings of its own (livefill.session.lane_settings; the lane
intents: livefill.session.session_lanes). A window renders the session and sends it intents (the
methods below); it keeps no setting of its own. Every change is told to subscribers as a small
frozen event (livefill.session.session_events). `start()` starts every lane shown, each with its
own `RunConfig` (livefill.session.session_config), at one shared `t0`; `stop()` stops them all.

How a start, a stop, a compare run's end and Clear / Undo go: docs/notes/session.md.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from livefill.extraction.form import FormModel, FormSnapshot
from livefill.extraction.json_doc import MISSING
from livefill.extraction.modes import Mode
from livefill.observers import Observers
from livefill.recording.history import History, TaggedHistory
from livefill.recording.history_entries import run_fields
from livefill.recording.wiretap import DEFAULT_MAX_BYTES
from livefill.session.cleared_forms import ClearedForms
from livefill.session.compare import CompareLanes
from livefill.session.lane import LaneEvent, LaneFinished, LaneModeChanged, SessionLane
from livefill.session.replay import (
    RecordChanged, ReplayChanged, ReplaySource, lanes_record_configs, record_label, replayed_file, trace_settings,
)
from livefill.session.request_notes import spec_leaves
from livefill.session.run_config import RunConfig, Source
from livefill.session.run_status import RunStatus
from livefill.session.scoreboard import Scoreboard
from livefill.session.session_lanes import LaneIntents
from livefill.session.session_config import (
    expected_output, live_address, live_endpoint, settings_config, settings_document, settings_schema_name,
)
from livefill.session.session_events import (
    DOCUMENT_FIELDS, ActiveChanged, AllDone, LaneDone, NotesReady, SessionEvent, SettingsChanged, UndoChanged,
    ends_undo,
)
from livefill.session.settings import RunSettings, fault_problem
from livefill.session.timeline import TimelineModel
from livefill.session.timeline_feed import TimelineFeed, rows_of
from livefill.wire.keys import KeyStore

__all__ = ["SINGLE", "Session"]

SINGLE = "single"
"""The name of the single form's lane (in the inspector and the timeline)."""


class Session(LaneIntents):
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
        self._observers: Observers[SessionEvent] = Observers()
        self._comparing = False
        self._running = False
        self._notes_task: asyncio.Task[Any] | None = None
        self._cleared: ClearedForms | None = None  # what Undo would put back
        self.t0 = 0.0
        self.t0_wall = 0.0
        self.config: RunConfig | None = None
        self.last_seed: int | None = None
        self.single_feed = TimelineFeed(TimelineModel([SINGLE]))
        self.compare = CompareLanes(lambda name, mode, feed: self._make_lane(name, mode, keep_forms=False, feed=feed))
        self.single = self._make_lane(SINGLE, self._settings.mode, keep_forms=True, measure=False, feed=self.single_feed)
        self.single_feed.model.add_lane(SINGLE, self.single.title)
        self.replay: ReplaySource | None = None  # the trace Start replays (livefill.session.replay)
        self.record_target: str | None = None  # None: not recording; "": the recordings folder
        self.record_paths: dict[str, str] = {}  # the last start's trace file of each recorded lane
        self.record_notes: list[str] = []  # the last start's lanes that could not be recorded, why
        #: compare and autoplay runs reach the history too (off: only the single form's runs do)
        self.record_all_runs = False
        self.autoplaying = False  # set by the app's autoplay loop while it runs
        self.scoreboard = Scoreboard(self)  # each lane against the right answer; wire counts, tokens, cost

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
        leaving, self.replay = self.replay is not None, None
        if leaving and not keep_document:
            changes = {"document": None, "document_name": None, "document_path": None, "schema_name": None, **changes}
        if changes:
            self.replace(**changes)
        if leaving:
            self._emit(ReplayChanged(None))

    def set_record(self, target: str | None) -> None:
        """Record every run from now on (None: stop recording; see livefill.session.replay)."""
        if target != self.record_target:
            self.record_target = target
            self._emit(RecordChanged(target))

    # -- observing ------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[SessionEvent], None]) -> Callable[[], None]:
        """Call `callback(event)` for every session event; returns an unsubscribe function."""
        return self._observers.subscribe(callback)

    def _emit(self, event: SessionEvent) -> None:
        if self._cleared is not None and ends_undo(event):
            self._cleared = None
            self._emit(UndoChanged(None))
        self._observers.notify(event)

    # -- clear and undo -------------------------------------------------------------------------

    @property
    def undo_text(self) -> str | None:
        """What Undo would do now ("Undo clear form" / "Undo clear all lanes"), or None."""
        return self._cleared.undo if self._cleared is not None else None

    def clear_forms(self) -> int:
        """Empty every form shown (values, states, marks, origins), undoably; how many were
        emptied. RuntimeError while a run is active."""
        if self.active:
            raise RuntimeError("the form cannot be cleared while a run is active: press Stop first")
        text = "Undo clear all lanes" if self._comparing else "Undo clear form"
        self._cleared = ClearedForms.clear([lane.form for lane in self.lanes if lane.has_form], text)
        self._emit(UndoChanged(text))
        return len(self._cleared.forms)

    @property
    def last_cleared(self) -> tuple[tuple[FormModel, FormSnapshot], ...]:
        """What the last clear emptied, (form, what it held) per form, while it can be undone."""
        return self._cleared.forms if self._cleared is not None else ()

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
        cleared, self._cleared = self._cleared, None
        cleared.put_back()
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
    def compare_lanes(self) -> list[SessionLane]:
        """The compare lanes, left to right (shown or not)."""
        return self.compare.lanes

    @property
    def compare_feed(self) -> TimelineFeed:
        """The timeline feed of the compare lanes."""
        return self.compare.feed

    @property
    def modes(self) -> list[Mode]:
        """The compare lanes' modes, left to right."""
        return self.compare.modes

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
        return settings_schema_name(self._settings)

    def document(self) -> str:
        """The source document (the scenario's unless one was given)."""
        return settings_document(self._settings)

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
        if self.active and changed & (DOCUMENT_FIELDS | {"mode"}):
            raise RuntimeError("the document and the mode cannot change while a run is active")
        self._settings = settings
        if changed & DOCUMENT_FIELDS:
            self.show_document()
        if "mode" in changed:
            self.single.set_mode(settings.mode)
            self.single.title = settings.mode.value
            self.single_feed.model.add_lane(SINGLE, self.single.title)
        self._emit(SettingsChanged(settings, old, changed))
        if self.compare_lanes and self.compare.titles(settings) != [lane.title for lane in self.compare_lanes]:
            self._lanes_changed()  # what the lanes differ in changed with the session's settings
        return settings

    def show_document(self) -> None:
        """Every lane shows the current document (the single form its kept one, compare lanes fresh)."""
        key, schema = self.document_key(), self.schema_name()
        for lane in (self.single, *self.compare_lanes):
            lane.show(key, schema)

    # -- lanes (the intents: livefill.session.session_lanes) ----------------------------------

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

    # -- runs -----------------------------------------------------------------------------------

    def run_config(self) -> RunConfig:
        """The RunConfig of the next run, from the settings (each lane puts its own mode in; see
        livefill.session.session_config.settings_config): the replay of the trace opened, a demo
        run, or a live run with its key from `keys`."""
        return settings_config(self._settings, comparing=self._comparing, replay=self.replay, keys=self.keys)

    def live_address(self, settings: RunSettings | None = None) -> tuple[str, str | None]:
        """Where a live run of the provider chosen goes, without its key: (base_url, model)
        (livefill.session.session_config.live_address). Reads no keyring."""
        return live_address(settings if settings is not None else self._settings)

    def live_endpoint(
        self, *, require_key: bool = True, settings: RunSettings | None = None
    ) -> tuple[str, str, str | None]:
        """`live_address()` and the key: (base_url, api_key, model) (session_config.live_endpoint).
        The key may come from the system keyring: call this off the GUI thread where it can wait
        (`settings`: the snapshot to read, default the current one)."""
        return live_endpoint(settings if settings is not None else self._settings, self.keys, require_key=require_key)

    def lane_configs(self) -> list[RunConfig]:
        """The RunConfig of each lane shown for the next run: a compare lane's from its own
        settings (livefill.session.lane_settings; a replay: the trace, in each lane's mode),
        else `run_config()`. A live lane's key is read here (the keyring may wait)."""
        if not self._comparing or self.replay is not None:
            return [self.run_config() for _ in self.lanes]
        return [
            settings_config(s, comparing=True, keys=self.keys) for s in self.compare.run_settings(self._settings)
        ]

    def start(self, config: RunConfig | None = None, *, configs: list[RunConfig] | None = None) -> float | None:
        """Start every lane shown at one shared t0 (returned) with `config` for every lane, or
        `configs` one per lane (default: `lane_configs()`, each compare lane its own); None
        (nothing started) while a run is active."""
        if self.active:
            return None
        if configs is None:
            configs = [config for _ in self.lanes] if config is not None else self.lane_configs()
        config = configs[0]
        t0 = self.clock()
        self.t0, self.t0_wall, self.config = t0, time.time(), config
        self.last_seed = config.demo.seed if config.demo is not None else None
        # each lane's own truth: a demo lane's is known in advance, a live lane's only at its commit
        finals = [expected_output(lane_config, self._settings) for lane_config in configs]
        known = next((final for final in finals if final is not MISSING), MISSING)
        fields = rows_of(known) if known is not MISSING else spec_leaves(self.lanes[0].form)
        feed = self.feed
        feed.set_fields(fields)
        feed.model.start(t0)
        self._running = True
        started: list[SessionLane] = []
        label = record_label(self._settings, self.replay)
        self.record_paths, self.record_notes, planned = {}, [], []
        for lane, lane_config in zip(self.lanes, configs):
            recorded, paths, notes = lanes_record_configs(
                lane_config, [lane], target=self.record_target, comparing=self._comparing, label=label,
            )
            planned.append(recorded[0])
            self.record_paths.update(paths)
            self.record_notes.extend(notes)
        try:
            for lane, lane_config, final in zip(self.lanes, planned, finals):
                history = self._history_for(lane, lane_config)
                if self._comparing:
                    what = lane_config.label
                    lane.start(lane_config, t0, label=f"{what} · lane {lane.title}" if what else f"lane {lane.title}",
                               final=final, history=history)
                else:
                    lane.start(lane_config, t0, final=final, history=history)
                started.append(lane)
        except Exception:
            self._running = False
            for lane in started:
                lane.stop()
            raise
        for lane in (self.single, *self.compare_lanes):
            if lane not in started:
                lane.forget_run()  # the other view's last run is no longer the latest
        self._emit(ActiveChanged(True))
        return t0

    def _history_for(self, lane: SessionLane, config: RunConfig) -> TaggedHistory | None:
        """Where `lane`'s committed run is recorded: the history, tagged with the view, the lane and
        the document (livefill.recording.history_entries), or None when this kind of run is not recorded."""
        if self.history is None:
            return None
        view = "autoplay" if self.autoplaying else "compare" if self._comparing else "single"
        if not self.records_history(view):
            return None
        replay_path, replay_id = replayed_file(self.replay)
        settings = self._settings
        if self._comparing and self.replay is None and lane in self.compare_lanes:
            settings = self.lane_run_settings(lane.name)  # a compare lane's own (live or not)
        return self.history.tagged(**run_fields(
            settings, view=view, lane=lane.title if self._comparing else None, document_text=config.document,
            replay_path=replay_path, replay_id=replay_id,
        ))

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
                runs = [lane.run.config for lane in self.compare_lanes if lane.run is not None]
                self.compare.judge(shared=bool(runs) and all(c.demo is not None for c in runs))
                demo = next((c for c in runs if c.demo is not None and c.base_url), None)
                if self.fetch_notes and demo is not None:
                    self._notes_task = asyncio.ensure_future(self._fetch_notes(demo.base_url))
            self._emit(ActiveChanged(False))
            self._emit(AllDone(tuple(self.statuses())))

    async def _fetch_notes(self, base_url: str) -> None:
        """Note under each compare lane what the demo provider saw of its request."""
        self._emit(NotesReady(await self.compare.fetch_notes(base_url, since=self.t0_wall - 0.5)))
