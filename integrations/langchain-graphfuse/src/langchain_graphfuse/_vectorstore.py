"""A LangChain ``VectorStore`` as a GraphFuse vector store."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore

from graphfuse import InvalidInput, MetadataFilter, VectorHit, VectorRecord
from graphfuse.validation import check_positive_int, check_vector_records

__all__ = ["FilterFormat", "LangChainVectorStore", "resolve_filter_format", "translate_filter"]

FilterFormat = Literal["auto", "dict", "callable", "none"]


def resolve_filter_format(store: VectorStore, filter_format: str) -> FilterFormat:
    """Validate ``filter_format``; ``"auto"`` is ``"callable"`` for ``InMemoryVectorStore``, else ``"dict"``."""
    if filter_format not in ("auto", "dict", "callable", "none"):
        raise InvalidInput(f"filter_format must be 'auto', 'dict', 'callable' or 'none', got {filter_format!r}")
    if filter_format == "auto":
        return "callable" if isinstance(store, InMemoryVectorStore) else "dict"
    return filter_format  # type: ignore[return-value]


def translate_filter(store: VectorStore, filter: MetadataFilter | None, filter_format: FilterFormat) -> Any:
    """The filter in the form the LangChain store takes (``None`` without a filter)."""
    if filter is None:
        return None
    if filter_format == "none":
        raise InvalidInput(
            f"{type(store).__name__} was wrapped with filter_format='none', but a filter was given: {filter.to_dict()}"
        )
    if filter_format == "callable":

        def matches(doc: Document) -> bool:
            return filter.matches(doc.metadata)

        return matches
    return filter.to_dict()


class LangChainVectorStore:
    """Search a LangChain ``VectorStore`` from a GraphFuse pipeline (``SemanticSearch`` stage).

    GraphFuse embeds the query itself and searches by vector, so the store must offer
    ``similarity_search_with_score_by_vector`` (``InMemoryVectorStore``, FAISS, Chroma, ...);
    its async form is used when the store has one, otherwise the sync call runs in a worker
    thread. ``relevance`` maps the store's raw score to a similarity (default: the score is a
    cosine similarity already, as ``InMemoryVectorStore`` returns; for a distance-based store
    pass e.g. ``store._select_relevance_score_fn()``).

    Filters: ``filter_format="dict"`` passes GraphFuse's canonical ``{key: {op: value}}``
    mapping (stores whose filters take that Mongo-style form), ``"callable"`` passes a
    ``Document -> bool`` predicate (``InMemoryVectorStore``), ``"none"`` refuses filtered
    searches with :class:`~graphfuse.InvalidInput` (rather than ignoring the filter);
    ``"auto"`` picks ``"callable"`` for ``InMemoryVectorStore`` and ``"dict"`` otherwise.
    ``min_score`` is applied to the returned hits.

    Documents are written through the LangChain store's own API (``add_documents``, which
    embeds with the store's ``Embeddings``): ``upsert`` of raw vectors works only for stores
    with ``add_embeddings``. ``count`` needs a store exposing its size.
    """

    __slots__ = ("_dimension", "_filter_format", "_relevance", "_store")

    def __init__(
        self,
        vector_store: VectorStore,
        *,
        relevance: Callable[[float], float] | None = None,
        filter_format: FilterFormat = "auto",
        dimension: int | None = None,
    ) -> None:
        if not isinstance(vector_store, VectorStore):
            raise InvalidInput(f"vector_store must be a langchain_core VectorStore, got {type(vector_store).__name__}")
        if not callable(getattr(vector_store, "similarity_search_with_score_by_vector", None)):
            raise InvalidInput(
                f"{type(vector_store).__name__} has no similarity_search_with_score_by_vector; "
                "GraphFuse searches by vector"
            )
        self._store = vector_store
        self._relevance = relevance
        self._filter_format = resolve_filter_format(vector_store, filter_format)
        self._dimension = dimension

    @property
    def dimension(self) -> int | None:
        """The vector size if given (LangChain stores do not report one)."""
        return self._dimension

    @property
    def vector_store(self) -> VectorStore:
        """The wrapped LangChain store."""
        return self._store

    def __repr__(self) -> str:
        return f"LangChainVectorStore({type(self._store).__name__}, filter_format={self._filter_format!r})"

    async def search(
        self,
        vector: Sequence[float],
        *,
        limit: int = 50,
        filter: MetadataFilter | None = None,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        """The ``limit`` nearest documents (ids from ``Document.id``), best first."""
        check_positive_int(limit, "limit")
        native = translate_filter(self._store, filter, self._filter_format)
        kwargs: dict[str, Any] = {"k": limit}
        if native is not None:
            kwargs["filter"] = native
        asearch = getattr(self._store, "asimilarity_search_with_score_by_vector", None)
        if callable(asearch):
            pairs = await asearch(list(vector), **kwargs)
        else:
            sync_search = self._store.similarity_search_with_score_by_vector  # type: ignore[attr-defined]
            pairs = await asyncio.to_thread(sync_search, list(vector), **kwargs)
        hits: list[VectorHit] = []
        for doc, raw in pairs:
            if not doc.id:
                raise InvalidInput(f"{type(self._store).__name__} returned a document without an id")
            score = float(self._relevance(raw)) if self._relevance is not None else float(raw)
            if not math.isfinite(score):
                raise InvalidInput(f"{type(self._store).__name__} returned score {raw!r} for {doc.id!r}")
            if min_score is None or score >= min_score:
                hits.append(VectorHit(doc.id, score))
        return hits[:limit]

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Write raw vectors (only for LangChain stores with ``add_embeddings``)."""
        add = getattr(self._store, "add_embeddings", None)
        if not callable(add):
            raise InvalidInput(
                f"{type(self._store).__name__} cannot store raw vectors; add documents with its own "
                "add_documents (it embeds them with its Embeddings)"
            )
        if not records:
            return
        vectors = check_vector_records(records, self._dimension)  # all checked before the first write
        pairs = [(r.metadata.get("text", ""), v) for r, v in zip(records, vectors, strict=True)]
        await asyncio.to_thread(add, pairs, metadatas=[dict(r.metadata) for r in records], ids=[r.id for r in records])

    async def delete(self, ids: Sequence[str]) -> int:
        """Delete by id; returns how many of them existed."""
        if not ids:
            return 0
        existing = await self._store.aget_by_ids(list(ids))
        if existing:
            await self._store.adelete([d.id for d in existing if d.id])
        return len(existing)

    async def count(self) -> int:
        """How many documents the store holds (stores exposing ``__len__`` or a ``store`` mapping)."""
        size = getattr(self._store, "__len__", None)
        if callable(size):
            return int(size())
        inner = getattr(self._store, "store", None)
        if isinstance(inner, dict):
            return len(inner)
        raise InvalidInput(f"{type(self._store).__name__} does not report how many documents it holds")

    async def close(self) -> None:
        """Nothing to release: the LangChain store is owned by the caller."""
