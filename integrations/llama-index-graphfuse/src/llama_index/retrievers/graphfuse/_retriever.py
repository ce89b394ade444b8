"""GraphFuseRetriever: a GraphFuse pipeline as a LlamaIndex retriever."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle

from graphfuse import FilterLike, InvalidInput, MetadataFilter, Pipeline, Result

from ._instrumentation import get_dispatcher
from ._nodes import SIGNALS_KEY, NodeMapping, node_from_result

__all__ = ["GraphFuseRetriever"]

dispatcher = get_dispatcher(__name__)


class GraphFuseRetriever(BaseRetriever):
    """Retrieve with a GraphFuse :class:`~graphfuse.Pipeline`.

    Each result becomes a ``NodeWithScore`` whose ``TextNode`` has the document id as its id,
    the content as its text, the document metadata (plus ``created_at``/``updated_at`` as ISO
    strings), and the pipeline's signals under ``signals_key`` (``"graphfuse_signals"``) and
    the score contributions under ``"graphfuse_contributions"``: both keys are excluded from
    embedding and LLM text. The score is the pipeline's final score.

    ``aretrieve`` awaits ``pipeline.aretrieve`` on the caller's loop; ``retrieve`` runs the same
    coroutine through :func:`graphfuse.run_sync`. ``filter`` and ``options`` apply to every call.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        top_k: int = 10,
        min_score: float | None = None,
        filter: FilterLike | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        signals_key: str = SIGNALS_KEY,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(pipeline, Pipeline):
            raise InvalidInput(f"pipeline must be a graphfuse.Pipeline, got {type(pipeline).__name__}")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0:
            raise InvalidInput(f"top_k must be a positive integer, got {top_k!r}")
        self._pipeline = pipeline
        self._top_k = top_k
        self._min_score = min_score
        self._filter = MetadataFilter.parse(filter)
        self._options = dict(options or {})
        self._mapping = NodeMapping(signals_key=signals_key)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def pipeline(self) -> Pipeline:
        """The pipeline this retriever runs."""
        return self._pipeline

    def _nodes(self, results: list[Result]) -> list[NodeWithScore]:
        return [node_from_result(r, self._mapping) for r in results]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        results = self._pipeline.retrieve(
            query_bundle.query_str, self._top_k, self._min_score, filter=self._filter, options=self._options
        )
        return self._nodes(results)

    @dispatcher.span
    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        results = await self._pipeline.aretrieve(
            query_bundle.query_str, self._top_k, self._min_score, filter=self._filter, options=self._options
        )
        return self._nodes(results)
