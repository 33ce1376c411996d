"""The `livefill` console script: the embedded demo server, the window, one asyncio lifecycle.

`main()` parses the options, binds the embedded demo provider's socket (its address is known at
once; nothing heavy is imported), creates the QApplication and runs `amain()` under
`qasync.run(...)` (Python 3.11's `asyncio.run` has no `loop_factory`). `amain` opens the window
first; then one background thread (`livefill.gui.warmup`) starts the server (demo provider + relay) and
loads the provider SDKs, while the window already answers; a Start pressed meanwhile runs once
that is done. When the window closes, `amain` shuts the runs down inside the loop (so every stream
is closed while the loop still exists), stops the server (joining its thread) and returns the exit
code; the console script (`run()`) then leaves without the interpreter's teardown.

`--screenshot PATH` runs headless: it starts the run, saves `PATH-mid.png` (the stem gets "-mid")
the first time a field shows a provisional value (or, if none ever does, the first time content
has arrived), saves `PATH` when the run has ended, and exits 0 (1 if the run did not commit). With
`--compare naive,partial,settled` the window opens in the compare view with those lanes.

`--autoplay` replays the scenario in a loop with a pause between runs (a booth screen; Stop or Esc
ends it, closing the window ends it cleanly); `--present` starts in presentation mode (F11).
`--theme` picks the light or dark style sheet (default: the one last used, else follow the
system palette). `--live` reads the real provider (`--provider`, `--base-url URL`, `--model M`,
`--structured tools|json_schema|json_object`); `--schema NAME|FILE.json` reads with a bundled
schema or one's own JSON Schema file. `--document FILE` opens a document of one's own (.txt, .md, .pdf; checked before
anything starts: a file that cannot be used exits 2 with one line saying why).
`--replay TRACE --animate OUT.gif [--compare ...] [--fps N] [--width PX]` opens no window: it
renders the replayed run headless (`livefill.gui.animate`, as `livefill animate TRACE OUT.gif`), prints the
path and exits 0 (a bad option exits 2 with one line before anything renders).

Remembered settings (provider, model, the compatible server's and Ollama's addresses, the last
document, the theme; never a key) are read at launch from the user's QSettings file, or from
`--settings-file FILE`, and written whenever one changes. Keys come from `livefill.wire.keys.KeyStore`;
every log record, message box and printed traceback is redacted of the keys it knows.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
import threading
import time
from pathlib import Path

from livefill.gui.app_args import parse_args  # noqa: F401 - the command line (gui/app_args.py)
from livefill.resources import STYLES_DIR

STYLE = STYLES_DIR / "livefill.qss"


def remember(args: argparse.Namespace):  # noqa: ANN201 (SavedSettings)
    """Read the remembered settings (from `--settings-file` or the user's); fill in the provider
    and theme the command line left open. The store is kept as `args.store`."""
    from dataclasses import replace

    from livefill.session.app_settings import load_settings
    from livefill.gui.qsettings_store import QSettingsStore

    args.store = QSettingsStore(args.settings_file)
    saved = load_settings(args.store)
    for problem in saved.problems:
        print(f"livefill: {problem}", file=sys.stderr)
    args.provider = args.provider or saved.provider or "anthropic"
    args.theme = args.theme or saved.theme or "system"
    return replace(saved, provider=args.provider, theme=args.theme)


def mid_path(path: Path) -> Path:
    """out.png -> out-mid.png."""
    return path.with_name(f"{path.stem}-mid{path.suffix or '.png'}")


async def amain(args: argparse.Namespace, server, t0: float) -> int:  # noqa: ANN001 (EmbeddedServer)
    """Show the window on the started `server`, wait for it to close, shut everything down."""
    from PySide6.QtWidgets import QApplication

    from livefill.gui.gui_thread_gc import GuiThreadCollector
    from livefill.gui.loop import asyncgen_hooks

    app = QApplication.instance()
    collector = GuiThreadCollector(app)  # cycles holding Qt objects die on this thread only
    collector.start()
    try:
        with asyncgen_hooks(asyncio.get_running_loop()):
            return await _amain(args, server, t0, app, server.bind(), collector)
    finally:
        collector.stop()


async def _amain(args, server, t0, app, url, collector) -> int:  # noqa: ANN001
    from livefill.recording.history import History
    from livefill.wire.keys import KeyStore, install_log_redaction
    from livefill.gui import errors
    from livefill.gui.main_window import MainWindow

    keys = KeyStore()
    install_log_redaction(keys.known_secrets)
    errors.set_redactor(keys.redact)
    remembered = getattr(args, "remembered", None)
    if remembered is None:
        remembered = remember(args)
    exit_code = 0
    window: MainWindow | None = None
    try:
        window = MainWindow(
            base_url=url,
            relay_token=server.relay_token,
            history=History(args.history) if args.history else History(),
            scenario=args.scenario,
            mode=args.mode,
            provider=args.provider,
            speed=args.speed,
            fault=args.fault,
            idle_timeout=args.idle_timeout,
            compare=args.compare,
            seed=args.seed,
            slicing=args.slicing,
            show_provisional_numbers=args.show_provisional_numbers,
            keys=keys,
            store=args.store,
            remembered=remembered,
            theme=args.theme,
            document=args.document or None,
            live=args.live,
            live_base_url=args.base_url,
            model=args.model,
            structured=args.structured,
            schema_name=args.schema,
        )
        errors.install(window, asyncio.get_running_loop())
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        if args.screenshot and args.compare:
            window.resize(1680, 1000)
        window.show()
        if args.present:
            window.toggle_presentation()
        app.processEvents()
        if not args.document and not args.replay and not args.scenario_given:
            # (a --replay shows the trace's document; --scenario asks for that scenario)
            # after processEvents: a task started before it would get its first step inside that
            # nested event processing, while this task runs (qasync refuses: "Cannot enter into task")
            window.restore_last_document()
        warmup = _start_warmup(server, window, collector)
        if os.environ.get("LIVEFILL_REPORT"):
            print(f"livefill ready in {time.monotonic() - t0:.2f} s", flush=True)
            window.runsFinished.connect(lambda: _report_run(window))
        if args.screenshot or args.autoplay or args.autostart or args.exit_after_run or args.replay:
            await warmup.wait()  # the run (or the trace's server) needs the server and the SDKs
            if os.environ.get("LIVEFILL_REPORT"):
                print(f"livefill warm in {time.monotonic() - t0:.2f} s", flush=True)
        window.recordings.apply_args(args, server)
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
        if os.environ.get("LIVEFILL_REPORT") and window is not None:
            if window.autoplay.cycles:
                print(f"autoplay: {window.autoplay.cycles} cycles", flush=True)
            lanes = window.lanes
            for i, status in enumerate(window.last_statuses()):
                if status is not None:
                    lane = f" (lane {lanes[i].title})" if lanes else ""
                    print(f"last run: {status.phase.value} — {status.reason}{lane}", flush=True)
            for _ in range(40):  # let the server notice a connection closed at shutdown
                if all(e.get("disconnected") or e.get("finished") for e in server.requests()):
                    break
                await asyncio.sleep(0.005)
            for entry in server.requests():
                print(f"server: {entry['path']} sent {entry['tokens_sent']} of {entry['tokens_total']}, "
                      f"disconnected={entry['disconnected']}, tag={entry.get('tag')}", flush=True)
        _stop_server(server)
        # The tasks still alive (a lane's clock, a notes fetch: cancelled by the shutdown) end here,
        # inside this task's loop: a processEvents while any of them is pending would run its next
        # step nested inside this task, which asyncio refuses ("Cannot enter into task"), and the
        # loop's final cancel would then wait for it forever.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        for task in others:
            task.cancel()
        if others:
            await asyncio.wait(others, timeout=2.0)
        if app is not None and all(t.done() for t in others):
            app.processEvents()
    return exit_code


def _stop_server(server, *, quiet: bool = False) -> None:  # noqa: ANN001 (EmbeddedServer)
    """Stop the server, unless the warm-up is still starting it: then leave it to the process's
    end (a daemon thread; nothing has been sent to it yet, since a Start waits for the warm-up)."""
    from livefill.gui import warmup

    current = warmup.current()
    if current is None or current.ready:
        server.stop()
    elif os.environ.get("LIVEFILL_REPORT") and not quiet:
        print("server: still starting at close; left to the process's end", flush=True)


def _report_run(window) -> None:  # noqa: ANN001 (MainWindow)
    """LIVEFILL_REPORT: one line per compare lane as a run ends (its figures), then "run finished"."""
    if window.active:
        return
    for lane in window.session.lanes if window.comparing else []:
        summary = lane.metrics.summary()
        first = "–" if summary.first_value is None else f"{summary.first_value:.2f} s"
        settled = "–" if summary.all_settled is None else f"{summary.all_settled:.2f} s"
        print(f"run lane {lane.name}: first value {first}, all settled {settled}, {summary.outcome}", flush=True)
    print("run finished", flush=True)


def _all_committed(statuses) -> bool:  # noqa: ANN001 (list[RunStatus | None])
    return bool(statuses) and all(s is not None and s.phase.value == "committed" for s in statuses)


async def _screenshots(window, path: Path) -> int:  # noqa: ANN001 (MainWindow)
    """Run once; save a picture mid-stream and one at the end (see the module docstring)."""
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


def _close_after_autoplay(window) -> None:  # noqa: ANN001
    """Close the window once autoplay has run its cycles (tests)."""

    def on_active(active: bool) -> None:
        if not active:
            window.close()

    window.autoplay.activeChanged.connect(on_active)


def _close_later(window, seconds: float, *, wait_for_stream: bool) -> None:  # noqa: ANN001
    """Close the window `seconds` after the first content arrived (or from now)."""
    loop = asyncio.get_running_loop()
    if not wait_for_stream:
        loop.call_later(seconds, window.close)
        return
    armed = []

    def on_status(status) -> None:  # noqa: ANN001
        if not armed and status.phase.value in ("streaming", "committed", "stopped", "failed"):
            armed.append(loop.call_later(seconds, window.close))

    window.statusChanged.connect(on_status)


def _start_warmup(server, window, collector):  # noqa: ANN001, ANN202 (EmbeddedServer, MainWindow, GuiThreadCollector) -> Warmup
    """After the window is shown: start the server, then import the SDKs (livefill.gui.warmup), in one
    thread. The GUI thread's garbage collector holds off meanwhile and then freezes what the
    warm-up loaded (livefill.gui.gui_thread_gc), so no collection on the GUI thread walks the SDKs."""
    from livefill.gui import errors
    from livefill.gui.warmup import Warmup

    def report(exc: BaseException) -> None:
        errors.show_error(f"the embedded demo provider could not start: {exc}", window)

    collector.hold()
    return Warmup(server.start, _import_clients, on_error=report, on_done=lambda: collector.release(freeze=True),
                  after=(_choose_keyring,)).start(asyncio.get_running_loop())


def _import_clients() -> None:
    import livefill.wire.providers.transport
    import livefill.relay.client  # noqa: F401

    livefill.wire.providers.transport.prewarm()  # the first request's one-off work, off the GUI thread


def _choose_keyring() -> None:
    try:
        import keyring

        keyring.get_keyring()  # the backend is chosen once (~1 s of entry points), here, not at Start
    except Exception:  # noqa: BLE001 - a broken keyring is reported by the key store when used
        pass


SWITCH_INTERVAL = 0.001
"""sys.setswitchinterval for the app: the demo server's thread shares the GIL with the GUI thread;
at the default 5 ms a busy server thread delays the GUI by up to 5 ms per hand-over."""

BENIGN_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)
"""Qt warnings the offscreen platform prints for every window; nothing is wrong."""


def _install_qt_message_filter() -> None:
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_kind, _context, message: str) -> None:  # noqa: ANN001 (Qt types)
        if message not in BENIGN_QT_MESSAGES:
            print(message, file=sys.stderr)

    qInstallMessageHandler(handler)


def main(argv: list[str] | None = None, *, leaving: bool = False) -> int:
    """The `livefill` console script's work. `leaving`: the process ends right after (`run()`), so
    the garbage left by the closed loop need not be collected first."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["extract"]:  # the same run in the terminal: no Qt imported
        from livefill.cli.extract import main as extract_main

        return extract_main(argv[1:])
    if argv[:1] == ["animate"]:  # a recorded run rendered headless to a GIF / MP4
        from livefill.gui.animate import main as animate_main

        return animate_main(argv[1:])
    # Until the window is shown, Python's automatic collector would run some 80 times (40-60 ms of
    # the launch) over the objects the imports create, and find no garbage: it is off until then
    # (livefill.gui.gui_thread_gc collects on the GUI thread from then on), and back on when main returns.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _window_main(argv, leaving=leaving)
    finally:
        if collecting:
            gc.enable()


def _window_main(argv: list[str], *, leaving: bool) -> int:
    """`main` for the window (and for --animate, which renders headless)."""
    args = parse_args(argv)
    if args.animate:  # the replayed run rendered headless, no window shown
        from livefill.gui.animate import argv_from_app
        from livefill.gui.animate import main as animate_main

        return animate_main(argv_from_app(args))
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from livefill.gui.platform_check import xcb_problem

    problem = xcb_problem()  # a missing X11 library: one line naming it, not Qt's abort
    if problem:
        print(problem, file=sys.stderr)
        return 1
    t0 = time.monotonic()
    sys.setswitchinterval(SWITCH_INTERVAL)
    # The provider SDKs (anthropic above all) and the server take seconds to import. The window
    # is shown first, on the server's bound address; the server starts and the SDKs load after
    # that, in one background thread (livefill.gui.warmup); a Start pressed meanwhile waits for them.
    from livefill.embedded.client import embedded_server

    import qasync
    from PySide6.QtWidgets import QApplication

    server = embedded_server()
    server.bind()
    _install_qt_message_filter()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("livefill")
    app.setQuitOnLastWindowClosed(False)  # the coroutine decides when to stop
    from livefill.gui.theme import Theme

    args.remembered = remember(args)
    theme = Theme(app, args.theme)  # noqa: F841 - lives as the app's child, follows the system palette
    try:
        code = qasync.run(amain(args, server, t0))
    except KeyboardInterrupt:
        code = 130
    finally:
        # the closed loop's QObjects sit in reference cycles: destroy them here, on the GUI
        # thread, not whenever the cyclic GC next runs (possibly in the server's thread); a
        # process about to leave has no next run (and a full collection walks the SDKs: seconds)
        if not leaving:
            gc.collect()
        _stop_server(server, quiet=True)  # (amain has stopped it already, unless it failed early)
    from livefill.gui import warmup

    unfinished = warmup.current() is not None and not warmup.current().ready  # its threads end with the process
    if os.environ.get("LIVEFILL_CHECK_THREADS") and not unfinished:
        stray = [t.name for t in threading.enumerate()
                 if t is not threading.main_thread() and t.is_alive() and t.name != "livefill-warmup"]  # (its `after` steps end with the process)
        if stray:
            print(f"stray threads at exit: {stray}", file=sys.stderr)
    return code


def run() -> None:
    """The `livefill` console script (and `python -m livefill.gui.app`): `main()`, then leave at once.

    Everything that must outlive the process is written before `main()` returns: history
    records are fsynced as each run commits, the settings are synced when the window closes,
    the runs' streams and the server are closed. What is left is the interpreter's teardown of
    tens of thousands of objects (seconds, with the SDKs loaded), which no one waits for."""
    if sys.argv[1:2] in (["extract"], ["animate"]):  # not the window: the ordinary exit
        sys.exit(main())
    code = main(leaving=True)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    run()
