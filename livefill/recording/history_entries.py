"""What a history record says, for a person (a row of the History panel) and for the form
(which document, which schema, which values to open).

How this works
--------------
`summarize(entry)` turns one `livefill.recording.history.HistoryEntry` into a `RunSummary`: when (local time),
what was read (the document's name or the scenario), the mode, the wire, the outcome and which
view ran it. Records written before the view and document fields existed still read: their
`label` ("invoice · anthropic · fault …") names the scenario.

`reopen_plan(record)` says how to show a record again: the settings that bring back its document
and schema (a bundled scenario, or a document file of one's own, found again by its path and
checked by its SHA-256), and the extraction to load into that document's form. What cannot be
brought back (a pasted text, a file since moved) is one sentence in `problem`; the values are
still there to see. A replayed run names its recording (`replay_path`, and `replay_id`: which
recorded run the file held); it is opened again with the recording's document and schema
(`trace_path`), as File → Recordings shows them, unless the file now holds another run.

`run_fields(settings, ...)` are the fields a session adds to each record it writes, so that the
record can be opened again.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from livefill.recording.history import HistoryEntry
from livefill.recording.trace import Trace
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario

__all__ = ["RunDocument", "RunSummary", "ReopenPlan", "summarize", "newest_first", "recording_id", "reopen_plan", "run_fields",
           "text_sha256"]

VIEWS = {"single": "single form", "compare": "compare", "autoplay": "autoplay"}


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One history record as a row: every column a short string."""

    key: str
    when: str  # local time: "today 15:53", "29 Nov 09:12", "2025-11-30 15:53"
    what: str  # the document's name, or the scenario
    mode: str
    wire: str  # the provider wire, "(live)" for a real provider
    outcome: str  # "committed · 14 values", and the view when not the single form
    view: str  # single form / compare lane X / autoplay
    values: int


@dataclass(frozen=True, slots=True)
class ReopenPlan:
    """How to show a record again (see the module docstring)."""

    settings: dict[str, Any] = field(default_factory=dict)  # for Session.replace
    document_path: str | None = None  # a document file to read first (then put in settings)
    document_sha256: str | None = None  # what its text hashed to when the run read it
    extraction: Any = None
    problem: str | None = None  # why it cannot be opened into the form
    trace_path: str | None = None  # a replayed run: the recording whose document and schema to show
    trace_id: str | None = None  # ... and the recorded run it must still hold (`recording_id`)


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _count(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count(v) for v in value)
    return 0 if value is None else 1


def _when(at: Any) -> str:
    if not isinstance(at, str) or not at:
        return "?"
    try:
        moment = _dt.datetime.strptime(at, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return at
    local = moment.astimezone()
    now = _dt.datetime.now().astimezone()
    if local.date() == now.date():
        return local.strftime("today %H:%M")
    if local.year == now.year:
        return local.strftime("%d %b %H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


def _scenario_of(record: Mapping[str, Any]) -> str | None:
    name = record.get("scenario")
    if isinstance(name, str) and name in SCENARIO_NAMES:
        return name
    if record.get("document_name") or record.get("document_path"):
        return None
    label = record.get("label")
    first = label.split(" · ")[0].strip() if isinstance(label, str) else ""
    return first if first in SCENARIO_NAMES else None


_RUN_FIELDS = frozenset({"at", "run", "label", "extraction", "provider", "mode"})


def summarize(entry: HistoryEntry) -> RunSummary:
    """The row of one record (see the module docstring). A JSON object with none of a run's
    fields (a line written by hand or by another program) is a row that says so, to be deleted."""
    r = entry.record
    if not _RUN_FIELDS.intersection(r):
        return RunSummary(key=entry.key, when="", what=f"line {entry.line}", mode="", wire="",
                          outcome="not a run's record", view="", values=0)
    what = r.get("document_name") or _scenario_of(r) or (str(r.get("label") or "").split(" · ")[0]) or "?"
    provider = str(r.get("provider") or "?")
    wire = f"{provider} (live)" if r.get("live") or "(live)" in str(r.get("label") or "") else provider
    view_key = str(r.get("view") or "single")
    view = VIEWS.get(view_key, view_key)
    if view_key == "compare" and r.get("lane"):
        view = f"compare lane {r['lane']}"
    values = _count(r.get("extraction"))
    outcome = f"committed · {values} value{'s' if values != 1 else ''}"
    if view_key != "single":
        outcome += f" · {view}"
    return RunSummary(
        key=entry.key, when=_when(r.get("at")), what=str(what), mode=str(r.get("mode") or "?"), wire=wire,
        outcome=outcome, view=view, values=values,
    )


def newest_first(entries: list[HistoryEntry]) -> list[HistoryEntry]:
    """The entries, newest first (by time written; the file's order breaks ties)."""
    return [e for _, e in sorted(enumerate(entries), key=lambda pair: (str(pair[1].record.get("at") or ""), pair[0]), reverse=True)]


def reopen_plan(record: Mapping[str, Any]) -> ReopenPlan:
    """How to bring `record` back into the form (see the module docstring)."""
    extraction = record.get("extraction")
    if not isinstance(extraction, dict):
        return ReopenPlan(problem="this record holds no extracted object to open")
    schema = record.get("schema")
    schema = schema if isinstance(schema, str) and schema else None
    scenario = _scenario_of(record)
    if scenario is not None:
        own_schema = None if schema in (None, get_scenario(scenario).schema_name) else schema
        if own_schema is not None and not Path(own_schema).is_file() and own_schema.endswith(".json"):
            return ReopenPlan(extraction=extraction,
                              problem=f"its schema file {own_schema} is no longer there")
        return ReopenPlan(
            settings={"scenario": scenario, "document": None, "document_name": None, "document_path": None,
                      "schema_name": own_schema},
            extraction=extraction,
        )
    name = record.get("document_name") or "the document"
    path = record.get("document_path")
    replayed = record.get("replay_path")
    if isinstance(replayed, str) and replayed:
        if not Path(replayed).is_file():
            return ReopenPlan(extraction=extraction, problem=f"its recording {replayed} is no longer there")
        sha = record.get("document_sha256")
        trace_id = record.get("replay_id")
        return ReopenPlan(trace_path=replayed, document_sha256=sha if isinstance(sha, str) else None,
                          trace_id=trace_id if isinstance(trace_id, str) else None, extraction=extraction)
    if not isinstance(path, str) or not path:
        return ReopenPlan(extraction=extraction,
                          problem=f"{name} was not read from a file (pasted text is not kept), so it cannot be opened again")
    if not Path(path).is_file():
        return ReopenPlan(extraction=extraction, problem=f"{name} is no longer at {path}")
    if schema is not None and schema.endswith(".json") and not Path(schema).is_file():
        return ReopenPlan(extraction=extraction, problem=f"its schema file {schema} is no longer there")
    sha = record.get("document_sha256")
    return ReopenPlan(
        settings={"schema_name": schema}, document_path=path,
        document_sha256=sha if isinstance(sha, str) else None, extraction=extraction,
    )


def recording_id(trace: Trace) -> str:
    """Which recorded run a trace holds: its run id, else when it started (a file written over
    with another recording says another)."""
    header = trace.header
    return str(header.get("run_id") or header.get("started_at") or "")


class RunDocument(Protocol):
    """What a run read and from whom, as a session's settings say it
    (`livefill.session.settings.RunSettings`, a layer above this one, has these)."""

    @property
    def scenario(self) -> str: ...
    @property
    def document(self) -> str | None: ...
    @property
    def document_name(self) -> str | None: ...
    @property
    def document_path(self) -> str | None: ...
    @property
    def live(self) -> bool: ...


def run_fields(settings: RunDocument, *, view: str, lane: str | None = None, document_text: str | None = None,
               replay_path: str | None = None, replay_id: str | None = None) -> dict[str, Any]:
    """What a session adds to each record it writes (`History.tagged(**...)`): the view and
    lane, what names the document (scenario, or a file's name, path and text hash), and the
    recording a replayed run read."""
    out: dict[str, Any] = {"view": view}
    if lane:
        out["lane"] = lane
    if replay_path:
        out["replay_path"] = replay_path
        if replay_id:
            out["replay_id"] = replay_id
    if settings.live:
        out["live"] = True
    if settings.document is None:
        out["scenario"] = settings.scenario
    else:
        out["document_name"] = settings.document_name or "Your document"
        if settings.document_path:
            out["document_path"] = settings.document_path
        out["document_sha256"] = text_sha256(document_text if document_text is not None else settings.document)
    return out
