"""`livefill animate TRACE OUT.gif`: a recorded run replayed headless into an animated GIF (or MP4).

    livefill animate docs/traces/invoice-demo.jsonl out.gif --compare naive,partial,settled

This is the command: its options, and every check made before anything renders (a bad trace or
output path is one line on stderr and exit status 2). The rendering is
`livefill.gui.animate_render`; how it works: docs/notes/animate.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from livefill.cli.arg_types import Parser
from livefill.errors import InputError, UsageError
from livefill.extraction.modes import Mode
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.gui.cli_args import compare_modes, frame_rate, frame_width, number
from livefill.recording.animation import check_output
from livefill.recording.trace import Trace, load_trace
from livefill.wording import plural

__all__ = ["main", "parse_args", "prepare", "scenario_of"]


USAGE = """\
livefill animate TRACE OUT.gif [--compare MODES | --mode MODE]
                        [--fps N] [--width PX] [--render-speed X]"""

DESCRIPTION = """\
Replay a run recorded by livefill in its window, headless, and save it as an
animated GIF (or MP4) that plays at the recorded speed.

examples:
  # the bundled demo trace, read three ways side by side
  livefill animate docs/traces/invoice-demo.jsonl out.gif \\
      --compare naive,partial,settled

  # one of your recordings, in settled mode, small and smooth
  livefill animate ~/.local/share/livefill/recordings/run.jsonl run.gif \\
      --mode settled --width 800 --fps 15

  # an MP4 (needs: pip install imageio-ffmpeg)
  livefill animate docs/traces/invoice-demo.jsonl out.mp4"""

EPILOG = """\
exit status: 0 written, 1 rendering failed, 2 bad usage (one line saying why;
nothing rendered)"""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = Parser(
        prog="livefill animate", usage=USAGE, description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("trace", help="a trace (.jsonl) recorded by livefill")
    parser.add_argument("out", help="the animation to write: OUT.gif, or OUT.mp4 (needs imageio-ffmpeg)")
    parser.add_argument("--compare", metavar="MODES", type=compare_modes, help="compare view with these lanes, e.g. naive,partial,settled")
    parser.add_argument("--mode", default="partial", choices=[m.value for m in Mode], help="the single form's mode")
    parser.add_argument("--fps", type=frame_rate, default=10.0, help="frames per second of the recorded clock (default 10)")
    parser.add_argument("--width", type=frame_width, default=1280, help="width of the animation in pixels (default 1280)")
    parser.add_argument("--render-speed", type=number(0, 100, what="0 = as fast as possible"), default=None, metavar="X",
                        help="replay speed while rendering (default 1: the metrics table shows the recorded times; "
                             "0 = as fast as possible, fewer pictures, the table shows the replay's times)")
    return parser.parse_args(argv)


def scenario_of(trace: Trace) -> str:
    """The bundled scenario whose schema (and preferably document) the trace's run used."""
    name = str(trace.header.get("schema_name") or "")
    same_schema = [s for s in SCENARIO_NAMES if get_scenario(s).schema_name == name]
    for s in same_schema:
        if trace.document is not None and get_scenario(s).document == trace.document:
            return s
    if same_schema:
        return same_schema[0]
    raise UsageError(f"{Path(trace.path).name}: its schema {name or '(its own)'} is not a bundled scenario's; "
                     "animate replays traces of the bundled scenarios")


def prepare(argv: list[str]) -> tuple[argparse.Namespace, Trace]:
    """Parse and check everything that can be checked before rendering (InputError / UsageError)."""
    args = parse_args(argv)
    args.out = check_output(args.out)
    trace = load_trace(args.trace)
    if not trace.reads:
        raise UsageError(
            f"{Path(args.trace).name}: the trace holds no response bytes (it ended {trace.end}); nothing to animate"
        )
    scenario_of(trace)
    return args, trace


def main(argv: list[str] | None = None) -> int:
    """`livefill animate TRACE OUT [--compare MODES] [--mode M] [--fps N] [--width PX]`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args, trace = prepare(argv)
    except (InputError, UsageError) as exc:
        print(f"livefill animate: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # bad usage (the parser said why in one line) or --help
        return exc.code if isinstance(exc.code, int) else 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from livefill.gui.animate_render import render_animation  # lazy: Qt and the window, not for --help or a bad trace (1,150 ms)

    try:
        report = render_animation(args, trace, scenario_of(trace))
    except KeyboardInterrupt:
        return 130
    print(
        f"livefill animate: wrote {report.path} ({report.size_bytes / 1e6:.2f} MB, {plural(report.frames, 'frame')}, "
        f"{report.duration_ms / 1000:.1f} s; replayed at {report.speed:.2g}x, {plural(report.grabs, 'picture')}) "
        f"in {report.render_s + report.encode_s:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
