"""The weighted-sum scorer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .._core._types import Candidate
from ._weights import check_normalize, check_weights, present_weight, scaled

__all__ = ["DEFAULT_WEIGHTS", "WeightedScorer"]

DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"semantic": 0.30, "graph": 0.25, "temporal": 0.15, "pagerank": 0.10, "access": 0.10, "rerank": 0.10}
)
"""The weight per signal that :class:`WeightedScorer` uses when given none (read-only)."""


class WeightedScorer:
    """``score = sum(weight[name] * signal[name])`` over the weighted signals.

    A signal a candidate lacks contributes 0; a signal without a weight is ignored. Weights
    are by name, so a plugin's signal is weighted like a built-in one::

        WeightedScorer({"semantic": 0.5, "graph": 0.3, "my_signal": 0.2})

    With ``normalize=True`` the sum is divided by the total weight of the signals the
    candidates of the call (one query's) carry, so that with signals in [0, 1] the score is in
    [0, 1] (1: every such signal at 1) whatever the weights add up to; one query's candidates
    are divided by one number, so their order does not change. The contributions are divided
    alike and still add up to the score.

    A :class:`~graphfuse.hosts.SignalScorer`: :meth:`score_signals` scores plain signal mappings.
    """

    __slots__ = ("_by_name", "_normalize", "_weights")

    def __init__(self, weights: Mapping[str, float] | None = None, *, normalize: bool = False) -> None:
        self._weights = check_weights(DEFAULT_WEIGHTS if weights is None else weights)
        self._by_name = dict(self._weights)  # the same weights as a plain dict (a lookup without the proxy)
        self._normalize = check_normalize(normalize, "WeightedScorer")

    @property
    def weights(self) -> Mapping[str, float]:
        """The weights by signal name."""
        return self._weights

    @property
    def normalize(self) -> bool:
        """Whether scores are divided by the total weight of the signals present (see the class)."""
        return self._normalize

    def __repr__(self) -> str:
        return f"WeightedScorer({dict(self._weights)!r}" + (", normalize=True)" if self._normalize else ")")

    def score(self, candidates: Sequence[Candidate]) -> list[float]:
        """One score per candidate (input order)."""
        return self.score_signals((), [c.signals for c in candidates])

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        """Each weighted signal's contribution (``weight * value``) per candidate."""
        return self.explain_signals((), [c.signals for c in candidates])

    def score_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[float]:
        """:meth:`score` from the candidates' signals alone (``ids`` are not needed: pass them or ``()``)."""
        if self._normalize:
            return [sum(parts.values()) for parts in self.explain_signals(ids, signals)]
        weight = self._by_name.get  # every weight is a float: None means no weight
        out: list[float] = []
        for s in signals:
            # sum([w[n] * v for n, v in s.items() if n in w]), without a comprehension's frame per mapping.
            products: list[float] = []
            for n, v in s.items():
                w = weight(n)
                if w is not None:
                    products.append(w * v)
            out.append(sum(products))
        return out

    def explain_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
        """:meth:`explain` from the candidates' signals alone (``ids`` are not needed: pass them or ``()``)."""
        weight = self._by_name.get  # every weight is a float: None means no weight
        out: list[dict[str, float]] = []
        for s in signals:
            # {n: w[n] * v for n, v in s.items() if n in w}, without a comprehension's frame per mapping.
            parts: dict[str, float] = {}
            for n, v in s.items():
                w = weight(n)
                if w is not None:
                    parts[n] = w * v
            out.append(parts)
        return scaled(out, present_weight(self._by_name, signals)) if self._normalize else out
