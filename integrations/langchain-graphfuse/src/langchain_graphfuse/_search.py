"""A LangChain vector store searched by query text, as the entry stage of a GraphFuse pipeline."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore

from graphfuse import Candidate, InvalidInput, Query, RunContext
from graphfuse.validation import check_name, check_options, check_positive_int, check_unit

from ._documents import DocumentMapping, to_graphfuse
from ._vectorstore import FilterFormat, resolve_filter_format, translate_filter

__all__ = ["LangChainSearch"]

_OPTIONS = ("limit", "min_score")


class LangChainSearch:
    """A GraphFuse stage searching a LangChain ``VectorStore`` with the query text.

    The store embeds the query with its own ``Embeddings`` and answers
    ``asimilarity_search_with_relevance_scores(query, k=limit, filter=..., score_threshold=min_score)``;
    the hits become **hydrated** candidates (content and metadata from the store, timestamps read
    from ``created_at``/``updated_at`` metadata, ids from ``Document.id`` or ``id_key``) with the
    ``semantic`` signal = the relevance score in [0, 1]. No Hydrate stage is needed after it;
    graph stages find the documents by id in the graph store.

    Stores without a relevance function (``InMemoryVectorStore``) need ``relevance``: a function
    from the store's raw ``similarity_search_with_score`` score to [0, 1] (e.g. ``lambda s: s`` for
    cosine similarity); then ``asimilarity_search_with_score`` is used. Filters are translated as
    for :class:`LangChainVectorStore` (``filter_format``). Per-call options: ``limit``, ``min_score``.
    """

    __slots__ = ("_filter_format", "_limit", "_mapping", "_min_score", "_name", "_relevance", "_signal", "_store")

    def __init__(
        self,
        vector_store: VectorStore,
        *,
        limit: int = 50,
        min_score: float | None = None,
        relevance: Callable[[float], float] | None = None,
        filter_format: FilterFormat = "auto",
        id_key: str | None = None,
        name: str = "semantic",
        signal: str = "semantic",
    ) -> None:
        if not isinstance(vector_store, VectorStore):
            raise InvalidInput(f"vector_store must be a langchain_core VectorStore, got {type(vector_store).__name__}")
        if relevance is not None and not callable(relevance):
            raise InvalidInput(f"relevance must be a callable from raw score to [0, 1], got {relevance!r}")
        self._store = vector_store
        self._limit = check_positive_int(limit, "limit")
        self._min_score = None if min_score is None else check_unit(min_score, "min_score")
        self._relevance = relevance
        self._filter_format = resolve_filter_format(vector_store, filter_format)
        self._mapping = DocumentMapping(id_key=id_key)
        self._name = check_name(name, "name")
        self._signal = check_name(signal, "signal")

    @property
    def name(self) -> str:
        """The stage name (key of its per-call options)."""
        return self._name

    def __repr__(self) -> str:
        return f"LangChainSearch({type(self._store).__name__}, limit={self._limit}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[int, float | None]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        limit = check_positive_int(options.get("limit", self._limit), f"{prefix} 'limit'")
        min_score = options.get("min_score", self._min_score)
        return limit, None if min_score is None else check_unit(min_score, f"{prefix} 'min_score'")

    async def _hits(self, text: str, limit: int, native_filter: Any, min_score: float | None) -> list[Any]:
        kwargs: dict[str, Any] = {} if native_filter is None else {"filter": native_filter}
        if self._relevance is None:
            if min_score is not None:
                kwargs["score_threshold"] = min_score
            try:
                return await self._store.asimilarity_search_with_relevance_scores(text, k=limit, **kwargs)
            except NotImplementedError:
                raise InvalidInput(
                    f"{type(self._store).__name__} has no relevance function; pass relevance= (a function "
                    "from its raw similarity_search_with_score score to [0, 1])"
                ) from None
        pairs = await self._store.asimilarity_search_with_score(text, k=limit, **kwargs)
        return [(doc, self._relevance(score)) for doc, score in pairs]

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        limit, min_score = self._settings(query.options.get(self._name, {}))
        native = translate_filter(self._store, query.filter, self._filter_format)
        best: dict[str, tuple[Document, float]] = {}
        for doc, raw in await self._hits(query.text, limit, native, min_score):
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
                raise InvalidInput(f"{type(self._store).__name__} returned relevance {raw!r}")
            value = min(1.0, max(0.0, float(raw)))
            if min_score is not None and value < min_score:
                continue
            doc_id = self._mapping.doc_id(doc)
            if doc_id not in best or value > best[doc_id][1]:
                best[doc_id] = (doc, value)
        out = [c.with_signal(self._signal, best.pop(c.id)[1]) if c.id in best else c for c in candidates]
        out.extend(Candidate(to_graphfuse(d, self._mapping), {self._signal: v}) for d, v in best.values())
        return out
