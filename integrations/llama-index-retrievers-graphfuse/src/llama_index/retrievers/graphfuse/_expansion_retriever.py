"""GraphExpansionRetriever: graph expansion around any LlamaIndex retriever."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle

from graphfuse import FilterLike, GraphStore, InvalidInput, run_sync

from ._instrumentation import get_dispatcher
from .nodes import SIGNALS_KEY, Expansion, NodeMapping

__all__ = ["GraphExpansionRetriever"]

dispatcher = get_dispatcher(__name__)


class GraphExpansionRetriever(BaseRetriever):
    """Wrap any LlamaIndex retriever and add the documents related to its nodes in a GraphFuse graph store.

    The wrapped retriever's nodes come first, unchanged but for the ``graph`` signal (1.0 on the
    nodes the graph store knows), stored under ``signals_key`` in excluded metadata. Then come the
    documents within ``depth`` hops (1-3) of them, at most ``max_expansion``, nearest first, as new
    ``TextNode`` objects with ``graph = decay ** distance`` and the score
    ``seed score * decay ** distance``. ``filter`` is applied on every hop (scope isolation).
    With ``min_seed_score``, only nodes scoring at least that are seeds (weak hits get no
    ``graph`` signal and are not expanded from).

    A node's graph id is ``node.metadata[id_key]`` when ``id_key`` is set, else its
    ``ref_doc_id`` (the source document id), else its node id. Nodes the graph store does not
    know are kept unexpanded (``unknown="keep"``, the default) or raise
    :class:`~graphfuse.NotFound` (``unknown="error"``).

    ``aretrieve`` awaits the wrapped retriever's ``aretrieve`` and the store's async methods;
    ``retrieve`` calls the wrapped ``retrieve`` and runs the expansion through
    :func:`graphfuse.run_sync`.
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
        self._expansion = Expansion.build(
            graph_store,
            depth=depth,
            max_expansion=max_expansion,
            relation_types=relation_types,
            decay=decay,
            filter=filter,
            unknown=unknown,
            signal="graph",
            min_seed_score=min_seed_score,
        )
        self._mapping = NodeMapping(id_key=id_key, signals_key=signals_key, score_signal=score_signal)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = self._retriever.retrieve(query_bundle)
        return run_sync(self._expansion.expand(nodes, self._mapping))

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = await self._retriever.aretrieve(query_bundle)
        return await self._expansion.expand(nodes, self._mapping)
