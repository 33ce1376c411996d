"""How one relay app behaves: `RelaySettings`, read-only, from arguments or LIVEFILL_RELAY_*."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from livefill import switches
from livefill.defaults import IDLE_TIMEOUT
from livefill.errors import UsageError
from livefill.wire.taps import WireTap

__all__ = ["RelaySettings"]


@dataclass(frozen=True, kw_only=True)
class RelaySettings:
    """How one relay app behaves. Read-only: nothing is kept between requests.

    `token`: the bearer token clients must send. `accept_upstream_key`: take a live provider's key
    from the `x-livefill-upstream-key` header of a loopback peer (the app's embedded relay only).
    `demo_base_url`: where the demo upstream is; None with `demo_is_local` (the relay mounted beside
    the demo provider, `routes()`): this same server, at the address the request came in on; None
    otherwise: "upstream": "demo" requests get an `upstream_error` saying no demo provider is
    configured. `idle_timeout`: seconds of upstream silence (keep-alives do not count) before the
    run ends with `timeout`. `env`: where live-provider keys are read (default os.environ).
    `timing_log`: a file to append per-record timings to (opt-in). `upstream_tap`: a factory `run_id
    -> WireTap` observing every upstream stream (tests). `accept_record`: take the
    `x-livefill-record` header of a loopback peer (the app's embedded relay only).
    """

    token: str
    accept_upstream_key: bool = False
    accept_record: bool = False
    demo_base_url: str | None = None
    demo_is_local: bool = False
    idle_timeout: float = IDLE_TIMEOUT
    env: Mapping[str, str] | None = None
    timing_log: str | None = None
    upstream_tap: Callable[[str], WireTap] | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RelaySettings:
        """Settings from LIVEFILL_RELAY_* variables (livefill.switches); UsageError if
        LIVEFILL_RELAY_TOKEN is unset."""
        token = switches.text("LIVEFILL_RELAY_TOKEN", environ)
        if not token:
            raise UsageError(
                "set LIVEFILL_RELAY_TOKEN: every worker of a deployed relay must share one bearer token"
            )
        return cls(
            token=token,
            demo_base_url=switches.text("LIVEFILL_RELAY_DEMO_URL", environ),
            idle_timeout=switches.number("LIVEFILL_RELAY_IDLE_TIMEOUT", IDLE_TIMEOUT, environ),
            timing_log=switches.text("LIVEFILL_RELAY_TIMING_LOG", environ),
        )
