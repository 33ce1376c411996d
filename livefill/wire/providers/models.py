"""The models a provider offers, for the app's model picker.

    names = await list_models("anthropic", "", key)             # ["claude-sonnet-5", ...]
    names = await list_models("openai-compatible", "http://127.0.0.1:8080/v1", "")
    names = await list_models("ollama", "", "")                  # OLLAMA_HOST, else 127.0.0.1:11434

How this works
--------------
One GET per page, in each API's own shape:

    anthropic                     GET /v1/models?limit=1000  x-api-key + anthropic-version;
                                  {"data": [{"id", "type": "model", ...}], "has_more", "last_id"}
                                  (pages followed with after_id)
    openai-chat / -responses /
    openai-compatible             GET /v1/models  Authorization: Bearer (none without a key);
                                  {"object": "list", "data": [{"id", ...}]}
    ollama                        GET /api/tags   {"models": [{"name", ...}]}

An empty base URL means the provider's live address (`livefill.wire.providers.base_urls.live_base_url`).
Network failures and error statuses go through the one translation boundary
(`livefill.wire.providers.transport.translate_errors` / `http_failures.http_failure`) and arrive as livefill.errors
(UpstreamError with `.status`, ConnectionLost, StreamTimeout); a body of the wrong shape is a
ProtocolError. The key is sent only as a header, never put in a message.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from livefill.errors import ProtocolError, UsageError
from livefill.wire.providers.base_urls import join_url, live_base_url
from livefill.wire.providers.request import PROVIDERS
from livefill.loopback import is_loopback_url
from livefill.wire.providers.http_failures import host_of, http_failure
from livefill.wire.providers.transport import _cap_error_body, _ssl_context, translate_errors

__all__ = ["ANTHROPIC_VERSION", "list_models"]

#: The API version header sent to Anthropic's model list.
ANTHROPIC_VERSION = "2023-06-01"

_MAX_PAGES = 20
_PAGE_LIMIT = 1000  # models per Anthropic page (its maximum)
_BODY_LIMIT = 4 * 1024 * 1024


async def list_models(provider: str, base_url: str, api_key: str | None) -> list[str]:
    """The model names `provider` at `base_url` offers, in the order it lists them."""
    if provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
    if provider == "raw":
        raise UsageError("the unframed wire has no model list")
    base = base_url or live_base_url(provider)
    url = join_url(base, "/api/tags" if provider == "ollama" else "/v1/models")
    headers: dict[str, str] = {"accept": "application/json"}
    if provider == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if api_key:
            headers["x-api-key"] = api_key
    elif api_key:
        headers["authorization"] = f"Bearer {api_key}"
    what = f"{provider} model list at {host_of(url)}"
    async with httpx.AsyncClient(
        timeout=httpx.Timeout(15.0),
        trust_env=not is_loopback_url(url),
        verify=_ssl_context(),
        event_hooks={"response": [_cap_error_body]},  # an error body is read to 64 KB at most
    ) as client:
        if provider == "ollama":
            return _ollama_names(await _get(client, url, headers, what, api_key), what)
        if provider != "anthropic":
            return _openai_names(await _get(client, url, headers, what, api_key), what)
        names: list[str] = []
        params: dict[str, str] = {"limit": str(_PAGE_LIMIT)}
        for _ in range(_MAX_PAGES):
            page = await _get(client, url, headers, what, api_key, params)
            names += _openai_names(page, what)
            last = page.get("last_id")
            if page.get("has_more") is not True or not isinstance(last, str) or not last:
                break
            params = {"limit": str(_PAGE_LIMIT), "after_id": last}
        return names


async def _get(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    what: str,
    api_key: str | None,
    params: dict[str, str] | None = None,
) -> dict[str, Any]:
    with translate_errors(what, url=url, secret=api_key):
        response = await client.get(url, headers=headers, params=params)
        body = response.content
    if response.status_code >= 400:
        raise http_failure(response.status_code, body, url=url, headers=response.headers, secret=api_key)
    if len(body) > _BODY_LIMIT:
        raise ProtocolError(f"{what}: the answer is larger than {_BODY_LIMIT // (1024 * 1024)} MB")
    try:
        data = json.loads(body)
    except ValueError:
        raise ProtocolError(f"{what}: the answer is not JSON") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"{what}: the answer is not a JSON object")
    return data


def _openai_names(data: dict[str, Any], what: str) -> list[str]:
    entries = data.get("data")
    if not isinstance(entries, list):
        raise ProtocolError(f"{what}: the answer has no 'data' list")
    names = [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]]
    if len(names) != len(entries):
        raise ProtocolError(f"{what}: a 'data' entry has no model id")
    return names


def _ollama_names(data: dict[str, Any], what: str) -> list[str]:
    entries = data.get("models")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ProtocolError(f"{what}: 'models' is not a list")
    names = []
    for entry in entries:
        name = entry.get("name") or entry.get("model") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise ProtocolError(f"{what}: a 'models' entry has no name")
        names.append(name)
    return names
