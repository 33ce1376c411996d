from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Ticket(BaseModel):
    """Support-ticket triage."""

    model_config = ConfigDict(extra="forbid", title="Support ticket")

    title: str = Field(min_length=1)
    customer_email: str
    category: Literal["billing", "bug", "outage", "account", "feature_request", "other"]
    priority: int = Field(strict=True, ge=1, le=5, description="1 = urgent, 5 = whenever")
    tags: list[str]
    summary: str = Field(json_schema_extra={"x-prose": True})
