"""The options of `livefill compare`, and what one `--lane KEY=VALUE,...` says: a `LaneSpec`.

A lane's keys: `provider`, `model`, `base_url`, `structured`, `fine_grained`, `mode`, `live`, and
the demo provider's knobs `speed`, `seed`, `fault`, `slice`. A lane is served by the demo
provider started in this process, speaking `provider`'s wire, unless it says `live=true` or gives
a `base_url` (then the real provider is asked, with its key, as `livefill extract --provider`
does). Bad usage is a `UsageProblem` (livefill.cli.extract_args): one line, exit 2.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from livefill.cli.arg_types import existing_file, number
from livefill.cli.extract_args import PROVIDERS, UsageProblem, _Parser
from livefill.defaults import IDLE_TIMEOUT
from livefill.extraction.modes import MODES, Mode
from livefill.extraction.scenarios import SCENARIO_NAMES
from livefill.extraction.schemas import SCHEMAS
from livefill.session.settings import check_fault, check_slicing
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

__all__ = ["LANE_KEYS", "LaneSpec", "PROG", "build_parser", "parse_lane"]

PROG = "livefill compare"

LANE_KEYS = ("provider", "model", "base_url", "structured", "fine_grained", "mode", "live", "speed", "seed", "fault", "slice")
DEMO_KNOBS = ("speed", "seed", "fault", "slice")
_MODES = tuple(m.value for m in MODES)
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


@dataclass(frozen=True, kw_only=True, slots=True)
class LaneSpec:
    """One `--lane`: who is asked (provider, live, base_url, model), how (structured, fine_grained,
    mode) and the demo knobs (None: the default)."""

    text: str
    provider: str = "anthropic"
    live: bool = False
    base_url: str | None = None
    model: str | None = None
    structured: str | None = None
    fine_grained: bool = False
    mode: str = Mode.PARTIAL.value
    speed: float | None = None
    seed: int | None = None
    fault: str | None = None
    slice: str | None = None


def _bool(key: str, value: str) -> bool:
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise UsageProblem(f"--lane {key}={value}: say true or false")


def parse_lane(text: str) -> LaneSpec:
    """`provider=openai-chat,mode=settled` -> its LaneSpec; UsageProblem naming what is wrong."""
    given: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if not eq:
            raise UsageProblem(f"--lane {text}: {part.strip()!r} is not KEY=VALUE (keys: {', '.join(LANE_KEYS)})")
        if key not in LANE_KEYS:
            raise UsageProblem(f"--lane {text}: unknown key {key!r} (keys: {', '.join(LANE_KEYS)})")
        if key in given:
            raise UsageProblem(f"--lane {text}: {key} given twice")
        given[key] = value.strip()
    provider = given.get("provider", "anthropic")
    if provider not in PROVIDERS:
        raise UsageProblem(f"--lane provider={provider}: unknown provider; known: {', '.join(PROVIDERS)}")
    spec = PROVIDER_SPECS[provider]
    mode = given.get("mode", Mode.PARTIAL.value)
    if mode not in _MODES:
        raise UsageProblem(f"--lane mode={mode}: unknown mode; known: {', '.join(_MODES)}")
    structured = given.get("structured")
    if structured is not None and structured not in spec.structured:
        known = "/".join(spec.structured)
        raise UsageProblem(f"--lane structured={structured}: provider={provider} takes {known} (of {', '.join(STRUCTURED)})")
    fine_grained = _bool("fine_grained", given["fine_grained"]) if "fine_grained" in given else False
    if fine_grained and not spec.fine_grained:
        raise UsageProblem(f"--lane fine_grained=true: only provider=anthropic streams fine-grained, not {provider}")
    base_url = given.get("base_url") or None
    live = _bool("live", given["live"]) if "live" in given else base_url is not None
    if base_url is not None and not live:
        raise UsageProblem("--lane base_url=... asks a live server: leave out live=false")
    knobs = [k for k in DEMO_KNOBS if k in given]
    if live and knobs:
        raise UsageProblem(f"--lane {text}: {', '.join(knobs)} are the demo provider's knobs; a live lane has none")
    model = given.get("model")
    if model is not None and not model:
        raise UsageProblem("--lane model=: give a model name")
    return LaneSpec(
        text=text, provider=provider, live=live, base_url=base_url, model=model, structured=structured,
        fine_grained=fine_grained, mode=mode, speed=_knob(given, "speed"), seed=_seed(given),
        fault=_fault(given), slice=_slice(given),
    )


def _knob(given: dict[str, str], key: str) -> float | None:
    if key not in given:
        return None
    try:
        return number(0, 100_000, what="tokens per second; 0 = as fast as possible")(given[key])
    except argparse.ArgumentTypeError as exc:
        raise UsageProblem(f"--lane {key}={given[key]}: {exc}") from None


def _seed(given: dict[str, str]) -> int | None:
    if "seed" not in given:
        return None
    try:
        return int(given["seed"])
    except ValueError:
        raise UsageProblem(f"--lane seed={given['seed']}: a whole number, e.g. seed=7") from None


def _fault(given: dict[str, str]) -> str | None:
    if "fault" not in given:
        return None
    try:
        return check_fault(given["fault"])
    except ValueError as exc:
        raise UsageProblem(f"--lane fault={given['fault']}: {exc}") from None


def _slice(given: dict[str, str]) -> str | None:
    if "slice" not in given:
        return None
    try:
        return check_slicing(given["slice"])
    except ValueError as exc:
        raise UsageProblem(f"--lane slice={given['slice']}: {exc}") from None


USAGE = "livefill compare (--scenario NAME | --document FILE --schema NAME|FILE.json) --lane KEY=VALUE,... [--lane ...] [OPTIONS]"

DESCRIPTION = """\
Run one document through several lanes at once (each its own request: a
provider, model, wire and reading mode) and compare them: how soon each
showed a value, when all were settled, deltas and bytes on the wire, values
shown that were never true, tokens, and fields right against the expected
answer (a bundled scenario's own, or --expected FILE).

lane keys: provider, model, base_url, structured, fine_grained, mode, live,
  and the demo provider's speed, seed, fault, slice. A lane is served by the
  demo provider started in this process, speaking the provider's wire, unless
  it says live=true or gives base_url (then the real provider, with its key).

examples:
  # four demo wires on the invoice
  livefill compare --scenario invoice --lane provider=anthropic \\
      --lane provider=anthropic,fine_grained=true --lane provider=openai-chat \\
      --lane provider=ollama

  # JSON lines, one per lane; one lane cut off halfway
  livefill compare --scenario invoice --json --lane provider=anthropic \\
      --lane provider=openai-chat,fault=disconnect@0.5

  # two structured-output choices on a local llama.cpp server
  livefill compare --document mail.txt --schema ticket \\
      --lane provider=openai-compatible,base_url=http://127.0.0.1:8080/v1,structured=tools \\
      --lane provider=openai-compatible,base_url=http://127.0.0.1:8080/v1,structured=json_object"""

EPILOG = """\
output: a table, or with --json one JSON object per lane (one per line) at the
  end: lane, provider, live, model, mode, outcome, first_value_s,
  first_settled_s, all_settled_s, deltas, records, bytes, never_true,
  fields_total, fields_right, wrong_fields, tokens_in, tokens_out, reason
exit status: 0 every lane committed, 1 some lane did not, 2 bad usage (one
  line saying why; nothing sent), 130 interrupted (Ctrl-C stops every lane)
"""


def build_parser() -> argparse.ArgumentParser:
    """The options of `livefill compare`."""
    parser = _Parser(
        prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--scenario", metavar="NAME",
        help=f"a bundled demo scenario ({', '.join(SCENARIO_NAMES)}), read with its schema and scored "
        "against its expected answer, e.g. --scenario invoice",
    )
    source.add_argument(
        "--document", metavar="FILE",
        help="your document (.txt, .md or .pdf), e.g. --document invoice.pdf (needs --schema)",
    )
    parser.add_argument(
        "--schema", metavar="NAME|FILE.json", default=None,
        help=f"with --document: a bundled schema ({', '.join(SCHEMAS)}) or your JSON Schema file, e.g. --schema invoice",
    )
    parser.add_argument(
        "--lane", metavar="KEY=VALUE,...", action="append", default=[],
        help="one lane (give one --lane per lane), e.g. --lane provider=openai-chat,mode=settled",
    )
    parser.add_argument(
        "--expected", metavar="FILE.json", type=existing_file, default=None,
        help="the right answer to score every lane against (a JSON object like the extraction; "
        "default: the scenario's own, or NAME.expected.json beside --document), e.g. --expected invoice.expected.json",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per lane instead of the table")
    parser.add_argument(
        "--idle-timeout", type=number(0, what="seconds; 0 = none"), default=IDLE_TIMEOUT, metavar="S",
        help=f"seconds with no content before a lane fails (default {IDLE_TIMEOUT:g}; 0 = none)",
    )
    return parser

