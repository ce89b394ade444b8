"""The gap of ``multihop`` to the best of its own parts (``bm25``, ``minimal``/``vector``, ``hybrid``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._harness import PipelineMetrics

__all__ = ["BASELINES", "GAP_METRICS", "MULTIHOP", "MetricGap", "gaps_json", "multihop_gaps"]

MULTIHOP = "multihop"
"""The pipeline whose gap is reported."""

BASELINES = ("bm25", "minimal", "vector", "hybrid")
"""Its parts: lexical, vector (``minimal``, or its alias ``vector``), and their hybrid."""

GAP_METRICS = (("recall@2", "R@2"), ("recall@5", "R@5"), ("ndcg@10", "nDCG@10"), ("mrr", "MRR"))
"""The metrics compared: JSON key and label."""

_ROUNDING = 1e-9  # means of the same per-query values can differ in the last bit


@dataclass(frozen=True)
class MetricGap:
    """``multihop`` on one metric against the best baseline that was run.

    ``gap`` is ``multihop - best``; ``negative`` is true when it is below zero (beyond float
    rounding): ``multihop`` lost to one of its own parts on that metric.
    """

    metric: str
    multihop: float
    best: float
    best_pipeline: str
    gap: float

    @property
    def negative(self) -> bool:
        return self.gap < -_ROUNDING

    def as_json(self) -> dict[str, Any]:
        return {
            "multihop": self.multihop,
            "best": self.best,
            "best_pipeline": self.best_pipeline,
            "gap": self.gap,
            "negative": self.negative,
        }


def multihop_gaps(pipelines: Mapping[str, PipelineMetrics]) -> list[MetricGap]:
    """One :class:`MetricGap` per metric of :data:`GAP_METRICS`; empty unless ``multihop`` and at
    least one of :data:`BASELINES` were run. On a tie the baseline named first in the run wins."""
    if MULTIHOP not in pipelines:
        return []
    baselines = [name for name in pipelines if name in BASELINES]
    if not baselines:
        return []
    own = pipelines[MULTIHOP].as_json()
    values = {name: pipelines[name].as_json() for name in baselines}
    out = []
    for key, _ in GAP_METRICS:
        best_name = max(baselines, key=lambda name: values[name][key])  # first of equals
        best = float(values[best_name][key])
        out.append(MetricGap(key, float(own[key]), best, best_name, float(own[key]) - best))
    return out


def gaps_json(pipelines: Mapping[str, PipelineMetrics]) -> dict[str, Any] | None:
    """``--json``'s ``multihop_gap``: ``{"baselines", "metrics": {KEY: {...}}, "negative": [KEY, ...]}``,
    or ``None`` when there is nothing to compare."""
    gaps = multihop_gaps(pipelines)
    if not gaps:
        return None
    return {
        "baselines": [name for name in pipelines if name in BASELINES],
        "metrics": {g.metric: g.as_json() for g in gaps},
        "negative": [g.metric for g in gaps if g.negative],
    }
