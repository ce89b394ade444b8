"""FusionRetriever: fuse several LlamaIndex retrievers with weights honoured under RRF too."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle

from graphfuse import InvalidInput
from graphfuse.records import SourceFusion
from graphfuse.validation import check_positive_int

from ._instrumentation import get_dispatcher

__all__ = ["FusionRetriever"]

dispatcher = get_dispatcher(__name__)


class FusionRetriever(BaseRetriever):
    """Run several retrievers on the same query and fuse their nodes into one ranking.

    ``retrievers`` is a mapping of source name to retriever, or a sequence (sources are then
    named ``"retriever_0"``, ``"retriever_1"``, ...). ``weights`` maps a source name to its
    weight (a sequence of floats for a sequence of retrievers; ``None``: every source weighs 1).

    - ``mode="rrf"`` (default): weighted reciprocal rank fusion, each node gets
      ``sum(weight[source] / (k + rank))`` over the sources that returned it: the weights are
      honoured (unlike an unweighted RRF).
    - ``mode="weighted"``: ``sum(weight[source] * score)``, where every source score must be in
      [0, 1] (a cosine below zero counts as 0; ``None`` or a score above 1 raises
      :class:`~graphfuse.InvalidInput`: use RRF for scores on other scales).

    With ``normalize=True`` (default) the fused score is divided by its largest possible value
    (``sum(weights) / (k + 1)`` for RRF, ``sum(weights)`` for weighted), so it lies in [0, 1]
    and a GraphFuse postprocessor downstream can take it as the ``semantic`` signal; 1.0 means
    first (or a perfect score) in every source. The order is the same either way.

    A node one source returns twice counts once for that source, at its best rank (or score).
    Nodes are the same when their ``node_id`` (or ``metadata[id_key]``) is. Returns the
    ``top_k`` best, with the fused score. ``aretrieve`` runs the sources concurrently with
    their ``aretrieve``.
    """

    def __init__(
        self,
        retrievers: Mapping[str, BaseRetriever] | Sequence[BaseRetriever],
        weights: Mapping[str, float] | Sequence[float] | None = None,
        *,
        k: int = 60,
        mode: str = "rrf",
        top_k: int = 10,
        normalize: bool = True,
        id_key: str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if isinstance(retrievers, Mapping):
            named = {str(n): r for n, r in retrievers.items()}
        elif isinstance(retrievers, Sequence) and not isinstance(retrievers, (str, bytes)):
            named = {f"retriever_{i}": r for i, r in enumerate(retrievers)}
        else:
            raise InvalidInput(f"retrievers must be a mapping or a sequence of retrievers, got {retrievers!r}")
        if not named:
            raise InvalidInput("FusionRetriever needs at least one retriever")
        for name, r in named.items():
            if not isinstance(r, BaseRetriever):
                raise InvalidInput(f"retriever {name!r} must be a LlamaIndex BaseRetriever, got {type(r).__name__}")
        self._retrievers = named
        self._fusion = SourceFusion(list(named), weights, mode=mode, k=k, normalize=normalize, what="retriever")
        self._top_k = check_positive_int(top_k, "top_k")
        if id_key is not None and (not isinstance(id_key, str) or not id_key):
            raise InvalidInput(f"id_key must be None or a non-empty string, got {id_key!r}")
        self._id_key = id_key
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def weights(self) -> Mapping[str, float]:
        """The weight of each source."""
        return self._fusion.weights

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._fuse({n: r.retrieve(query_bundle) for n, r in self._retrievers.items()})

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        names = list(self._retrievers)
        found = await asyncio.gather(*(self._retrievers[n].aretrieve(query_bundle) for n in names))
        return self._fuse(dict(zip(names, found, strict=True)))

    def _key(self, node: BaseNode) -> str:
        if self._id_key is None:
            return node.node_id
        if self._id_key not in node.metadata:
            raise InvalidInput(f"node {node.node_id!r} has no metadata key {self._id_key!r} (the configured id_key)")
        return str(node.metadata[self._id_key])

    def _fuse(self, found: Mapping[str, list[NodeWithScore]]) -> list[NodeWithScore]:
        first: dict[str, NodeWithScore] = {}
        hits: dict[str, list[tuple[str, object]]] = {}
        for source, nodes in found.items():
            keys = [self._key(nws.node) for nws in nodes]
            for key, nws in zip(keys, nodes, strict=True):
                first.setdefault(key, nws)
            hits[source] = [(key, nws.score) for key, nws in zip(keys, nodes, strict=True)]
        fused = self._fusion.fuse(
            hits, top_n=self._top_k, label=lambda source, i: f"node {found[source][i].node.node_id!r}"
        )
        return [NodeWithScore(node=first[key].node, score=score) for key, score in fused]
