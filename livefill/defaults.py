"""livefill's defaults, each in one place: what a run, a relay and a server assume unless told."""

from __future__ import annotations

__all__ = ["HEAD_TIMEOUT", "IDLE_TIMEOUT", "MAX_NESTING"]

#: Seconds a stream may stay silent before the run ends with `timeout` (the app, `livefill
#: extract`, a relay's own limit on its upstream, the relay client). 0 or None: no limit.
IDLE_TIMEOUT: float = 20.0

#: Seconds a local server waits for a request's head before it closes the connection.
HEAD_TIMEOUT: float = 10.0

#: The most containers a model's answer may have open at once (an object in an array in an object
#: ... counts each). A form is a few levels deep and pydantic validates about 200 at most; a deeper
#: answer ends the run with one clear error at its bracket, before its cost could grow with depth.
MAX_NESTING: int = 64
