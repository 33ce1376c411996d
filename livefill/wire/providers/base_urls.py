"""Where each provider is: its live base URL (read from the environment as the vendor's SDK reads
it), Ollama's `OLLAMA_HOST`, and joining a request path onto a base URL."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from livefill.errors import UsageError
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = ["BASE_URL_VARIABLES", "DEFAULT_HOST", "LIVE_BASE_URLS", "join_url", "live_base_url", "ollama_base_url"]

#: Where each live provider is when no base URL is given (`live_base_url` reads the environment first).
LIVE_BASE_URLS: dict[str, str] = {s.name: s.base_url for s in PROVIDER_SPECS.values() if s.base_url}

#: The environment variable that moves a live provider elsewhere, as the vendors' SDKs read it.
BASE_URL_VARIABLES: dict[str, str] = {
    s.name: s.base_url_variable for s in PROVIDER_SPECS.values() if s.base_url_variable
}

#: Where Ollama listens when OLLAMA_HOST is not set.
DEFAULT_HOST = "http://127.0.0.1:11434"


def live_base_url(provider: str, environ: Mapping[str, str] | None = None) -> str:
    """The base URL of a live provider when none is given: its environment variable
    (BASE_URL_VARIABLES; OLLAMA_HOST read as the ollama client does), else LIVE_BASE_URLS.
    UsageError for a provider that has none (openai-compatible, raw)."""
    environ = os.environ if environ is None else environ
    if provider == "ollama":
        return ollama_base_url(environ)
    if provider not in LIVE_BASE_URLS:
        raise UsageError(f"the {provider} provider needs a base URL (there is no default one)")
    return environ.get(BASE_URL_VARIABLES[provider]) or LIVE_BASE_URLS[provider]


def join_url(base_url: str, path: str) -> str:
    """`path` (starting with /) under `base_url`, without a doubled slash or a doubled /v1."""
    base = base_url.rstrip("/")
    if base.endswith("/v1") and path.startswith("/v1/"):
        path = path[3:]
    return base + path


def ollama_base_url(environ: Mapping[str, str] | None = None) -> str:
    """Where Ollama is: `OLLAMA_HOST` read as the ollama client reads it, else DEFAULT_HOST.

    `host`, `host:port`, `:port`, `scheme://host[:port][/path]` are all accepted; a missing
    scheme is http, a missing host 127.0.0.1, a missing port 11434 (80 / 443 when the scheme is
    given without one); `0.0.0.0` / `::` (listen addresses, often set for the server in the same
    environment) are reached at 127.0.0.1.
    """
    environ = os.environ if environ is None else environ
    raw = (environ.get("OLLAMA_HOST") or "").strip()
    if not raw:
        return DEFAULT_HOST
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "http", raw
    default_port = 11434
    if sep and scheme in ("http", "https"):  # as the client does: case-sensitive
        default_port = 443 if scheme == "https" else 80
    split = urlsplit(f"{scheme}://{rest}")
    host = split.hostname or "127.0.0.1"
    try:
        port = split.port or default_port
    except ValueError:
        raise UsageError(f"OLLAMA_HOST={raw!r} has a port that is not a number") from None
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}{split.path.rstrip('/')}"
