"""`ExtractionRequest`: what to extract, from which provider; and the parts every wire's request shares."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from livefill.errors import UsageError
from livefill.wire.providers.base_urls import join_url, live_base_url
from livefill.wire.providers.spec import PROVIDER_SPECS

__all__ = [
    "DEFAULT_MODELS",
    "MAX_TOKENS",
    "PROVIDERS",
    "STRUCTURED_CHOICES",
    "ExtractionRequest",
    "RequestSchema",
]

#: The provider names open_stream knows, in the order the app lists them (views of PROVIDER_SPECS).
PROVIDERS: tuple[str, ...] = tuple(PROVIDER_SPECS)

#: The model asked for when ExtractionRequest.model is None.
DEFAULT_MODELS: dict[str, str] = {s.name: s.default_model for s in PROVIDER_SPECS.values()}

#: The output token limit sent when ExtractionRequest.max_tokens is None (where the wire sends one).
MAX_TOKENS: dict[str, int] = {s.name: s.max_tokens for s in PROVIDER_SPECS.values() if s.max_tokens}

#: The structured choices each provider can honour.
STRUCTURED_CHOICES: dict[str, tuple[str, ...]] = {s.name: s.structured for s in PROVIDER_SPECS.values()}


class RequestSchema(Protocol):
    """What a request needs of its schema: the name the model is asked to record it under, and
    the JSON Schema sent upstream. `livefill.extraction.schemas.SchemaSource` is one (the caller
    resolves the schema, and checks it, before it builds a request)."""

    @property
    def name(self) -> str: ...

    @property
    def json_schema(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, kw_only=True)
class ExtractionRequest:
    """One structured extraction to stream.

    `provider` is one of PROVIDERS; `base_url` the server root (`http://127.0.0.1:PORT` for the
    demo provider, `https://api.anthropic.com` ...); `schema` the resolved schema (its name and its
    JSON Schema: `livefill.extraction.schemas.resolve_schema(...)`); `document` the text to extract
    from. `demo_headers` are the demo provider's `x-demo-*` knobs, sent as request headers. `fine_grained` asks Anthropic for fine-grained tool streaming.

    An empty `base_url` means the provider's live address (`live_base_url`: its environment
    variable, else the vendor's). `api_key` "" sends no credential (an OpenAI-compatible server
    without a key); it never appears in a repr. `structured` is one of spec.STRUCTURED (which ones a
    provider takes: STRUCTURED_CHOICES). `max_tokens` bounds the output (None: MAX_TOKENS for the
    provider; a llama.cpp server otherwise writes until its context is full, and vLLM refuses a
    limit past its context).
    """

    provider: str
    base_url: str
    schema: RequestSchema = field(repr=False)
    document: str
    model: str | None = None
    api_key: str = field(default="demo", repr=False)  # never in a repr, a log line or a trace
    demo_headers: Mapping[str, str] = field(default_factory=dict)
    fine_grained: bool = False
    structured: str = "tools"
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise UsageError(f"unknown provider {self.provider!r}; known: {', '.join(PROVIDERS)}")
        for name in self.demo_headers:
            if not name.lower().startswith("x-demo-"):
                raise UsageError(f"demo header {name!r} does not start with x-demo-")
        if self.structured not in STRUCTURED_CHOICES[self.provider]:
            raise UsageError(
                f"{self.provider} cannot force structure with {self.structured!r}; "
                f"choose {' or '.join(STRUCTURED_CHOICES[self.provider])}"
            )
        if not self.base_url:
            object.__setattr__(self, "base_url", live_base_url(self.provider))

    @property
    def schema_name(self) -> str:
        """The schema's name (a bundled name, or a person's schema's name)."""
        return self.schema.name

    @property
    def tool_name(self) -> str:
        """The tool (or json_schema) name the model is asked to fill: `record_<schema>`."""
        return f"record_{self.schema_name}"

    @property
    def model_name(self) -> str:
        return self.model or DEFAULT_MODELS[self.provider]

    @property
    def output_limit(self) -> int:
        """The output token limit sent: `max_tokens`, else MAX_TOKENS[provider]."""
        return self.max_tokens if self.max_tokens is not None else MAX_TOKENS.get(self.provider, 4096)

    @property
    def json_mode(self) -> bool:
        """True when the JSON arrives as the message's text (json_schema / json_object), not as
        tool-call arguments."""
        return self.structured != "tools"

    def json_schema(self) -> dict[str, Any]:
        """The schema's JSON Schema: a copy of its own for each caller to change."""
        return json.loads(json.dumps(self.schema.json_schema))

    def prompt(self) -> str:
        """The user message: the instruction and the document."""
        return (
            f"Extract the {self.schema_name} described by the document below as {self.tool_name}. "
            "Fill every field exactly as the document states it.\n\n"
            f"<document>\n{self.document}\n</document>"
        )

    def url(self, path: str) -> str:
        """`path` (starting with /) under base_url, without a doubled slash or a doubled /v1."""
        return join_url(self.base_url, path)
