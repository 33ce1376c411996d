"""What the demo provider saw of each lane's request: its request log matched to the lanes.

Every lane tags its request with its run id (`x-demo-tag` directly; a relay lane through the relay
body's `demo.tag`, which the relay forwards upstream). `match_entries` finds each lane's entry of
the request log (`/_demo/requests`); untagged entries (an older relay) go to relay lanes in start
order. `request_notes` polls the log until every lane's request has ended (or 2 s have passed; a
request not in the log after `ARRIVAL_WAIT` was never sent) and returns "server stopped after 37 of
120 tokens" per lane.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from livefill.embedded.client import ARRIVAL_WAIT, demo_requests, log_client, server_note
from livefill.extraction.form import FormModel
from livefill.session.lane import SessionLane

__all__ = ["match_entries", "request_notes", "spec_leaves"]


async def request_notes(lanes: Sequence[SessionLane], base_url: str, *, since: float, wait: float = 2.0) -> dict[str, str]:
    """Each lane's `server_note`, by lane name (lanes whose request was not found are left out)."""
    began = time.monotonic()
    deadline, arrival = began + wait, began + min(wait, ARRIVAL_WAIT)
    async with log_client() as client:  # one client for every poll
        while True:
            try:
                log = await demo_requests(base_url, client=client)
            except Exception:  # noqa: BLE001 - a missing note must never break anything
                return {}
            entries = [e for e in log if float(e.get("started_at") or 0) >= since]
            matched = match_entries(lanes, entries)
            now = time.monotonic()
            # a lane whose request the log has not seen by `arrival` never sent it (stopped while connecting)
            ended = all(
                (e.get("disconnected") or e.get("finished")) if e is not None else now >= arrival for e in matched.values()
            )
            if ended or now > deadline:
                break
            await asyncio.sleep(0.05)
    return {name: server_note(entry) for name, entry in matched.items() if entry is not None}


def match_entries(lanes: Sequence[SessionLane], entries: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Each lane's request-log entry: by its run id tag, else (relay lanes) untagged ones in order."""
    out: dict[str, dict[str, Any] | None] = {}
    untagged = [e for e in entries if not e.get("tag")]  # (one tagged with another run's id is that run's)
    untagged.sort(key=lambda e: float(e.get("started_at") or 0))
    for lane in lanes:
        run = lane.run
        if run is None:
            out[lane.name] = None
            continue
        tagged = [e for e in entries if e.get("tag") == run.status.run_id]
        if tagged:
            out[lane.name] = tagged[-1]
        elif lane.mode.needs_relay and untagged:
            out[lane.name] = untagged.pop(0)
        else:
            out[lane.name] = None
    return out


def spec_leaves(form: FormModel) -> list[str]:
    """Top-level leaf pointers of a form (its tables and groups' own pointers), in schema order."""
    out: list[str] = []
    stack = list(reversed(form.fields))
    while stack:
        spec = stack.pop()
        if spec.children and spec.kind.value == "object":
            stack.extend(reversed(spec.children))
        else:
            out.append(spec.pointer)
    return out
