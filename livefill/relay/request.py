"""The body of `POST /relay/v1/extract` (docs/relay-v1.md, "The request"): one model for both sides.

A client builds an `ExtractRequest` and sends `to_json()`; the relay reads the bytes it received
with `parse_request` (a `BadRequest` carries the message its 400 answer says). The shape is
checked here; what needs the bundled scenarios and schemas (a name that exists) is the relay's.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from livefill.demo.relay_body import RelayDemoBody
from livefill.errors import ProtocolError, UsageError
from livefill.extraction.modes import MODES
from livefill.wire.providers.spec import PROVIDER_SPECS, STRUCTURED

__all__ = ["RELAY_MODES", "RELAY_PROVIDERS", "BadRequest", "ExtractRequest", "parse_request"]

#: The providers a relay reads for a client: those the app offers (the raw wire is the demo's own).
RELAY_PROVIDERS: tuple[str, ...] = tuple(name for name, s in PROVIDER_SPECS.items() if s.in_app)
#: The modes that read the relay (the others read the provider's wire themselves).
RELAY_MODES: tuple[str, ...] = tuple(mode.value for mode, s in MODES.items() if s.needs_relay)


class BadRequest(ProtocolError):
    """A body the relay refuses (400 `invalid_request`); the message names the key at fault."""


class ExtractRequest(BaseModel):
    """One run asked of the relay: its source (a scenario, or a schema and a document), the
    upstream, and how to settle it. Unknown keys are refused; the defaults are the protocol's.
    Its validator is built on first use (`defer_build`: the app's window shows first)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    scenario: str | None = None
    schema_name: str | dict[str, Any] | None = Field(default=None, alias="schema")  # a name, or a JSON Schema
    document: str | None = None
    provider: Literal[RELAY_PROVIDERS] = "anthropic"  # type: ignore[valid-type]
    upstream: Literal["demo", "live"] = "demo"
    base_url: str | None = None
    model: str | None = None
    structured: Literal[STRUCTURED] = "tools"  # type: ignore[valid-type]
    fine_grained: bool = False
    mode: Literal[RELAY_MODES] = "settled"  # type: ignore[valid-type]
    idle_timeout: float | None = Field(default=None, gt=0, le=3600)  # the client's limit: the relay keeps the shorter
    demo: RelayDemoBody | None = None  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _one_source(self) -> ExtractRequest:
        if self.scenario is not None:
            if self.schema_name is not None or self.document is not None:
                raise ValueError('give either "scenario" or "schema" + "document", not both')
        elif self.schema_name is None or self.document is None:
            raise ValueError('give either "scenario" or both "schema" and "document"')
        if self.upstream == "live" and self.demo is not None:
            raise ValueError('"demo" knobs apply only to "upstream": "demo"')
        if self.upstream == "demo" and self.base_url is not None:
            raise ValueError('"base_url" applies only to "upstream": "live"')
        if self.upstream == "live" and self.provider == "openai-compatible" and not self.base_url:
            raise ValueError('an "openai-compatible" upstream needs its "base_url"')
        choices = PROVIDER_SPECS[self.provider].structured
        if self.structured not in choices:
            raise ValueError(f"{self.provider} cannot force structure with {self.structured!r}; choose {' or '.join(choices)}")
        return self

    @classmethod
    def build(cls, **fields: Any) -> ExtractRequest:
        """A request from keyword arguments (`schema=` for the schema); UsageError with the
        message a relay would refuse it with."""
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            raise UsageError(f"relay request: {_first_error(exc)}") from None

    def to_json(self) -> dict[str, Any]:
        """The body to send: `provider`, `upstream` and `mode` always, every other key only when it
        differs from its default (a relay older than a key refuses it; a default need not be said)."""
        said = self.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        return {"provider": self.provider, "upstream": self.upstream, "mode": self.mode, **said}


def parse_request(raw: bytes) -> ExtractRequest:
    """The request a body's bytes hold; BadRequest naming what is wrong."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BadRequest("the body is not JSON this relay takes: it is nested too deeply") from None
    except ValueError as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    try:
        return ExtractRequest.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(_first_error(exc)) from None


def _first_error(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where + ': ' if where else ''}{first['msg']}"
