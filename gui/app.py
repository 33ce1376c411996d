"""The `livefill` console script: the embedded demo server, the window, one asyncio lifecycle.

`main()` parses the options, creates the QApplication and runs `amain()` under
`qasync.run(...)` (Python 3.11's `asyncio.run` has no `loop_factory`). `amain` starts the
embedded demo provider + relay in its background thread, opens the window, and waits for it to
close; then it shuts the run down inside the loop (so every stream is closed while the loop still
exists), stops the server (joining its thread) and returns the exit code.

`--screenshot PATH` runs headless: it starts the run, saves `PATH-mid.png` (the stem gets "-mid")
as soon as at least one field is provisional while some have settled, saves `PATH` when the run
has ended, and exits 0 (1 if the run did not commit).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from pathlib import Path

from core.run import Mode

STYLE = Path(__file__).resolve().parent.parent / "assets" / "styles" / "livefill.qss"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line options."""
    from core.scenarios import SCENARIO_NAMES

    parser = argparse.ArgumentParser(prog="livefill", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenario", default="invoice", choices=SCENARIO_NAMES)
    parser.add_argument("--mode", default="partial", choices=[m.value for m in Mode])
    parser.add_argument("--provider", default="anthropic", choices=["anthropic", "openai-chat", "openai-responses", "ollama"])
    parser.add_argument("--speed", type=float, default=30.0, help="demo tokens per second (0 = as fast as possible)")
    parser.add_argument("--fault", default=None, help="demo fault NAME[@FRACTION] preselected in the Faults menu")
    parser.add_argument("--idle-timeout", type=float, default=20.0, help="seconds of no content before a run fails")
    parser.add_argument("--autostart", action="store_true", help="start a run as soon as the window is up")
    parser.add_argument("--screenshot", metavar="PATH", help="headless: save PATH-mid.png mid-stream and PATH at the end, then exit")
    parser.add_argument("--history", metavar="FILE", help="history file (default: the user data dir)")
    parser.add_argument("--exit-after-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--close-after", type=float, default=None, help=argparse.SUPPRESS)  # tests: close the window
    return parser.parse_args(argv)


def mid_path(path: Path) -> Path:
    """out.png -> out-mid.png."""
    return path.with_name(f"{path.stem}-mid{path.suffix or '.png'}")


async def amain(args: argparse.Namespace, server, t0: float) -> int:  # noqa: ANN001 (EmbeddedServer)
    """Show the window on the started `server`, wait for it to close, shut everything down."""
    from PySide6.QtWidgets import QApplication

    from gui.loop import asyncgen_hooks

    with asyncgen_hooks(asyncio.get_running_loop()):
        return await _amain(args, server, t0, QApplication.instance(), server.url)


async def _amain(args, server, t0, app, url) -> int:  # noqa: ANN001
    from core.history import History
    from gui import errors
    from gui.main_window import MainWindow

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
        )
        errors.install(window, asyncio.get_running_loop())
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        window.show()
        app.processEvents()
        PREWARM.start()
        window.ready_seconds = time.monotonic() - t0  # type: ignore[attr-defined]
        report = bool(os.environ.get("LIVEFILL_REPORT"))
        if report:
            print(f"livefill ready in {window.ready_seconds:.2f} s", flush=True)  # type: ignore[attr-defined]
        if args.screenshot:
            exit_code = await _screenshots(window, Path(args.screenshot))
            window.close()
        else:
            if args.autostart or args.exit_after_run:
                window.start()
            if args.close_after is not None:
                _close_later(window, args.close_after, wait_for_stream=args.autostart)
            if args.exit_after_run:
                await asyncio.sleep(0)
                status = await window.controller.wait()
                window.close()
                exit_code = 0 if status is not None and status.phase.value == "committed" else 1
            await closed.wait()
    finally:
        if window is not None:
            await window.shutdown()
        await asyncio.get_running_loop().shutdown_asyncgens()
        if os.environ.get("LIVEFILL_REPORT") and window is not None:
            status = window.controller.last_status
            if status is not None:
                print(f"last run: {status.phase.value} — {status.reason}", flush=True)
            await asyncio.sleep(0.2)  # let the server notice the closed connection
            for entry in server.requests():
                print(f"server: {entry['path']} sent {entry['tokens_sent']} of {entry['tokens_total']}, "
                      f"disconnected={entry['disconnected']}", flush=True)
        server.stop()
        if app is not None:
            app.processEvents()
    return exit_code


async def _screenshots(window, path: Path) -> int:  # noqa: ANN001 (MainWindow)
    """Run once; keep the best mid-stream picture; save it and the final one (see the docstring).

    A mid picture is a moment when a value field (not just a table or group) is provisional with
    some text shown; of those, the one with the most settled fields wins (it tells the most).
    """
    from core.form import FieldKind

    path.parent.mkdir(parents=True, exist_ok=True)
    window.start()
    best = None  # (score, picture)
    fallback = None
    while window.controller.active:
        await asyncio.sleep(0.015)
        view = window.form_view
        if view is None:
            continue
        view.signals.flush()
        shown = window.field_states()
        if "provisional" not in shown.values():
            continue
        settled = sum(1 for s in shown.values() if s == "settled")
        leaf = any(
            state == "provisional" and view.fields[p].spec.kind not in (FieldKind.TABLE, FieldKind.OBJECT)
            and view.fields[p].property("displayValue")
            for p, state in shown.items()
        )
        if leaf and (best is None or settled > best[0]):
            best = (settled, window.grab())
        elif fallback is None:
            fallback = window.grab()
    picture = best[1] if best is not None else fallback
    if picture is not None:
        picture.save(str(mid_path(path)))
    await asyncio.sleep(1.0)  # let the "settled" highlight fade
    window.grab().save(str(path))
    status = window.controller.last_status
    return 0 if status is not None and status.phase.value == "committed" else 1


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

    window.controller.statusChanged.connect(on_status)


def _prewarm() -> None:
    import core.providers.transport  # noqa: F401
    import core.relay_client  # noqa: F401


PREWARM = threading.Thread(target=_prewarm, name="livefill-prewarm", daemon=True)


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


def main(argv: list[str] | None = None) -> int:
    """The `livefill` console script."""
    args = parse_args(argv)
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    t0 = time.monotonic()
    sys.setswitchinterval(SWITCH_INTERVAL)
    # The provider SDKs (anthropic above all) take seconds to import. They are imported in a
    # thread started once the window is up (`PREWARM`), so start-up stays fast and the first
    # Start usually finds them loaded.
    from core.server.runner import EmbeddedServer

    import qasync
    from PySide6.QtWidgets import QApplication

    # The server's thread makes its own event loop: start it before qasync.run installs its
    # loop policy (under that policy a new loop in another thread would be a Qt loop).
    server = EmbeddedServer()
    server.start()
    _install_qt_message_filter()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("livefill")
    app.setQuitOnLastWindowClosed(False)  # the coroutine decides when to stop
    if STYLE.exists():
        app.setStyleSheet(STYLE.read_text(encoding="utf-8"))
    try:
        code = qasync.run(amain(args, server, t0))
    except KeyboardInterrupt:
        code = 130
    finally:
        server.stop()
        if PREWARM.is_alive():
            PREWARM.join(30)
    if os.environ.get("LIVEFILL_CHECK_THREADS"):
        stray = [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()]
        if stray:
            print(f"stray threads at exit: {stray}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
