"""The `livefill` command line: its options, its help, and every check made before anything starts.

`parse_args(argv)` returns the options with every value checked (ranges, files that must exist or
be writable, fault names and the wires they apply to, compare modes, option pairs); a bad one is
one `livefill: error: ...` line on stderr and exit status 2, before a server, a window or a
request exists. The app (`livefill.gui.app`) then fills in what the remembered settings decide.

`--screenshot` is a pre-flight check and leaves no trace: the remembered settings are read but not
written (`preflight_store`), and the run is not added to the history, unless `--settings-file` or
`--history` names a file for it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from livefill.cli.arg_types import Parser
from livefill.errors import TraceError, UsageError
from livefill.extraction.documents import DocumentError, load_document
from livefill.extraction.modes import Mode
from livefill.extraction.scenarios import SCENARIO_NAMES
from livefill.extraction.schemas import is_schema_path, resolve_schema
from livefill.gui.cli_args import (
    COMPARE_PRESETS,
    compare_lane,
    compare_modes,
    compare_preset,
    demo_fault,
    demo_slicing,
    existing_file,
    expected_answer,
    fault_wire_problem,
    frame_rate,
    frame_width,
    number,
    output_file,
    picture_file,
    whole_number,
)
from livefill.recording.animation import check_output
from livefill.recording.trace import load_trace
from livefill.wire.keys import base_url_example, normalize_base_url
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

if TYPE_CHECKING:
    from livefill.session.app_settings import SettingsStore

__all__ = [
    "argv_from_app", "build_parser", "keeps_history", "parse_args", "preflight_store", "ReadOnlyStore", "USAGE",
    "DESCRIPTION", "EPILOG", "DEFAULT_SPEED", "DEFAULT_AUTOPLAY_PAUSE",
]

PROVIDERS: tuple[str, ...] = tuple(name for name, spec in PROVIDER_SPECS.items() if spec.in_app)
"""`--provider`'s choices: the providers the app offers, derived as `livefill.session.settings.PROVIDERS`
is (that module imports the demo protocol and pydantic, which `--help` does not need)."""

DEFAULT_SPEED = 30.0
"""The demo provider's tokens per second when `--speed` is not given."""

DEFAULT_AUTOPLAY_PAUSE = 3.0
"""Seconds between autoplay runs when `--autoplay-pause` is not given."""

USAGE = """\
livefill [OPTIONS]
       livefill extract ...     (see livefill extract --help)
       livefill animate ...     (see livefill animate --help)"""

DESCRIPTION = """\
Watch a language model fill in a form while it is still writing, each value
marked provisional until it has settled; it runs offline, no key needed.

examples:
  # the invoice scenario on the built-in demo provider
  livefill

  # one stream read three ways, side by side
  livefill --compare naive,partial,settled

  # a 20 KB catalog at 100 tokens/s, cut off halfway
  livefill --scenario catalog --speed 100 --fault disconnect

  # full screen, replaying in a loop (a booth screen)
  livefill --present --autoplay

  # your own document, read by the real API (key: ANTHROPIC_API_KEY)
  livefill --live --provider anthropic --document invoice.pdf

  # headless: out-mid.png mid-stream, out.png at the end, then exit
  livefill --screenshot out.png --compare naive,partial,settled

in the window: Start Ctrl+Return, Stop Esc, Compare Ctrl+K,
wire inspector Ctrl+I, timeline Ctrl+T, presentation F11."""

EPILOG = """\
more commands:
  livefill extract --help   the same run in the terminal, a JSON line a value
  livefill animate --help   a recorded run replayed into a GIF or MP4
  livefill-server --help    the demo provider and relay as a server

exit status: 0 done (--screenshot: the run committed); 1 the run failed or
Qt could not start; 2 bad usage (one line saying why; nothing started)
"""


def build_parser() -> argparse.ArgumentParser:
    """The options of `livefill` (see `parse_args` for the checks that span options)."""
    parser = Parser(
        prog="livefill", usage=USAGE, description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    what = parser.add_argument_group("what to read, and how")
    what.add_argument("--scenario", default=None, choices=SCENARIO_NAMES,
                      help="a bundled demo scenario (default invoice; given, it is shown instead of the last document)")
    what.add_argument("--mode", default="partial", choices=[m.value for m in Mode], help="how the stream is read (default partial)")
    what.add_argument("--compare", metavar="MODES", type=compare_modes,
                      help="open the compare view with these lanes, e.g. naive,partial,settled (2 to 5)")
    what.add_argument("--compare-preset", metavar="|".join(COMPARE_PRESETS), type=compare_preset, default=None,
                      help="open the compare view with a preset of lanes: modes (the five reading modes) or "
                      "wires (every demo wire: Anthropic, Anthropic fine-grained, OpenAI Chat and Responses, Ollama)")
    what.add_argument("--compare-lane", metavar="KEY=VALUE,...", type=compare_lane, action="append", default=None,
                      help="open the compare view with this lane (give 2 to 5; the keys of `livefill compare "
                      "--lane`), e.g. provider=openai-chat,base_url=URL,model=M")
    what.add_argument("--document", metavar="FILE", help="open your own document (.txt, .md or .pdf) instead of the scenario's")
    what.add_argument("--expected", metavar="FILE.json", type=expected_answer, default=None,
                      help="score the runs against this expected answer (as File → Expected answer ▸ Choose a file…)")
    what.add_argument("--schema", metavar="NAME|FILE.json", default=None,
                      help="read with a bundled schema (invoice, ...) or your own JSON Schema file instead of the scenario's")
    what.add_argument("--show-provisional-numbers", action="store_true",
                      help="partial mode shows numbers before they settle (marked), e.g. 120… for 1200")
    what.add_argument("--idle-timeout", type=number(0, what="seconds; 0 = none"), default=20.0, metavar="SECONDS",
                      help="seconds of no content before a run fails (default 20; 0 = never)")
    what.add_argument("--provider", default=None, choices=list(PROVIDERS),
                      help="whose wire: the demo provider speaks each one (default: the one last used, else anthropic)")
    demo = parser.add_argument_group("the demo provider's knobs (not with --live)")
    demo.add_argument("--speed", type=number(0, 100_000, what="tokens per second; 0 = as fast as possible"), default=None,
                      metavar="TOKENS_PER_S", help=f"tokens per second (default {DEFAULT_SPEED:g}; 0 = as fast as possible)")
    demo.add_argument("--fault", default=None, type=demo_fault, metavar="NAME[@FRACTION]",
                      help="a fault to inject, preselected in the Fault menu, e.g. disconnect or max_tokens@0.25")
    demo.add_argument("--seed", type=whole_number(), default=None, metavar="N",
                      help="the seed of its token cutting and timing (default: the demo provider's)")
    demo.add_argument("--slice", dest="slicing", default=None, type=demo_slicing, metavar="event|N|coalesce:MS",
                      help="how its bytes meet the network: one write per event, N-byte writes, or writes gathered for MS ms")
    live = parser.add_argument_group("a real provider")
    live.add_argument("--live", action="store_true",
                      help="read the real provider instead of the demo one (keys: ANTHROPIC_API_KEY / OPENAI_API_KEY, or Settings)")
    live.add_argument("--base-url", metavar="URL", default=None,
                      help="with --live: the provider's address, e.g. http://127.0.0.1:8080/v1 for an OpenAI-compatible server")
    live.add_argument("--model", metavar="M", default=None, help="the model to ask for (default: the one last used, else the provider's)")
    live.add_argument("--structured", default=None, choices=list(STRUCTURED),
                      help="how structure is forced (tools for Anthropic; tools|json_schema for OpenAI Responses)")
    show = parser.add_argument_group("presenting")
    show.add_argument("--autostart", action="store_true", help="start a run as soon as the window is up")
    show.add_argument("--present", action="store_true", help="start in presentation mode (F11 / Esc leaves it)")
    show.add_argument("--autoplay", action="store_true", help="replay the scenario in a loop with a pause between runs")
    show.add_argument("--autoplay-pause", type=number(0, 3600, what="seconds"), default=None, metavar="SECONDS",
                      help=f"with --autoplay: the pause between runs (default {DEFAULT_AUTOPLAY_PAUSE:g})")
    show.add_argument("--theme", default=None, choices=["system", "light", "dark"],
                      help="colour theme (default: the one last used, else follow the system)")
    show.add_argument("--screenshot", metavar="PATH.png", type=picture_file,
                      help="headless: run once, save PATH-mid.png mid-stream and PATH at the end, then exit (1 if the run "
                      "did not commit); a check that leaves no trace: no history, no remembered settings written")
    rec = parser.add_argument_group("record and replay")
    rec.add_argument("--record", nargs="?", const="", default=None, metavar="PATH",
                     help="record every run to a trace: PATH (a file or folder), else the recordings folder")
    rec.add_argument("--replay", metavar="TRACE", type=existing_file, help="open a recorded trace (.jsonl): Start replays it in the chosen mode")
    rec.add_argument("--replay-speed", type=number(0, 100, what="1 = as recorded; 0 = as fast as possible"), default=1.0, metavar="X",
                     help="replay speed: 1 as recorded (default), 0.5, 2, 0 = as fast as possible")
    rec.add_argument("--animate", metavar="OUT", default=None,
                     help="with --replay: render the replayed run headless to OUT.gif (or OUT.mp4 with imageio-ffmpeg) and exit")
    rec.add_argument("--fps", type=frame_rate, default=None, help="with --animate: frames per second (default 10)")
    rec.add_argument("--width", type=frame_width, default=None, metavar="PX", help="with --animate: width in pixels (default 1280)")
    files = parser.add_argument_group("files")
    files.add_argument("--history", metavar="FILE", type=output_file(), help="history file (default: the user data dir)")
    files.add_argument("--settings-file", metavar="FILE", type=output_file(),
                       help="keep the remembered settings in this INI file (default: the user's livefill settings)")
    add("--autoplay-cycles", type=whole_number(1), default=None, help=argparse.SUPPRESS)  # tests: close after N runs
    add("--exit-after-run", action="store_true", help=argparse.SUPPRESS)
    add("--close-after", type=number(0), default=None, help=argparse.SUPPRESS)  # tests: close the window
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line options, every one checked (a bad one: one line, exit 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.scenario_given = args.scenario is not None  # then the last launch's document is not reopened
    args.scenario = args.scenario or "invoice"
    if args.document:
        try:
            args.document = load_document(args.document)
        except DocumentError as exc:
            parser.error(f"--document: {exc.message}")
    _check_animate_args(parser, args)
    if args.compare_preset is not None:  # its lanes, as --lane texts (the window reads them as --compare's modes)
        if args.compare or args.animate is not None:
            parser.error("--compare-preset: not with --compare or --animate (it chooses the lanes itself)")
        args.compare = args.compare_preset
    if args.compare_lane is not None:  # its lanes, as --lane texts (as --compare-preset's)
        if args.compare or args.animate is not None:
            parser.error("--compare-lane: not with --compare, --compare-preset or --animate (it chooses the lanes itself)")
        if not 2 <= len(args.compare_lane) <= 5:
            parser.error(f"--compare-lane: give 2 to 5 lanes (one --compare-lane each), not {len(args.compare_lane)}")
        args.compare = args.compare_lane
    if args.replay:
        try:
            args.replay_trace = load_trace(args.replay)
        except TraceError as exc:
            parser.error(f"--replay: {exc}")
    _check_live_args(parser, args)
    _check_demo_args(parser, args, PROVIDERS)
    _check_headless_args(parser, args)
    if args.record:  # a folder to record into, or a trace file (a taken name gets -2, -3, ...)
        path = Path(args.record).expanduser()
        try:
            output_file()(str(path / "trace.jsonl") if path.is_dir() else args.record)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"--record: {exc}")
    args.speed = DEFAULT_SPEED if args.speed is None else args.speed
    args.autoplay_pause = DEFAULT_AUTOPLAY_PAUSE if args.autoplay_pause is None else args.autoplay_pause
    return args


def _check_demo_args(parser: argparse.ArgumentParser, args: argparse.Namespace, providers: tuple[str, ...]) -> None:
    """The demo provider's knobs: not with --live, and a fault only on a wire it applies to."""
    if args.live:
        given = [f"--{name}" for name, value in (("speed", args.speed), ("fault", args.fault), ("seed", args.seed),
                                                 ("slice", args.slicing)) if value is not None]
        if given:
            parser.error(f"{', '.join(given)}: the demo provider's knobs; a --live run reads the real provider (leave them out)")
        return
    problem = fault_wire_problem(args.fault, args.provider, providers)
    if problem:
        parser.error(problem)
    if args.autoplay_pause is not None and not args.autoplay:
        parser.error("--autoplay-pause goes with --autoplay")


def _check_headless_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--screenshot runs once and exits: it does not go with the options that keep the window up."""
    if not args.screenshot:
        return
    for option, on in (("--autoplay", args.autoplay), ("--animate", args.animate is not None)):
        if on:
            parser.error(f"--screenshot runs once and exits; it does not go with {option}")


def _check_animate_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--animate OUT (with --fps, --width), checked before anything starts (exit 2)."""
    if args.animate is None:
        if args.fps is not None or args.width is not None:
            parser.error("--fps and --width go with --animate OUT")
        return
    if not args.replay:
        parser.error("--animate needs --replay TRACE (the recorded run to render)")
    try:
        check_output(args.animate)
    except UsageError as exc:
        parser.error(f"--animate: {exc}")


def _check_live_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--live, --base-url, --structured and --schema, checked before anything starts (exit 2)."""
    if args.base_url is not None:
        if not args.live:
            parser.error("--base-url: only for a live run (add --live)")
        try:
            normalize_base_url(args.base_url, example=base_url_example(args.provider))
        except ValueError as exc:
            parser.error(f"--base-url: {exc}")
        args.base_url = args.base_url.strip()
    if args.model is not None and not args.model.strip():
        parser.error("--model: give a model name")
    if args.structured is not None and args.provider is not None:
        choices = PROVIDER_SPECS[args.provider].structured
        if args.structured not in choices:
            parser.error(f"--structured: {args.provider} takes {' or '.join(choices)}, not {args.structured}")
    if args.schema is not None:
        spec = str(Path(args.schema).expanduser().resolve()) if is_schema_path(args.schema) else args.schema
        try:
            resolve_schema(spec)
        except (ValueError, KeyError) as exc:
            parser.error(f"--schema: {' '.join(str(exc).strip(chr(39)).split())}")
        args.schema = spec


def argv_from_app(args: argparse.Namespace) -> list[str]:
    """`livefill --replay TRACE --animate OUT [--compare ...] [--mode ...] [--fps N] [--width PX]` as
    `livefill animate`'s argv (the app hands the parsed options over: `animate.main(argv_from_app(args))`)."""
    argv = [str(args.replay), str(args.animate), "--mode", str(args.mode)]
    if getattr(args, "compare", None):
        argv += ["--compare", ",".join(args.compare)]
    for option in ("fps", "width"):
        value = getattr(args, option, None)
        if value is not None:
            argv += [f"--{option}", str(value)]
    return argv


class ReadOnlyStore:
    """A SettingsStore that reads `store` and never writes it: what the launch changes is kept in
    memory and forgotten with the process."""

    def __init__(self, store: SettingsStore) -> None:
        self.store = store
        self.changed: dict[str, str | None] = {}  # name -> the value set (None: removed)

    def value(self, name: str) -> str | None:
        return self.changed[name] if name in self.changed else self.store.value(name)

    def set_value(self, name: str, value: str) -> None:
        self.changed[name] = value

    def remove(self, name: str) -> None:
        self.changed[name] = None

    def sync(self) -> None:
        """(Nothing is written.)"""


def preflight_store(args: argparse.Namespace, store: SettingsStore) -> SettingsStore:
    """The settings store of a launch: `store`, read-only for a `--screenshot` without `--settings-file`."""
    return ReadOnlyStore(store) if getattr(args, "screenshot", None) and not getattr(args, "settings_file", None) else store


def keeps_history(args: argparse.Namespace) -> bool:
    """Whether the launch's runs go to the history: not a `--screenshot`'s, unless `--history` names a file."""
    return bool(getattr(args, "history", None)) or not getattr(args, "screenshot", None)
