"""`livefill-relay`: the relay on its own under uvicorn, with every connection limit livefill-server has.

    livefill-relay [--host 127.0.0.1] [--port 8700] [--workers N] [--allow-remote]
                   [--head-timeout S] [--max-connections N] [--keep-alive S]

Plain `uvicorn --factory livefill.relay.app:create_relay_app` cannot name a protocol class, so it
has no request-head deadline (and, with `--workers`, no TCP_NODELAY). This launcher is the same
uvicorn with `uvicorn_settings()`: livefill's protocol (livefill.serving.connection: a request head
within `--head-timeout` seconds, TCP_NODELAY, a client's departure heard at once),
`limit_concurrency` (503 beyond `--max-connections`), a keep-alive timeout and uvicorn's h11
head-size limit. It binds the socket itself (so `--port 0` resolves before anything starts),
prints `livefill-relay listening on http://HOST:PORT` once bound, and runs one server, or
`--workers` processes under uvicorn's supervisor sharing that socket. The relay's own settings
come from the environment, as for `create_relay_app` (LIVEFILL_RELAY_TOKEN is required).
`uvicorn_settings(...)` is also what to pass to `uvicorn.Config` / `uvicorn.run` in a program of
your own.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from livefill.defaults import H11_HEAD_BUFFER, HEAD_TIMEOUT
from livefill.errors import UsageError
from livefill.loopback import is_loopback_host
from livefill.relay.settings import RelaySettings
from livefill.serving.connection import install_quiet_logs, protocol_class
from livefill.serving.sockets import base_url, listening_socket

__all__ = ["uvicorn_settings", "main", "PROTOCOL", "APP"]

PROTOCOL = "livefill.serving.connection:GuardedH11Protocol"
APP = "livefill.relay.app:create_relay_app"


def uvicorn_settings(
    *, head_timeout: float = HEAD_TIMEOUT, max_connections: int = 500, keep_alive: float = 5.0, workers: int = 1
) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.Config` / `uvicorn.run` that give a relay livefill-server's
    connection limits. With one worker the protocol class is handed over with its head deadline.
    With `workers` > 1 uvicorn spawns processes that import the protocol by its name (a class made
    here cannot travel to them): the deadline then travels in LIVEFILL_HEAD_TIMEOUT, which this
    sets in the environment the workers inherit."""
    if workers > 1:
        os.environ["LIVEFILL_HEAD_TIMEOUT"] = f"{float(head_timeout):g}"
        http: str | type = PROTOCOL
    else:
        http = protocol_class(head_timeout)
        install_quiet_logs()
    return {
        "http": http,
        "limit_concurrency": int(max_connections),
        "timeout_keep_alive": keep_alive,
        "h11_max_incomplete_event_size": H11_HEAD_BUFFER,
        "lifespan": "off",
        "access_log": False,
        "server_header": False,
        "timeout_graceful_shutdown": 5,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="livefill-relay",
        description="Serve livefill's relay on its own (settings from LIVEFILL_RELAY_* variables).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8700, help="port to bind (default 8700; 0: a free port)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes sharing the socket (default 1)")
    parser.add_argument("--allow-remote", action="store_true", help="allow binding a non-loopback host")
    parser.add_argument(
        "--head-timeout", type=float, default=HEAD_TIMEOUT, help=f"seconds to send a request head (default {HEAD_TIMEOUT:g})"
    )
    parser.add_argument("--max-connections", type=int, default=500, help="beyond this, 503 (default 500, per worker)")
    parser.add_argument("--keep-alive", type=float, default=5.0, help="idle keep-alive seconds (default 5)")
    return parser


def _bind(host: str, port: int) -> tuple[socket.socket, str]:
    sock = listening_socket(host, port, backlog=2048)
    sock.set_inheritable(True)
    return sock, base_url(host, sock.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not is_loopback_host(args.host) and not args.allow_remote:
        print(f"livefill-relay: refusing to bind {args.host!r} (not loopback) without --allow-remote", file=sys.stderr)
        return 2
    for name, value in (("--workers", args.workers), ("--max-connections", args.max_connections)):
        if value < 1:
            print(f"livefill-relay: {name} must be at least 1", file=sys.stderr)
            return 2
    if args.head_timeout <= 0 or args.keep_alive <= 0:
        print("livefill-relay: --head-timeout and --keep-alive must be positive", file=sys.stderr)
        return 2
    try:
        RelaySettings.from_env()  # say what is missing before binding anything
    except UsageError as exc:
        print(f"livefill-relay: {exc}", file=sys.stderr)
        return 2
    try:
        sock, url = _bind(args.host, args.port)
    except OSError as exc:
        print(f"livefill-relay: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    settings = uvicorn_settings(
        head_timeout=args.head_timeout, max_connections=args.max_connections, keep_alive=args.keep_alive,
        workers=args.workers,
    )
    config = uvicorn.Config(APP, factory=True, workers=args.workers, log_level="warning", **settings)
    print(f"livefill-relay listening on {url}", flush=True)
    if args.workers > 1:
        Multiprocess(config, sockets=[sock]).run()
        return 0
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
