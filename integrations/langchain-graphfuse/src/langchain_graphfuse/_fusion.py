"""Signal fusion as a LangChain runnable: the last step of a GraphFuse runnable chain."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig

from graphfuse import InvalidInput, Scorer
from graphfuse.records import Hit, fuse, merge_hits
from graphfuse.scoring import DEFAULT_WEIGHTS, ReciprocalRankFusion, WeightedScorer

from ._documents import (
    RETRIEVAL_SIGNAL,
    DocumentMapping,
    combine_filters,
    documents_from_hits,
    parse_input,
    read_documents,
)
from ._execution import ainvoke_leaf, invoke_leaf

__all__ = ["FUSION_WEIGHTS", "FusionInput", "WeightedFusion"]

FUSION_WEIGHTS: Mapping[str, float] = MappingProxyType({**DEFAULT_WEIGHTS, RETRIEVAL_SIGNAL: 0.30})
"""Default weights: GraphFuse's ``DEFAULT_WEIGHTS`` plus ``retrieval`` 0.30 (another retriever's rank)."""

FusionInput = Sequence[Document] | Mapping[str, Any]

_MODES = ("weighted", "rrf")
_WHAT = "runnable 'graphfuse.fusion'"


class WeightedFusion(Runnable[FusionInput, list[Document]]):
    """Fuse the documents' signals into one score and sort by it (best first).

    ``mode="weighted"``: ``sum(weight * signal)``; ``mode="rrf"``: weighted reciprocal rank
    fusion (``k``), each signal a ranking, its weight honoured. Weights are by signal name
    (default :data:`FUSION_WEIGHTS`; under RRF, ``None`` weighs every signal 1).

    Input: a list of documents, ``{"query", "documents"}``, or several named sources such as
    ``RunnableParallel(bm25=..., graph=...)`` produces: ``{"bm25": [...], "graph": [...]}``.
    Each source becomes one signal named after it (its rank, ``(n - rank) / n``), replacing
    the signals its documents carried; weights then name sources (``None``: 1 each). A document
    listed twice by one source counts once, at its best rank; across sources it is one document.

    The result carries ``score``, ``contributions`` and ``signals`` under
    ``metadata["graphfuse"]``; ``top_n`` keeps the best n.
    """

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        *,
        mode: Literal["weighted", "rrf"] = "weighted",
        k: int = 60,
        top_n: int | None = None,
        id_key: str | None = None,
    ) -> None:
        if mode not in _MODES:
            raise InvalidInput(f"mode must be 'weighted' or 'rrf', got {mode!r}")
        if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
            raise InvalidInput(f"top_n must be None or a positive integer, got {top_n!r}")
        self._weights = weights
        self._mode = mode
        self._k = k
        self._top_n = top_n
        self._mapping = DocumentMapping(id_key)
        # Built once here so bad weights or k fail at construction.
        self._scorer: Scorer = self._make_scorer(weights)
        self.name = "graphfuse.fusion"

    def _make_scorer(self, weights: Mapping[str, float] | None) -> Scorer:
        if self._mode == "rrf":
            return ReciprocalRankFusion(weights, k=self._k)
        return WeightedScorer(FUSION_WEIGHTS if weights is None else weights)

    def __repr__(self) -> str:
        return f"WeightedFusion(mode={self._mode!r}, scorer={self._scorer!r}, top_n={self._top_n})"

    def _sources(self, value: Mapping[str, Any]) -> tuple[str | None, list[Any], list[Hit[Document]], Scorer]:
        # Several named sources: each one's ranking is its signal; a document several list is one hit.
        query = value.get("query")
        sources = {k: v for k, v in value.items() if k != "query"}
        if not sources:
            raise InvalidInput(f"{_WHAT}: no sources given (keys: {sorted(value)})")
        texts: set[str] = set()
        filters: list[Any] = []
        batches = []
        for name, docs in sources.items():
            q, f, parsed = parse_input(docs, f"{_WHAT} source {name!r}")
            if q is not None:
                texts.add(q)
            filters.append(f)
            batches.append(read_documents(parsed, self._mapping, source=name))
        if query is None and len(texts) == 1:
            query = next(iter(texts))
        if query is not None and (not isinstance(query, str) or not query.strip()):
            raise InvalidInput(f"{_WHAT}: 'query' must be a non-empty string, got {query!r}")
        scorer = self._scorer if self._weights is not None else self._make_scorer(dict.fromkeys(sources, 1.0))
        return query, filters, merge_hits(batches), scorer

    def _fuse(self, value: FusionInput) -> list[Document]:
        if isinstance(value, Mapping) and "documents" not in value:
            query, filters, hits, scorer = self._sources(value)
            flt = combine_filters(*filters)
        else:
            query, flt, docs = parse_input(value, _WHAT)
            hits, scorer = read_documents(docs, self._mapping).hits(), self._scorer
        ranked = fuse(hits, scorer, top_n=self._top_n)
        return documents_from_hits(ranked, query=query, filter=flt, mapping=self._mapping)

    async def _afuse(self, value: FusionInput) -> list[Document]:
        # Pure in-memory arithmetic (microseconds per document): fine on the event loop.
        return self._fuse(value)

    def invoke(self, input: FusionInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Fuse and sort the documents."""
        return invoke_leaf(self, self._fuse, input, config)  # pure arithmetic: starts no run of its own

    async def ainvoke(self, input: FusionInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Fuse and sort the documents (async)."""
        return await ainvoke_leaf(self, self._afuse, input, config)
