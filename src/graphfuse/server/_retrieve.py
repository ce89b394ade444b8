"""Retrieval inside a tenant's scope: a pipeline run under the scope's filter, its results checked.

Documents a pipeline left without content are loaded under the same filter; a result outside the
scope (a stage that ignored the query filter) is dropped and logged, never answered.
"""

from __future__ import annotations

import logging
from typing import Any

from .._core._errors import InvalidInput, StageFailed
from .._core._filters import MetadataFilter
from .._core._protocols import GraphStore
from .._core._types import Result
from .._retrieval._pipeline import Pipeline
from ._problems import Problem
from ._scope import Scope

__all__ = ["result_json", "retrieve"]

logger = logging.getLogger("graphfuse.server")


async def retrieve(
    graph: GraphStore,
    scope: Scope,
    pipeline: Pipeline,
    query: str,
    *,
    top_k: int,
    client_filter: Any,
    timeout: float | None,
    granularity: str | None = None,
    max_per_document: int | None = None,
    cache: bool = True,
) -> tuple[list[Result], list[dict[str, Any]]]:
    """Run ``pipeline`` inside ``scope`` (see :meth:`graphfuse.server.Service.retrieve`)."""
    flt = scope.filter(client_filter)
    if max_per_document is not None and not 1 <= max_per_document <= top_k:
        raise Problem.invalid("max_per_document", f"max_per_document must be between 1 and top_k ({top_k})")
    shape: dict[str, Any] = {}
    if granularity is not None:
        shape["granularity"] = granularity
    if max_per_document is not None:
        shape["max_per_document"] = max_per_document
    try:
        results = await pipeline.aretrieve(query, top_k=top_k, filter=flt, timeout=timeout, cache=cache, **shape)
    except InvalidInput as exc:
        if isinstance(exc, StageFailed):
            raise  # bad data a stage met is the server's fault (500), not the request's
        raise Problem.invalid("query", str(exc)) from exc
    results = await _complete(graph, scope, results, flt)
    return results, [result_json(scope, r) for r in results]


async def _complete(graph: GraphStore, scope: Scope, results: list[Result], flt: MetadataFilter | None) -> list[Result]:
    """Load documents a pipeline left without content (same filter), and keep only the scope's."""
    missing = [r.id for r in results if r.document.content is None]
    loaded = await graph.get_documents(missing, filter=flt) if missing else {}
    out = []
    for r in results:
        doc = loaded.get(r.id, r.document) if r.document.content is None else r.document
        if doc.content is None and r.id not in loaded:
            continue  # not visible in this scope (or gone)
        if not scope.visible(doc.id, doc.metadata):
            logger.error("dropped result %r outside tenant %r: a stage ignored the query filter", r.id, scope.tenant)
            continue
        out.append(Result(doc, r.score, r.signals, r.contributions))
    return out


def result_json(scope: Scope, r: Result) -> dict[str, Any]:
    """The JSON form of ``r`` with the ids ``scope`` knows."""
    title = r.document.metadata.get("title")
    parent = r.document.metadata.get("parent_id")
    out: dict[str, Any] = {
        "id": scope.external(r.id),
        "score": r.score,
        "signals": dict(r.signals),
        "title": title if isinstance(title, str) else None,
        "text": r.document.content,
    }
    if isinstance(parent, str):
        out["parent_id"] = scope.external(parent)
    return out
