"""`livefill compare`: one document through several lanes at once, each its own request, compared.

`main(argv)` reads the options (`compare_args`), decides every lane before anything is sent
(`compare_plan`: bad usage is one line on stderr and exit 2), starts the embedded demo provider +
relay when a lane needs it (as `livefill extract` does), runs the lanes concurrently
(`compare_run`) and prints them (`compare_output`: a table, or JSON lines with `--json`).

Exit status: 0 every lane committed, 1 some lane did not, 2 bad usage, 130 Ctrl-C.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from livefill.cli.compare_args import PROG, build_parser
from livefill.cli.extract_args import EXIT_USAGE, UsageProblem

if TYPE_CHECKING:  # (types only: the run's modules load once the options are read)
    from livefill.embedded.server import EmbeddedServer
    from livefill.wire.keys import KeyStore

__all__ = ["main"]


def main(
    argv: list[str] | None = None,
    *,
    keys: KeyStore | None = None,
    server: EmbeddedServer | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """`livefill compare ARGS`; returns the exit status. `keys`, `server`, `environ`: as
    `livefill.cli.extract.main` takes them."""
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

    from livefill.cli.compare_run import run_compare  # lazy: --help, bad options skip the run's modules

    return run_compare(args, keys=keys, server=server, environ=environ, out=out, err=err)

if __name__ == "__main__":
    sys.exit(main())
