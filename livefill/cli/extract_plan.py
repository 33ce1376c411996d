"""What `livefill extract` will run, decided before anything is sent: its `Plan`.

`make_plan` checks the options against each other and reads the run's inputs: the schema (a
bundled name, or a JSON Schema file), the document (a file, standard input, or a bundled
scenario's, or a trace's with `--replay`), the provider's base URL and its key (`KeyStore`, as
the app reads keys; the demo provider gets its own fake key). Anything wrong is a `UsageProblem`:
one line on stderr, exit 2, nothing sent.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO, TextIO

from livefill.cli.extract_args import DEMO_WIRE, PROG, UsageProblem, structured_choices
from livefill.demo.knobs import DemoDefaults
from livefill.demo.protocol import DemoKnobs
from livefill.errors import InputError, LivefillError, TraceError, UsageError
from livefill.extraction.documents import MAX_BYTES, Document, describe_size, document_from_bytes, load_document
from livefill.extraction.modes import Mode, parse_mode
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.extraction.schemas import SCHEMAS, resolve_schema as resolve_user_schema
from livefill.recording.trace import Trace, load_trace
from livefill.session.metrics import leaves
from livefill.session.settings import fault_problem
from livefill.wire.keys import KeyStore, base_url_example, normalize_base_url
from livefill.wire.providers.base_urls import live_base_url
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = [
    "DEMO_KEY", "NO_KEY", "Plan", "check_fault_wire", "check_structured", "default_base_url", "make_plan",
    "one_line", "read_document", "resolve_schema",
]

DEMO_KEY = "demo"
"""The demo provider's own fake key (it only looks at which form of credential was used)."""
NO_KEY = "none"
"""Given to the anthropic SDK for a server that runs without a key (the SDK needs some value)."""


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
    demo: DemoKnobs | None
    expected_fields: int | None  # how many fields the result has, when known (a scenario's)
    label: str
    record_path: str | None = None  # write a trace of the run here
    replay: Trace | None = None  # a trace to replay (through the embedded demo provider)
    replay_speed: float = 1.0


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (a KeyError's without its quotes)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split()) or type(exc).__name__


def _looks_like_file(spec: str) -> bool:
    return spec.lower().endswith(".json") or os.sep in spec or "/" in spec or os.path.isfile(spec)


def resolve_schema(spec: str) -> str:
    """The schema name the run uses for `--schema` (a bundled name, or a JSON Schema file)."""
    if _looks_like_file(spec):
        try:
            resolve_user_schema(spec)  # checked before any request: an unsupported keyword is named here
        except (LivefillError, OSError, KeyError, ValueError) as exc:
            raise UsageProblem(f"--schema {spec}: {one_line(exc)}") from None
        return spec  # the run, the form and the relay resolve the same path (livefill.extraction.schemas.schema_model)
    if spec not in SCHEMAS:
        raise UsageProblem(f"--schema: unknown schema {spec!r}; known: {', '.join(SCHEMAS)} (or give a FILE.json)")
    return spec


def read_document(spec: str, stdin: BinaryIO | None) -> Document:
    """The `--document` (`-`: standard input's bytes)."""
    try:
        if spec == "-":
            # one byte past the cap is enough to refuse: a gigabyte on stdin is never held whole
            return document_from_bytes((stdin if stdin is not None else sys.stdin.buffer).read(MAX_BYTES + 1))
        return load_document(spec)
    except InputError as exc:
        raise UsageProblem(f"--document: {one_line(exc)}") from None


def default_base_url(provider: str, environ: Mapping[str, str]) -> str:
    """Where a live provider is when no --base-url is given: its environment variable
    (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, OLLAMA_HOST), else the vendor's API. UsageProblem for
    a provider that has no default address (an OpenAI-compatible server)."""
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
    choices = structured_choices(provider)
    if choice is None:
        return choices[0]
    if choice not in choices:
        who = f"--provider {provider}" if provider else "the demo provider (without --provider)"
        raise UsageProblem(f"--structured {choice}: {who} takes only {' or '.join(choices)}")
    return choice


def check_fault_wire(fault: str | None, provider: str | None) -> None:
    """`--fault`, checked against the wire it would travel on (`livefill.demo.protocol.FAULT_SCOPES`;
    the demo provider without --provider speaks Anthropic's)."""
    why = fault_problem(fault, provider or DEMO_WIRE)
    if why:
        demo_wire = PROVIDER_SPECS[DEMO_WIRE].label
        who = f"--provider {provider}" if provider else f"the demo provider (without --provider) speaks {demo_wire}'s wire"
        raise UsageProblem(f"--fault {fault}: {why}; {who}")


def make_plan(
    args: argparse.Namespace, *, keys: KeyStore, stdin: BinaryIO | None, err: TextIO, environ: Mapping[str, str]
) -> Plan:
    """Check everything and decide the run (UsageProblem for anything a person must fix)."""
    mode = parse_mode(args.mode)
    if args.replay is not None:
        return _replay_plan(args, mode)
    if args.document is None and args.scenario is None:
        raise UsageProblem("one of the arguments --document --scenario is required (or --replay TRACE)")
    if args.scenario is not None and args.scenario not in SCENARIO_NAMES:
        raise UsageProblem(f"--scenario: unknown scenario {args.scenario!r}; known: {', '.join(SCENARIO_NAMES)}")
    if args.schema is None and args.scenario is None:
        raise UsageProblem("--document needs --schema NAME|FILE.json, e.g. --schema invoice")
    # a scenario is read with its own schema unless --schema names another
    schema_name = resolve_schema(args.schema if args.schema is not None else get_scenario(args.scenario).schema_name)
    provider = args.provider
    scenario = None
    document = None
    expected = None
    if args.scenario is not None:
        scenario = get_scenario(args.scenario)
        if provider is None and not _looks_like_file(schema_name) and scenario.schema_name != schema_name:
            raise UsageProblem(
                f"--schema {args.schema}: the demo scenario {scenario.name} is read with schema "
                f"{scenario.schema_name}; give --schema {scenario.schema_name}, or leave --schema out"
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
        base_url, api_key, wire = None, DEMO_KEY, DEMO_WIRE
        demo = DemoKnobs(
            scenario=scenario.name if scenario is not None else None,
            speed=DemoDefaults().speed if args.speed is None else args.speed,
            seed=args.seed,
            fault=args.fault,
        )
    else:
        wire = provider
        raw_url = args.base_url if args.base_url is not None else default_base_url(provider, environ)
        try:
            base_url = normalize_base_url(raw_url, example=base_url_example(provider))
        except InputError as exc:
            raise UsageProblem(f"--base-url: {one_line(exc)}") from None
        if mode.needs_relay and demo_knobs_given:
            # the embedded relay reads the live provider at --base-url: demo knobs have no one to go to
            raise UsageProblem(
                f"--speed, --seed and --fault with --mode {mode.value} are the demo provider's knobs; "
                "leave out --provider to use them"
            )
        try:
            key = keys.require(provider, base_url)
        except InputError as exc:  # MissingKey: names the variable to set
            raise UsageProblem(one_line(exc)) from None
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


def _replay_plan(args: argparse.Namespace, mode: Mode) -> Plan:
    """The plan of `--replay TRACE`: the trace's document and schema, the embedded demo provider."""
    if args.provider is not None or args.base_url is not None:
        raise UsageProblem("--replay is served by the in-process demo provider: leave out --provider and --base-url")
    if any(v is not None for v in (args.speed, args.seed, args.fault)):
        raise UsageProblem("--speed, --seed and --fault are the demo generator's knobs; with --replay use --replay-speed")
    try:
        trace = load_trace(args.replay)
    except TraceError as exc:
        raise UsageProblem(f"--replay: {one_line(exc)}") from None
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
        structured=structured_choices(None)[0],
        idle_timeout=args.idle_timeout,
        demo=None,
        expected_fields=None,
        label=f"extract · replay {trace.name}",
        record_path=args.record,
        replay=trace,
        replay_speed=args.replay_speed,
    )
