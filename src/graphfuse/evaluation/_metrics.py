"""Retrieval metrics: Recall@k (HippoRAG's definition), nDCG@k, MRR, latency percentiles."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from .._core._errors import InvalidInput

__all__ = ["ndcg_at_k", "percentile", "recall_at_k", "reciprocal_rank"]


def _check(gold: Collection[str], k: int | None = None) -> None:
    if not gold:
        raise InvalidInput("a query needs at least one gold id")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InvalidInput(f"k must be a positive integer, got {k!r}")


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """``|top-k ∩ gold| / |gold|`` (HippoRAG): with 2 gold passages, one found in the top k gives 0.5."""
    _check(gold, k)
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Binary-relevance nDCG: ``sum 1/log2(rank+1)`` over gold hits in the top k, over the ideal.

    A gold id ranked more than once (two passages of one gold document) counts at its first rank only.
    """
    _check(gold, k)
    relevant = set(gold)
    seen: set[str] = set()
    dcg = 0.0
    for i, doc in enumerate(ranked[:k]):
        if doc in relevant and doc not in seen:
            seen.add(doc)
            dcg += 1.0 / math.log2(i + 2)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], gold: Collection[str]) -> float:
    """``1 / rank`` of the first gold id in ``ranked`` (0 when none is there)."""
    _check(gold)
    relevant = set(gold)
    for i, doc in enumerate(ranked):
        if doc in relevant:
            return 1.0 / (i + 1)
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation (numpy's default)."""
    if not values:
        raise InvalidInput("percentile of no values")
    if not 0 <= q <= 100:
        raise InvalidInput(f"q must be in [0, 100], got {q!r}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
