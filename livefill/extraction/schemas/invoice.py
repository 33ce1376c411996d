from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class LineItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sku: str = Field(min_length=1)
    description: str
    qty: int = Field(strict=True, ge=1)
    unit_price: float = Field(strict=True, ge=0)


class Invoice(BaseModel):
    """An invoice as a person would key it into an accounting system."""

    model_config = ConfigDict(extra="forbid", title="Invoice")

    customer_name: str = Field(min_length=1)
    invoice_number: str
    amount: float = Field(strict=True, gt=0, description="Total amount due")
    currency: Literal["EUR", "USD", "GBP", "CHF"]
    issue_date: date
    due_date: date
    paid: bool = Field(strict=True)
    line_items: list[LineItem]
    notes: str = Field(json_schema_extra={"x-prose": True})
