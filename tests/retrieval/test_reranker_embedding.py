"""EmbeddingReranker with the HashingEmbedder (the LocalEmbedder variant is in test_embedder_local.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphfuse import InvalidInput
from graphfuse.embedders import HashingEmbedder
from graphfuse.rerankers import EmbeddingReranker
from graphfuse.testing import RerankerContract


class TestEmbeddingRerankerContract(RerankerContract):  # type: ignore[misc]
    @pytest.fixture
    def reranker(self) -> EmbeddingReranker:
        return EmbeddingReranker(HashingEmbedder())


class Fixed(HashingEmbedder):
    """Returns chosen vectors, to check the cosine mapping exactly."""

    def __init__(self, query: list[float], docs: list[list[float]]) -> None:
        super().__init__(8)
        self._q, self._d = query, docs

    async def embed_query(self, text: str) -> list[float]:
        return self._q

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._d[: len(texts)]


async def test_scores_are_max_zero_cosine() -> None:
    docs = [[2.0, 0.0], [1.0, 1.0], [0.0, 3.0], [-1.0, 0.0], [0.0, 0.0]]
    r = EmbeddingReranker(Fixed([1.0, 0.0], docs))
    assert await r.rerank("q", ["a", "b", "c", "d", "e"]) == pytest.approx([1.0, 0.70710678, 0.0, 0.0, 0.0])


async def test_bad_input_and_shape() -> None:
    r = EmbeddingReranker(HashingEmbedder())
    with pytest.raises(InvalidInput):
        await r.rerank("q", "just one string")
    with pytest.raises(InvalidInput):
        await r.rerank(None, ["x"])  # type: ignore[arg-type]
    broken = EmbeddingReranker(Fixed([1.0, 0.0], [[1.0, 0.0]]))
    with pytest.raises(InvalidInput, match="shape"):
        await broken.rerank("q", ["a", "b"])
