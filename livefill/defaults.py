"""livefill's defaults, each in one place: what a run, a relay and a server assume unless told."""

from __future__ import annotations

__all__ = ["H11_HEAD_BUFFER", "HEAD_TIMEOUT", "IDLE_TIMEOUT", "MAX_HEAD_BYTES", "MAX_NESTING"]

#: Seconds a stream may stay silent before the run ends with `timeout` (the app, `livefill
#: extract`, a relay's own limit on its upstream, the relay client). 0 or None: no limit.
IDLE_TIMEOUT: float = 20.0

#: Seconds a local server waits for a request's head before it closes the connection.
HEAD_TIMEOUT: float = 10.0

#: The largest request head (path, query and headers) any local server takes: beyond it, 431
#: (livefill.serving.guard).
MAX_HEAD_BYTES: int = 16 * 1024

#: uvicorn's h11 buffer for a head still arriving (livefill.serving.runner, livefill.relay.serve):
#: above MAX_HEAD_BYTES, so that a head a little too long reaches the guard and its clear 431
#: (h11 itself answers a bare 400 and closes, which a client may see as a reset).
H11_HEAD_BUFFER: int = 4 * MAX_HEAD_BYTES

#: The most containers a model's answer may have open at once (an object in an array in an object
#: ... counts each). A form is a few levels deep and pydantic validates about 200 at most; a deeper
#: answer ends the run with one clear error at its bracket, before its cost could grow with depth.
MAX_NESTING: int = 64
