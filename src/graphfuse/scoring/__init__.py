"""Scorers: turn each candidate's signals into its final score.

- :class:`WeightedScorer`: a weighted sum of signals, weights by signal name (plugin
  signals included); the default.
- :class:`ReciprocalRankFusion`: weighted RRF over the per-signal rankings (``k = 60``).
- :class:`AdaptiveScorer`: a weighted sum whose lexical and vector weights follow how sure
  each ranking is, per query (the ``multihop`` preset's scorer).
- :class:`CallableScorer`: any ``Callable[[Mapping[str, float]], float]``.
"""

from ._adaptive import AdaptiveScorer, FusionWeights, ranking_confidence
from ._callable import CallableScorer, as_scorer
from ._rrf import ReciprocalRankFusion, reciprocal_rank_fusion
from ._weighted import DEFAULT_WEIGHTS, WeightedScorer

__all__ = [
    "DEFAULT_WEIGHTS",
    "AdaptiveScorer",
    "CallableScorer",
    "FusionWeights",
    "ReciprocalRankFusion",
    "WeightedScorer",
    "as_scorer",
    "ranking_confidence",
    "reciprocal_rank_fusion",
]
