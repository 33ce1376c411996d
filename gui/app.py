"""The `livefill` console script: `livefill extract`, `livefill compare`, `livefill animate`, or the window.

`main()` sends `extract`, `compare` and `animate` to their commands without importing Qt;
otherwise it parses the window's options (a bad one: one line, exit 2, before anything starts), checks that Qt can
start, and hands over to `livefill.gui.launch`. What the options do: docs/notes/launch.md.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import time

from livefill.gui.platform_check import xcb_problem

__all__ = ["main", "run"]

# Which command pays for which imports: `extract` and `animate` import their own module only (no
# window options, no Qt for `extract`); `--help` and a bad option stop in `parse_args`, before Qt
# and the window are imported. Those imports stay lazy below, each marked with what it saves.


def main(argv: list[str] | None = None, *, leaving: bool = False) -> int:
    """The `livefill` console script's work. `leaving`: the process ends right after (`run()`), so
    the garbage left by the closed loop need not be collected first."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["extract"]:  # the same run in the terminal: no Qt imported
        from livefill.cli.extract import main as extract_main  # lazy: only `livefill extract` needs it (420 ms)

        return extract_main(argv[1:])
    if argv[:1] == ["compare"]:  # several lanes at once in the terminal: no Qt imported
        from livefill.cli.compare import main as compare_main  # lazy: only `livefill compare` needs it

        return compare_main(argv[1:])
    if argv[:1] == ["animate"]:  # a recorded run rendered headless to a GIF / MP4
        return _animate(argv[1:])
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
    from livefill.gui.app_args import argv_from_app, parse_args  # lazy: `livefill extract` would pay for the window's options (55 ms)

    args = parse_args(argv)
    if args.animate:  # the replayed run rendered headless, no window shown
        return _animate(argv_from_app(args))
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    problem = xcb_problem()  # a missing X11 library: one line naming it, not Qt's abort
    if problem:
        print(problem, file=sys.stderr)
        return 1
    t0 = time.monotonic()
    from livefill.gui.launch import launch  # lazy: Qt and the window, not for --help or a bad option (1,100 ms)

    return launch(args, t0=t0, leaving=leaving)


def _animate(argv: list[str]) -> int:
    """`livefill animate ARGV`."""
    from livefill.gui.animate import main as animate_main  # lazy: only `livefill animate` needs it (190 ms)

    return animate_main(argv)


def run() -> None:
    """The `livefill` console script (and `python -m livefill.gui.app`): `main()`, then leave at once.

    Everything that must outlive the process is written before `main()` returns: history
    records are fsynced as each run commits, the settings are synced when the window closes,
    the runs' streams and the server are closed. What is left is the interpreter's teardown of
    tens of thousands of objects (seconds, with the SDKs loaded), which no one waits for."""
    if sys.argv[1:2] in (["extract"], ["compare"], ["animate"]):  # not the window: the ordinary exit
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
