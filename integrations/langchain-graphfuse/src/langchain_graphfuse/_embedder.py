"""A LangChain ``Embeddings`` as a GraphFuse embedder."""

from __future__ import annotations

import math
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

from graphfuse import InvalidInput

__all__ = ["LangChainEmbedder"]


class LangChainEmbedder:
    """Use any LangChain ``Embeddings`` where GraphFuse wants an :class:`~graphfuse.Embedder`.

    Calls ``aembed_documents``/``aembed_query`` (native async where the LangChain class has it).
    ``dimension`` is the vector size; when omitted it is measured once, in the constructor,
    with one ``embed_query`` call. Every returned vector is checked (count, size, finite floats).
    """

    __slots__ = ("_dimension", "_embeddings")

    def __init__(self, embeddings: Embeddings, *, dimension: int | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidInput(f"embeddings must be a langchain_core Embeddings, got {type(embeddings).__name__}")
        self._embeddings = embeddings
        if dimension is None:
            dimension = len(embeddings.embed_query("dimension probe"))
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise InvalidInput(f"dimension must be a positive integer, got {dimension!r}")
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        """The size of every vector."""
        return self._dimension

    @property
    def embeddings(self) -> Embeddings:
        """The wrapped LangChain embeddings."""
        return self._embeddings

    def __repr__(self) -> str:
        return f"LangChainEmbedder({type(self._embeddings).__name__}, dimension={self._dimension})"

    def _check(self, vector: object) -> list[float]:
        who = type(self._embeddings).__name__
        if isinstance(vector, (str, bytes)) or not isinstance(vector, Sequence):
            raise InvalidInput(f"{who} returned {type(vector).__name__}, not a vector")
        if len(vector) != self._dimension:
            raise InvalidInput(f"{who} returned a vector of dimension {len(vector)}, expected {self._dimension}")
        out = []
        for x in vector:
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise InvalidInput(f"{who} returned a vector holding {x!r}")
            out.append(float(x))
        return out

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        if not texts:
            return []
        vectors = await self._embeddings.aembed_documents(list(texts))
        if len(vectors) != len(texts):
            raise InvalidInput(
                f"{type(self._embeddings).__name__} returned {len(vectors)} vectors for {len(texts)} texts"
            )
        return [self._check(v) for v in vectors]

    async def embed_query(self, text: str) -> list[float]:
        """The query vector."""
        return self._check(await self._embeddings.aembed_query(text))
