"""What a session needs to record its runs and to replay a recorded trace (Qt-free).

    source = ReplaySource(trace, trace_id, base_url)     # a trace the demo provider keeps by id
    session.open_replay(source)                          # Start now replays it (any mode, any lane)
    session.set_record("")                               # record every run into recordings_dir()

How this works
--------------
Replaying: `trace_settings(trace)` are the settings changes that show the trace's document and
schema (a schema that is not bundled is written once to a file under the temp directory, named
by its SHA-256, since a setting names a schema by a bundled name or a file). While a session holds a
`ReplaySource`, its run config is `replay_config(...)` in the viewer's mode and at
`RunSettings.replay_speed`; every compare lane reads the same trace.

Recording: `record_target` is None (off), "" (a new file per lane and run in `recordings_dir()`),
a directory (the same, there) or a file path (the single form's trace; compare lanes add
`-<lane>` to its stem; a file already there gets `-2`, `-3`, ... rather than being overwritten).
`lanes_record_configs` gives each lane of a start its `record_path` (`lane_record_config`; a
settled / hybrid lane's trace is written by the embedded relay: the provider's wire it reads), or
none with a one-line reason when the lane reads a relay deployed on its own, which cannot record.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from livefill.demo.protocol import DemoKnobs
from livefill.extraction.modes import Mode
from livefill.recording.history_entries import recording_id
from livefill.recording.recordings import free_path, new_trace_path
from livefill.recording.trace import Trace, replay_ending
from livefill.resources import SCENARIOS_DIR
from livefill.session.lane import SessionLane
from livefill.session.run_config import RunConfig, relay_can_record
from livefill.session.settings import RunSettings

__all__ = [
    "RecordChanged",
    "ReplayChanged",
    "ReplaySource",
    "lane_record_config",
    "lanes_record_configs",
    "record_label",
    "recorded_structured",
    "recording_name",
    "replay_config",
    "replayed_file",
    "trace_settings",
]


@dataclass(frozen=True, slots=True)
class ReplaySource:
    """A loaded trace, the id the demo provider keeps it by, and that provider's base URL
    ("" : the session's base URL)."""

    trace: Trace
    trace_id: str
    base_url: str = ""

    @property
    def name(self) -> str:
        return recording_name(self.trace)


def recording_name(trace: Trace) -> str:
    """A recording's file name; a bundled one's with its scenario ("weather/trace-smollm2.jsonl":
    the four bundled recordings share one file name)."""
    path = Path(trace.path) if trace.path else None
    if path is not None and path.parent.parent == SCENARIOS_DIR:
        return f"{path.parent.name}/{path.name}"
    return trace.name or (path.name if path is not None else "") or "trace"


@dataclass(frozen=True, slots=True)
class ReplayChanged:
    replay: ReplaySource | None  # the trace Start replays now (None: back to the settings' provider)


@dataclass(frozen=True, slots=True)
class RecordChanged:
    target: str | None  # None: not recording; "": the recordings folder; else a directory or file


def recorded_structured(trace: Trace) -> str:
    """How the recorded request forced structure ("tools", "json_schema" or "json_object"), read
    from its body: a replay must ask the same way, or the stream would be read as the wrong shape."""
    body = trace.header.get("request") or {}
    if not isinstance(body, dict) or body.get("tools") or body.get("tool_choice"):
        return "tools"
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        return str(fmt["type"])
    text = body.get("text")
    if isinstance(text, dict) and isinstance(text.get("format"), dict):
        return "json_schema"
    if "format" in body:  # Ollama: "json" (json_object) or a schema
        return "json_object" if body["format"] == "json" else "json_schema"
    return "tools"


def _schema_file(schema: dict[str, Any]) -> str:
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "livefill-trace-schemas"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"schema-{digest}.json"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return str(path)


def trace_settings(trace: Trace) -> dict[str, Any]:
    """The RunSettings changes that show `trace`'s document and schema."""
    source = trace.schema_source()
    schema = source.name if source.bundled else _schema_file(trace.schema)
    name = recording_name(trace)
    document = trace.document
    if document is None:
        document = ""
        name = f"{name} (the trace keeps only the document's SHA-256)"
    return {"document": document, "document_name": f"replay: {name}", "document_path": None, "schema_name": schema}


def replay_config(
    trace: Trace,
    trace_id: str,
    *,
    base_url: str,
    mode: Mode | str = Mode.PARTIAL,
    speed: float = 1.0,
    relay_token: str | None = None,
    **config: Any,
) -> RunConfig:
    """The RunConfig that replays `trace` (added to the demo provider at `base_url` as `trace_id`)
    in `mode`, at `speed` (1 = as recorded, 0 = as fast as possible). Further keyword arguments are
    RunConfig fields."""
    source = trace.schema_source()
    config.setdefault("replay_ending", replay_ending(trace))
    return RunConfig(
        mode=Mode(mode),
        provider=trace.provider,
        base_url=base_url,
        schema_name=source.name if source.bundled else "",
        schema_json=None if source.bundled else source.schema_json,
        document=trace.document or "",
        model=trace.model or None,
        demo=DemoKnobs(replay=trace_id, replay_speed=speed),
        relay_token=relay_token,
        **config,
    )


def record_label(settings: RunSettings, replay: ReplaySource | None) -> str:
    """What a recording's file is named after: the scenario or document; for a replay, what its
    recording was named after (not the recording's file name: a replay of a replay grew
    "…_invoice_ollama_ollama.jsonl")."""
    if replay is not None:
        return f"{replay.trace.header.get('schema_name') or 'trace'}-replay"
    if settings.document is None:
        return settings.scenario
    return settings.document_name or "document"


def replayed_file(replay: ReplaySource | None) -> tuple[str | None, str | None]:
    """(path, recording id) of the trace a run replays, when it is a file here (not a trace
    posted over HTTP); (None, None) otherwise."""
    trace = replay.trace if replay is not None else None
    if trace is None or not trace.path or not Path(trace.path).is_file():
        return None, None
    return str(Path(trace.path).resolve()), recording_id(trace)


def lane_record_config(
    config: RunConfig, *, target: str | None, lane: str | None, label: str, taken: set[str] | None = None
) -> tuple[RunConfig, str | None]:
    """`config` (a RunConfig, the lane's mode put in) with the lane's `record_path`, and a
    one-line note when the lane cannot be recorded. `lane`: the compare lane's title (None: the
    single form). `taken`: paths already given out in this start (so lanes never share one)."""
    if target is None:
        return replace(config, record_path=None), None
    if config.mode.spec.needs_relay and not relay_can_record(config):
        who = f"lane {lane}" if lane else "this run"
        return replace(config, record_path=None), (
            f"{who} is not recorded: a relay deployed on its own cannot record; record in partial mode"
        )
    taken = taken if taken is not None else set()
    words = label if lane is None else f"{label}-{lane}"
    chosen = Path(target).expanduser() if target else None
    if chosen is None or chosen.is_dir() or target.endswith(("/", "\\")):
        path = new_trace_path(words, config.provider, directory=chosen)  # already free
    else:
        path = chosen if lane is None else chosen.with_name(f"{chosen.stem}-{lane.replace(' ', '-')}{chosen.suffix}")
        path = free_path(path)
    while str(path) in taken:
        path = free_path(path.with_name(f"{path.stem}-x{path.suffix}"))
    taken.add(str(path))
    return replace(config, record_path=str(path)), None


def lanes_record_configs(
    config: RunConfig, lanes: Sequence[SessionLane], *, target: str | None, comparing: bool, label: str
) -> tuple[list[RunConfig], dict[str, str], list[str]]:
    """Each lane's config for one start (with its `record_path` while recording into `target`;
    `comparing`: the lanes' files are told apart by their titles), the trace file of each recorded
    lane by its name, and a one-line note for each lane that cannot be recorded."""
    if target is None:
        return [config for _ in lanes], {}, []
    configs: list[RunConfig] = []
    paths: dict[str, str] = {}
    notes: list[str] = []
    taken: set[str] = set()
    for lane in lanes:
        lane_config, note = lane_record_config(
            replace(config, mode=lane.mode), target=target, lane=lane.title if comparing else None, label=label,
            taken=taken,
        )
        if note:
            notes.append(note)
        if lane_config.record_path:
            paths[lane.name] = lane_config.record_path
        configs.append(lane_config)
    return configs, paths, notes
