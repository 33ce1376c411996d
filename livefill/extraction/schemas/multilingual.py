from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ContactCard(BaseModel):
    """A business contact written in several scripts, full of characters that need escaping."""

    model_config = ConfigDict(extra="forbid", title="Contact card")

    company: str = Field(min_length=1)
    contact_person: str
    city: str
    greeting: str
    motto: str
    address_lines: list[str]
    remark: str = Field(json_schema_extra={"x-prose": True})
