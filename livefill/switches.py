"""Every `LIVEFILL_*` environment variable livefill reads, with its meaning, in one place.

Modules read a switch through the functions here, when they need it (never at import time), so a
test or a deployment can set one before starting a server or a run. API keys are read by
`livefill.wire.keys` (LIVEFILL_API_KEY_<PROVIDER> is documented there with the key order).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["SWITCHES", "Switch", "flag", "number", "text"]


@dataclass(frozen=True)
class Switch:
    name: str
    meaning: str


#: Every switch, by name. tests/test_foundations.py checks that no module reads one not listed.
SWITCHES: dict[str, Switch] = {
    s.name: s
    for s in (
        Switch("LIVEFILL_HEAD_TIMEOUT", "seconds a local server waits for a request head (default 10)"),
        Switch("LIVEFILL_ALLOWED_HOSTS", "comma-separated Host names a relay deployed with uvicorn also accepts"),
        Switch("LIVEFILL_MAX_BODY_BYTES", "largest request body a relay deployed with uvicorn accepts"),
        Switch("LIVEFILL_RELAY_TOKEN", "the relay's bearer token (livefill-server, livefill-relay, create_relay_app)"),
        Switch("LIVEFILL_RELAY_DEMO_URL", "the demo provider a relay deployed with uvicorn forwards demo runs to"),
        Switch("LIVEFILL_RELAY_IDLE_TIMEOUT", "a relay's idle limit on its upstream, in seconds (default 20)"),
        Switch("LIVEFILL_RELAY_TIMING_LOG", "a file a relay appends per-record timing lines to (benchmarks)"),
        Switch("LIVEFILL_READ_THREAD", "1: runs read their streams on a thread of their own (off by default)"),
        Switch("LIVEFILL_RUN_WORKER", "process: every run reads, parses and fills a form mirror in a worker process, the GUI gets one batch a frame; inprocess: none does; unset: the app (POSIX) reads a run in a warm worker while a core is spare for it, the command line and the library in their own process"),
        Switch("LIVEFILL_WORKER_NICENESS", "how far below the app's a run worker's scheduling priority is, 0-19 (default 10: the window goes first; 0: a worker competes as the app does, on a machine busy with other work)"),
        Switch("LIVEFILL_DEMO_SERVER", "thread: the app's embedded demo provider and relay run on a thread of the app's process, not (the default on POSIX) in a process of their own"),
        Switch("LIVEFILL_READ_PACE_MS", "with LIVEFILL_READ_THREAD: how often the reading thread wakes the caller"),
        Switch("LIVEFILL_NET_BACKEND", "anyio: httpcore's own network backend instead of asyncio transports"),
        Switch("LIVEFILL_REPORT", "1: the app prints launch and run timings to stderr (benchmarks)"),
        Switch("LIVEFILL_CHECK_THREADS", "1: the app reports threads still running at exit (tests)"),
        Switch("LIVEFILL_STATE_FILE", "a file the app writes what its window shows to, as JSON, while it changes (tests; livefill.gui.state_dump)"),
        Switch("LIVEFILL_DEMO_PICTURES", "a folder the demo script's walk on a real X server also saves its pictures to (tests)"),
        Switch("LIVEFILL_LLAMA_MODEL", "path of the GGUF model the real-server tests use"),
        Switch("LIVEFILL_MODEL_CACHE", "scripts/install-llama-server.sh: where the model goes"),
        Switch("LIVEFILL_WHEEL_CACHE", "scripts/install-llama-server.sh: where built wheels are kept"),
    )
}


def _raw(name: str, environ: Mapping[str, str] | None) -> str:
    if name not in SWITCHES:
        raise KeyError(f"{name} is not a declared livefill switch (livefill/switches.py)")
    return (os.environ if environ is None else environ).get(name, "").strip()


def text(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The switch's value, or None when unset or blank."""
    return _raw(name, environ) or None


def flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the switch is set to something other than '', '0', 'false' or 'no'."""
    return _raw(name, environ).lower() not in ("", "0", "false", "no")


def number(name: str, default: float, environ: Mapping[str, str] | None = None, *, positive: bool = True) -> float:
    """The switch as a number; `default` when unset, not a number, or (with `positive`) not > 0."""
    try:
        value = float(_raw(name, environ) or default)
    except ValueError:
        return default
    return value if value > 0 or not positive else default
