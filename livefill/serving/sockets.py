"""A listening TCP socket and the base URL it answers on: the one way every server here binds
(livefill.serving.runner's LoopbackServer, the app's server process, the relay's workers)."""

from __future__ import annotations

import socket

__all__ = ["base_url", "listening_socket"]


def listening_socket(host: str, port: int = 0, *, backlog: int = 128) -> socket.socket:
    """A socket bound to (`host`, `port`) and listening (IPv6 for a host with ':'; port 0: one the
    system picks); closed again if binding fails."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


def base_url(host: str, port: int) -> str:
    """'http://HOST:PORT', an IPv6 host in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
