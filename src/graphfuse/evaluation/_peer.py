"""The LlamaIndex peer baseline: ``QueryFusionRetriever`` over vector + BM25, reciprocal rerank."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput

__all__ = ["llamaindex_fusion"]


def llamaindex_fusion(
    texts: Mapping[str, str],
    vectors: Mapping[str, Sequence[float]],
    query_vectors: Mapping[str, Sequence[float]],
    *,
    top_k: int = 10,
) -> Any:
    """Build LlamaIndex's ``QueryFusionRetriever`` (``mode="reciprocal_rerank"``, ``num_queries=1``).

    Its vector side is a ``VectorStoreIndex`` over the same passage vectors GraphFuse uses
    (so both compare the same embeddings), its lexical side ``BM25Retriever``
    (llama-index-retrievers-bm25). ``num_queries=1`` means no query rewriting, so no LLM is
    called (a ``MockLLM`` is passed only so LlamaIndex does not resolve a default one).
    Query embeddings come from ``query_vectors`` (precomputed, like GraphFuse's in the harness).
    """
    try:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever
    except ImportError as exc:
        raise InvalidInput(
            "pipeline 'llamaindex-fusion' needs llama-index-core and llama-index-retrievers-bm25 installed"
        ) from exc

    class _Precomputed(BaseEmbedding):  # type: ignore[misc]
        model_name: str = "graphfuse-precomputed"

        def _get_query_embedding(self, query: str) -> list[float]:
            vector = query_vectors.get(query)
            if vector is None:
                raise InvalidInput(f"no precomputed embedding for query {query[:60]!r}")
            return list(vector)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            raise InvalidInput("passage embeddings are precomputed for the LlamaIndex peer")

    nodes = [TextNode(id_=doc_id, text=text, embedding=list(vectors[doc_id])) for doc_id, text in texts.items()]
    index = VectorStoreIndex(nodes, embed_model=_Precomputed(), show_progress=False)
    vector_retriever = index.as_retriever(similarity_top_k=top_k)
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top_k)
    return QueryFusionRetriever(
        [vector_retriever, bm25],
        llm=MockLLM(),
        mode=FUSION_MODES.RECIPROCAL_RANK,
        num_queries=1,
        similarity_top_k=top_k,
        use_async=False,
    )
