"""Scorers: turn each candidate's signals into its final score.

- :class:`WeightedScorer`: a weighted sum of signals, weights by signal name (plugin
  signals included); the default.
- :class:`ReciprocalRankFusion`: weighted RRF over the per-signal rankings (``k = 60``).
- :class:`CallableScorer`: any ``Callable[[Mapping[str, float]], float]``.
"""

from ._callable import CallableScorer, as_scorer
from ._rrf import ReciprocalRankFusion, reciprocal_rank_fusion
from ._weighted import DEFAULT_WEIGHTS, WeightedScorer

__all__ = [
    "DEFAULT_WEIGHTS",
    "CallableScorer",
    "ReciprocalRankFusion",
    "WeightedScorer",
    "as_scorer",
    "reciprocal_rank_fusion",
]
