"""GraphExpansionRetriever: graph expansion around any LlamaIndex retriever."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle

from graphfuse import FilterLike, GraphStore, InvalidInput, MetadataFilter, run_sync
from graphfuse.hosts import host_query
from graphfuse.stages import GraphExpansion
from graphfuse.validation import check_choice

from ._instrumentation import get_dispatcher
from .nodes import SIGNALS_KEY, NodeMapping, run_on_nodes

__all__ = ["GraphExpansionRetriever"]

dispatcher = get_dispatcher(__name__)


class GraphExpansionRetriever(BaseRetriever):
    """Wrap any LlamaIndex retriever and add the documents related to its nodes in a GraphFuse graph store.

    The core :class:`graphfuse.stages.GraphExpansion` stage, as a pipeline runs it: the wrapped
    retriever's nodes come first (copies, score kept), each with ``graph`` = its strength (its
    score, as the ``semantic`` signal; 0.0 below ``min_seed_score``); then the documents within
    ``depth`` hops (1-3), at most ``max_expansion``, nearest first, as new nodes with
    ``graph = strength * decay ** distance`` as signal and score. Entity nodes are walked through,
    never returned. ``filter`` applies on every hop (scope isolation).

    A node's graph id is ``node.metadata[id_key]`` when ``id_key`` is set, else its
    ``ref_doc_id``, else its node id. Nodes the graph store does not hold are kept unexpanded
    (``unknown="keep"``) or raise :class:`~graphfuse.NotFound` (``unknown="error"``).
    """

    def __init__(
        self,
        retriever: BaseRetriever,
        graph_store: GraphStore,
        *,
        depth: int = 2,
        max_expansion: int = 100,
        relation_types: Sequence[str] | None = None,
        decay: float = 0.5,
        filter: FilterLike | None = None,
        id_key: str | None = None,
        unknown: str = "keep",
        signals_key: str = SIGNALS_KEY,
        score_signal: str | None = "semantic",
        min_seed_score: float | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(retriever, BaseRetriever):
            raise InvalidInput(f"retriever must be a LlamaIndex BaseRetriever, got {type(retriever).__name__}")
        self._retriever = retriever
        self._graph_store = graph_store
        self._stage = GraphExpansion(
            graph_store,
            depth=depth,
            max_expansion=max_expansion,
            relation_types=relation_types,
            decay=decay,
            seed_signal=score_signal,
            min_seed_score=min_seed_score or 0.0,
        )
        self._filter = MetadataFilter.parse(filter)
        self._unknown = check_choice(unknown, "unknown", ("keep", "error"))
        self._mapping = NodeMapping(id_key=id_key, signals_key=signals_key, score_signal=score_signal)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    async def _expand(self, nodes: list[NodeWithScore], query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not nodes:
            return []
        query = host_query(query_bundle.query_str, needs_query=False, filter=self._filter)
        return await run_on_nodes(
            [self._stage],
            query,
            nodes,
            self._mapping,
            graph_store=self._graph_store,
            unknown=self._unknown,
            new_score_signal="graph",
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return run_sync(self._expand(self._retriever.retrieve(query_bundle), query_bundle))

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await self._expand(await self._retriever.aretrieve(query_bundle), query_bundle)
