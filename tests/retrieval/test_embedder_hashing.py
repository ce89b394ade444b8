"""HashingEmbedder: deterministic across processes, normalised, similar texts closer."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from graphfuse import InvalidInput
from graphfuse.embedders import HashingEmbedder
from graphfuse.testing import EmbedderContract


class TestHashingEmbedderContract(EmbedderContract):  # type: ignore[misc]
    @pytest.fixture
    def embedder(self) -> HashingEmbedder:
        return HashingEmbedder()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_normalised_and_sized() -> None:
    e = HashingEmbedder(64)
    for text in ["", "   ", "one", "a longer sentence about graphs"]:
        v = await e.embed_query(text)
        assert len(v) == 64
        assert math.sqrt(sum(x * x for x in v)) == pytest.approx(1.0)


async def test_similar_texts_are_closer() -> None:
    e = HashingEmbedder()
    base, near, far = await e.embed_documents(
        ["the apple orchard harvest", "apple orchards at harvest time", "quantum chromodynamics lecture"]
    )
    assert cosine(base, near) > 0.3 > cosine(base, far)


def test_same_vector_in_another_process() -> None:
    code = (
        "import asyncio; from graphfuse.embedders import HashingEmbedder; "
        "print(asyncio.run(HashingEmbedder(16).embed_query('stable text'))[:4])"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(runs) == 1
    assert runs.pop().strip() != "[0.0, 0.0, 0.0, 0.0]"


async def test_bad_input() -> None:
    with pytest.raises(InvalidInput):
        HashingEmbedder(4)
    with pytest.raises(InvalidInput):
        await HashingEmbedder().embed_documents("not a list")
    with pytest.raises(InvalidInput):
        await HashingEmbedder().embed_documents([1])  # type: ignore[list-item]
