"""Running `livefill compare`: every lane at once, each its own request, then one `LaneResult` each.

`run_compare` plans the lanes (`compare_plan`), starts the embedded demo provider + relay when a
lane needs it (as `livefill extract` does, with its log redaction and SDK prewarm), runs them
(`run_lanes`) and prints them (`compare_output`). Each lane is a `SessionLane` (livefill.session.lane, as the window's compare lanes are) showing a
form of its own, started with its own `RunConfig` (livefill.cli.compare_plan) at one shared t0
on one event loop: the lanes' streams are independent (stopping one closes only its connection:
`run_lanes(..., on_started=...)` hands the lanes out so a caller may). Each lane has a `UsageTap`
on its wire (livefill.wire.usage); its figures are `compare_result.lane_result`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TextIO

from livefill.cli.compare_args import PROG
from livefill.cli.compare_output import print_json, print_table
from livefill.cli.compare_plan import ComparePlan, lane_config, make_compare_plan
from livefill.cli.extract_args import EXIT_COMMITTED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, UsageProblem
from livefill.cli.extract_run import ServerDidNotStart, local_server, log_redaction
from livefill.cli.compare_result import LaneResult, lane_result
from livefill.embedded.server import EmbeddedServer
from livefill.session.lane import LaneError, LaneEvent, SessionLane
from livefill.session.run_config import RunConfig
from livefill.wire.keys import KeyStore
from livefill.wire.usage import UsageTap

__all__ = ["lane_configs", "run_compare", "run_lanes"]


def run_compare(
    args: argparse.Namespace,
    *,
    keys: KeyStore | None,
    server: EmbeddedServer | None,
    environ: Mapping[str, str],
    out: TextIO,
    err: TextIO,
) -> int:
    """Plan the lanes `args` asks for, start the embedded server when one needs it, run them all
    and print them; the exit status (`livefill.cli.compare.main` says what the arguments are)."""
    keys = keys if keys is not None else KeyStore()
    with log_redaction(keys):
        try:
            plan = make_compare_plan(args, keys=keys, err=err, environ=environ)
        except UsageProblem as exc:
            print(f"{PROG}: {keys.redact(str(exc))}", file=err, flush=True)
            return EXIT_USAGE
        try:
            with local_server(plan.needs_server, server) as local:
                url, relay_token = (local.url, local.relay_token) if local is not None else (None, None)
                configs = lane_configs(plan, url=url, relay_token=relay_token, keys=keys)
                results, interrupted = asyncio.run(run_lanes(plan, configs))
        except ServerDidNotStart as exc:
            print(f"{PROG}: {exc}", file=err, flush=True)
            return EXIT_FAILED
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted before the lanes started", file=err, flush=True)
            return EXIT_INTERRUPTED
    results = [replace(r, reason=keys.redact(r.reason)) for r in results]
    (print_json if args.json else print_table)(results, out)
    for r in results:
        if not r.committed:
            print(f"{PROG}: lane {r.lane}: {r.outcome}: {r.reason}", file=err, flush=True)
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_COMMITTED if all(r.committed for r in results) else EXIT_FAILED


def lane_configs(
    plan: ComparePlan, *, url: str | None, relay_token: str | None, keys: KeyStore
) -> list[RunConfig]:
    """Each lane's RunConfig, with the embedded server at `url`."""
    return [
        lane_config(s, i, url=url, relay_token=relay_token, keys=keys, what=plan.what)
        for i, s in enumerate(plan.settings)
    ]


async def run_lanes(
    plan: ComparePlan,
    configs: Sequence[RunConfig],
    *,
    on_started: Callable[[list[SessionLane]], None] | None = None,
    handle_sigint: bool = True,
) -> tuple[list[LaneResult], bool]:
    """Start every lane at one t0, wait for all of them; their results, and whether Ctrl-C
    stopped them. `on_started(lanes)` is called once they all run (a test may stop one)."""
    loop = asyncio.get_running_loop()
    lanes: list[SessionLane] = []
    taps: list[UsageTap] = []
    errors: dict[int, str] = {}
    interrupted = False
    for i, (s, config) in enumerate(zip(plan.settings, configs)):
        lane = SessionLane(f"lane {i}", mode=s.mode, measure=True)
        tap = UsageTap()
        lane.extra_tap = tap
        lane.show(("compare", i), plan.schema_name)

        def on_event(event: LaneEvent, i: int = i) -> None:
            if isinstance(event, LaneError):
                errors[i] = event.message

        lane.subscribe(on_event)
        lanes.append(lane)
        taps.append(tap)

    def stop_all() -> None:
        nonlocal interrupted
        interrupted = True
        for lane in lanes:
            lane.stop()

    handler = False
    if handle_sigint:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signal handlers here
            loop.add_signal_handler(signal.SIGINT, stop_all)
            handler = True
    t0 = lanes[0].clock()
    try:
        for lane, config in zip(lanes, configs):
            lane.start(config, t0, label=config.label)
        if on_started is not None:
            on_started(lanes)
        for lane in lanes:
            await lane.wait()
    finally:
        if handler:
            loop.remove_signal_handler(signal.SIGINT)
        for lane in lanes:
            await lane.shutdown()
    results = [lane_result(i, lane, taps[i], plan, errors.get(i)) for i, lane in enumerate(lanes)]
    for lane in lanes:
        lane.release()
    return results, interrupted
