"""A run's phases, what moves between them (one table), and the status snapshot observers see.

Kept apart from livefill.session.run so that widgets that render a status import only this small module.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from livefill.extraction.modes import Mode

__all__ = ["Phase", "Trigger", "TRANSITIONS", "RunStatus"]


class Phase(Enum):
    READY = "ready"  # created, not started
    CONNECTING = "connecting"  # the request is out; no content has arrived yet
    STREAMING = "streaming"  # content is arriving into the draft
    COMMITTED = "committed"  # terminal arrived and the object validated: the form holds the result
    STOPPED = "stopped"  # the user stopped it and the connection is closed; the form is restored
    FAILED = "failed"  # it ended without a result (see the reason); the form is restored

    @property
    def active(self) -> bool:
        """True while the run is connecting or streaming."""
        return self in (Phase.CONNECTING, Phase.STREAMING)

    @property
    def final(self) -> bool:
        """True once the run has ended."""
        return self in (Phase.COMMITTED, Phase.STOPPED, Phase.FAILED)


class Trigger(Enum):
    START = "start"  # run() began and the request is being sent
    CONTENT = "content"  # a content event (delta, record) arrived
    COMMIT = "commit"  # terminal arrived and the object validated
    STOP = "stop"  # the user's cancel finished: the source is closed
    FAIL = "fail"  # any other ending


TRANSITIONS: dict[tuple[Phase, Trigger], Phase] = {
    (Phase.READY, Trigger.START): Phase.CONNECTING,
    (Phase.READY, Trigger.STOP): Phase.STOPPED,  # stopped before run() began: nothing was sent
    (Phase.READY, Trigger.FAIL): Phase.FAILED,
    (Phase.CONNECTING, Trigger.CONTENT): Phase.STREAMING,
    (Phase.CONNECTING, Trigger.COMMIT): Phase.COMMITTED,
    (Phase.CONNECTING, Trigger.STOP): Phase.STOPPED,
    (Phase.CONNECTING, Trigger.FAIL): Phase.FAILED,
    (Phase.STREAMING, Trigger.CONTENT): Phase.STREAMING,
    (Phase.STREAMING, Trigger.COMMIT): Phase.COMMITTED,
    (Phase.STREAMING, Trigger.STOP): Phase.STOPPED,
    (Phase.STREAMING, Trigger.FAIL): Phase.FAILED,
}
"""(phase, trigger) -> next phase. A pair not in the table is a bug (UsageError)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RunStatus:
    """A snapshot of a run for the status line and the run log."""

    run_id: str
    mode: Mode
    phase: Phase = Phase.READY
    reason: str = ""  # why it ended (or what it is doing), for a person
    error_code: str | None = None  # the relay v1 code of the failure, when it failed
    pointer: str | None = None  # the field a validation failure is about
    bytes_received: int = 0
    deltas_received: int = 0  # the provider stream's content deltas (one may carry several model tokens)
    records_received: int = 0  # the relay's checked records (settled / hybrid modes)
    stop_reason: str | None = None  # the provider's raw stop reason, when one arrived
    server_note: str | None = None  # what the demo provider saw, after a stop
    started_at: float | None = None  # time.time() at start
    elapsed: float = 0.0  # seconds from start to end (or to now, while active)

    @property
    def tokens_received(self) -> int:
        """Content pieces received: deltas plus records (not model tokens: see the two counts)."""
        return self.deltas_received + self.records_received
