"""The options of `livefill compare`, and what one `--lane KEY=VALUE,...` says: a `LaneSettings`.

A lane's keys: `provider`, `model`, `base_url`, `structured`, `fine_grained`, `mode`, `live`, and
the demo provider's knobs `speed`, `seed`, `fault`, `slice`. A lane is served by the demo
provider started in this process, speaking `provider`'s wire, unless it says `live=true` or gives
a `base_url` (then the real provider is asked, with its key, as `livefill extract --provider`
does). The lane keys and their checks are the window's compare lanes' own
(livefill.session.lane_settings). Bad usage is a `UsageProblem` (livefill.cli.extract_args): one line, exit 2.
"""

from __future__ import annotations

import argparse

from livefill.cli.arg_types import existing_file, number
from livefill.cli.extract_args import UsageProblem, _Parser
from livefill.defaults import IDLE_TIMEOUT
from livefill.extraction.scenarios import SCENARIO_NAMES
from livefill.extraction.schemas import SCHEMAS
from livefill.session.lane_settings import LANE_KEYS, LaneSettings, LaneSettingsError, parse_lane_settings

__all__ = ["LANE_KEYS", "PROG", "build_parser", "parse_lane"]

PROG = "livefill compare"


def parse_lane(text: str) -> LaneSettings:
    """`provider=openai-chat,mode=settled` -> its LaneSettings (livefill.session.lane_settings, as
    the window's compare lanes; provider anthropic unless named); UsageProblem naming what is wrong."""
    try:
        return parse_lane_settings(text, default_provider="anthropic")
    except LaneSettingsError as exc:
        message = str(exc)
        if message.partition("=")[0] in LANE_KEYS and "=" in message.partition(":")[0]:
            raise UsageProblem(f"--lane {message}") from None  # "--lane provider=nope: unknown provider"
        raise UsageProblem(f"--lane {text}: {message}") from None


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

