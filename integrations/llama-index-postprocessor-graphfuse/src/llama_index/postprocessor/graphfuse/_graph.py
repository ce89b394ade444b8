"""GraphExpansionPostprocessor: add the graph neighbours of the nodes (the core graph stage)."""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse.nodes import run_on_nodes

from graphfuse import GraphStore, MetadataFilter, Stage
from graphfuse.stages import GraphExpansion

from ._base import StageRunner

__all__ = ["GraphExpansionPostprocessor"]


class GraphExpansionPostprocessor(StageRunner):
    """Add the documents within ``depth`` hops of the nodes: the core
    :class:`graphfuse.stages.GraphExpansion` stage, as a pipeline runs it.

    The incoming nodes keep their order and score and get ``graph`` = their strength (their
    ``semantic`` signal, i.e. their score the first time GraphFuse sees them; 1.0 without one; 0.0
    below ``min_seed_score``, and then they are not expanded from). The related documents follow,
    at most ``max_expansion``, nearest first, as new nodes with ``graph = strength * decay **
    distance`` as signal and score. Entity nodes of an entity graph are walked through, never
    returned. ``filter`` (a GraphFuse metadata filter mapping) applies on every hop. Nodes the store
    does not hold: kept (``unknown="keep"``) or :class:`~graphfuse.NotFound` (``"error"``).
    """

    depth: int = Field(default=2, description="Hops to follow (1-3).")
    max_expansion: int = Field(default=100, description="Most documents added.")
    relation_types: list[str] | None = Field(default=None, description="Relation types to follow; None: all.")
    decay: float = Field(default=0.5, description="Graph signal per hop: decay ** distance.")
    filter: dict[str, Any] | None = Field(default=None, description="GraphFuse metadata filter, every hop.")
    unknown: Literal["keep", "error"] = Field(default="keep", description="Nodes the graph store does not know.")
    min_seed_score: float | None = Field(
        default=None, description="Only nodes with a strength of at least this are expanded from."
    )

    _graph_store: GraphStore = PrivateAttr()

    def __init__(self, graph_store: GraphStore, **data: Any) -> None:
        super().__init__(**data)
        self._graph_store = graph_store
        self._stage()
        MetadataFilter.parse(self.filter)

    @classmethod
    def class_name(cls) -> str:
        return "GraphExpansionPostprocessor"

    def _filter(self) -> MetadataFilter | None:
        return MetadataFilter.parse(self.filter)

    def _stage(self) -> Stage:
        return GraphExpansion(
            self._graph_store,
            depth=self.depth,
            max_expansion=self.max_expansion,
            relation_types=self.relation_types,
            decay=self.decay,
            seed_signal=self.score_signal,
            min_seed_score=self.min_seed_score or 0.0,
        )

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        return await run_on_nodes(
            [self._stage()],
            self._query(query_bundle, "graph"),
            nodes,
            self._mapping(),
            graph_store=self._graph_store,
            unknown=self.unknown,
            new_score_signal="graph",
        )
