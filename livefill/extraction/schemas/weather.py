from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class WeatherQuery(BaseModel):
    """The smallest extraction: which city to look up."""

    model_config = ConfigDict(extra="forbid", title="Weather query")

    city: str = Field(min_length=1)
