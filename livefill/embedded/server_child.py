"""The embedded server's own process: `python -m livefill.embedded.server_child FD`.

`livefill.embedded.server_process.ServerProcess` starts it with the socket it bound and listens on
as file descriptor FD and the relay token in LIVEFILL_RELAY_TOKEN. It serves the embedded server
(the demo provider and the app's relay, which takes the app's own headers from a loopback peer)
on that socket, prints "ready" once it accepts connections, and stops when its standard input
ends: the parent closed it, or the parent is gone (killed included), so it never outlives the app.
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from livefill import switches
from livefill.embedded.server import EmbeddedServer


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m livefill.embedded.server_child FD", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C in the app's terminal is the app's to handle
    sock = socket.socket(fileno=int(args[0]))
    server = EmbeddedServer(relay_token=switches.text("LIVEFILL_RELAY_TOKEN"))
    server.adopt(sock)
    try:
        server.start()
    except Exception as exc:  # noqa: BLE001 - said to the parent in one line
        print(f"failed: {type(exc).__name__}: {exc}".splitlines()[0], flush=True)
        return 1
    try:
        print("ready", flush=True)
    except OSError:  # the parent is gone already (closed while the server still started): no one to serve
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (nor a flush at exit to fail)
        server.stop()
        return 0
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        server.stop()
    return 0


def _leave(code: int) -> None:
    """Exit now, without the interpreter's teardown: its served modules' garbage took ~0.75 s, and
    the app waits for this process as it closes (everything was ended by `server.stop()`)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _leave(main())
