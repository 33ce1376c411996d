"""`livefill extract`: one extraction in the terminal — the same run the window makes, without it.

`main(argv)` reads the options (`extract_args`), then hands them to `extract_run`, which decides
the run before anything is sent (`extract_plan`: bad usage is one line on stderr and exit 2),
starts the embedded demo provider + relay when the run needs it, runs it and prints it
(`extract_output`: JSON lines, or the live table with `--pretty`). With no `--provider` the
embedded demo provider is the one asked, as in the app; settled and hybrid modes read a live
provider through that same embedded relay.

Exit status: 0 committed, 1 failed (the form was restored), 2 bad usage, 130 Ctrl-C.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, BinaryIO

from livefill.cli.extract_args import EXIT_USAGE, PROG, UsageProblem, build_parser

if TYPE_CHECKING:  # (types only: the run's modules load once the options are read)
    from livefill.embedded.server import EmbeddedServer
    from livefill.wire.keys import KeyStore

__all__ = ["main"]


def main(
    argv: list[str] | None = None,
    *,
    keys: KeyStore | None = None,
    server: EmbeddedServer | None = None,
    stdin: BinaryIO | None = None,
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

    from livefill.cli.extract_run import run_extract  # lazy: --help, bad options skip the run's modules (790-1410 ms)

    return run_extract(args, keys=keys, server=server, stdin=stdin, environ=environ, out=out, err=err)


if __name__ == "__main__":
    sys.exit(main())
