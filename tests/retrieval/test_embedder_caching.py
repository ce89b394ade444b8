"""CachingEmbedder: hits come from the cache, only distinct misses reach the inner embedder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from graphfuse import InvalidInput
from graphfuse.embedders import CachingEmbedder, HashingEmbedder
from graphfuse.stores import InMemoryCacheStore
from graphfuse.testing import EmbedderContract


class Counting(HashingEmbedder):
    """A HashingEmbedder that records every call it receives."""

    def __init__(self, dimension: int = 32) -> None:
        super().__init__(dimension)
        self.document_calls: list[list[str]] = []
        self.query_calls: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.document_calls.append(list(texts))
        return await super().embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        return await super().embed_query(text)


class TestCachingEmbedderContract(EmbedderContract):  # type: ignore[misc]
    @pytest.fixture
    def embedder(self) -> CachingEmbedder:
        return CachingEmbedder(HashingEmbedder(), InMemoryCacheStore())


async def test_second_call_hits_the_cache() -> None:
    inner, cache = Counting(), InMemoryCacheStore()
    e = CachingEmbedder(inner, cache)
    first = await e.embed_documents(["a", "b", "a"])
    assert inner.document_calls == [["a", "b"]]  # distinct misses, one batch
    again = await e.embed_documents(["b", "a", "c"])
    assert inner.document_calls == [["a", "b"], ["c"]]
    assert again[:2] == [first[1], first[0]]
    assert again[2] == pytest.approx(await HashingEmbedder(32).embed_query("c"), abs=1e-6)
    await e.embed_documents(["a", "b", "c"])
    assert len(inner.document_calls) == 2

    q1 = await e.embed_query("a")
    q2 = await e.embed_query("a")
    assert inner.query_calls == ["a"]  # queries are cached separately from documents
    assert q1 == q2
    assert q1 == pytest.approx(first[0], abs=1e-6)


async def test_miss_and_hit_return_identical_values() -> None:
    e = CachingEmbedder(HashingEmbedder(16), InMemoryCacheStore())
    miss = await e.embed_documents(["text"])
    hit = await e.embed_documents(["text"])
    assert miss == hit
    assert all(type(x) is float for x in hit[0])


async def test_namespace_separates_models_and_dimensions() -> None:
    cache = InMemoryCacheStore()
    small, large = CachingEmbedder(Counting(16), cache), CachingEmbedder(Counting(32), cache)
    assert small.namespace != large.namespace
    assert len((await small.embed_documents(["x"]))[0]) == 16
    assert len((await large.embed_documents(["x"]))[0]) == 32
    named = CachingEmbedder(Counting(16), cache, namespace="shared")
    assert named.namespace == "shared"
    assert small.namespace.startswith("test_embedder_caching.Counting:hashing-v1:16")


async def test_entry_of_another_dimension_is_recomputed() -> None:
    cache, inner = InMemoryCacheStore(), Counting(16)
    e = CachingEmbedder(inner, cache, namespace="n")
    await cache.set(e._key("doc", "x"), np.zeros(8, dtype=np.float32).tobytes())
    assert len((await e.embed_documents(["x"]))[0]) == 16
    assert inner.document_calls == [["x"]]


async def test_ttl_is_passed_to_the_cache() -> None:
    now = [0.0]
    cache = InMemoryCacheStore(clock=lambda: now[0])
    inner = Counting()
    e = CachingEmbedder(inner, cache, ttl=60)
    await e.embed_documents(["x"])
    now[0] = 61
    await e.embed_documents(["x"])
    assert inner.document_calls == [["x"], ["x"]]


async def test_inner_embedder_returning_the_wrong_shape() -> None:
    class Broken(HashingEmbedder):
        async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0] * 3 for _ in texts]

    e = CachingEmbedder(Broken(16), InMemoryCacheStore())
    with pytest.raises(InvalidInput, match="16 finite floats"):
        await e.embed_documents(["x"])
    with pytest.raises(InvalidInput):
        CachingEmbedder(HashingEmbedder(), InMemoryCacheStore(), namespace="")
