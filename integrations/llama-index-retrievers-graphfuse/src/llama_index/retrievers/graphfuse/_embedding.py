"""Embedders across the two libraries: a LlamaIndex embedding as a GraphFuse Embedder, and back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import PrivateAttr

from graphfuse import Embedder, InvalidInput, run_sync
from graphfuse.validation import check_positive_int, check_vector, check_vectors

__all__ = ["DEFAULT_EMBED_BATCH_SIZE", "GraphFuseEmbedding", "LlamaIndexEmbedder"]

DEFAULT_EMBED_BATCH_SIZE = 64
"""Texts per call :class:`GraphFuseEmbedding` takes from LlamaIndex when its embedder names no
``batch_size`` (the batch GraphFuse's indexer sends an embedder)."""


class LlamaIndexEmbedder:
    """A LlamaIndex ``BaseEmbedding`` used as a GraphFuse :class:`~graphfuse.Embedder`.

    ``embed_query`` awaits ``aget_query_embedding`` and ``embed_documents`` awaits
    ``aget_text_embedding_batch`` (the host's async API, with its batching, caching and
    instrumentation). ``dimension`` is the vector size the model produces; every vector is
    checked against it.
    """

    __slots__ = ("_dimension", "_embedding")

    def __init__(self, embedding: BaseEmbedding, *, dimension: int) -> None:
        if not isinstance(embedding, BaseEmbedding):
            raise InvalidInput(f"embedding must be a LlamaIndex BaseEmbedding, got {type(embedding).__name__}")
        self._embedding = embedding
        self._dimension = check_positive_int(dimension, "dimension")

    @property
    def dimension(self) -> int:
        """The vector size."""
        return self._dimension

    def __repr__(self) -> str:
        return f"LlamaIndexEmbedder({type(self._embedding).__name__}, dimension={self._dimension})"

    async def embed_query(self, text: str) -> list[float]:
        vector = await self._embedding.aget_query_embedding(text)
        return check_vector(vector, self._dimension, type(self._embedding).__name__)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = await self._embedding.aget_text_embedding_batch(list(texts))
        return check_vectors(vectors, len(texts), self._dimension, type(self._embedding).__name__)


class GraphFuseEmbedding(BaseEmbedding):
    """A GraphFuse :class:`~graphfuse.Embedder` used as a LlamaIndex ``BaseEmbedding``.

    The async methods await the embedder; the sync ones run it through
    :func:`graphfuse.run_sync`. Use it to build a ``VectorStoreIndex`` with the same embedder
    as a GraphFuse pipeline (``HashingEmbedder`` offline, a local or API model in production).

    ``embed_batch_size`` (how many texts LlamaIndex hands over per call) defaults to the
    embedder's own ``batch_size`` when it has one, else :data:`DEFAULT_EMBED_BATCH_SIZE` (64, what
    GraphFuse's indexer sends), not LlamaIndex's 10: a local model embeds a batch of 64 several
    times faster than six batches of 10.
    """

    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        if not callable(getattr(embedder, "embed_query", None)) or not callable(
            getattr(embedder, "embed_documents", None)
        ):
            raise InvalidInput(f"embedder must be a GraphFuse Embedder, got {type(embedder).__name__}")
        kwargs.setdefault("model_name", type(embedder).__name__)
        own = getattr(embedder, "batch_size", None)
        default = own if isinstance(own, int) and not isinstance(own, bool) and 0 < own <= 2048 else None
        kwargs.setdefault("embed_batch_size", default or DEFAULT_EMBED_BATCH_SIZE)
        super().__init__(**kwargs)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "GraphFuseEmbedding"

    def _get_query_embedding(self, query: str) -> Embedding:
        return run_sync(self._embedder.embed_query(query))

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await self._embedder.embed_query(query)

    def _get_text_embedding(self, text: str) -> Embedding:
        return run_sync(self._embedder.embed_documents([text]))[0]

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return (await self._embedder.embed_documents([text]))[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return run_sync(self._embedder.embed_documents(texts))

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await self._embedder.embed_documents(texts)
