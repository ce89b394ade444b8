"""EmbeddingReranker: rerank with a bi-encoder (cosine similarity of query and document)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._core._capabilities import VectorSource
from .._core._errors import InvalidInput
from .._core._protocols import Embedder, VectorStore
from .._core._types import CHUNKS_KEY, Document
from ..embedders import check_texts, memo_for

__all__ = ["EmbeddingReranker"]

_PARENT = "parent_id"


def _units(document: Document) -> list[str]:
    """The vector ids the indexer wrote for ``document``: its chunks' for a split page, else its own."""
    count = document.metadata.get(CHUNKS_KEY)
    parent = document.metadata.get(_PARENT)
    if isinstance(count, int) and not isinstance(count, bool) and count > 1 and not parent:
        return [f"{document.id}#{i}" for i in range(count)]
    return [document.id]


class EmbeddingReranker:
    """Scores each document by ``max(0, cosine(query, document))`` with any embedder.

    The embedded default: no cross-encoder ships offline. A text is embedded once per embedder:
    its vector is remembered by the SHA-256 of its text (a bounded table per embedder, least
    recently used evicted; see :mod:`graphfuse.embedders._memo`). Wrap the embedder in
    :class:`~graphfuse.embedders.CachingEmbedder` to keep vectors across processes.

    With ``vector_store`` (the store the index wrote with this same embedder) that can hand out
    its vectors (:class:`~graphfuse.VectorSource`), :meth:`rerank_documents` (what the
    :class:`~graphfuse.stages.Rerank` stage calls) embeds no document: a chunk or a page stored
    whole is scored by its stored vector, a page the indexer split into chunks by its best
    chunk (the largest cosine over its chunks' vectors, the passage a result would show), so the
    first query costs what a later one does. A document without a stored vector (an entity
    node, a store without the capability: Qdrant, Redis) is embedded from its text, as
    :meth:`rerank` does.
    """

    def __init__(self, embedder: Embedder, *, vector_store: VectorStore | None = None) -> None:
        if not callable(getattr(embedder, "embed_query", None)):
            raise InvalidInput(f"embedder must be an Embedder (with an async 'embed_query'), got {embedder!r}")
        if vector_store is not None and not callable(getattr(vector_store, "search", None)):
            raise InvalidInput(f"vector_store must be a VectorStore (with an async 'search'), got {vector_store!r}")
        self._embedder = embedder
        self._vectors = vector_store

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score in [0, 1] per document, input order."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        texts = check_texts(documents, "documents")
        if not texts:
            return []
        q = await self._query(query)
        return _cosines(q, await self._embed(texts, q.size))

    async def rerank_documents(self, query: str, documents: Sequence[Document]) -> list[float]:
        """One score in [0, 1] per document, input order: by stored vectors where the store has them.

        A document needs its ``content`` only when it has no stored vector (else
        :class:`~graphfuse.InvalidInput` naming it); a stored vector of another dimension than
        the query's raises :class:`~graphfuse.InvalidInput` (the store was indexed with another
        embedder).
        """
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
            raise InvalidInput(f"documents must be a sequence of Document, not {type(documents).__name__}")
        docs = list(documents)
        for d in docs:
            if not isinstance(d, Document):
                raise InvalidInput(f"documents must be Document objects, got {type(d).__name__}")
        if not docs:
            return []
        q = await self._query(query)
        units = [_units(d) for d in docs]
        stored: dict[str, list[float]] = {}
        if isinstance(self._vectors, VectorSource):
            stored = await self._vectors.get_vectors(list(dict.fromkeys(u for us in units for u in us)))
        scores: list[float | None] = [None] * len(docs)
        for i, us in enumerate(units):
            held = [stored[u] for u in us if u in stored]
            if held:
                matrix = np.asarray(held, dtype=np.float64)
                if matrix.ndim != 2 or matrix.shape[1] != q.size:
                    raise InvalidInput(
                        f"vector store {type(self._vectors).__name__} holds vectors of shape {matrix.shape[1:]} "
                        f"for {docs[i].id!r}, but the embedder's query vector has dimension {q.size}"
                    )
                scores[i] = max(_cosines(q, matrix))
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            for i in missing:
                if not isinstance(docs[i].content, str):
                    raise InvalidInput(f"document {docs[i].id!r} has no content and no stored vector to rerank by")
            texts = [str(docs[i].content) for i in missing]
            for i, s in zip(missing, _cosines(q, await self._embed(texts, q.size)), strict=True):
                scores[i] = s
        return [float(s) if s is not None else 0.0 for s in scores]

    async def _query(self, query: str) -> np.ndarray:
        memo = memo_for(self._embedder)
        if memo is not None:
            return await memo.embed_query(query, error=InvalidInput)
        return np.asarray(await self._embedder.embed_query(query), dtype=np.float64)

    async def _embed(self, texts: list[str], dimension: int) -> np.ndarray:
        memo = memo_for(self._embedder)
        if memo is not None:
            d = await memo.embed_documents(texts, error=InvalidInput)
        else:
            d = np.asarray(await self._embedder.embed_documents(texts), dtype=np.float64)
        if d.shape != (len(texts), dimension):
            raise InvalidInput(f"the embedder returned vectors of shape {d.shape} for {len(texts)} documents")
        return d

    def __repr__(self) -> str:
        if self._vectors is None:
            return f"EmbeddingReranker({self._embedder!r})"
        return f"EmbeddingReranker({self._embedder!r}, vector_store={self._vectors!r})"


def _cosines(query: np.ndarray, matrix: np.ndarray) -> list[float]:
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
    cosine = np.divide(matrix @ query, norms, out=np.zeros(matrix.shape[0]), where=norms > 0)
    return [float(x) for x in np.clip(cosine, 0.0, 1.0)]
