"""The `livefill-server` console script: the demo provider (and relay) as a standalone server.

    livefill-server [--host 127.0.0.1] [--port 0] [--relay-token-file PATH] [--allow-remote]
                    [--allowed-host NAME[:PORT]]... [--max-body-bytes N] [--head-timeout S]
                    [--max-connections N] [--speed TOKENS_PER_S] [--ttft MS]

The relay token comes from `LIVEFILL_RELAY_TOKEN` or `--relay-token-file PATH` (preferred: a
`--relay-token T` argument is visible to every local user in the process list), else is random
and printed.

Every option is checked before anything starts: a bad value is one line and exit 2.

The first line it prints is `livefill-server listening on http://HOST:PORT`, written (and
flushed) only once the socket accepts connections. It binds loopback unless told otherwise and
refuses a non-loopback host without `--allow-remote`. Ctrl+C (or SIGTERM) stops it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from dataclasses import replace

from livefill import switches
from livefill.cli.arg_types import Parser, existing_file, number, port, whole_number
from livefill.defaults import HEAD_TIMEOUT
from livefill.demo.knobs import DemoDefaults
from livefill.loopback import is_loopback_host as is_loopback
from livefill.serving.guard import DEFAULT_MAX_BODY_BYTES, GuardLimits
from livefill.embedded.server import EmbeddedServer


DESCRIPTION = """\
Serve livefill's demo provider (the Anthropic, OpenAI and Ollama streaming
wires, with faults on demand) and its relay on your machine; no key needed.

examples:
  # on a free loopback port; it prints where, then the relay token
  livefill-server

  # a fixed port and a token of your own, kept out of the process list
  LIVEFILL_RELAY_TOKEN=secret livefill-server --port 8700

  # slower, with a pause before the first token, for a demo on a projector
  livefill-server --port 8700 --speed 15 --ttft 800

  # then, from another terminal: the weather scenario, cut off halfway
  curl -sN http://127.0.0.1:8700/v1/messages \\
      -H 'content-type: application/json' \\
      -H 'x-demo-scenario: weather' -H 'x-demo-fault: disconnect' \\
      -d '{"model": "demo", "max_tokens": 1024, "stream": true,
           "messages": [{"role": "user", "content": "hi"}]}'"""

EPILOG = """\
the relay's protocol: docs/relay-v1.md
the relay token: LIVEFILL_RELAY_TOKEN or --relay-token-file PATH (a --relay-token
argument shows in the process list); without either, a random one is printed
x-livefill-record and x-livefill-upstream-key (the app's own relay's headers) are
refused with 403: this server writes no file and forwards no key a client hands it
exit status: 0 stopped (Ctrl+C or SIGTERM), 1 could not listen, 2 bad usage
(one line saying why)
"""


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="livefill-server",
        usage="livefill-server [--host H] [--port N] [--speed TOKENS/S] [OPTIONS]",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", type=_host, help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=port, default=0, help="port to bind (default 0: a free port)")
    parser.add_argument(
        "--relay-token",
        default=None,
        type=_token,
        help="bearer token the relay requires (visible in the process list: prefer LIVEFILL_RELAY_TOKEN "
        "or --relay-token-file; default: random)",
    )
    parser.add_argument("--relay-token-file", default=None, type=existing_file,
                        help="read the relay's bearer token from this file")
    parser.add_argument(
        "--allow-remote", action="store_true", help="allow binding a non-loopback host (anyone can connect)"
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        type=_host,
        help="another Host header value (NAME or NAME:PORT) to answer to, e.g. behind --allow-remote",
    )
    parser.add_argument("--max-body-bytes", type=whole_number(1, 1 << 30, what="bytes"), default=None,
                        help=f"largest request body (default {DEFAULT_MAX_BODY_BYTES >> 20} MB)")
    parser.add_argument(
        "--head-timeout", type=number(0, 3600, low_open=True, what="seconds"), default=HEAD_TIMEOUT,
        help=f"seconds a client has to send a request head (default {HEAD_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections", type=whole_number(1, 1_000_000), default=500,
        help="connections beyond this get 503 (default 500)",
    )
    parser.add_argument("--speed", type=number(0, 100_000, what="tokens per second; 0 = as fast as possible"),
                        default=None, help="default tokens per second (0 = max)")
    parser.add_argument("--ttft", type=number(0, 600_000, what="milliseconds"), default=None,
                        help="default milliseconds before the first token")
    return parser


def _host(text: str) -> str:
    if not text.strip() or any(c.isspace() for c in text.strip()):
        raise argparse.ArgumentTypeError(f"not a host name or address: {text!r}")
    return text.strip()


def _token(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the token is empty")
    return text


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not is_loopback(args.host) and not args.allow_remote:
        print(
            f"livefill-server: refusing to bind {args.host!r}: it is not a loopback address and the demo "
            "provider has no access control; pass --allow-remote to do it anyway",
            file=sys.stderr,
            flush=True,
        )
        return 2
    token = args.relay_token or switches.text("LIVEFILL_RELAY_TOKEN")
    if args.relay_token_file:
        try:
            with open(args.relay_token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as exc:
            print(f"livefill-server: cannot read the relay token file {args.relay_token_file}: {exc}", file=sys.stderr)
            return 2
        if not token:
            print(f"livefill-server: the relay token file {args.relay_token_file} is empty", file=sys.stderr)
            return 2
    limits = GuardLimits(
        max_body_bytes=args.max_body_bytes if args.max_body_bytes is not None else DEFAULT_MAX_BODY_BYTES,
        allowed_hosts=frozenset(args.allowed_host),
    )

    defaults = DemoDefaults()
    if args.speed is not None:
        defaults = replace(defaults, speed=args.speed)
    if args.ttft is not None:
        defaults = replace(defaults, ttft_ms=args.ttft)
    server = EmbeddedServer(
        host=args.host,
        port=args.port,
        relay_token=token,
        defaults=defaults,
        limits=limits,
        head_timeout=args.head_timeout,
        max_connections=args.max_connections,
        app_headers=False,  # the app's own relay only: a token holder must not write files or hand keys
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        url = server.start()
    except OSError as exc:
        print(f"livefill-server: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"livefill-server listening on {url}", flush=True)
    if token is None:
        print(f"relay token: {server.relay_token}", flush=True)
    try:
        while not stop.wait(0.5):
            if not server.running:
                return 1
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
