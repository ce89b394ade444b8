"""PageRankPostprocessor: graph centrality from a GraphFuse graph store as a node signal."""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr

from graphfuse import GraphStore, Stage
from graphfuse.stages import PageRank

from ._base import StageRunner

__all__ = ["PageRankPostprocessor"]


class PageRankPostprocessor(StageRunner):
    """Set the ``pagerank`` signal from ``graph_store.pagerank`` (normalised to [0, 1]).

    One store call per postprocessing for the nodes' graph ids (see ``id_key``). A node the
    store has no score for gets ``default`` (0.5). The node score and order are kept: fuse
    with :class:`WeightedFusionPostprocessor`.
    """

    default: float = Field(default=0.5, description="Signal for nodes without a PageRank score.")
    signal: str = Field(default="pagerank", description="Name of the signal written.")

    _graph_store: GraphStore = PrivateAttr()

    def __init__(self, graph_store: GraphStore, **data: Any) -> None:
        super().__init__(**data)
        self._graph_store = graph_store
        self._stage()

    @classmethod
    def class_name(cls) -> str:
        return "PageRankPostprocessor"

    def _stage(self) -> Stage:
        return PageRank(self._graph_store, default=self.default, signal=self.signal)
