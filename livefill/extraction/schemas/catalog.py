from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Dimensions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    width_cm: float = Field(strict=True, ge=0)
    height_cm: float = Field(strict=True, ge=0)
    depth_cm: float = Field(strict=True, ge=0)


class CatalogItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sku: str = Field(min_length=1)
    name: str
    price: float = Field(strict=True, ge=0)
    in_stock: bool = Field(strict=True)
    tags: list[str]
    dimensions: Dimensions


class Catalog(BaseModel):
    """A long structured output: a product catalogue page."""

    model_config = ConfigDict(extra="forbid", title="Product catalogue")

    supplier: str = Field(min_length=1)
    season: str
    item_count: int = Field(strict=True, ge=0)
    items: list[CatalogItem]
