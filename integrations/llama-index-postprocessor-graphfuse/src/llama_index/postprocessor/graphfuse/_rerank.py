"""RerankPostprocessor: any GraphFuse reranker as a LlamaIndex reranking postprocessor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.schema import NodeWithScore, QueryBundle

from graphfuse import Candidate, Reranker, Stage
from graphfuse.stages import Rerank

from ._base import StageRunner
from ._instrumentation import get_dispatcher

__all__ = ["RerankPostprocessor"]

dispatcher = get_dispatcher(__name__)


class _IncomingOrder:
    """Scores candidates by their incoming position, so the rerank stage picks the first ``top_n`` nodes."""

    def score(self, candidates: Sequence[Candidate]) -> list[float]:
        return [-float(i) for i in range(len(candidates))]

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        return [{} for _ in candidates]


class RerankPostprocessor(StageRunner):
    """Rerank the first ``top_n`` nodes with a GraphFuse :class:`~graphfuse.Reranker`.

    The reranker scores the query against those nodes' contents; each gets the ``rerank``
    signal and they move first, by rerank score; the other nodes follow in their order. The
    node scores are kept, so the reranker never erases the other signals: put
    :class:`WeightedFusionPostprocessor` after it to fuse ``rerank`` with them. Needs the
    query (:class:`~graphfuse.InvalidInput` without one). Emits LlamaIndex's
    ``ReRankStartEvent`` and ``ReRankEndEvent``.
    """

    top_n: int = Field(default=20, description="How many of the first nodes are reranked.")
    signal: str = Field(default="rerank", description="Name of the signal written.")
    model_name: str = Field(default="", description="Reported in the rerank events; default the reranker's class.")

    _reranker: Reranker = PrivateAttr()

    def __init__(self, reranker: Reranker, **data: Any) -> None:
        data.setdefault("model_name", type(reranker).__name__)
        super().__init__(**data)
        self._reranker = reranker
        self._stage()

    @classmethod
    def class_name(cls) -> str:
        return "RerankPostprocessor"

    def _needs_query(self) -> bool:
        return True

    def _stage(self) -> Stage:
        return Rerank(self._reranker, top_k=self.top_n, scorer=_IncomingOrder(), signal=self.signal)

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        self._query(query_bundle, self.signal)  # refuse a missing query before announcing the rerank
        dispatcher.event(
            ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n, model_name=self.model_name)
        )
        out = await super()._process(nodes, query_bundle)
        dispatcher.event(ReRankEndEvent(nodes=out))
        return out
