"""Retrieve with a pipeline and assemble the results: the context layer's entry point for a pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core._filters import FilterLike
from .._core._protocols import Embedder, GraphStore, TokenCounter
from .._core._sync import sync_form
from .._core._types import Query, Result
from .._retrieval._pipeline import Pipeline
from ._budget import TokenBudget, resolve_budget
from ._build import abuild_context, check_format
from ._graph import GraphCaps
from ._history import HistoryLike, history_turns
from ._types import Context

__all__ = ["aretrieve_context", "pipeline_embedder", "pipeline_graph_store", "retrieve_context"]


def pipeline_graph_store(pipeline: Pipeline) -> GraphStore | None:
    """The graph store a pipeline reads: its first stage's ``graph_store``, else its passage selection's."""
    for stage in pipeline.stages:
        found = getattr(stage, "graph_store", None)
        if found is not None and callable(getattr(found, "get_documents", None)):
            return found  # type: ignore[no-any-return]
    return pipeline.passages.graph_store if pipeline.passages is not None else None


def pipeline_embedder(pipeline: Pipeline) -> Embedder | None:
    """The embedder a pipeline searches with: its first stage's ``embedder``, else ``None``."""
    for stage in pipeline.stages:
        found = getattr(stage, "embedder", None)
        if found is not None and callable(getattr(found, "embed_query", None)):
            return found  # type: ignore[no-any-return]
    return None


async def aretrieve_context(
    pipeline: Pipeline,
    query: str | Query,
    *,
    budget: int | TokenBudget,
    format: str = "passages",
    top_k: int | None = None,
    filter: FilterLike | None = None,
    counter: TokenCounter | None = None,
    graph_store: Any = None,
    caps: GraphCaps | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    cache: bool = True,
    embedder: Any = None,
    history: HistoryLike | None = None,
) -> Context:
    """Retrieve for ``query`` with ``pipeline`` and assemble the results (:func:`abuild_context`).

    ``top_k`` results are retrieved (default 10) with ``filter``, ``options``, ``timeout`` and
    ``cache`` as in :meth:`~graphfuse.Pipeline.aretrieve`. The graph format reads relations from
    ``graph_store``, by default the pipeline's own (:func:`pipeline_graph_store`), within the
    filter; results without content are read from it. Sentences are also scored by similarity to
    the query with ``embedder``, by default the pipeline's own (:func:`pipeline_embedder`); pass
    ``embedder=False`` to score by words only. ``history`` (the conversation so far, oldest turn
    first) is packed as :func:`abuild_context` says. Budget, format and history are checked
    before retrieval.
    """
    check_format(format)
    turns = history_turns(history)
    if not isinstance(budget, TokenBudget):
        resolve_budget(budget)
    q = Query.of(query, filter=filter, options=options)
    store = graph_store if graph_store is not None else pipeline_graph_store(pipeline)
    sentence_embedder = None if embedder is False else embedder if embedder is not None else pipeline_embedder(pipeline)
    results = await pipeline.aretrieve(q, top_k if top_k is not None else 10, timeout=timeout, cache=cache)
    if store is not None and any(r.document.content is None for r in results):
        results = await _hydrate(store, results, q)
    return await abuild_context(
        q.text,
        results,
        budget=budget,
        format=format,
        counter=counter,
        graph_store=store,
        filter=q.filter,
        caps=caps,
        embedder=sentence_embedder,
        history=turns,
    )


retrieve_context = sync_form(aretrieve_context)
"""Sync form of :func:`aretrieve_context`: same arguments, result and errors, no event loop needed."""


async def _hydrate(store: GraphStore, results: list[Result], q: Query) -> list[Result]:
    wanted = [r.id for r in results if r.document.content is None]
    docs = await store.get_documents(wanted, filter=q.filter)
    out = []
    for r in results:
        doc = docs.get(r.id) if r.document.content is None else r.document
        out.append(r if doc is None else Result(doc, r.score, r.signals, r.contributions))
    return out
