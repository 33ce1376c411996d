"""The embedded relay's trace of one upstream stream, when a run asks for one (`x-livefill-record`).

The trace is the provider's wire as the relay read it: an ordinary provider trace (header from
the upstream request, credentials removed) whose trailer says how upstream ended: `complete`,
`failed` with the terminal error's message, or `stopped` when the client disconnected.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from livefill.recording.trace_writer import TraceWriter, trace_header
from livefill.relay.job import Job
from livefill.relay.records import CompleteRecord, ErrorRecord, RelayRecord
from livefill.wire.providers.request import ExtractionRequest

__all__ = ["UpstreamTrace"]

log = logging.getLogger("livefill.relay")


class UpstreamTrace:
    """The trace of `job`'s upstream stream, written to `job.record_path`."""

    def __init__(self, job: Job, run_id: str) -> None:
        self.job = job
        self.run_id = run_id
        self.trace: TraceWriter | None = None
        self.request: ExtractionRequest | None = None
        self.terminal: CompleteRecord | ErrorRecord | None = None
        self.status: int | None = None  # the upstream's HTTP error status, when it refused

    def writer(self, request: ExtractionRequest) -> TraceWriter:
        """The TraceWriter for `request` (made just before it is sent: its clock starts now)."""
        assert self.job.record_path is not None
        self.request = request
        key = request.api_key if self.job.upstream == "live" else ""
        self.trace = TraceWriter(self.job.record_path, secrets=[key] if key else [])
        return self.trace

    def begin(self, status: int | None, headers: Mapping[str, str]) -> None:
        if self.trace is None or self.trace.begun:
            return
        assert self.request is not None
        self.trace.begin(
            trace_header(
                self.request,
                status=status,
                headers=headers,
                include_document=self.job.record_document,
                mode=self.job.mode,
                run_id=self.run_id,
            )
        )

    def saw(self, records: list[RelayRecord]) -> None:
        for record in records:
            if isinstance(record, (CompleteRecord, ErrorRecord)):
                self.terminal = record

    def end(self, outcome: str, reason: str | None, *, code: str | None = None) -> None:
        if self.trace is None or self.trace.ended:
            return
        if not self.trace.begun:  # refused, or cut, before any response
            self.begin(self.status, {})
        if code is None:
            self.trace.end(outcome, reason)
        else:
            self.trace.end(outcome, reason, code=code)
        if self.trace.error:
            log.warning("relay %s: %s", self.run_id, self.trace.error)

    def finish(self) -> None:
        """The trailer from the terminal record the client was sent."""
        terminal = self.terminal
        if isinstance(terminal, CompleteRecord):
            self.end("complete", None)
        elif isinstance(terminal, ErrorRecord):
            self.end("failed", terminal.message, code=terminal.code)
        else:
            self.end("failed", "the relay ended without a terminal record")
