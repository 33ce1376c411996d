"""livefill's defaults, each in one place: what a run, a relay and a server assume unless told."""

from __future__ import annotations

__all__ = ["HEAD_TIMEOUT", "IDLE_TIMEOUT"]

#: Seconds a stream may stay silent before the run ends with `timeout` (the app, `livefill
#: extract`, a relay's own limit on its upstream, the relay client). 0 or None: no limit.
IDLE_TIMEOUT: float = 20.0

#: Seconds a local server waits for a request's head before it closes the connection.
HEAD_TIMEOUT: float = 10.0
