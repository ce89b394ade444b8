"""The rerank stage: a reranker scores the best candidates against the query."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._capabilities import RanksDocuments
from .._core._errors import InvalidInput
from .._core._protocols import Reranker, RunContext, Scorer
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from ..scoring import WeightedScorer, as_scorer
from ..validation import check_options, check_positive_int, require_hydrated
from ._named import NamedStage

__all__ = ["Rerank"]

_OPTIONS = ("top_k",)


class Rerank(NamedStage):
    """Set the ``rerank`` signal on the ``top_k`` (20) best candidates and move them first.

    "Best" is by the current score under ``scorer`` (default: ``WeightedScorer()`` with the
    default weights), ties by id. The reranker is called once with the query text and those
    candidates' contents, which must be loaded (hydrate first); a reranker that scores whole
    documents (:class:`~graphfuse.RanksDocuments`, e.g. an
    :class:`~graphfuse.rerankers.EmbeddingReranker` with its vector store) is given the
    candidates' documents instead (ids, metadata, content). It must return one score in
    [0, 1] per document; anything else raises :class:`~graphfuse.InvalidInput` naming the
    reranker. The reranked candidates come first, by rerank score (ties keep their order);
    the rest follow in their input order without a ``rerank`` signal. Other signals are
    kept: the final scorer fuses ``rerank`` with them (the reranker never erases them).

    Per-call option: ``top_k``.
    """

    traits = StageTraits()
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_reranker", "_scorer", "_top_k")

    def __init__(
        self,
        reranker: Reranker,
        *,
        top_k: int = 20,
        scorer: Scorer | Callable[[Mapping[str, float]], float] | None = None,
        name: str = "rerank",
        signal: str = "rerank",
    ) -> None:
        if not callable(getattr(reranker, "rerank", None)):
            raise InvalidInput(f"reranker must be a Reranker (with an async 'rerank'), got {reranker!r}")
        self._reranker = reranker
        self._top_k = check_positive_int(top_k, "top_k")
        self._scorer: Scorer = WeightedScorer() if scorer is None else as_scorer(scorer)
        self._set_names(name, signal)

    @property
    def reranker(self) -> Reranker:
        """The reranker this stage calls."""
        return self._reranker

    def __repr__(self) -> str:
        return f"Rerank(top_k={self._top_k}, scorer={self._scorer!r}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._top_k_for(options)

    def _top_k_for(self, options: Mapping[str, Any]) -> int:
        check_options(self._name, options, _OPTIONS)
        return check_positive_int(options.get("top_k", self._top_k), f"stage {self._name!r} option 'top_k'")

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        top_k = self._top_k_for(query.options.get(self._name, {}))
        if not candidates:
            return []
        scores = self._scorer.score(candidates)
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i].id))
        chosen = sorted(order[:top_k])
        picked = [candidates[i] for i in chosen]
        require_hydrated(self._name, picked)
        if isinstance(self._reranker, RanksDocuments):
            values = await self._reranker.rerank_documents(query.text, [c.document for c in picked])
        else:
            values = await self._reranker.rerank(query.text, [c.document.content or "" for c in picked])
        who = type(self._reranker).__name__
        if not isinstance(values, Sequence) or len(values) != len(picked):
            got = len(values) if isinstance(values, Sequence) else type(values).__name__
            raise InvalidInput(f"reranker {who} returned {got} scores for {len(picked)} documents")
        for c, v in zip(picked, values, strict=True):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise InvalidInput(f"reranker {who} returned {v!r} for {c.id!r}; expected a number in [0, 1]")
        ranked = sorted(range(len(picked)), key=lambda j: -float(values[j]))
        head = [picked[j].with_signal(self._signal, float(values[j])) for j in ranked]
        taken = set(chosen)
        return head + [c for i, c in enumerate(candidates) if i not in taken]
