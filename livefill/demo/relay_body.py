"""The relay body's "demo" object: its pydantic shape and the demo knobs it carries.

Kept apart from `livefill.demo.protocol` so that reading the knobs (the app's options, `livefill
extract --help`) does not load pydantic; the relay's request model (`livefill.relay.request`) and
its job read bodies through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from livefill.demo.protocol import FIELDS, DemoKnobs

__all__ = ["RelayDemoBody", "knobs_from_relay_demo"]

#: The shape of the relay body's "demo" object (unknown keys refused), checked before the values;
#: built from `FIELDS`. Its validator is built on first use (`defer_build`): the app's window
#: shows before any relay body is checked.
RelayDemoBody: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "RelayDemoBody",
    __config__=ConfigDict(extra="forbid", defer_build=True),
    **{f.body_key: (f.json_type | None, Field(default=None, **(f.body_limits or {}))) for f in FIELDS if f.body_key},
)


def knobs_from_relay_demo(demo: Mapping[str, Any] | BaseModel | None, *, scenario: str | None = None) -> DemoKnobs:
    """The knobs of a relay body's "demo" object (and its top-level `scenario`).

    A mapping is first checked against `RelayDemoBody` (pydantic's ValidationError for a wrong
    shape); then each value as its header would be (KnobError)."""
    if demo is None:
        return DemoKnobs(scenario=scenario)
    body = demo if isinstance(demo, BaseModel) else RelayDemoBody.model_validate(dict(demo))
    given = body.model_dump(exclude_none=True)
    return DemoKnobs(scenario=scenario, **{f.name: given[f.body_key] for f in FIELDS if f.body_key in given})
