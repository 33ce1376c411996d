"""The facts about each provider, in one table: `PROVIDER_SPECS`, one `ProviderSpec` per name.

Everything the app, the command lines, the relay, traces and the demo provider need to know
about a provider is a field here; the tables elsewhere are views of this one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROVIDER_SPECS", "STRUCTURED", "ProviderSpec", "spec"]

#: How structure is forced on the model (`ExtractionRequest.structured`):
#: tools        a forced tool / function call whose arguments are the JSON (the default)
#: json_schema  structured output: `response_format` / `text.format` of type json_schema
#: json_object  `response_format: {"type": "json_object", "schema": ...}` (llama.cpp and kin)
STRUCTURED: tuple[str, ...] = ("tools", "json_schema", "json_object")


@dataclass(frozen=True, kw_only=True, slots=True)
class ProviderSpec:
    """One provider: the wire it speaks and how livefill reaches it."""

    name: str  # the provider's id everywhere ("openai-chat")
    wire: str  # the demo provider's wire a trace of it replays on
    label: str  # what a person reads ("OpenAI Chat")
    default_model: str  # asked for when no model is chosen (the demo provider accepts any)
    structured: tuple[str, ...]  # the STRUCTURED choices it honours, the default first
    base_url: str | None = None  # the live service's address; None: chosen by its base URL
    base_url_variable: str | None = None  # environment variable that moves it, as the vendor's SDK reads it
    key_variable: str | None = None  # environment variable of its API key; None: it takes none
    max_tokens: int | None = None  # output limit sent when none is given (where the wire sends one)
    in_app: bool = True  # offered in the window's provider box (raw is a demo-only wire)
    fine_grained: bool = False  # has Anthropic's fine-grained tool streaming toggle


PROVIDER_SPECS: dict[str, ProviderSpec] = {
    s.name: s
    for s in (
        ProviderSpec(
            name="anthropic", wire="anthropic", label="Anthropic", default_model="claude-sonnet-5",
            structured=("tools",), base_url="https://api.anthropic.com",
            base_url_variable="ANTHROPIC_BASE_URL", key_variable="ANTHROPIC_API_KEY", max_tokens=16384,
            fine_grained=True,
        ),
        ProviderSpec(
            name="openai-chat", wire="openai-chat", label="OpenAI Chat", default_model="gpt-4o",
            structured=STRUCTURED, base_url="https://api.openai.com/v1",
            base_url_variable="OPENAI_BASE_URL", key_variable="OPENAI_API_KEY",
        ),
        ProviderSpec(
            name="openai-responses", wire="openai-responses", label="OpenAI Responses", default_model="gpt-4o",
            structured=("tools", "json_schema"), base_url="https://api.openai.com/v1",
            base_url_variable="OPENAI_BASE_URL", key_variable="OPENAI_API_KEY",
        ),
        # An OpenAI-compatible server names its own models; llama.cpp's server answers any name.
        ProviderSpec(
            name="openai-compatible", wire="openai-chat", label="OpenAI-compat", default_model="default",
            structured=STRUCTURED, max_tokens=4096,
        ),
        # Ollama streams JSON through `format` whatever is chosen ("json_object": `format: "json"`).
        ProviderSpec(
            name="ollama", wire="ollama", label="Ollama", default_model="llama3.2", structured=STRUCTURED,
            base_url_variable="OLLAMA_HOST",
        ),
        ProviderSpec(name="raw", wire="raw", label="Raw", default_model="raw", structured=STRUCTURED, in_app=False),
    )
}


def spec(provider: str) -> ProviderSpec:
    """The spec of `provider`; KeyError names the known ones."""
    try:
        return PROVIDER_SPECS[provider]
    except KeyError:
        raise KeyError(f"unknown provider {provider!r} (known: {', '.join(PROVIDER_SPECS)})") from None
