"""`ExtractionRequest`: what to extract, from which provider; and the parts every wire's request shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.errors import UsageError
from core.schemas import resolve_schema, schema_model

__all__ = ["DEFAULT_MODELS", "PROVIDERS", "ExtractionRequest"]

#: The provider names open_stream knows, in the order the app lists them.
PROVIDERS: tuple[str, ...] = ("anthropic", "openai-chat", "openai-responses", "ollama", "raw")

#: The model asked for when ExtractionRequest.model is None (the demo provider accepts any).
DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-5",
    "openai-chat": "gpt-4o",
    "openai-responses": "gpt-4o",
    "ollama": "llama3.2",
    "raw": "raw",
}


@dataclass(frozen=True, kw_only=True)
class ExtractionRequest:
    """One structured extraction to stream.

    `provider` is one of PROVIDERS; `base_url` the server root (`http://127.0.0.1:PORT` for the
    demo provider, `https://api.anthropic.com` ...); `schema_name` a key of core.schemas.SCHEMAS;
    `schema_json` a person's JSON Schema instead (core.user_schema; `schema_name` is then its name).
    `document` the text to extract from. `demo_headers` are the demo provider's `x-demo-*` knobs,
    sent as request headers. `fine_grained` asks Anthropic for fine-grained tool streaming.
    """

    provider: str
    base_url: str
    schema_name: str
    document: str
    schema_json: Mapping[str, Any] | None = None
    model: str | None = None
    api_key: str = "demo"
    demo_headers: Mapping[str, str] = field(default_factory=dict)
    fine_grained: bool = False

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise UsageError(f"unknown provider {self.provider!r}; known: {', '.join(PROVIDERS)}")
        try:
            if self.schema_json is not None:
                resolve_schema(self.schema_json)  # SchemaError (InputError) before any request
            else:
                schema_model(self.schema_name)
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
        for name in self.demo_headers:
            if not name.lower().startswith("x-demo-"):
                raise UsageError(f"demo header {name!r} does not start with x-demo-")

    @property
    def tool_name(self) -> str:
        """The tool (or json_schema) name the model is asked to fill: `record_<schema>`."""
        return f"record_{self.schema_name}"

    @property
    def model_name(self) -> str:
        return self.model or DEFAULT_MODELS[self.provider]

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the schema's pydantic model."""
        if self.schema_json is not None:
            return dict(resolve_schema(self.schema_json).json_schema)
        return schema_model(self.schema_name).model_json_schema()

    def prompt(self) -> str:
        """The user message: the instruction and the document."""
        return (
            f"Extract the {self.schema_name} described by the document below as {self.tool_name}. "
            "Fill every field exactly as the document states it.\n\n"
            f"<document>\n{self.document}\n</document>"
        )

    def url(self, path: str) -> str:
        """`path` (starting with /) under base_url, without a doubled slash or a doubled /v1."""
        base = self.base_url.rstrip("/")
        if base.endswith("/v1") and path.startswith("/v1/"):
            path = path[3:]
        return base + path
