"""GraphFuse stages as a LangChain document compressor (for ``ContextualCompressionRetriever``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict, PrivateAttr

from graphfuse import InvalidInput, MetadataFilter, Pipeline, Query, Scorer, Stage, run_sync
from graphfuse.records import fuse, run_stages
from graphfuse.scoring import WeightedScorer

from ._documents import DocumentMapping, combine_filters, documents_from_hits, read_documents
from ._fusion import FUSION_WEIGHTS

__all__ = ["GraphFuseCompressor"]


class GraphFuseCompressor(BaseDocumentCompressor):
    """Run GraphFuse stages over retrieved documents, fuse their signals and keep the best.

    ``GraphFuseCompressor(TemporalDecay(), PageRank(store), scorer=WeightedScorer(...), top_n=5)``
    takes GraphFuse stages (:mod:`graphfuse.stages`) positionally or as ``stages=[...]``. The
    query given by the host is the stages' query (a ``Rerank`` stage reads it). Documents
    arriving without GraphFuse signals get the ``retrieval`` signal from their rank; the default
    scorer is ``WeightedScorer(FUSION_WEIGHTS)``. ``filter`` goes to every stage. Results carry
    ``score``, ``signals`` and ``contributions`` under ``metadata["graphfuse"]``.
    ``acompress_documents`` runs the stages natively on the caller's loop.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    stages: list[Any]
    scorer: Any = None
    top_n: int | None = None
    filter: dict[str, Any] | None = None
    id_key: str | None = None

    _pipeline: Pipeline = PrivateAttr()

    def __init__(self, *stages: Stage, **data: Any) -> None:
        if stages:
            if "stages" in data:
                raise InvalidInput("give the stages positionally or as stages=[...], not both")
            data["stages"] = list(stages)
        super().__init__(**data)

    def model_post_init(self, context: Any, /) -> None:
        scorer: Scorer = WeightedScorer(FUSION_WEIGHTS) if self.scorer is None else self.scorer
        self._pipeline = Pipeline(self.stages, scorer)
        if self.top_n is not None and (isinstance(self.top_n, bool) or self.top_n < 1):
            raise InvalidInput(f"top_n must be None or a positive integer, got {self.top_n!r}")
        MetadataFilter.parse(self.filter)

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """Run the stages and keep the ``top_n`` best documents (best first)."""
        if not documents:
            return []
        mapping = DocumentMapping(self.id_key)
        filter = combine_filters(self.filter)
        hits = await run_stages(self._pipeline.stages, Query(query, filter), read_documents(list(documents), mapping))
        ranked = fuse(hits, self._pipeline.scorer, top_n=self.top_n)
        return documents_from_hits(ranked, query=query, filter=filter, mapping=mapping)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """Sync form of :meth:`acompress_documents` (runs on GraphFuse's private loop)."""
        return run_sync(self.acompress_documents(documents, query, callbacks))
