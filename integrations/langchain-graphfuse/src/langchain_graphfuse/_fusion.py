"""Signal fusion as a LangChain runnable: the last step of a GraphFuse runnable chain."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter, neg
from types import MappingProxyType
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig

from graphfuse import Candidate, InvalidInput, MetadataFilter, Scorer, SignalScorer
from graphfuse.scoring import DEFAULT_WEIGHTS, ReciprocalRankFusion, WeightedScorer

from ._documents import (
    RETRIEVAL_SIGNAL,
    combine_filters,
    mapping_for,
    owned_documents,
    owned_input,
    owned_records,
    parse_input,
    picker,
    read_records,
    record_documents,
    source_ranks,
    to_candidates,
    to_documents,
    to_graphfuse,
)
from ._execution import ainvoke_leaf, invoke_leaf

__all__ = ["FUSION_WEIGHTS", "FusionInput", "WeightedFusion", "rank"]

FUSION_WEIGHTS: Mapping[str, float] = MappingProxyType({**DEFAULT_WEIGHTS, RETRIEVAL_SIGNAL: 0.30})
"""Default weights: GraphFuse's ``DEFAULT_WEIGHTS`` plus ``retrieval`` 0.30 (another retriever's rank)."""

FusionInput = Sequence[Document] | Mapping[str, Any]

_MODES = ("weighted", "rrf")
_THIRD = itemgetter(2)
_SUMMED: tuple[type, ...] = (WeightedScorer, ReciprocalRankFusion)  # scorers whose score is the sum of the shares


def rank(
    candidates: Sequence[Candidate], scorer: Scorer, top_n: int | None
) -> tuple[list[Candidate], list[float], list[dict[str, float]]]:
    """Score and sort (best first, ties by id), keeping at most ``top_n``."""
    if type(scorer) in _SUMMED:
        # The built-in scorers' score is the sum of the shares, added in the same order: one pass, the same floats.
        shares = scorer.explain(candidates)
        scores = [sum(parts.values()) for parts in shares]
    else:
        scores = scorer.score(candidates)
        shares = scorer.explain(candidates)
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i].id))[:top_n]
    return [candidates[i] for i in order], [float(scores[i]) for i in order], [dict(shares[i]) for i in order]


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
        self._mapping = mapping_for(id_key)
        # Built once here so bad weights or k fail at construction.
        self._scorer: Scorer = self._make_scorer(weights)
        self.name = "graphfuse.fusion"

    def _make_scorer(self, weights: Mapping[str, float] | None) -> Scorer:
        if self._mode == "rrf":
            return ReciprocalRankFusion(weights, k=self._k)
        return WeightedScorer(FUSION_WEIGHTS if weights is None else weights)

    def __repr__(self) -> str:
        return f"WeightedFusion(mode={self._mode!r}, scorer={self._scorer!r}, top_n={self._top_n})"

    def _candidates(
        self, value: FusionInput
    ) -> tuple[str | None, MetadataFilter | None, list[Any], dict[str, Any], Scorer]:
        what = "runnable 'graphfuse.fusion'"
        if isinstance(value, Mapping) and "documents" not in value:
            query = value.get("query")
            sources = {k: v for k, v in value.items() if k != "query"}
            if not sources:
                raise InvalidInput(f"{what}: no sources given (keys: {sorted(value)})")
            signals: dict[str, dict[str, float]] = {}
            originals: dict[str, Document] = {}
            texts: set[str] = set()
            filters: list[MetadataFilter | None] = []
            for name, docs in sources.items():
                q, f, parsed = parse_input(docs, f"{what} source {name!r}")
                if q is not None:
                    texts.add(q)
                filters.append(f)
                ranks, firsts = source_ranks(parsed, self._mapping, name)
                for doc_id, ranked in ranks.items():
                    got = signals.get(doc_id)
                    if got is None:
                        signals[doc_id] = {name: ranked}
                        originals[doc_id] = firsts[doc_id]
                    else:
                        got[name] = ranked
            # Each document converted once, however many sources list it (every signal was checked).
            merged = [
                Candidate.trusted(to_graphfuse(doc_id, doc, self._mapping), signals[doc_id])
                for doc_id, doc in originals.items()
            ]
            if query is None and len(texts) == 1:
                query = next(iter(texts))
            if query is not None and (not isinstance(query, str) or not query.strip()):
                raise InvalidInput(f"{what}: 'query' must be a non-empty string, got {query!r}")
            scorer = self._scorer if self._weights is not None else self._make_scorer(dict.fromkeys(sources, 1.0))
            return query, combine_filters(*filters), merged, originals, scorer
        query, filter, docs = parse_input(value, what)
        candidates, originals = to_candidates(docs, self._mapping)
        return query, filter, candidates, dict(originals), self._scorer

    def _fuse(self, value: FusionInput) -> list[Document]:
        scorer = self._scorer
        if not (isinstance(value, Mapping) and "documents" not in value) and isinstance(scorer, SignalScorer):
            # One list of documents: scored from their signals, no candidates. GraphFuse's own documents
            # (the list a GraphFuse runnable returned, unchanged) are updated in place.
            owned = owned_input(value, self._mapping)
            records = owned_records(owned, self._mapping) if owned is not None else None
            if owned is not None and records is not None:
                query, filter, docs = owned.query, owned.filter, owned.docs
            else:
                owned = None
                query, filter, docs = parse_input(value, "runnable 'graphfuse.fusion'")
                if not docs:
                    return []
                records = read_records(docs, self._mapping)
            ids = records.ids
            shares = scorer.explain_signals(ids, records.signals)
            summed = type(scorer) in _SUMMED
            # The built-in scorers' score is the sum of the shares, added in the same order: the same floats.
            scores = [sum(parts.values()) for parts in shares] if summed else scorer.score_signals(ids, records.signals)
            # Best first, ties by id (each id once): sorted as tuples, no key function.
            by_score = sorted(zip(map(neg, scores), ids, range(len(ids)), strict=True))[: self._top_n]
            order = list(map(_THIRD, by_score))
            take = picker(order)
            ranked_scores = list(map(float, take(scores)))
            ranked_shares = take(shares)
            if owned is not None:
                return owned_documents(
                    owned,
                    records,
                    order,
                    query=query,
                    filter=filter,
                    scores=ranked_scores,
                    contributions=ranked_shares,
                    fresh_contributions=summed,  # the built-in scorers' shares are new dicts: taken, not copied
                )
            return record_documents(
                records,
                order,
                query=query,
                filter=filter,
                scores=ranked_scores,
                contributions=ranked_shares,
                mapping=self._mapping,
                fresh_contributions=summed,
            )
        query, filter, candidates, originals, scorer = self._candidates(value)
        if not candidates:
            return []
        ranked, scores, shares = rank(candidates, scorer, self._top_n)
        return to_documents(
            ranked,
            originals,
            query=query,
            filter=filter,
            mapping=self._mapping,
            scores=scores,
            contributions=shares,
            inputs=candidates,
        )

    async def _afuse(self, value: FusionInput) -> list[Document]:
        # Pure in-memory arithmetic (microseconds per document): fine on the event loop.
        return self._fuse(value)

    def invoke(self, input: FusionInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Fuse and sort the documents."""
        return invoke_leaf(self, self._fuse, input, config)  # pure arithmetic: starts no run of its own

    async def ainvoke(self, input: FusionInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Fuse and sort the documents (async)."""
        return await ainvoke_leaf(self, self._afuse, input, config)
