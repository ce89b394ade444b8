"""The adaptive scorer: a weighted sum whose lexical and vector weights follow each query's rankings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from .._core._errors import InvalidInput
from .._core._types import Candidate
from ..defaults import ADAPTIVE_LEXICAL_WEIGHT, ADAPTIVE_REFERENCE, ADAPTIVE_TIME_BOOST, ADAPTIVE_VECTOR_BOOST
from ._weights import check_normalize, check_weights, present_weight, scaled

__all__ = ["AdaptiveScorer", "FusionWeights", "ranking_confidence"]

_EPS = 1e-12


def ranking_confidence(values: Sequence[float], depth: int = 5) -> float:
    """How far the best value of a ranking stands above the ``depth``-th: ``(v1 - v_depth) / v1`` in [0, 1].

    0 when there are fewer than two positive values (nothing stands out) or all are equal; 1
    when the best is the only positive one. Values are one retriever's signal over the
    candidates that carry it, in any order.
    """
    ranked = sorted((v for v in values if v > 0.0), reverse=True)
    if len(ranked) < 2:
        return 1.0 if ranked else 0.0
    top = ranked[0]
    last = ranked[min(depth, len(ranked)) - 1]
    return max(0.0, min(1.0, (top - last) / top)) if top > _EPS else 0.0


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """The weights :class:`AdaptiveScorer` chose for one query, and the features they came from.

    ``features`` holds ``lexical_confidence`` and ``vector_confidence`` (see
    :func:`ranking_confidence`; 0 when the signal is absent), ``second_hop`` (how surely a
    second-hop search found a passage neither first-stage search did, in [0, 1]) and the
    ``strength`` used for the query: the scorer's strength times ``1 - second_hop``.
    """

    weights: Mapping[str, float]
    features: Mapping[str, float]


class AdaptiveScorer:
    """A weighted sum (as :class:`WeightedScorer`) whose lexical and vector weights are set per query.

    The rule, for the candidates of one query: the *confidence* of a first-stage ranking is
    how far its best hit stands above a later one (:func:`ranking_confidence`, in [0, 1]),
    computed over the candidates carrying its signal: above the second for the lexical signal
    (``lexical_depth=2``: BM25 scores are peaked, one term match separates them) and above the
    fifth for the vector signal (``vector_depth=5``: cosines are flat near the top). Then

    - ``weight[lexical] = base[lexical] + strength * lexical_weight * min(1, lexical_confidence / reference)``
    - ``weight[vector] = base[vector] * (1 + strength * vector_boost * min(1, vector_confidence / reference))``
    - ``weight[t] = base[t] * (1 + strength * time_boost)`` for each time signal ``t`` in
      ``time`` (``"time"``, ``"event"``: :class:`~graphfuse.timeaware.TimeAware` gives them
      only to a question with a time expression on a dated store, so a question that says when
      is ranked by when where the first-stage rankings are left to decide)

    and every other signal keeps its ``base`` weight. ``strength`` (in [0, 1]) is how much the
    store leaves to the first-stage rankings: the ``multihop`` preset sets it from the corpus
    (the share of documents without a title the title linker can match, see
    :func:`graphfuse.multihop.adaptive_strength`). A retriever whose best hit stands out is
    trusted more, one whose ranking is flat (it has not found anything specific) adds little;
    the graph signals keep their weights, so where neither ranking is sure the walk decides.
    ``strength=0`` (or ``lexical_weight=0`` and ``vector_boost=0``) gives back ``base`` exactly.

    A question whose answer is a second hop leaves the ranking to the graph: when the
    ``second_hop`` signal (``"bridge"``, :class:`~graphfuse.multihop.BridgeSearch`) reached a
    candidate that neither the lexical nor the vector search found, the strength of that query
    is multiplied by ``1 - v``, ``v`` the largest such value (1 for a name's best hit): the
    first-stage hits found the first hop, and weighing them more would push the second one out.
    ``second_hop=None`` turns this off.

    :meth:`fusion` returns the weights chosen for a candidate list and the features, and
    :meth:`explain` the contributions (``weight * value``) as for :class:`WeightedScorer`, so
    ``contribution / signal`` is the weight a result's signal got. The step reads each
    candidate's signals once (no I/O).

    With ``normalize=True`` each query's sums are divided by the total of the weights chosen
    for it over the signals its candidates carry, as :class:`WeightedScorer` does: scores in
    [0, 1] for signals in [0, 1], in the same order (the ``multihop`` preset's setting).
    """

    __slots__ = (
        "_base",
        "_boost",
        "_depth",
        "_hop",
        "_lex",
        "_lex_weight",
        "_normalize",
        "_ref",
        "_strength",
        "_time",
        "_time_boost",
        "_vec",
    )

    def __init__(
        self,
        base: Mapping[str, float],
        *,
        lexical: str = "bm25",
        vector: str = "semantic",
        lexical_weight: float = ADAPTIVE_LEXICAL_WEIGHT,
        vector_boost: float = ADAPTIVE_VECTOR_BOOST,
        reference: float = ADAPTIVE_REFERENCE,
        lexical_depth: int = 2,
        vector_depth: int = 5,
        strength: float = 1.0,
        second_hop: str | None = "bridge",
        time: Sequence[str] = ("time", "event"),
        time_boost: float = ADAPTIVE_TIME_BOOST,
        normalize: bool = False,
    ) -> None:
        self._base = check_weights(base)
        self._normalize = check_normalize(normalize, "AdaptiveScorer")
        for label, value in (
            ("lexical_weight", lexical_weight),
            ("vector_boost", vector_boost),
            ("time_boost", time_boost),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1e6:
                raise InvalidInput(f"AdaptiveScorer {label} must be a number in [0, 1e6], got {value!r}")
        if isinstance(strength, bool) or not isinstance(strength, (int, float)) or not 0.0 <= strength <= 1.0:
            raise InvalidInput(f"AdaptiveScorer strength must be a number in [0, 1], got {strength!r}")
        if isinstance(reference, bool) or not isinstance(reference, (int, float)) or not 0.0 < reference <= 1.0:
            raise InvalidInput(f"AdaptiveScorer reference must be a number in (0, 1], got {reference!r}")
        for label, depth in (("lexical_depth", lexical_depth), ("vector_depth", vector_depth)):
            if isinstance(depth, bool) or not isinstance(depth, int) or depth < 2:
                raise InvalidInput(f"AdaptiveScorer {label} must be an integer >= 2, got {depth!r}")
        for label, name in (("lexical", lexical), ("vector", vector)):
            if not isinstance(name, str) or not name:
                raise InvalidInput(f"AdaptiveScorer {label} must be a signal name, got {name!r}")
        if second_hop is not None and (not isinstance(second_hop, str) or not second_hop):
            raise InvalidInput(f"AdaptiveScorer second_hop must be a signal name or None, got {second_hop!r}")
        if isinstance(time, str) or not all(isinstance(t, str) and t for t in time):
            raise InvalidInput(f"AdaptiveScorer time must be a sequence of signal names, got {time!r}")
        self._hop = second_hop
        self._time, self._time_boost = tuple(time), float(time_boost)
        self._lex, self._vec = lexical, vector
        self._lex_weight, self._boost = float(lexical_weight), float(vector_boost)
        self._ref, self._depth = float(reference), (lexical_depth, vector_depth)
        self._strength = float(strength)

    @property
    def base(self) -> Mapping[str, float]:
        """The weights before adaptation (every signal but the lexical one keeps its own)."""
        return self._base

    @property
    def normalize(self) -> bool:
        """Whether each query's scores are divided by the total weight of its signals (see the class)."""
        return self._normalize

    @property
    def strength(self) -> float:
        """How much the rule adapts (0: the ``base`` weights exactly; 1: fully)."""
        return self._strength

    def __repr__(self) -> str:
        return (
            f"AdaptiveScorer({dict(self._base)!r}, lexical={self._lex!r}, vector={self._vec!r}, "
            f"lexical_weight={self._lex_weight}, vector_boost={self._boost}, reference={self._ref}, "
            f"lexical_depth={self._depth[0]}, vector_depth={self._depth[1]}, strength={self._strength}, "
            f"second_hop={self._hop!r}, time={self._time!r}, time_boost={self._time_boost}"
            + (", normalize=True)" if self._normalize else ")")
        )

    def _features(self, signals: Sequence[Mapping[str, float]]) -> tuple[float, float, float, float]:
        """``(lexical confidence, vector confidence, second hop, strength of this query)``."""
        lex = [v for s in signals if (v := s.get(self._lex)) is not None]
        vec = [v for s in signals if (v := s.get(self._vec)) is not None]
        lc = ranking_confidence(lex, self._depth[0])
        vc = ranking_confidence(vec, self._depth[1])
        hop = 0.0
        if self._hop is not None:
            lexical, vector, second = self._lex, self._vec, self._hop
            for s in signals:
                v = s.get(second)
                if v is not None and v > hop and lexical not in s and vector not in s:
                    hop = min(1.0, v)
        return lc, vc, hop, self._strength * (1.0 - hop)

    def _gains(self, lc: float, vc: float, st: float) -> tuple[float, float]:
        """What the rule adds for the two rankings: to the lexical weight, and to the vector weight's factor."""
        return (
            st * self._lex_weight * min(1.0, lc / self._ref),
            st * self._boost * min(1.0, vc / self._ref),
        )

    def fusion_signals(self, signals: Sequence[Mapping[str, float]]) -> FusionWeights:
        """The weights for one query's candidates, given as their signal mappings."""
        lc, vc, hop, st = self._features(signals)
        weights = dict(self._base)
        if st > 0.0:
            lex_gain, vec_gain = self._gains(lc, vc, st)
            weights[self._lex] = self._base.get(self._lex, 0.0) + lex_gain
            if self._vec in weights:
                weights[self._vec] = self._base[self._vec] * (1.0 + vec_gain)
            for name in self._time:
                if name in weights:
                    weights[name] = self._base[name] * (1.0 + st * self._time_boost)
        features = {"lexical_confidence": lc, "vector_confidence": vc, "second_hop": hop, "strength": st}
        return FusionWeights(MappingProxyType(weights), MappingProxyType(features))

    def boosts(self, signals: Sequence[Mapping[str, float]]) -> Mapping[str, float]:
        """How much more this query trusts each first-stage ranking: a multiplier per signal.

        ``{lexical: 1 + s * lexical_weight * min(1, lexical_confidence / reference), vector: 1 + s
        * vector_boost * min(1, vector_confidence / reference)}``, ``s`` the query's strength (the
        scorer's, times ``1 - second_hop``): the factors the rule applies to the two rankings,
        written as multipliers so that a stage choosing by its own weights of these signals can
        follow them (the ``multihop`` preset's walk picks its seeds so, see
        :class:`~graphfuse.multihop.PersonalizedPageRank`'s ``seed_boost``). Both are 1 at strength 0.
        """
        lc, vc, _hop, st = self._features(signals)
        lex_gain, vec_gain = self._gains(lc, vc, st)
        return MappingProxyType({self._lex: 1.0 + lex_gain, self._vec: 1.0 + vec_gain})

    def fusion(self, candidates: Sequence[Candidate]) -> FusionWeights:
        """The weights for one query's candidates (what :meth:`score` uses) and their features."""
        return self.fusion_signals([c.signals for c in candidates])

    def score(self, candidates: Sequence[Candidate]) -> list[float]:
        """One score per candidate (input order)."""
        return self.score_signals((), [c.signals for c in candidates])

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        """Each weighted signal's contribution (``weight * value``) per candidate."""
        return self.explain_signals((), [c.signals for c in candidates])

    def score_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[float]:
        """:meth:`score` from the candidates' signals alone (``ids`` are not needed: pass them or ``()``)."""
        return [sum(parts.values()) for parts in self.explain_signals(ids, signals)]

    def explain_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
        """:meth:`explain` from the candidates' signals alone (``ids`` are not needed: pass them or ``()``)."""
        weight = self.fusion_signals(signals).weights
        parts = [{n: weight[n] * v for n, v in s.items() if weight.get(n)} for s in signals]
        return scaled(parts, present_weight(weight, signals)) if self._normalize else parts
