"""Is an address this machine? The one check used wherever a key may travel only over loopback."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["is_loopback_host", "is_loopback_url"]


def is_loopback_host(host: str) -> bool:
    """Whether `host` is a loopback IP address (127.0.0.0/8, ::1) or `localhost`. A name such as
    `127.example.com` is not: only addresses, and the one name every resolver keeps local."""
    host = host.strip("[]").split("%", 1)[0]
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether `url`'s host is a loopback address (see is_loopback_host)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    return is_loopback_host(host)
