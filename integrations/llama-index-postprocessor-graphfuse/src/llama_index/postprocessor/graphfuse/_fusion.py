"""WeightedFusionPostprocessor: fuse the signals carried on the nodes into the final score."""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse.nodes import nodes_from_hits, read_nodes

from graphfuse import InvalidInput, Scorer
from graphfuse.records import fuse
from graphfuse.scoring import ReciprocalRankFusion, WeightedScorer

from ._base import GraphFusePostprocessor

__all__ = ["WeightedFusionPostprocessor"]


class WeightedFusionPostprocessor(GraphFusePostprocessor):
    """Set each node's score from its GraphFuse signals and sort the nodes, best first (ties by graph id).

    The signals are those the GraphFuse postprocessors and retrievers wrote (``temporal``,
    ``pagerank``, ``access``, ``graph``, ``rerank``, a plugin's own), plus the node's incoming
    retriever score as the ``score_signal`` signal (``semantic``) for nodes no GraphFuse
    component touched before.

    - ``mode="weighted"`` (default): ``sum(weight[name] * signal[name])``; ``weights`` default
      to GraphFuse's ``DEFAULT_WEIGHTS`` (semantic 0.30, graph 0.25, temporal 0.15,
      pagerank 0.10, access 0.10, rerank 0.10); a missing signal counts 0.
    - ``mode="rrf"``: weighted reciprocal rank fusion over the per-signal rankings (``k``);
      ``weights`` default to 1 for every signal present.

    Nodes sharing a graph id get the same score. ``top_n`` keeps only the best ``top_n`` nodes.
    """

    weights: dict[str, float] | None = Field(default=None, description="Weight per signal name.")
    mode: Literal["weighted", "rrf"] = Field(default="weighted", description="Weighted sum or weighted RRF.")
    k: int = Field(default=60, description="RRF constant.")
    top_n: int | None = Field(default=None, description="Keep only the best top_n nodes; None: all.")

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        self._scorer()
        if self.top_n is not None and self.top_n <= 0:
            raise InvalidInput(f"top_n must be a positive integer or None, got {self.top_n!r}")

    @classmethod
    def class_name(cls) -> str:
        return "WeightedFusionPostprocessor"

    def _scorer(self) -> Scorer:
        if self.mode == "rrf":
            return ReciprocalRankFusion(self.weights, k=self.k)
        return WeightedScorer(self.weights)

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        mapping = self._mapping()
        hits = fuse(read_nodes(nodes, mapping).hits(), self._scorer())
        return nodes_from_hits(hits, mapping, fused=True)[: self.top_n]
