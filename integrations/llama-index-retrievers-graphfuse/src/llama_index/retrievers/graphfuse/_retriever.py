"""GraphFuseRetriever: a GraphFuse pipeline as a LlamaIndex retriever."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle

from graphfuse import FilterLike, InvalidInput, MetadataFilter, Pipeline, Result

from ._instrumentation import get_dispatcher
from .nodes import SIGNALS_KEY, NodeMapping, node_from_result

__all__ = ["DEFAULT_TOP_K", "GraphFuseRetriever"]

DEFAULT_TOP_K = 10

dispatcher = get_dispatcher(__name__)


class GraphFuseRetriever(BaseRetriever):
    """Retrieve with a GraphFuse :class:`~graphfuse.Pipeline`.

    ``GraphFuseRetriever(pipeline, similarity_top_k=10, min_score=None, filter=None,
    options=None, score_signal=None, signals_key="graphfuse_signals", callback_manager=None)``:

    - ``similarity_top_k`` (as on LlamaIndex's ``VectorIndexRetriever``; ``top_k`` is the same
      knob, give one): how many results.
    - ``min_score``: a floor on the fused score; ``filter``: a GraphFuse metadata filter
      applied by every stage; ``options``: per-stage options. All apply to every call.
    - ``score_signal``: what ``NodeWithScore.score`` holds. ``None`` (default): the pipeline's
      fused score (the weighted sum of the signals, in [0, 1] with the default weights; the
      order of the results). A signal name, e.g. ``"semantic"``: that signal's value (the
      cosine similarity for ``"semantic"``), so ``SimilarityPostprocessor(similarity_cutoff=...)``
      cuts by it; the order stays the fused one.

    Each result becomes a ``NodeWithScore`` whose node (:class:`GraphFuseNode`, a ``TextNode``)
    has the document id as its ``id_``, its parent document as ``ref_doc_id`` (itself when
    not split into chunks), the content as its text, the document's user metadata (plus
    ``created_at``/``updated_at`` as ISO strings; GraphFuse's internal ``graphfuse_*`` keys are
    left out), and the pipeline's signals under ``signals_key`` (``"graphfuse_signals"``) and
    the score contributions under ``"graphfuse_contributions"``: both keys are excluded from
    embedding and LLM text and from the node's ``hash``, so LlamaIndex de-duplicates the same
    passage from GraphFuse and from another retriever (``QueryFusionRetriever``).

    ``aretrieve`` awaits ``pipeline.aretrieve`` on the caller's loop; ``retrieve`` runs the same
    coroutine through :func:`graphfuse.run_sync`. ``filter`` and ``options`` apply to every call.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        similarity_top_k: int | None = None,
        top_k: int | None = None,
        min_score: float | None = None,
        filter: FilterLike | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        score_signal: str | None = None,
        signals_key: str = SIGNALS_KEY,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if not isinstance(pipeline, Pipeline):
            raise InvalidInput(f"pipeline must be a graphfuse.Pipeline, got {type(pipeline).__name__}")
        if similarity_top_k is not None and top_k is not None:
            raise InvalidInput("give similarity_top_k or top_k (the same setting), not both")
        count = similarity_top_k if similarity_top_k is not None else top_k
        what = "similarity_top_k" if similarity_top_k is not None else "top_k"
        if count is None:
            count = DEFAULT_TOP_K
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise InvalidInput(f"{what} must be a positive integer, got {count!r}")
        if score_signal is not None and (not isinstance(score_signal, str) or not score_signal):
            raise InvalidInput(f"score_signal must be None or a signal name, got {score_signal!r}")
        self._pipeline = pipeline
        self._top_k = count
        self._min_score = min_score
        self._filter = MetadataFilter.parse(filter)
        self._options = dict(options or {})
        self._score_signal = score_signal
        self._mapping = NodeMapping(signals_key=signals_key)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def pipeline(self) -> Pipeline:
        """The pipeline this retriever runs."""
        return self._pipeline

    @property
    def similarity_top_k(self) -> int:
        """How many results a call returns."""
        return self._top_k

    def _nodes(self, results: list[Result]) -> list[NodeWithScore]:
        return [node_from_result(r, self._mapping, self._score_signal) for r in results]

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
