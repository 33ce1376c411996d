"""Running `livefill extract` once its options are read: plan, server, run, output.

`run_extract` makes the plan (`extract_plan`), picks the output (`extract_output`), starts the
embedded demo provider + relay when the run needs one (the provider SDKs load meanwhile on a
thread of their own) and runs the plan (`run_plan`).

The run is the app's: a `Session` with its single lane, started with the session's `RunConfig`
(the key, the demo knobs and the structured-output choice put in). The demo provider is the
embedded server at `url`; a live provider in settled or hybrid mode is read through that same
embedded relay (`RunConfig.relay_url`, `relay_embedded`): the run hands it the key in a request
header over loopback only, and the relay asks the provider at its base URL, as the app's settled
mode does. `FormWatcher` follows the lane's form and hands every change to the output sink.

Ctrl-C is Stop: the SIGINT handler stops the session (the run's task is cancelled, the `async
with` around the HTTP response closes it, and the server sees the disconnect), the final line
says "stopped".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import BinaryIO, TextIO

from livefill.cli.extract_args import EXIT_COMMITTED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, PROG, UsageProblem
from livefill.cli.extract_output import FormWatcher, JsonLines, LiveTable, Outcome, Sink
from livefill.cli.extract_plan import Plan, make_plan, one_line
from livefill.embedded.client import embedded_server
from livefill.extraction.modes import parse_mode
from livefill.session.lane import LaneError, LaneEvent, LaneStatus
from livefill.session.replay import ReplaySource
from livefill.session.run_status import Phase
from livefill.session.session import Session
from livefill.embedded.server import EmbeddedServer
from livefill.session.settings import RunSettings
from livefill.wire.keys import KeyStore
from livefill.wire.redaction import install_log_redaction

__all__ = ["ServerDidNotStart", "local_server", "log_redaction", "prewarm", "run_extract", "run_plan"]


def run_extract(
    args: argparse.Namespace,
    *,
    keys: KeyStore | None,
    server: EmbeddedServer | None,
    stdin: BinaryIO | None,
    environ: Mapping[str, str],
    out: TextIO,
    err: TextIO,
) -> int:
    """Plan the run `args` asks for, start the embedded server when it needs one, run it and print
    it; the exit status (`livefill.cli.extract.main` says what the arguments are)."""
    keys = keys if keys is not None else KeyStore()
    with log_redaction(keys):
        try:
            plan = make_plan(args, keys=keys, stdin=stdin, err=err, environ=environ)
        except UsageProblem as exc:
            print(f"{PROG}: {keys.redact(str(exc))}", file=err, flush=True)
            return EXIT_USAGE
        sink: Sink
        if args.pretty:
            sink = LiveTable(out, tty=_isatty(out), expected=plan.expected_fields)
        else:
            sink = JsonLines(out)
        interrupted = False
        try:
            with local_server(plan.provider is None or parse_mode(plan.mode).needs_relay, server) as local:
                url, relay_token = (local.url, local.relay_token) if local is not None else (None, None)
                trace_id = local.add_trace(plan.replay) if local is not None and plan.replay is not None else None
                outcome, interrupted = asyncio.run(
                    run_plan(plan, url=url, relay_token=relay_token, sink=sink, keys=keys, trace_id=trace_id)
                )
        except ServerDidNotStart as exc:
            print(f"{PROG}: {exc}", file=err, flush=True)
            return EXIT_FAILED
        except KeyboardInterrupt:  # before the run (or its signal handler) was up
            outcome, interrupted = Outcome("stopped", "interrupted before the request was made"), True
        sink.finish(outcome)
        if outcome.result != "committed":
            print(f"{PROG}: {outcome.result}: {outcome.reason}", file=err, flush=True)
    if outcome.result == "committed":
        return EXIT_COMMITTED
    return EXIT_INTERRUPTED if interrupted else EXIT_FAILED


async def run_plan(
    plan: Plan, *, url: str | None, relay_token: str | None, sink: Sink, keys: KeyStore, trace_id: str | None = None
) -> tuple[Outcome, bool]:
    """Run `plan` (the demo/relay server at `url`; `trace_id`: the server's id of `plan.replay`);
    the Outcome, and whether Ctrl-C stopped it."""
    relay_url, relay_embedded = "", False
    if plan.base_url is None:  # the demo provider: the embedded server is provider and relay
        base_url = url
    else:
        base_url = plan.base_url
        if parse_mode(plan.mode).needs_relay:
            # the embedded relay reads the live provider; it is handed the key over loopback only
            relay_url, relay_embedded = url or "", True
    settings = RunSettings(
        scenario=plan.scenario or "invoice",  # (the document below replaces the scenario's)
        document=plan.document,
        schema_name=plan.schema_name,
        provider=plan.wire,
        base_url=base_url or "",
        relay_token=relay_token,
        model=plan.model,
        mode=plan.mode,
        idle_timeout=plan.idle_timeout,
    )
    session = Session(settings, fetch_notes=False)
    lane = session.single
    if plan.replay is not None:
        session.open_replay(ReplaySource(plan.replay, trace_id or "", base_url or ""))
        session.replace(replay_speed=plan.replay_speed)
        config = replace(session.run_config(), record_path=plan.record_path, label=plan.label)
    else:
        config = replace(
            session.run_config(),
            api_key=plan.api_key,
            demo=plan.demo,
            structured=plan.structured,
            relay_url=relay_url,
            relay_embedded=relay_embedded,
            label=plan.label,
            record_path=plan.record_path,
        )
    loop = asyncio.get_running_loop()
    errors: list[str] = []
    interrupted = False
    output_closed = False

    def on_lane(event: LaneEvent) -> None:
        if isinstance(event, LaneStatus):
            sink.progress(bytes_received=event.status.bytes_received, elapsed=event.status.elapsed)
        elif isinstance(event, LaneError):
            errors.append(event.message)

    def stop_soon() -> None:
        if not session.stop() and session.active:  # not begun yet: stop it as soon as it has
            loop.call_later(0.02, stop_soon)

    def on_output_closed() -> None:
        nonlocal output_closed
        output_closed = True
        stop_soon()

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        stop_soon()

    sink.on_closed = on_output_closed
    watcher = FormWatcher(lane.form, sink.change, clock=session.clock, t0=session.clock())
    if isinstance(sink, LiveTable):
        sink.order = watcher.order
    unsubscribe = lane.subscribe(on_lane)
    handler = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signal handlers here
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        handler = True
    ticker: asyncio.Task[None] | None = None
    try:
        watcher.t0 = session.start(config)
        ticker = asyncio.ensure_future(_tick(sink, session))
        try:
            await session.wait()
        except asyncio.CancelledError:  # Ctrl-C where asyncio.run's own handler cancelled us
            task = asyncio.current_task()
            if task is None or handler:  # (with our handler up, a cancel is someone else's)
                raise
            task.uncancel()
            on_sigint()
            await session.wait()
    finally:
        if ticker is not None:
            ticker.cancel()
        if handler:
            loop.remove_signal_handler(signal.SIGINT)
        await session.shutdown()
        watcher.close()
        unsubscribe()
    status = lane.status
    run = lane.run
    writer = run.recorder if run is not None else None
    if plan.record_path:
        if writer is not None and writer.error:
            print(f"{PROG}: {writer.error}", file=sys.stderr, flush=True)
        elif writer is not None and writer.begun:
            print(f"{PROG}: recorded the run to {writer.path}", file=sys.stderr, flush=True)
        else:
            print(f"{PROG}: no trace was written (the run ended before any response)", file=sys.stderr, flush=True)
    reason = keys.redact(status.reason if status is not None else "")
    if status is not None and status.phase is Phase.COMMITTED and run is not None:
        return Outcome("committed", reason, run.result), interrupted
    if status is not None and status.phase is Phase.STOPPED:
        if output_closed and not interrupted:
            reason = "the output was closed"
        return Outcome("stopped", reason), interrupted
    if errors and (status is None or status.phase is not Phase.FAILED):
        reason = keys.redact(errors[-1])
    return Outcome("failed", reason or "the run did not start"), interrupted


async def _tick(sink: Sink, session: Session) -> None:
    """Keep the progress line's clock moving while nothing arrives."""
    while True:
        await asyncio.sleep(0.1)
        status = session.single.status
        if status is not None and status.phase.active:
            sink.progress(bytes_received=status.bytes_received, elapsed=session.clock() - session.t0)


@contextlib.contextmanager
def log_redaction(keys: KeyStore) -> Iterator[None]:
    """Every log record redacted of the known keys while the run lasts."""
    root = logging.getLogger()
    redacting = install_log_redaction(keys.known_secrets, root)
    try:
        yield
    finally:
        root.removeFilter(redacting)
        for handler in root.handlers:
            handler.removeFilter(redacting)


class ServerDidNotStart(Exception):
    """The embedded demo provider + relay could not start (its message is the line to print)."""


@contextlib.contextmanager
def local_server(needed: bool, server: EmbeddedServer | None) -> Iterator[EmbeddedServer | None]:
    """The embedded demo provider + relay a run needs, started (None when it needs none): `server`
    when one is given, else one started here and stopped on leaving. The provider SDKs import on
    a thread of their own meanwhile (`prewarm`), and have when this yields: t_ms counts the run
    only. ServerDidNotStart when it cannot start."""
    warm = threading.Thread(target=prewarm, name="livefill-prewarm", daemon=True)
    warm.start()
    own: EmbeddedServer | None = None
    try:
        if needed and server is None:
            own = server = embedded_server()
            try:
                server.start()
            except (OSError, RuntimeError) as exc:
                raise ServerDidNotStart(f"the demo provider could not start: {one_line(exc)}") from None
        warm.join()
        yield server if needed else None
    finally:
        if own is not None:
            own.stop()


def prewarm() -> None:
    """The provider SDKs' imports, on a thread of their own beside the server's start (t_ms counts
    the run only)."""
    import livefill.relay.client  # noqa: F401  # lazy: on the prewarm thread, beside the server (8000-11000 ms)
    import livefill.wire.providers.transport  # lazy: the same thread; loaded by the line above (0 ms)

    livefill.wire.providers.transport.prewarm()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
