"""The :class:`EmbedderContract` suite: every promise of :class:`graphfuse.Embedder`."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar

import pytest

from .._core._protocols import Embedder

__all__ = ["EmbedderContract"]


def _check_vector(vector: object, dimension: int) -> list[float]:
    assert isinstance(vector, list), f"a vector must be a list, got {type(vector).__name__}"
    assert len(vector) == dimension, f"a vector has {len(vector)} values, the embedder's dimension is {dimension}"
    assert all(type(x) is float for x in vector), "every value must be a Python float"
    assert all(math.isfinite(x) for x in vector), "every value must be finite"
    return vector


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def _assert_same(got: Sequence[Sequence[float]], expected: Sequence[Sequence[float]], what: str) -> None:
    assert len(got) == len(expected), f"{what}: {len(got)} vectors, expected {len(expected)}"
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        # Exact equality is too strict for models whose batched maths differs in the last bits.
        assert _cosine(a, b) > 0.999, f"{what}: vector {i} differs (cosine {_cosine(a, b):.4f})"


@pytest.mark.asyncio
class EmbedderContract:
    """Subclass and provide an ``embedder`` fixture (sync or async) yielding the embedder.

    Class attributes to adapt the suite:

    - ``texts``: the sample texts (distinct, so that their vectors differ).
    - ``deterministic``: set to ``False`` when the same input may embed differently from
      call to call; the checks that compare vectors across calls are then skipped.
    """

    texts: ClassVar[tuple[str, ...]] = (
        "The Eiffel Tower is in Paris.",
        "Photosynthesis turns light into chemical energy.",
        "A binary search halves the interval each step.",
        "Mount Kilimanjaro is the highest mountain in Africa.",
        "Rust guarantees memory safety without a garbage collector.",
    )
    deterministic: ClassVar[bool] = True

    def _require_deterministic(self) -> None:
        if not self.deterministic:
            pytest.skip("this embedder is not deterministic (deterministic = False)")

    async def test_dimension_is_a_positive_int(self, embedder: Embedder) -> None:
        assert type(embedder.dimension) is int
        assert embedder.dimension > 0

    async def test_embed_documents_returns_one_vector_per_text(self, embedder: Embedder) -> None:
        vectors = await embedder.embed_documents(list(self.texts))
        assert isinstance(vectors, list)
        assert len(vectors) == len(self.texts)
        for vector in vectors:
            _check_vector(vector, embedder.dimension)

    async def test_embed_documents_accepts_any_sequence(self, embedder: Embedder) -> None:
        vectors = await embedder.embed_documents(tuple(self.texts[:2]))
        assert len(vectors) == 2

    async def test_embed_documents_keeps_input_order(self, embedder: Embedder) -> None:
        self._require_deterministic()
        batch = await embedder.embed_documents(list(self.texts))
        singles = [(await embedder.embed_documents([text]))[0] for text in self.texts]
        _assert_same(batch, singles, "batch vs one at a time")
        for i, vector in enumerate(batch):
            nearest = max(range(len(singles)), key=lambda j: _cosine(vector, singles[j]))
            assert nearest == i, f"vector {i} of the batch is the embedding of text {nearest}"
        reversed_batch = await embedder.embed_documents(list(reversed(self.texts)))
        _assert_same(reversed_batch[::-1], batch, "reversed input")

    async def test_embed_documents_of_nothing_is_empty(self, embedder: Embedder) -> None:
        assert await embedder.embed_documents([]) == []

    async def test_embed_query_returns_one_vector(self, embedder: Embedder) -> None:
        _check_vector(await embedder.embed_query(self.texts[0]), embedder.dimension)

    async def test_same_input_same_vectors(self, embedder: Embedder) -> None:
        self._require_deterministic()
        _assert_same(
            await embedder.embed_documents(list(self.texts)),
            await embedder.embed_documents(list(self.texts)),
            "second call",
        )
        _assert_same([await embedder.embed_query(self.texts[1])], [await embedder.embed_query(self.texts[1])], "query")

    async def test_concurrent_calls_from_tasks(self, embedder: Embedder) -> None:
        documents = asyncio.gather(*(embedder.embed_documents([text]) for text in self.texts))
        queries = asyncio.gather(*(embedder.embed_query(text) for text in self.texts))
        per_text, query_vectors = await asyncio.gather(documents, queries)
        assert [len(v) for v in per_text] == [1] * len(self.texts)
        for vector in query_vectors:
            _check_vector(vector, embedder.dimension)
        if self.deterministic:
            sequential = await embedder.embed_documents(list(self.texts))
            _assert_same([v[0] for v in per_text], sequential, "concurrent calls")
