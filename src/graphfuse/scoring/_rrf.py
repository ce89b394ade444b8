"""Weighted reciprocal rank fusion."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from .._core._errors import InvalidInput
from .._core._types import Candidate
from ._weights import check_normalize, check_weights, scaled

__all__ = ["ReciprocalRankFusion", "reciprocal_rank_fusion"]

K = TypeVar("K", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[K]], weights: Mapping[str, float] | None = None, k: int = 60
) -> dict[K, dict[str, float]]:
    """Fuse ranked lists: each item gets ``weight[source] / (k + rank)`` from every source.

    ``rankings`` maps a source name to its items, best first. An item listed twice by one
    source counts once, at its best rank. Sources without a weight get weight 1 when
    ``weights`` is None and are ignored otherwise. Returns each item's contribution per source.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidInput(f"RRF k must be a positive integer, got {k!r}")
    if weights is not None:
        weights = check_weights(weights)
    out: dict[K, dict[str, float]] = {}
    for source, items in rankings.items():
        w = 1.0 if weights is None else weights.get(source, 0.0)
        if w == 0.0:
            continue
        seen: set[K] = set()
        rank = 0
        for item in items:
            if item in seen:
                continue
            seen.add(item)
            rank += 1
            out.setdefault(item, {})[source] = w / (k + rank)
    return out


class ReciprocalRankFusion:
    """Weighted RRF over the candidates' signals.

    Each weighted signal is a source: the candidates carrying it are ranked by its value
    (ties by id), and each gets ``weight / (k + rank)``. Weights default to 1 for every
    signal present. Signal values only matter through their order. A
    :class:`~graphfuse.hosts.SignalScorer`: :meth:`score_signals` scores plain ids and signals.

    With ``normalize=True`` the sums are divided by the best one possible for the call's
    candidates, ``sum(weight / (k + 1))`` over the signals they carry: a candidate first in
    every ranking scores 1, and the order does not change (the ``hybrid`` preset's setting).
    """

    __slots__ = ("_k", "_normalize", "_weights")

    def __init__(self, weights: Mapping[str, float] | None = None, k: int = 60, *, normalize: bool = False) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInput(f"RRF k must be a positive integer, got {k!r}")
        self._weights = None if weights is None else check_weights(weights)
        self._k = k
        self._normalize = check_normalize(normalize, "ReciprocalRankFusion")

    @property
    def k(self) -> int:
        return self._k

    @property
    def weights(self) -> Mapping[str, float] | None:
        return self._weights

    @property
    def normalize(self) -> bool:
        """Whether scores are divided by the best one possible (see the class)."""
        return self._normalize

    def __repr__(self) -> str:
        w = None if self._weights is None else dict(self._weights)
        return f"ReciprocalRankFusion(weights={w!r}, k={self._k}" + (", normalize=True)" if self._normalize else ")")

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        """Each signal's RRF share (``weight / (k + rank)``) per candidate."""
        return self.explain_signals([c.id for c in candidates], [c.signals for c in candidates])

    def score(self, candidates: Sequence[Candidate]) -> list[float]:
        """One score per candidate (input order): the sum of its shares."""
        return [sum(parts.values()) for parts in self.explain(candidates)]

    def explain_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
        """:meth:`explain` from the candidates' ids and signals alone."""
        if len(ids) != len(signals):
            raise InvalidInput(f"explain_signals got {len(ids)} ids and {len(signals)} signal mappings")
        sources = sorted({n for s in signals for n in s})
        rankings: dict[str, list[int]] = {}
        for name in sources:
            holders = [i for i, s in enumerate(signals) if name in s]
            holders.sort(key=lambda i: (-signals[i][name], ids[i]))
            # Candidates sharing an id (outside a pipeline) are one document: rank by id.
            rankings[name] = holders
        fused = reciprocal_rank_fusion(
            {s: [ids[i] for i in idx] for s, idx in rankings.items()}, self._weights, self._k
        )
        parts = [dict(fused.get(cid, {})) for cid in ids]
        if not self._normalize:
            return parts
        weights = self._weights
        best = sum(
            (1.0 if weights is None else weights.get(name, 0.0)) / (self._k + 1) for name in rankings if rankings[name]
        )
        return scaled(parts, best)

    def score_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[float]:
        """:meth:`score` from the candidates' ids and signals alone."""
        return [sum(parts.values()) for parts in self.explain_signals(ids, signals)]
