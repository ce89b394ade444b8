"""The JSON reply the LLM graph extractor accepts, as pydantic models (loaded on the first reply)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["NAME_CHARS", "Entity", "Relation", "Reply"]

NAME_CHARS = 100
"""The longest entity name accepted."""


class Entity(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    name: str = Field(min_length=1, max_length=NAME_CHARS)
    type: str = Field(min_length=1, max_length=64)
    description: str = ""


class Relation(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    source: str = Field(min_length=1, max_length=NAME_CHARS)
    target: str = Field(min_length=1, max_length=NAME_CHARS)
    type: str = Field(min_length=1, max_length=64)
    confidence: float = Field(ge=0.0, le=1.0)
    context: str = ""


class Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    entities: list[Entity]
    relations: list[Relation] = []
