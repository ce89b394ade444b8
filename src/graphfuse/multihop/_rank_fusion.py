"""The rank fusion stage: the ``hybrid`` preset's reciprocal rank fusion of the first-stage rankings, as a signal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from ..stages import NamedStage
from ..validation import check_name, check_options, check_positive_int

__all__ = ["RankFusion"]


class RankFusion(NamedStage):
    """Give each candidate the reciprocal rank fusion of its rankings by ``signals`` (the ``fused`` signal).

    A candidate's rank by a signal counts when the signal is positive (ranks from 1, ties by id);
    its ``fused`` signal is ``sum(1 / (k + rank))`` over those rankings divided by the most it
    can be (``len(signals) / (k + 1)``, first in every ranking), so it lies in [0, 1]. With the
    default ``signals`` and ``k`` it orders the candidates as the ``hybrid`` preset
    (:class:`~graphfuse.scoring.ReciprocalRankFusion` of vector and BM25 search) does, so that a
    weighted scorer can put that order first and let its other signals break near-ties (the
    ``multihop`` preset on a store of split pages, docs/multihop.md "Long pages"). It adds no
    candidate.
    """

    traits = StageTraits(reads_query=False, needs_stores=False, in_memory_only=True)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_k", "_signals")

    def __init__(
        self,
        signals: Sequence[str] = ("semantic", "bm25"),
        *,
        k: int = 60,
        name: str = "fused",
        signal: str = "fused",
    ) -> None:
        if isinstance(signals, str) or not signals:
            raise InvalidInput(f"signals must be a non-empty sequence of signal names, got {signals!r}")
        for s in signals:
            check_name(s, "signals item")
        self._signals = tuple(dict.fromkeys(signals))
        self._k = check_positive_int(k, "k")
        self._set_names(name, signal)

    def __repr__(self) -> str:
        return f"RankFusion(signals={self._signals!r}, k={self._k}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (it has none; raises :class:`~graphfuse.InvalidInput`)."""
        check_options(self._name, options, ())

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.check_options(query.options.get(self._name, {}))
        fused: dict[str, float] = {}
        for name in self._signals:
            ranked = sorted(
                (c for c in candidates if c.signals.get(name, 0.0) > 0), key=lambda c: (-c.signals[name], c.id)
            )
            for rank, c in enumerate(ranked, start=1):
                fused[c.id] = fused.get(c.id, 0.0) + 1.0 / (self._k + rank)
        best = len(self._signals) / (self._k + 1)
        return [c.with_signal(self._signal, min(1.0, fused[c.id] / best)) if c.id in fused else c for c in candidates]
