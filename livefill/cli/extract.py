"""`livefill extract`: one extraction in the terminal — the same run the window makes, without it.

How this works
--------------
`main(argv)` reads the options, then prepares the run before anything is sent: the schema
(a bundled name, or a JSON Schema file), the document (a file, standard input, or a bundled
scenario's), the provider's base URL and its key (`livefill.wire.keys.KeyStore`, as the app reads keys;
the demo provider gets its own fake key). Anything wrong there is bad usage: one line on stderr,
exit 2, nothing sent.

The run itself is the app's: a `livefill.session.session.Session` with its single lane, started with the
session's `RunConfig` (the key, the demo knobs and the structured-output choice put in). With no
`--provider` the embedded demo provider + relay is started in this process, as the app does.
A live provider in settled or hybrid mode is read through that same embedded relay
(`RunConfig.relay_url`, `relay_embedded`): the run hands it the key in a request header over
loopback only, and the relay asks the provider at its base URL, as the app's settled mode does.
`FormWatcher` (livefill/cli/extract_output.py) follows the lane's form and hands every change the form
would show to the output: JSON lines, or the live table with `--pretty`.

Ctrl-C is Stop: the SIGINT handler stops the session (the run's task is cancelled, the `async
with` around the HTTP response closes it, and the server sees the disconnect), the final line
says "stopped", and the exit status is 130.

Exit status: 0 committed, 1 failed (the form was restored), 2 bad usage, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, TextIO

from livefill.errors import InputError, LivefillError

__all__ = ["main", "build_parser", "EXIT_COMMITTED", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED"]

EXIT_COMMITTED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

PROG = "livefill extract"
DEMO_KEY = "demo"
"""The demo provider's own fake key (it only looks at which form of credential was used)."""
NO_KEY = "none"
"""Given to the anthropic SDK for a server that runs without a key (the SDK needs some value)."""

MODES = ("partial", "settled", "hybrid", "blocking")
STRUCTURED = ("tools", "json_schema", "json_object")

USAGE = """\
livefill extract --schema NAME|FILE.json
                        (--document FILE|- | --scenario NAME | --replay TRACE)
                        [OPTIONS]"""

DESCRIPTION = """\
Run one extraction in the terminal and print each value as the form would
show it, one JSON line per change, then the result.

examples:
  # the demo provider reads a bundled scenario (no key needed)
  livefill extract --scenario invoice --schema invoice

  # your PDF, read by Anthropic (key: ANTHROPIC_API_KEY or the keyring)
  livefill extract --document invoice.pdf --schema invoice \\
      --provider anthropic --pretty

  # standard input, your own schema, a local llama.cpp server
  cat mail.txt | livefill extract --document - --schema ticket.json \\
      --provider openai-compatible --base-url http://127.0.0.1:8080/v1 \\
      --structured json_object

  # settled values only, through the relay started in this process
  livefill extract --document mail.txt --schema ticket \\
      --provider openai-chat --mode settled

  # the demo provider cut off halfway, at full speed
  livefill extract --scenario invoice --schema invoice --speed 0 \\
      --fault disconnect"""

EPILOG = """\
output: one line per change {"t_ms", "pointer", "state", "value"}, then
  {"result": "committed" | "failed" | "stopped", "reason", "object"}
exit status: 0 committed, 1 failed, 2 bad usage (one line saying why;
  nothing sent), 130 interrupted (Ctrl-C stops the request)
"""


class UsageProblem(InputError):
    """Bad usage: said in one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is one line (and the caller decides how to exit)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageProblem(f"{message} (see {self.prog} --help)")


def _fault(text: str) -> str | None:
    from livefill.session.settings import check_fault

    try:
        return check_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The options of `livefill extract` (every one with an example in its help)."""
    from livefill.extraction.scenarios import SCENARIO_NAMES
    from livefill.extraction.schemas import SCHEMAS
    from livefill.cli.arg_types import existing_file, number, output_file, whole_number
    from livefill.wire.providers.request import STRUCTURED_CHOICES
    from livefill.session.settings import FAULT_NAMES, PROVIDERS

    parser = _Parser(
        prog=PROG,
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--schema", default=None, metavar="NAME|FILE.json",
        help=f"what to extract: a bundled schema ({', '.join(SCHEMAS)}) or your JSON Schema file, "
        "e.g. --schema invoice or --schema ./ticket.json",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--document", metavar="FILE|-",
        help="the document to read: a .txt, .md or .pdf file, or - for standard input, e.g. --document invoice.pdf",
    )
    source.add_argument(
        "--scenario", metavar="NAME",
        help=f"a bundled demo scenario's document ({', '.join(SCENARIO_NAMES)}), e.g. --scenario invoice",
    )
    parser.add_argument(
        "--provider", choices=PROVIDERS, default=None,
        help="a live provider (default: the demo provider, started in this process), e.g. --provider anthropic",
    )
    parser.add_argument(
        "--base-url", metavar="URL", default=None,
        help="the provider's server (default: its official API; Ollama: $OLLAMA_HOST), "
        "e.g. --base-url http://127.0.0.1:8080/v1",
    )
    parser.add_argument("--model", metavar="M", default=None, help="the model to ask, e.g. --model claude-sonnet-4-5")
    parser.add_argument(
        "--mode", choices=MODES, default="partial",
        help="how the stream is read (default partial; settled and hybrid go through the relay), e.g. --mode settled",
    )
    parser.add_argument(
        "--structured", choices=STRUCTURED, default=None,
        help="how the model is made to write JSON: a forced tool (default), json_schema structured output, "
        "or json_object with the schema (llama.cpp); which ones a provider takes: "
        + "; ".join(f"{p}: {'/'.join(STRUCTURED_CHOICES[p])}" for p in PROVIDERS)
        + ", e.g. --structured json_object",
    )
    parser.add_argument(
        "--speed", type=number(0, 100_000, what="tokens per second; 0 = as fast as possible"), default=None, metavar="S",
        help="demo provider: tokens per second (default 30; 0 = as fast as possible), e.g. --speed 0",
    )
    parser.add_argument(
        "--seed", type=whole_number(), default=None, metavar="N", help="demo provider: the seed of its timing, e.g. --seed 7"
    )
    parser.add_argument(
        "--fault", type=_fault, default=None, metavar="F",
        help=f"demo provider: a fault NAME[@FRACTION] ({', '.join(FAULT_NAMES)}), e.g. --fault disconnect@0.5",
    )
    parser.add_argument(
        "--pretty", action="store_true", help="a live table for people instead of JSON lines, e.g. --pretty"
    )
    source.add_argument(
        "--replay", metavar="TRACE.jsonl", type=existing_file,
        help="replay a recorded trace (its document and schema) through the in-process demo provider, "
        "in any --mode, e.g. --replay ~/.local/share/livefill/recordings/invoice.jsonl",
    )
    parser.add_argument(
        "--replay-speed", type=number(0, 100, what="1 = as recorded; 0 = as fast as possible"), default=1.0, metavar="X",
        help="with --replay: 1 as recorded (default), 0.5 half, 2 double, 0 as fast as possible, e.g. --replay-speed 0",
    )
    parser.add_argument(
        "--record", metavar="PATH", type=output_file(),
        help="write a trace of the run (every network read, with its timing; no key) to PATH, "
        "e.g. --record run.jsonl (with --mode settled or hybrid, the embedded relay records the provider's wire)",
    )
    parser.add_argument(
        "--idle-timeout", type=number(0, what="seconds; 0 = none"), default=20.0, metavar="S",
        help="seconds with no content before the run fails (default 20; 0 = none), e.g. --idle-timeout 60",
    )
    return parser


# ---------------------------------------------------------------------------------------------
# Preparing the run: everything checked before a request is made


@dataclass(frozen=True, slots=True)
class Plan:
    """One run, ready to start."""

    schema_name: str
    document: str | None  # None: the scenario's
    scenario: str | None
    provider: str | None  # None: the embedded demo provider
    wire: str  # the wire the run speaks
    base_url: str | None  # None: the embedded server's (the demo provider)
    api_key: str
    model: str | None
    mode: str
    structured: str
    idle_timeout: float
    demo: Any  # DemoKnobs | None
    expected_fields: int | None  # how many fields the result has, when known (a scenario's)
    label: str
    record_path: str | None = None  # write a trace of the run here
    replay: Any = None  # a livefill.recording.trace.Trace to replay (through the embedded demo provider)
    replay_speed: float = 1.0


def _looks_like_file(spec: str) -> bool:
    return spec.lower().endswith(".json") or os.sep in spec or "/" in spec or os.path.isfile(spec)


def resolve_schema(spec: str) -> str:
    """The schema name the run uses for `--schema` (a bundled name, or a JSON Schema file)."""
    if _looks_like_file(spec):
        from livefill.extraction.user_schema import resolve_schema as resolve_user_schema

        try:
            resolve_user_schema(spec)  # checked before any request: an unsupported keyword is named here
        except (LivefillError, OSError, KeyError, ValueError) as exc:
            raise UsageProblem(f"--schema {spec}: {_one_line(exc)}") from None
        return spec  # the run, the form and the relay resolve the same path (livefill.extraction.schemas.schema_model)
    from livefill.extraction.schemas import SCHEMAS

    if spec not in SCHEMAS:
        raise UsageProblem(f"--schema: unknown schema {spec!r}; known: {', '.join(SCHEMAS)} (or give a FILE.json)")
    return spec


def _one_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def read_document(spec: str, stdin: Any) -> Any:
    """The `--document` as a livefill.extraction.documents.Document (`-`: standard input's bytes)."""
    from livefill.extraction.documents import document_from_bytes, load_document

    try:
        if spec == "-":
            return document_from_bytes((stdin if stdin is not None else sys.stdin.buffer).read())
        return load_document(spec)
    except InputError as exc:
        raise UsageProblem(f"--document: {_one_line(exc)}") from None


def default_base_url(provider: str, environ: Mapping[str, str]) -> str:
    """Where a live provider is when no --base-url is given: its environment variable
    (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST), else the vendor's API. UsageProblem for
    a provider that has no default address (an OpenAI-compatible server)."""
    from livefill.errors import UsageError
    from livefill.wire.providers.request import live_base_url

    try:
        url = live_base_url(provider, environ)
    except UsageError:
        raise UsageProblem(
            f"--provider {provider} needs --base-url (the server's address, e.g. http://127.0.0.1:8080/v1)"
        ) from None
    if url and "://" not in url:
        url = "http://" + url  # OLLAMA_HOST may be a bare host:port
    return url


def check_structured(choice: str | None, provider: str | None) -> str:
    """`--structured`, checked against what the provider can honour (the demo provider speaks
    Anthropic's wire: a forced tool only)."""
    from livefill.wire.providers.request import STRUCTURED_CHOICES

    if choice is None:
        return "tools"
    wire = provider or "anthropic"
    choices = STRUCTURED_CHOICES[wire]
    if choice not in choices:
        who = f"--provider {provider}" if provider else "the demo provider (without --provider)"
        raise UsageProblem(f"--structured {choice}: {who} takes only {' or '.join(choices)}")
    return choice


def check_fault_wire(fault: str | None, provider: str | None) -> None:
    """`--fault`, checked against the wire it would travel on (`livefill.demo.protocol.FAULT_SCOPES`;
    the demo provider without --provider speaks Anthropic's)."""
    from livefill.session.settings import fault_problem

    why = fault_problem(fault, provider or "anthropic")
    if why:
        who = f"--provider {provider}" if provider else "the demo provider (without --provider) speaks Anthropic's wire"
        raise UsageProblem(f"--fault {fault}: {why}; {who}")


def make_plan(args: argparse.Namespace, *, keys: Any, stdin: Any, err: TextIO, environ: Mapping[str, str]) -> Plan:
    """Check everything and decide the run (UsageProblem for anything a person must fix)."""
    from livefill.demo.protocol import DemoKnobs
    from livefill.extraction.documents import describe_size
    from livefill.wire.keys import base_url_example, normalize_base_url
    from livefill.session.metrics import leaves
    from livefill.extraction.modes import parse_mode
    from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario

    mode = parse_mode(args.mode)
    if args.replay is not None:
        return _replay_plan(args, mode)
    if args.document is None and args.scenario is None:
        raise UsageProblem("one of the arguments --document --scenario is required (or --replay TRACE)")
    if args.schema is None:
        raise UsageProblem("the following arguments are required: --schema (e.g. --schema invoice; not with --replay)")
    schema_name = resolve_schema(args.schema)
    provider = args.provider
    scenario = None
    document = None
    expected = None
    if args.scenario is not None:
        if args.scenario not in SCENARIO_NAMES:
            raise UsageProblem(f"--scenario: unknown scenario {args.scenario!r}; known: {', '.join(SCENARIO_NAMES)}")
        scenario = get_scenario(args.scenario)
        if provider is None and not _looks_like_file(schema_name) and scenario.schema_name != schema_name:
            raise UsageProblem(
                f"--schema {args.schema}: the demo scenario {scenario.name} is read with schema "
                f"{scenario.schema_name}; give --schema {scenario.schema_name}"
            )
        expected = len(list(leaves(scenario.output)))
    else:
        doc = read_document(args.document, stdin)
        document = doc.text
        print(f"{PROG}: document {doc.name} · {describe_size(doc, provider)}", file=err, flush=True)
        for note in doc.notes:
            print(f"{PROG}: {doc.name}: {note}", file=err, flush=True)

    demo_knobs_given = any(v is not None for v in (args.speed, args.seed, args.fault))
    structured = check_structured(args.structured, provider)
    check_fault_wire(args.fault, provider)
    if args.model is not None and not args.model.strip():
        raise UsageProblem("--model: give a model name")
    if provider is None:
        if args.base_url is not None:
            raise UsageProblem("--base-url needs --provider (without one, the demo provider runs in this process)")
        base_url, api_key, wire = None, DEMO_KEY, "anthropic"
        demo = DemoKnobs(
            scenario=scenario.name if scenario is not None else None,
            speed=30.0 if args.speed is None else args.speed,
            seed=args.seed,
            fault=args.fault,
        )
    else:
        wire = provider
        raw_url = args.base_url if args.base_url is not None else default_base_url(provider, environ)
        try:
            base_url = normalize_base_url(raw_url, example=base_url_example(provider))
        except InputError as exc:
            raise UsageProblem(f"--base-url: {_one_line(exc)}") from None
        if mode.needs_relay and demo_knobs_given:
            # the embedded relay reads the live provider at --base-url: demo knobs have no one to go to
            raise UsageProblem(
                f"--speed, --seed and --fault with --mode {mode.value} are the demo provider's knobs; "
                "leave out --provider to use them"
            )
        try:
            key = keys.require(provider, base_url)
        except InputError as exc:  # MissingKey: names the variable to set
            raise UsageProblem(_one_line(exc)) from None
        # no key (a server that runs without one): nothing is sent, except to the anthropic SDK,
        # which will not start without some value
        api_key = key.secret if key is not None else (NO_KEY if provider == "anthropic" else "")
        demo = None
        if demo_knobs_given:  # a demo provider reached by base URL (tests, demos)
            demo = DemoKnobs(
                scenario=scenario.name if scenario is not None else None,
                speed=args.speed,
                seed=args.seed,
                fault=args.fault,
            )
    what = scenario.name if scenario is not None else (args.document if args.document != "-" else "stdin")
    return Plan(
        schema_name=schema_name,
        document=document,
        scenario=scenario.name if scenario is not None else None,
        provider=provider,
        wire=wire,
        base_url=base_url,
        api_key=api_key,
        model=args.model,
        mode=mode.value,
        structured=structured,
        idle_timeout=args.idle_timeout,
        demo=demo,
        expected_fields=expected,
        label=f"extract · {what} · {provider or 'demo'}",
        record_path=args.record,
    )


def _replay_plan(args: argparse.Namespace, mode: Any) -> Plan:
    """The plan of `--replay TRACE`: the trace's document and schema, the embedded demo provider."""
    from livefill.errors import TraceError
    from livefill.recording.trace import load_trace

    if args.provider is not None or args.base_url is not None:
        raise UsageProblem("--replay is served by the in-process demo provider: leave out --provider and --base-url")
    if any(v is not None for v in (args.speed, args.seed, args.fault)):
        raise UsageProblem("--speed, --seed and --fault are the demo generator's knobs; with --replay use --replay-speed")
    try:
        trace = load_trace(args.replay)
    except TraceError as exc:
        raise UsageProblem(f"--replay: {_one_line(exc)}") from None
    source = trace.schema_source()
    if args.schema is not None:
        if not source.bundled or resolve_schema(args.schema) != source.name:
            raise UsageProblem(
                f"--schema {args.schema}: the trace was recorded with schema "
                f"{source.name if source.bundled else 'of its own'}; leave out --schema to use it"
            )
    return Plan(
        schema_name=source.name if source.bundled else "",
        document=trace.document or "",
        scenario=None,
        provider=None,
        wire=trace.provider,
        base_url=None,
        api_key=DEMO_KEY,
        model=trace.model or None,
        mode=mode.value,
        structured="tools",
        idle_timeout=args.idle_timeout,
        demo=None,
        expected_fields=None,
        label=f"extract · replay {trace.name}",
        record_path=args.record,
        replay=trace,
        replay_speed=args.replay_speed,
    )


# ---------------------------------------------------------------------------------------------
# Running it


@contextlib.contextmanager
def _log_redaction(keys: Any) -> Iterator[None]:
    """Every log record redacted of the known keys while the run lasts."""
    from livefill.wire.keys import install_log_redaction

    root = logging.getLogger()
    redacting = install_log_redaction(keys.known_secrets, root)
    try:
        yield
    finally:
        root.removeFilter(redacting)
        for handler in root.handlers:
            handler.removeFilter(redacting)


async def run_plan(
    plan: Plan, *, url: str | None, relay_token: str | None, sink: Any, keys: Any, trace_id: str | None = None
) -> tuple[Any, bool]:
    """Run `plan` (the demo/relay server at `url`; `trace_id`: the server's id of `plan.replay`);
    the Outcome, and whether Ctrl-C stopped it."""
    from livefill.cli.extract_output import FormWatcher, Outcome
    from livefill.extraction.modes import parse_mode
    from livefill.session.run_status import Phase
    from livefill.session.session import Session
    from livefill.session.lane import LaneError, LaneStatus
    from livefill.session.settings import RunSettings

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
        from livefill.session.replay import ReplaySource

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

    def on_lane(event: Any) -> None:
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


async def _tick(sink: Any, session: Any) -> None:
    """Keep the progress line's clock moving while nothing arrives."""
    while True:
        await asyncio.sleep(0.1)
        status = session.single.status
        if status is not None and status.phase.active:
            sink.progress(bytes_received=status.bytes_received, elapsed=session.clock() - session.t0)


def main(
    argv: list[str] | None = None,
    *,
    keys: Any = None,
    server: Any = None,
    stdin: Any = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """`livefill extract ARGS`; returns the exit status.

    `keys`: the KeyStore to read keys from (default: a new one, as the app makes); `server`: an
    already started demo server (EmbeddedServer) to use instead of starting one; `stdin`: a
    binary stream for `--document -`; `environ`: the environment to read base URLs from.
    """
    out, err = sys.stdout, sys.stderr
    argv = sys.argv[1:] if argv is None else list(argv)
    environ = os.environ if environ is None else environ
    try:
        args = build_parser().parse_args(argv)
    except UsageProblem as exc:
        print(f"{PROG}: {exc}", file=err, flush=True)
        return EXIT_USAGE
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    from livefill.cli.extract_output import JsonLines, LiveTable, Outcome
    from livefill.wire.keys import KeyStore

    keys = keys if keys is not None else KeyStore()
    with _log_redaction(keys):
        try:
            plan = make_plan(args, keys=keys, stdin=stdin, err=err, environ=environ)
        except UsageProblem as exc:
            print(f"{PROG}: {keys.redact(str(exc))}", file=err, flush=True)
            return EXIT_USAGE
        if args.pretty:
            sink: Any = LiveTable(out, tty=_isatty(out), expected=plan.expected_fields)
        else:
            sink = JsonLines(out)
        own_server = None
        interrupted = False
        try:
            url = relay_token = None
            warm = threading.Thread(target=_prewarm, name="livefill-prewarm", daemon=True)
            warm.start()  # the SDK's imports, while the demo server starts: t_ms counts the run only
            if plan.provider is None or _needs_relay(plan.mode):
                if server is None:
                    from livefill.embedded.client import embedded_server

                    own_server = server = embedded_server()
                    try:
                        server.start()
                    except (OSError, RuntimeError) as exc:
                        print(f"{PROG}: the demo provider could not start: {_one_line(exc)}", file=err, flush=True)
                        return EXIT_FAILED
                url, relay_token = server.url, server.relay_token
            trace_id = server.add_trace(plan.replay) if plan.replay is not None else None
            warm.join()
            outcome, interrupted = asyncio.run(
                run_plan(plan, url=url, relay_token=relay_token, sink=sink, keys=keys, trace_id=trace_id)
            )
        except KeyboardInterrupt:  # before the run (or its signal handler) was up
            outcome, interrupted = Outcome("stopped", "interrupted before the request was made"), True
        finally:
            if own_server is not None:
                own_server.stop()
        sink.finish(outcome)
        if outcome.result != "committed":
            print(f"{PROG}: {outcome.result}: {outcome.reason}", file=err, flush=True)
    if outcome.result == "committed":
        return EXIT_COMMITTED
    return EXIT_INTERRUPTED if interrupted else EXIT_FAILED


def _prewarm() -> None:
    import livefill.wire.providers.transport
    import livefill.relay.client  # noqa: F401

    livefill.wire.providers.transport.prewarm()


def _needs_relay(mode: str) -> bool:
    from livefill.extraction.modes import parse_mode

    return parse_mode(mode).needs_relay


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


if __name__ == "__main__":
    sys.exit(main())
