"""The fusion weights a weighted-sum pipeline gave each signal, per query, summarised over an evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._core._types import Result
from ..scoring import AdaptiveScorer, WeightedScorer

__all__ = ["FusionSummary", "FusionTally", "SignalWeight", "query_weights"]


def query_weights(results: Sequence[Result]) -> dict[str, float]:
    """The weight each signal got in one query's results: ``contribution / value``.

    Taken from the first result that holds the signal with a positive value (a weighted sum gives
    a signal one weight per query); a signal the results hold but the scorer does not weigh (no
    contribution) has weight 0. Signals no result holds are absent.
    """
    weights: dict[str, float] = {}
    for r in results:
        for name, value in r.signals.items():
            if name not in weights and value > 0.0:
                weights[name] = r.contributions.get(name, 0.0) / value
    return weights


@dataclass(frozen=True)
class SignalWeight:
    """One signal's weight over the queries whose results hold it: mean, smallest, largest, how many."""

    mean: float
    min: float
    max: float
    n_queries: int

    def as_json(self) -> dict[str, float | int]:
        return {"mean": self.mean, "min": self.min, "max": self.max, "n_queries": self.n_queries}


@dataclass(frozen=True)
class FusionSummary:
    """The weights one pipeline's scorer chose over an evaluation (``graphfuse eval``'s ``fusion``).

    ``adaptive`` is true for an :class:`~graphfuse.scoring.AdaptiveScorer` (weights set per query),
    ``strength`` its per-store strength (``None`` for fixed weights), ``weights`` per signal.
    """

    adaptive: bool
    strength: float | None
    weights: Mapping[str, SignalWeight]

    def as_json(self) -> dict[str, Any]:
        return {
            "adaptive": self.adaptive,
            "strength": self.strength,
            "weights": {name: w.as_json() for name, w in self.weights.items()},
        }


class FusionTally:
    """Collects :func:`query_weights` per query for a pipeline whose scorer is a weighted sum.

    :meth:`for_scorer` gives ``None`` for any other scorer (reciprocal rank fusion, a callable):
    its contributions are not ``weight * value``.
    """

    def __init__(self, adaptive: bool, strength: float | None) -> None:
        self._adaptive = adaptive
        self._strength = strength
        self._seen: dict[str, list[float]] = {}

    @classmethod
    def for_scorer(cls, scorer: object) -> FusionTally | None:
        if isinstance(scorer, AdaptiveScorer):
            return cls(True, scorer.strength)
        if isinstance(scorer, WeightedScorer):
            return cls(False, None)
        return None

    def add(self, results: Sequence[Result]) -> None:
        for name, weight in query_weights(results).items():
            self._seen.setdefault(name, []).append(weight)

    def summary(self) -> FusionSummary:
        weights = {
            name: SignalWeight(sum(values) / len(values), min(values), max(values), len(values))
            for name, values in sorted(self._seen.items())
        }
        return FusionSummary(self._adaptive, self._strength, weights)
