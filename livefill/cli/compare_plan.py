"""What `livefill compare` will run, decided before anything is sent: the document, the expected
answer, and each lane's `RunSettings` and `RunConfig`.

Every lane's settings are the window's own `RunSettings` (livefill.session.settings), turned into
the run's config by the session's `settings_config` with `comparing` on (one seed said for every
demo lane): a demo lane is the embedded demo provider at the server's URL, speaking its
provider's wire; a live lane is the real provider at its base URL with its key from the
`KeyStore`, read through the embedded relay in settled and hybrid modes. The document and schema
are read as `livefill extract` reads them (livefill.cli.extract_plan); the expected answer is
`--expected`, else a scenario's own, else the `NAME.expected.json` beside the document (when there
is one: livefill.session.scoring.expected_beside). Anything wrong is a
`UsageProblem`: one line, exit 2, nothing sent.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TextIO

from livefill.cli.compare_args import parse_lane
from livefill.cli.extract_args import UsageProblem
from livefill.cli.extract_plan import default_base_url, one_line, read_document, resolve_schema
from livefill.demo.knobs import DemoDefaults
from livefill.errors import InputError
from livefill.extraction.documents import describe_size
from livefill.extraction.scenarios import SCENARIO_NAMES, get_scenario
from livefill.session.run_config import RunConfig
from livefill.session.scoring import expected_beside, load_expected
from livefill.session.session_config import settings_config, settings_schema_name
from livefill.session.lane_settings import LaneSettings, LaneSettingsError, lane_run_settings
from livefill.session.settings import RunSettings
from livefill.wire.keys import KeyStore, base_url_example, normalize_base_url

__all__ = ["ComparePlan", "lane_config", "make_compare_plan"]


@dataclass(frozen=True, slots=True)
class ComparePlan:
    """The lanes (parsed) and their settings without the server's address (`lane_config` adds it),
    the schema, and the expected answer (None: none, so nothing is scored)."""

    lanes: tuple[LaneSettings, ...]
    texts: tuple[str, ...]  # each lane's --lane text, as given
    settings: tuple[RunSettings, ...]
    schema_name: str
    what: str  # the scenario's name or the document's
    expected: Any
    needs_server: bool  # some lane asks the demo provider or reads through the relay


def make_compare_plan(
    args: argparse.Namespace, *, keys: KeyStore, err: TextIO, environ: Mapping[str, str]
) -> ComparePlan:
    """Check the options and decide every lane (UsageProblem for anything a person must fix)."""
    if not args.lane:
        raise UsageProblem("give at least one --lane KEY=VALUE,..., e.g. --lane provider=anthropic")
    lanes = tuple(parse_lane(text) for text in args.lane)
    if args.scenario is None and args.document is None:
        raise UsageProblem("one of the arguments --scenario --document is required")
    document = document_name = None
    if args.scenario is not None:
        if args.scenario not in SCENARIO_NAMES:
            raise UsageProblem(f"--scenario: unknown scenario {args.scenario!r}; known: {', '.join(SCENARIO_NAMES)}")
        if args.schema is not None:
            raise UsageProblem("--schema goes with --document; a scenario is read with its own schema")
        scenario = get_scenario(args.scenario)
        schema_name, what, expected = None, scenario.name, scenario.expected
    else:
        if args.schema is None:
            raise UsageProblem("--document needs --schema NAME|FILE.json, e.g. --schema invoice")
        schema_name = resolve_schema(args.schema)
        doc = read_document(args.document, None)
        print(f"livefill compare: document {doc.name} · {describe_size(doc)}", file=err, flush=True)
        document, document_name, what, expected = doc.text, doc.name, doc.name, None
    source = args.expected
    if source is None and args.document is not None and expected_beside(args.document).is_file():
        source = expected_beside(args.document)
        print(f"livefill compare: the expected answer is {source}", file=err, flush=True)
    if source is not None:
        try:
            expected = load_expected(source)
        except InputError as exc:
            raise UsageProblem(f"--expected {one_line(exc)}") from None
    settings = tuple(
        _lane_settings(text, lane, args, document, document_name, schema_name, environ)
        for text, lane in zip(args.lane, lanes)
    )
    for i, s in enumerate(settings):  # the keys, before anything is sent (the server's address comes later)
        if s.live:
            try:
                settings_config(s, comparing=True, keys=keys)
            except InputError as exc:  # MissingKey names the variable to set
                raise UsageProblem(f"--lane {args.lane[i]}: {keys.redact(one_line(exc))}") from None
    needs_server = any(not s.live or s.mode.needs_relay for s in settings)
    return ComparePlan(lanes, tuple(args.lane), settings, settings_schema_name(settings[0]), what, expected, needs_server)


def _lane_settings(
    text: str, lane: LaneSettings, args: argparse.Namespace, document: str | None, document_name: str | None,
    schema_name: str | None, environ: Mapping[str, str],
) -> RunSettings:
    """The lane's RunSettings: the command's own (the document, the demo provider's default knobs)
    with the lane's keys put in, as a window's compare lane has the session's with its own
    (livefill.session.lane_settings.lane_run_settings)."""
    provider = lane.provider or "anthropic"
    if lane.live:
        raw = lane.base_url if lane.base_url is not None else default_base_url(provider, environ)
        try:
            url = normalize_base_url(raw, example=base_url_example(provider)) if raw else ""
        except InputError as exc:
            raise UsageProblem(f"--lane {text}: base_url: {one_line(exc)}") from None
        lane = lane.with_(base_url=url)
    try:
        base = RunSettings(
            scenario=args.scenario or "invoice",  # (a document of one's own replaces the scenario's)
            document=document,
            document_name=document_name,
            schema_name=schema_name,
            provider=provider,
            speed=DemoDefaults().speed,
            idle_timeout=args.idle_timeout,
        )
        return lane_run_settings(base, lane)
    except (LaneSettingsError, ValueError) as exc:
        raise UsageProblem(f"--lane {text}: {one_line(exc)}") from None


def lane_config(
    s: RunSettings, index: int, *, url: str | None, relay_token: str | None, keys: KeyStore, what: str
) -> RunConfig:
    """The RunConfig of lane `index`: its settings with the embedded server at `url` (the demo
    provider, and the relay of a settled / hybrid lane)."""
    s = s.with_(base_url=url or "", relay_token=relay_token)
    config = settings_config(s, comparing=True, keys=keys)
    if s.live and not s.mode.needs_relay:
        config = replace(config, relay_url="", relay_embedded=False)
    return replace(config, label=f"compare · {what} · lane {index}")
