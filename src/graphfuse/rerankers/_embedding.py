"""EmbeddingReranker: rerank with a bi-encoder (cosine similarity of query and document)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._errors import InvalidInput
from .._protocols import Embedder
from ..embedders._memo import memo_for
from ..embedders._texts import check_texts

__all__ = ["EmbeddingReranker"]


class EmbeddingReranker:
    """Scores each document by ``max(0, cosine(query, document))`` with any embedder.

    The embedded default: no cross-encoder ships offline, and a bi-encoder rerank over the
    full texts (not the truncated chunks a vector index may hold) still reorders usefully.
    A document is embedded once per embedder: its vector is remembered by the SHA-256 of its text
    (a bounded table per embedder, least recently used evicted; see :mod:`graphfuse.embedders._memo`),
    so a long page that many queries return costs one model call, not one per query. Wrap the
    embedder in :class:`~graphfuse.embedders.CachingEmbedder` to keep vectors across processes.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score in [0, 1] per document, input order."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        texts = check_texts(documents, "documents")
        if not texts:
            return []
        memo = memo_for(self._embedder)
        if memo is not None:
            q = await memo.embed_query(query, error=InvalidInput)
            d = await memo.embed_documents(texts, error=InvalidInput)
        else:
            q = np.asarray(await self._embedder.embed_query(query), dtype=np.float64)
            d = np.asarray(await self._embedder.embed_documents(texts), dtype=np.float64)
        if d.shape != (len(texts), q.size):
            raise InvalidInput(f"the embedder returned vectors of shape {d.shape} for {len(texts)} documents")
        norms = np.linalg.norm(d, axis=1) * np.linalg.norm(q)
        cosine = np.divide(d @ q, norms, out=np.zeros(len(texts)), where=norms > 0)
        return [float(x) for x in np.clip(cosine, 0.0, 1.0)]

    def __repr__(self) -> str:
        return f"EmbeddingReranker({self._embedder!r})"
