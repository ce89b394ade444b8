"""The :class:`RerankerContract` suite: every promise of :class:`graphfuse.Reranker`."""

from __future__ import annotations

import asyncio
import math
from typing import ClassVar

import pytest

from .._core._protocols import Reranker

__all__ = ["RerankerContract"]


def _check_scores(scores: object, count: int) -> list[float]:
    assert isinstance(scores, list), f"rerank must return a list, got {type(scores).__name__}"
    assert len(scores) == count, f"{len(scores)} scores for {count} documents"
    for score in scores:
        assert type(score) is float, f"a score must be a Python float, got {type(score).__name__}"
        assert math.isfinite(score), f"score {score} is not finite"
        assert 0.0 <= score <= 1.0, f"score {score} is outside [0, 1]"
    return scores


@pytest.mark.asyncio
class RerankerContract:
    """Subclass and provide a ``reranker`` fixture (sync or async) yielding the reranker.

    Class attributes to adapt the suite to a provider:

    - ``query``, ``relevant`` and ``irrelevant``: ``relevant`` must score higher than
      ``irrelevant`` for ``query``.
    - ``others``: more documents, for the batch checks.
    """

    query: ClassVar[str] = "What is the capital of France?"
    relevant: ClassVar[str] = "Paris is the capital and largest city of France."
    irrelevant: ClassVar[str] = "Photosynthesis turns light into chemical energy in plants."
    others: ClassVar[tuple[str, ...]] = (
        "A binary search halves the interval each step.",
        "France borders Spain, Belgium and Germany.",
        "Mount Kilimanjaro is the highest mountain in Africa.",
    )

    async def test_one_score_per_document_in_unit_interval(self, reranker: Reranker) -> None:
        documents = [self.relevant, self.irrelevant, *self.others]
        _check_scores(await reranker.rerank(self.query, documents), len(documents))

    async def test_relevant_scores_higher(self, reranker: Reranker) -> None:
        relevant, irrelevant = _check_scores(await reranker.rerank(self.query, [self.relevant, self.irrelevant]), 2)
        assert relevant > irrelevant, f"relevant scored {relevant}, irrelevant {irrelevant}"

    async def test_scores_follow_input_order(self, reranker: Reranker) -> None:
        forward = _check_scores(await reranker.rerank(self.query, [self.relevant, self.irrelevant]), 2)
        backward = _check_scores(await reranker.rerank(self.query, [self.irrelevant, self.relevant]), 2)
        assert backward[1] > backward[0], "scores were not returned in input order"
        assert backward == pytest.approx(forward[::-1], abs=1e-3)

    async def test_relevant_document_wins_among_others(self, reranker: Reranker) -> None:
        documents = [*self.others, self.irrelevant, self.relevant]
        scores = _check_scores(await reranker.rerank(self.query, documents), len(documents))
        assert max(range(len(scores)), key=scores.__getitem__) == len(documents) - 1

    async def test_no_documents_no_scores(self, reranker: Reranker) -> None:
        assert await reranker.rerank(self.query, []) == []

    async def test_accepts_any_sequence(self, reranker: Reranker) -> None:
        _check_scores(await reranker.rerank(self.query, (self.relevant,)), 1)

    async def test_concurrent_calls_from_tasks(self, reranker: Reranker) -> None:
        pairs = [[self.relevant, self.irrelevant], [self.irrelevant, self.relevant]] * 3
        results = await asyncio.gather(*(reranker.rerank(self.query, docs) for docs in pairs))
        for docs, scores in zip(pairs, results, strict=True):
            _check_scores(scores, 2)
            assert scores[docs.index(self.relevant)] > scores[docs.index(self.irrelevant)]
