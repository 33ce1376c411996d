"""The options of `livefill extract`: the parser, its help text, the one-line usage error and
the exit statuses.

The modes, providers and structured choices it offers are views of `livefill.extraction.modes.MODES`
and `livefill.wire.providers.spec.PROVIDER_SPECS`; the idle default is `livefill.defaults.IDLE_TIMEOUT`.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from livefill.cli.arg_types import existing_file, number, output_file, whole_number
from livefill.defaults import IDLE_TIMEOUT
from livefill.demo.knobs import DemoDefaults
from livefill.errors import InputError
from livefill.extraction.modes import MODES, Mode
from livefill.extraction.scenarios import SCENARIO_NAMES
from livefill.extraction.schemas import SCHEMAS
from livefill.session.settings import FAULT_NAMES, check_fault
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

__all__ = [
    "DEMO_WIRE", "EXIT_COMMITTED", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "EXTRACT_MODES", "PROG",
    "PROVIDERS", "UsageProblem", "build_parser", "structured_choices",
]

PROG = "livefill extract"

EXIT_COMMITTED = 0
EXIT_FAILED = 1  # the run failed (the form was restored)
EXIT_USAGE = 2  # bad usage: one line on stderr, nothing sent
EXIT_INTERRUPTED = 130  # Ctrl-C stopped the run

EXTRACT_MODES: tuple[str, ...] = tuple(m.value for m in MODES if m is not Mode.NAIVE)
"""The modes a terminal run takes: every mode but naive (the window's demonstration of the wrong way)."""

PROVIDERS: tuple[str, ...] = tuple(s.name for s in PROVIDER_SPECS.values() if s.in_app)
"""The live providers `--provider` takes (the window's; raw is a demo-only wire)."""

DEMO_WIRE = "anthropic"
"""The wire the demo provider speaks without --provider."""


def structured_choices(provider: str | None) -> tuple[str, ...]:
    """The `--structured` choices `provider` honours (None: the demo provider, on DEMO_WIRE)."""
    return PROVIDER_SPECS[provider or DEMO_WIRE].structured


USAGE = """\
livefill extract (--document FILE|- --schema NAME|FILE.json | --scenario NAME
                        | --replay TRACE) [OPTIONS]"""

DESCRIPTION = """\
Run one extraction in the terminal and print each value as the form would
show it, one JSON line per change, then the result.

examples:
  # the demo provider reads a bundled scenario, with its schema (no key needed)
  livefill extract --scenario invoice

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
  livefill extract --scenario invoice --speed 0 --fault disconnect"""

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

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        raise UsageProblem(f"{message} (see {self.prog} --help)")


def _fault(text: str) -> str | None:
    try:
        return check_fault(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The options of `livefill extract` (every one with an example in its help)."""
    relay_modes = tuple(m for m in EXTRACT_MODES if Mode(m).needs_relay)
    default_mode = Mode.PARTIAL.value
    parser = _Parser(
        prog=PROG,
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--schema", default=None, metavar="NAME|FILE.json",
        help=f"what to extract: a bundled schema ({', '.join(SCHEMAS)}) or your JSON Schema file "
        "(with --scenario: the scenario's own by default), e.g. --schema invoice or --schema ./ticket.json",
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
        "--mode", choices=EXTRACT_MODES, default=default_mode,
        help=f"how the stream is read (default {default_mode}; {' and '.join(relay_modes)} go through the relay), "
        "e.g. --mode settled",
    )
    parser.add_argument(
        "--structured", choices=STRUCTURED, default=None,
        help="how the model is made to write JSON: a forced tool (default), json_schema structured output, "
        "or json_object with the schema (llama.cpp); which ones a provider takes: "
        + "; ".join(f"{p}: {'/'.join(structured_choices(p))}" for p in PROVIDERS)
        + ", e.g. --structured json_object",
    )
    parser.add_argument(
        "--speed", type=number(0, 100_000, what="tokens per second; 0 = as fast as possible"), default=None, metavar="S",
        help=f"demo provider: tokens per second (default {DemoDefaults().speed:g}; 0 = as fast as possible), "
        "e.g. --speed 0",
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
        f"e.g. --record run.jsonl (with --mode {' or '.join(relay_modes)}, the embedded relay records the provider's wire)",
    )
    parser.add_argument(
        "--idle-timeout", type=number(0, what="seconds; 0 = none"), default=IDLE_TIMEOUT, metavar="S",
        help=f"seconds with no content before the run fails (default {IDLE_TIMEOUT:g}; 0 = none), "
        "e.g. --idle-timeout 60",
    )
    return parser
