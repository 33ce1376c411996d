"""The model lists the demo provider serves, each in its API's own shape.

`GET /v1/models` is both Anthropic's and OpenAI's path: a request that carries Anthropic's
headers (`anthropic-version` or `x-api-key`) gets Anthropic's page shape (`type: model`,
`display_name`, `created_at`, `has_more`, `first_id`, `last_id`; `limit` / `after_id` honoured),
any other gets OpenAI's (`object: list`, entries `{id, object: model, created, owned_by}`).
`GET /api/tags` answers in Ollama's shape (`models: [{name, model, modified_at, size, digest,
details}]`). The demo provider answers any model name; these lists name what the app offers first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = ["ANTHROPIC_MODELS", "OLLAMA_MODELS", "OPENAI_MODELS", "anthropic_models", "ollama_tags", "openai_models", "wants_anthropic"]

# Each list begins with the provider's default model (livefill.wire.providers.spec; Anthropic's
# with its display name, checked against the spec by tests/demo/test_server_requests.py).
ANTHROPIC_MODELS: tuple[tuple[str, str], ...] = (
    ("claude-sonnet-5", "Claude Sonnet 5"),
    ("claude-haiku-4-5", "Claude Haiku 4.5"),
    ("claude-demo", "livefill demo"),
)
OPENAI_MODELS: tuple[str, ...] = (PROVIDER_SPECS["openai-chat"].default_model, "gpt-4o-mini", "gpt-demo")
OLLAMA_MODELS: tuple[str, ...] = (f"{PROVIDER_SPECS['ollama'].default_model}:latest", "qwen2.5:0.5b", "demo:latest")

_CREATED = 1727346176  # a fixed timestamp: the lists never change
_CREATED_ISO = "2025-09-29T00:00:00Z"


def wants_anthropic(headers: Mapping[str, str]) -> bool:
    """Whether a `GET /v1/models` came from an Anthropic client."""
    return "anthropic-version" in headers or "x-api-key" in headers


def anthropic_models(query: Mapping[str, str]) -> dict[str, Any]:
    """One page of Anthropic's `GET /v1/models` (`limit`, default 20; `after_id`)."""
    try:
        limit = max(1, min(1000, int(query.get("limit", "20"))))
    except ValueError:
        limit = 20
    ids = [m for m, _ in ANTHROPIC_MODELS]
    start = ids.index(query["after_id"]) + 1 if query.get("after_id") in ids else 0
    page = ANTHROPIC_MODELS[start : start + limit]
    data = [{"type": "model", "id": m, "display_name": name, "created_at": _CREATED_ISO} for m, name in page]
    return {
        "data": data,
        "has_more": start + limit < len(ANTHROPIC_MODELS),
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }


def openai_models() -> dict[str, Any]:
    """OpenAI's `GET /v1/models`."""
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": _CREATED, "owned_by": "livefill"} for m in OPENAI_MODELS],
    }


def ollama_tags() -> dict[str, Any]:
    """Ollama's `GET /api/tags`."""
    models = []
    for name in OLLAMA_MODELS:
        family = name.split(":")[0].rstrip("0123456789.")
        models.append(
            {
                "name": name,
                "model": name,
                "modified_at": "2025-09-29T00:00:00.000000000Z",
                "size": 0,
                "digest": hashlib.sha256(name.encode()).hexdigest(),
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": family,
                    "families": [family],
                    "parameter_size": "demo",
                    "quantization_level": "demo",
                },
            }
        )
    return {"models": models}
