"""GraphExpansionPostprocessor: add the graph neighbours of the nodes."""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse.nodes import Expansion

from graphfuse import GraphStore

from ._base import GraphFusePostprocessor

__all__ = ["GraphExpansionPostprocessor"]


class GraphExpansionPostprocessor(GraphFusePostprocessor):
    """Add the documents within ``depth`` hops of the nodes, from a GraphFuse graph store.

    The same expansion as :class:`~llama_index.retrievers.graphfuse.GraphExpansionRetriever`:
    the incoming nodes keep their order and score and get ``graph`` 1.0 when the store knows
    them; then come the related documents (at most ``max_expansion``, nearest first) as new
    ``TextNode`` objects with ``graph = decay ** distance`` and score
    ``seed score * decay ** distance``. ``filter`` (a GraphFuse metadata filter mapping) is
    applied on every hop. Unknown nodes: kept unexpanded (``unknown="keep"``) or
    :class:`~graphfuse.NotFound` (``unknown="error"``). Does not need the query.
    """

    depth: int = Field(default=2, description="Hops to follow (1-3).")
    max_expansion: int = Field(default=100, description="Most documents added.")
    relation_types: list[str] | None = Field(default=None, description="Relation types to follow; None: all.")
    decay: float = Field(default=0.5, description="Graph signal per hop: decay ** distance.")
    filter: dict[str, Any] | None = Field(default=None, description="GraphFuse metadata filter, every hop.")
    unknown: Literal["keep", "error"] = Field(default="keep", description="Nodes the graph store does not know.")
    min_seed_score: float | None = Field(
        default=None, description="Only nodes scoring at least this are seeds (get graph 1.0, are expanded from)."
    )

    _graph_store: GraphStore = PrivateAttr()

    def __init__(self, graph_store: GraphStore, **data: Any) -> None:
        super().__init__(**data)
        self._graph_store = graph_store
        self._expansion()

    @classmethod
    def class_name(cls) -> str:
        return "GraphExpansionPostprocessor"

    def _expansion(self) -> Expansion:
        return Expansion.build(
            self._graph_store,
            depth=self.depth,
            max_expansion=self.max_expansion,
            relation_types=self.relation_types,
            decay=self.decay,
            filter=self.filter,
            unknown=self.unknown,
            signal="graph",
            min_seed_score=self.min_seed_score,
        )

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        return await self._expansion().expand(nodes, self._mapping())
