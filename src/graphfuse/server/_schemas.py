"""Request and response bodies (pydantic): what OpenAPI at ``/docs`` shows."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

__all__ = [
    "CompareRequest",
    "ContextRequest",
    "DocumentIn",
    "HistoryTurn",
    "IngestRequest",
    "IngestResponse",
    "ResultOut",
    "RetrieveRequest",
    "RetrieveResponse",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RetrieveRequest(_Strict):
    """A query; ``preset`` (a registered preset name) or ``stages`` (a declarative pipeline)."""

    query: StrictStr = Field(description="The question or search text.")
    top_k: StrictInt = Field(10, description="How many results.")
    preset: StrictStr | None = Field(None, description="Preset name (default: the server's).")
    stages: list[StrictStr | dict[str, Any]] | None = Field(
        None,
        description="Instead of a preset: stage names or tables with a 'name' and options, from the server's "
        "allow-list (graphfuse.server.REQUEST_STAGES; no files, paths or plugin names).",
    )
    scorer: StrictStr | dict[str, Any] | None = Field(None, description="With 'stages': 'weighted' or 'rrf'.")
    filter: dict[str, Any] | None = Field(None, description="Metadata filter; it can only narrow the tenant's scope.")
    graph: StrictBool = Field(False, description="Also return the relations among the results.")
    granularity: Literal["passage", "document"] | None = Field(
        None,
        description="'passage' (the default: results of at most the chunk size, 'parent_id' naming the page) or "
        "'document' (whole pages, each cut to 2048 tokens).",
    )
    max_per_document: StrictInt | None = Field(
        None, description="Passages of one page in the results, at most (default 1; 1 to top_k)."
    )
    no_cache: StrictBool = Field(False, description="Run the pipeline even if the result cache holds this request.")


MAX_HISTORY_TURNS = 50
"""Turns a ``/v1/context`` history may have (the last five are used)."""
MAX_TURN_CHARS = 8000
"""Characters a history turn may have."""


class HistoryTurn(_Strict):
    """One turn of the conversation so far."""

    role: Literal["user", "assistant", "system"] = Field(description="Who spoke: user, assistant or system.")
    content: StrictStr = Field(max_length=MAX_TURN_CHARS, description="What was said.")


class ContextRequest(_Strict):
    """A query and a token budget: the context an LLM would read, assembled from the results."""

    query: StrictStr = Field(description="The question.")
    budget: StrictInt = Field(2000, description="Context tokens at most.")
    format: StrictStr = Field("passages", description="passages, evidence or graph.")
    top_k: StrictInt | None = Field(None, description="Results to assemble from (default 10).")
    preset: StrictStr | None = Field(None, description="Preset name (default: the server's).")
    stages: list[StrictStr | dict[str, Any]] | None = Field(
        None, description="Instead of a preset: allow-listed stages (graphfuse.server.REQUEST_STAGES)."
    )
    scorer: StrictStr | dict[str, Any] | None = Field(None, description="With 'stages': 'weighted' or 'rrf'.")
    filter: dict[str, Any] | None = Field(None, description="Metadata filter; it can only narrow the tenant's scope.")
    no_cache: StrictBool = Field(False, description="Run the pipeline even if the result cache holds this request.")
    history: list[HistoryTurn] | None = Field(
        None,
        max_length=MAX_HISTORY_TURNS,
        description="The conversation so far, oldest turn first; its last five turns go newest first into "
        "min(500, 15 %) of the budget, and 'prompt_text' holds them before the context.",
    )


class CompareRequest(_Strict):
    """A question answered three ways; with ``answer`` (the expected one) the judge grades them."""

    question: StrictStr = Field(description="The question.")
    answer: StrictStr | None = Field(None, description="The expected answer, for the judge.")
    budget: StrictInt = Field(2000, description="Context tokens at most, per RAG pipeline.")


class ResultOut(BaseModel):
    id: str
    score: float
    signals: dict[str, float]
    title: str | None
    text: str | None
    parent_id: str | None = None


class GraphNode(BaseModel):
    id: str | None
    title: str | None
    score: float
    rank: int
    page: str | None = Field(None, description="The page a passage is part of (its 'parent_id').")


class GraphEdge(BaseModel):
    source: str | None
    target: str | None
    type: str
    weight: float
    pages: list[str | None] | None = Field(
        None, description="The two pages related, when the relation is between the results' pages."
    )


class Subgraph(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    note: str | None = None


class RetrieveResponse(BaseModel):
    results: list[ResultOut]
    pipeline: str
    took_ms: float
    graph: Subgraph | None = None


class DocumentIn(_Strict):
    """One document, shaped like a line of ``graphfuse index``'s JSONL input."""

    id: StrictStr
    text: StrictStr
    title: StrictStr | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    links: list[StrictStr] = Field(default_factory=list)


class IngestRequest(_Strict):
    documents: list[DocumentIn]


class IngestResponse(BaseModel):
    documents: int = Field(description="Documents written (new or changed).")
    chunks: int
    relations: int
    skipped: int = Field(description="Documents already stored unchanged (ingest is idempotent by id).")
    warnings: list[str]
