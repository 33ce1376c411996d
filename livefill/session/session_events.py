"""What a session tells its subscribers: one small frozen event per change.

A window renders the session (livefill.session.session.Session) and follows these; a lane's own
run events come from `SessionLane.subscribe` (livefill.session.lane).
"""

from __future__ import annotations

from dataclasses import dataclass

from livefill.session.replay import RecordChanged, ReplayChanged
from livefill.session.run_status import RunStatus
from livefill.session.settings import RunSettings

__all__ = [
    "DOCUMENT_FIELDS",
    "ActiveChanged",
    "AllDone",
    "LaneDone",
    "LanesChanged",
    "NotesReady",
    "SessionEvent",
    "SettingsChanged",
    "UndoChanged",
    "ViewChanged",
    "ends_undo",
]


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

DOCUMENT_FIELDS = frozenset({"scenario", "document", "schema_name"})
"""The settings that name the document shown (a change of one shows another document)."""


def ends_undo(event: SessionEvent) -> bool:
    """True for an event after which an undone clear would put values where they no longer belong."""
    if isinstance(event, (ViewChanged, LanesChanged)):
        return True
    if isinstance(event, ActiveChanged):
        return event.active  # a run started
    return isinstance(event, SettingsChanged) and bool(event.changed & DOCUMENT_FIELDS)
