"""The window's launch: the embedded demo server, the window, one asyncio lifecycle.

`launch(args)` binds the embedded demo provider's socket, makes the QApplication and runs
`amain()` under `qasync.run(...)`: the window is shown first, then one background thread
(`Warmup`) starts the server and loads the provider SDKs while the window already answers. When
the window closes the runs and the server are shut down inside the loop. What the command-line
options do, and why the launch is ordered so: docs/notes/launch.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

# first: PySide6, with its import hook made cheap for every module imported after it (gui/qt_app.py)
from livefill.gui.qt_app import SWITCH_INTERVAL, make_application  # isort: skip

import qasync
from PySide6.QtWidgets import QApplication

from livefill import switches
from livefill.embedded.client import app_server, demo_requests, log_client
from livefill.embedded.server import EmbeddedServer
from livefill.gui.app_args import preflight_store
from livefill.gui.errors import ErrorReporter, show_error
from livefill.gui.gui_thread_gc import GuiThreadCollector
from livefill.gui.launch_session import launch_session
from livefill.gui.loop import asyncgen_hooks
from livefill.gui.main_window import MainWindow
from livefill.gui.qsettings_store import QSettingsStore
from livefill.gui.state_dump import install_state_dump
from livefill.gui.theme import Theme
from livefill.gui.warmup import Warmup
from livefill.session import run_remote
from livefill.session.app_settings import SavedSettings, load_settings
from livefill.session.run_status import RunStatus
from livefill.wire.keys import KeyStore
from livefill.wire.redaction import install_log_redaction

if TYPE_CHECKING:
    from livefill.embedded.server_process import ServerProcess

__all__ = ["WARMUP_SWITCH_INTERVAL", "app_warmup", "launch", "mid_path", "remember", "start_warmup"]

WARMUP_SWITCH_INTERVAL = 0.0001
"""sys.setswitchinterval while the warm-up imports the SDKs: every Python call the GUI thread makes
(a slot, a paint, each Qt call from Python that lets the GIL go) waits for the warm-up's thread to
hand the GIL over, up to the switch interval; at SWITCH_INTERVAL (1 ms) a Start pressed at launch
and its repaint stalled the window 95-133 ms, at 0.1 ms 73-94 ms (offscreen, load ~1.1, 5 runs each)."""


def remember(args: argparse.Namespace) -> SavedSettings:
    """Read the remembered settings (from `--settings-file` or the user's); fill in the provider,
    theme and scenario the command line left open. What the last launch showed (its scenario, or
    its document and schema) is shown again unless the command line names what to show
    (`--scenario`, `--document`, `--replay`). Returns what this launch starts with, so a launch
    that changes nothing writes nothing; the store is kept as `args.store`."""
    args.store = preflight_store(args, QSettingsStore(args.settings_file))  # --screenshot writes none
    saved = load_settings(args.store)
    for problem in saved.problems:
        print(f"livefill: {problem}", file=sys.stderr)
    args.provider = args.provider or saved.provider or "anthropic"
    args.theme = args.theme or saved.theme or "system"
    document = getattr(args, "document", None)
    if args.scenario_given or document or getattr(args, "replay", None):
        path = getattr(document, "path", None)
        shown = {"last_document": str(path.resolve()) if path is not None else None, "schema": args.schema}
    else:  # the last launch's scenario (its document is reopened once the window shows)
        args.scenario = saved.scenario or args.scenario
        shown = {"schema": args.schema or saved.schema}
    return replace(saved, provider=args.provider, theme=args.theme, scenario=args.scenario, **shown)


def mid_path(path: Path) -> Path:
    """out.png -> out-mid.png."""
    return path.with_name(f"{path.stem}-mid{path.suffix or '.png'}")


def launch(args: argparse.Namespace, *, t0: float | None = None, leaving: bool = False) -> int:
    """Show the window for the parsed `args` and run until it closes; the exit code. `t0`: when the
    launch began (LIVEFILL_REPORT's "ready in"); `leaving`: the process ends right after, so the
    garbage of the closed loop need not be collected first."""
    t0 = time.monotonic() if t0 is None else t0
    server = app_server()
    server.bind()
    app = make_application()
    args.remembered = remember(args)
    warmup = app_warmup(server)
    try:
        code = qasync.run(amain(args, server, warmup, t0))
    except KeyboardInterrupt:
        code = 130
    finally:
        # the closed loop's QObjects sit in reference cycles: destroy them here, on the GUI
        # thread, not whenever the cyclic GC next runs (possibly in the server's thread); a
        # process about to leave has no next run (and a full collection walks the SDKs: seconds)
        if not leaving:
            gc.collect()
        _stop_server(server, warmup, quiet=True)  # (amain has stopped it already, unless it failed early)
    unfinished = not warmup.ready  # its threads end with the process
    if switches.flag("LIVEFILL_CHECK_THREADS") and not unfinished:
        stray = [t.name for t in threading.enumerate()
                 if t is not threading.main_thread() and t.is_alive() and t.name != "livefill-warmup"]  # (its `after` steps end with the process)
        if stray:
            print(f"stray threads at exit: {stray}", file=sys.stderr)
    return code


def app_warmup(server: EmbeddedServer | ServerProcess) -> Warmup:
    """The app's warm-up, not started: the server, then the SDKs, in one thread; the keyring's
    backend after (nothing waits for it). Planned: a Start pressed before it starts waits for it too."""
    spawn = getattr(server, "spawn", None)  # a server in a process of its own boots while the SDKs import
    steps = (spawn, _import_clients, server.start) if spawn is not None else (server.start, _import_clients)
    return Warmup(*steps, after=(_choose_keyring,), planned=True)


def start_warmup(warmup: Warmup, window: MainWindow, collector: GuiThreadCollector) -> Warmup:
    """After the window is shown: start `warmup`. The GUI thread's garbage collector holds off
    meanwhile and then freezes what the warm-up loaded, so no collection on the GUI thread walks the SDKs.
    The GIL changes hands every WARMUP_SWITCH_INTERVAL meanwhile (then SWITCH_INTERVAL again).
    From here a run reads in a warm worker process while a core is spare for it, else on this
    thread (livefill.session.run_remote.usable; LIVEFILL_RUN_WORKER chooses otherwise): the warm
    workers start now, at a lower priority than this process."""

    def report(exc: BaseException) -> None:
        show_error(f"the embedded demo provider could not start: {exc}", window)

    def done() -> None:  # (before a Start kept meanwhile begins: runs share the GIL as always)
        sys.setswitchinterval(SWITCH_INTERVAL)
        collector.release(freeze=True)

    warmup.on_error = report
    warmup.on_done = done
    sys.setswitchinterval(WARMUP_SWITCH_INTERVAL)
    warmup.on_after = window.views.look_for_keys  # the keyring's backend chosen: the Lanes menu's live preset
    collector.hold()
    run_remote.use_by_default()  # such a run's GUI thread only applies its batches and paints
    return warmup.start(asyncio.get_running_loop())


async def amain(args: argparse.Namespace, server: EmbeddedServer | ServerProcess, warmup: Warmup, t0: float) -> int:
    """Show the window on the started `server`, wait for it to close, shut everything down."""
    app = QApplication.instance()
    collector = GuiThreadCollector(app)  # cycles holding Qt objects die on this thread only
    collector.start()
    # nothing collected until the warm-up is done (start_warmup): a full collection due while the
    # window is first shown walked every module imported so far (100-180 ms after it was mapped)
    collector.hold()
    try:
        with asyncgen_hooks(asyncio.get_running_loop()):
            return await _amain(args, server, warmup, t0, server.bind(), collector)
    finally:
        collector.stop()


async def _amain(args: argparse.Namespace, server: EmbeddedServer | ServerProcess, warmup: Warmup, t0: float, url: str,
                 collector: GuiThreadCollector) -> int:
    keys = KeyStore()
    install_log_redaction(keys.known_secrets)
    remembered = getattr(args, "remembered", None)
    if remembered is None:
        remembered = remember(args)
    report = switches.flag("LIVEFILL_REPORT")
    exit_code = 0
    window: MainWindow | None = None
    try:
        window = MainWindow(
            launch_session(args, base_url=url, relay_token=server.relay_token, remembered=remembered, keys=keys),
            store=args.store, remembered=remembered, theme=args.theme, document=args.document or None,
            compare=args.compare, warmup=warmup,
        )
        # The style sheet goes on once the window is built: every widget added to a parent while
        # the application has one is polished again with everything under it (~40 % of the
        # window's building), where this polishes each widget once.
        theme = Theme(QApplication.instance(), args.theme)  # noqa: F841 - the app's child, follows the system palette
        collector.busy = lambda: window is not None and window.active  # no full collection mid-run
        install_state_dump(window)  # LIVEFILL_STATE_FILE: what the window shows, for tests driving this process
        ErrorReporter(window, keys.redact).install(asyncio.get_running_loop())
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        if args.screenshot and args.compare:
            window.resize(1680, 1000)
        window.show()
        if args.present:
            window.toggle_presentation()
        QApplication.processEvents()
        if not args.document and not args.replay and not args.scenario_given:
            # (a --replay shows the trace's document; --scenario asks for that scenario)
            # after processEvents: a task started before it would get its first step inside that
            # nested event processing, while this task runs (qasync refuses: "Cannot enter into task")
            restoring = window.restore_last_document()
            if restoring is not None and getattr(args, "expected", None):
                await restoring  # (--expected is for the document shown)
        start_warmup(warmup, window, collector)
        if report:
            print(f"livefill ready in {time.monotonic() - t0:.2f} s", flush=True)
            window.runsFinished.connect(lambda: _report_run(window))
        if args.screenshot or args.autoplay or args.autostart or args.exit_after_run or args.replay:
            await warmup.wait()  # the run (or the trace's server) needs the server and the SDKs
            if report:
                print(f"livefill warm in {time.monotonic() - t0:.2f} s", flush=True)
        window.recordings.apply_args(args, server)
        if getattr(args, "expected", None):  # for the document shown now (File → Expected answer ▸ Choose a file…)
            window.menus.expected_answer.choose(args.expected)
        if args.screenshot:
            exit_code = await _screenshots(window, Path(args.screenshot))
            window.close()
        else:
            if args.autoplay:
                window.start_autoplay(pause=args.autoplay_pause, max_cycles=args.autoplay_cycles)
                if args.autoplay_cycles is not None:
                    _close_after_autoplay(window)
            elif args.autostart or args.exit_after_run:
                window.start()
            if args.close_after is not None:
                _close_later(window, args.close_after, wait_for_stream=args.autostart or args.autoplay)
            if args.exit_after_run:
                await asyncio.sleep(0)
                statuses = await window.wait_runs()
                window.close()
                exit_code = 0 if _all_committed(statuses) else 1
            await closed.wait()
    finally:
        if window is not None:
            await window.shutdown()
        await asyncio.get_running_loop().shutdown_asyncgens()
        if report and window is not None:
            await _report_end(window, url if warmup.ready else None)
        _stop_server(server, warmup)
        run_remote.pool().close()  # the warm workers (a run's own ended with its run)
        # The tasks still alive (a lane's clock, a notes fetch: cancelled by the shutdown) end here,
        # inside this task's loop: a processEvents while any of them is pending would run its next
        # step nested inside this task, which asyncio refuses ("Cannot enter into task"), and the
        # loop's final cancel would then wait for it forever.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        for task in others:
            task.cancel()
        if others:
            await asyncio.wait(others, timeout=2.0)
        if all(t.done() for t in others):
            QApplication.processEvents()
    return exit_code


async def _report_end(window: MainWindow, url: str | None) -> None:
    """LIVEFILL_REPORT at close: autoplay's cycles, each lane's last run, what the server at `url`
    sent (None: it never started)."""
    if window.autoplay.cycles:
        print(f"autoplay: {window.autoplay.cycles} cycles", flush=True)
    lanes = window.lanes
    for i, status in enumerate(window.last_statuses()):
        if status is not None:
            lane = f" (lane {lanes[i].title})" if lanes else ""
            print(f"last run: {status.phase.value} — {status.reason}{lane}", flush=True)
    workers = run_remote.pool()
    print(f"run workers started: {workers.started}; runs read in one: {workers.runs}", flush=True)
    if url is None:
        return
    async with log_client() as client:  # the log over HTTP, wherever the server runs
        entries = await demo_requests(url, client=client)
        for _ in range(40):  # let the server notice a connection closed at shutdown
            if all(e.get("disconnected") or e.get("finished") for e in entries):
                break
            await asyncio.sleep(0.005)
            entries = await demo_requests(url, client=client)
    for entry in entries:
        print(f"server: {entry['path']} sent {entry['tokens_sent']} of {entry['tokens_total']}, "
              f"disconnected={entry['disconnected']}, tag={entry.get('tag')}", flush=True)


def _stop_server(server: EmbeddedServer | ServerProcess, warmup: Warmup, *, quiet: bool = False) -> None:
    """Stop the server, unless the warm-up is still starting it: then leave it to the process's
    end (a daemon thread; nothing has been sent to it yet, since a Start waits for the warm-up)."""
    if warmup.ready:
        server.stop()
    elif switches.flag("LIVEFILL_REPORT") and not quiet:
        print("server: still starting at close; left to the process's end", flush=True)


def _report_run(window: MainWindow) -> None:
    """LIVEFILL_REPORT: one line per compare lane as a run ends (its figures), then "run finished"."""
    if window.active:
        return
    for lane in window.session.lanes if window.comparing else []:
        summary = lane.metrics.summary()
        first = "–" if summary.first_value is None else f"{summary.first_value:.2f} s"
        settled = "–" if summary.all_settled is None else f"{summary.all_settled:.2f} s"
        print(f"run lane {lane.name}: first value {first}, all settled {settled}, {summary.outcome}", flush=True)
    print("run finished", flush=True)


def _all_committed(statuses: Sequence[RunStatus | None]) -> bool:
    return bool(statuses) and all(s is not None and s.phase.value == "committed" for s in statuses)


async def _screenshots(window: MainWindow, path: Path) -> int:
    """Run once; save a picture mid-stream (the first time a field shows a provisional value, else
    the first time content has arrived) and one at the end; 0 if the run committed, else 1."""
    path.parent.mkdir(parents=True, exist_ok=True)
    window.start()
    mid = None
    halfway = None
    while window.active and mid is None:
        await asyncio.sleep(0.015)
        window.refresh_now()
        if window.any_provisional():
            mid = window.grab()
        elif halfway is None and any(s is not None and s.tokens_received for s in window.last_statuses()):
            halfway = window.grab()
    picture = mid or halfway
    await window.wait_runs()
    if picture is None:
        window.refresh_now()
        picture = window.grab()
    saved = picture.save(str(mid_path(path)))
    await asyncio.sleep(1.0)  # let the "settled" highlight fade
    window.refresh_now()
    saved = window.grab().save(str(path)) and saved
    if not saved:
        print(f"livefill: --screenshot: could not write {mid_path(path)} and {path}", file=sys.stderr)
        return 1
    statuses = window.last_statuses()
    if _all_committed(statuses):
        return 0
    lanes = window.lanes
    for i, status in enumerate(statuses):  # exit 1 says the run did not commit; this says why
        if status is not None and status.phase.value != "committed":
            lane = f" (lane {lanes[i].title})" if lanes else ""
            print(f"livefill: --screenshot: the run{lane} {status.phase.value}: {status.reason} "
                  f"(pictures saved: {mid_path(path)}, {path})", file=sys.stderr)
    return 1


def _close_after_autoplay(window: MainWindow) -> None:
    """Close the window once autoplay has run its cycles (tests)."""

    def on_active(active: bool) -> None:
        if not active:
            window.close()

    window.autoplay.activeChanged.connect(on_active)


def _close_later(window: MainWindow, seconds: float, *, wait_for_stream: bool) -> None:
    """Close the window `seconds` after the first content arrived (or from now)."""
    loop = asyncio.get_running_loop()
    if not wait_for_stream:
        loop.call_later(seconds, window.close)
        return
    armed: list[asyncio.TimerHandle] = []

    def on_status(status: RunStatus) -> None:
        if not armed and status.phase.value in ("streaming", "committed", "stopped", "failed"):
            armed.append(loop.call_later(seconds, window.close))

    window.statusChanged.connect(on_status)


def _import_clients() -> None:
    """Warm-up step: the provider SDKs and the HTTP stack, imported in the warm-up's thread."""
    import livefill.relay.client  # noqa: F401  # lazy: the SDKs, imported by the warm-up's thread after the window shows (3,600 ms)
    import livefill.wire.providers.transport  # lazy: loaded with the relay client just above; here for prewarm (0 ms)

    livefill.wire.providers.transport.prewarm()  # the first request's one-off work, off the GUI thread


def _choose_keyring() -> None:
    """Warm-up `after` step: keyring's backend is chosen once (~1 s of entry points), here, not at Start."""
    try:
        import keyring  # lazy: imported by the warm-up's thread, its backend chosen there (50 ms; get_keyring ~1 s)

        keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken keyring is reported by the key store when used
        pass
