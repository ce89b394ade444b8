"""Test doubles for the stage and pipeline tests.

``FakeGraphStore``, ``FakeVectorStore`` and ``FakeEmbedder`` are the real embedded components
(``InMemoryGraphStore``, ``LocalVectorStore``, ``HashingEmbedder``) that also record the calls a
stage makes, so tests can check batching and "no I/O before validation". The rerankers and
``FixedEmbedder`` return chosen values, to test how stages validate what providers return.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from graphfuse import RelatedDocument, VectorHit
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

_WORD = re.compile(r"\w+")


class FakeGraphStore(InMemoryGraphStore):
    """An ``InMemoryGraphStore`` that records ``get_documents`` and ``related`` calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    async def get_documents(self, ids: Sequence[str], *, filter: Any = None) -> dict[str, Any]:
        self.calls.append(("get_documents", tuple(ids)))
        return await super().get_documents(ids, filter=filter)

    async def related(
        self,
        ids: Sequence[str],
        *,
        depth: int = 2,
        filter: Any = None,
        relation_types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[RelatedDocument]:
        self.calls.append(("related", tuple(ids)))
        return await super().related(ids, depth=depth, filter=filter, relation_types=relation_types, limit=limit)


class FakeVectorStore(LocalVectorStore):
    """An in-memory ``LocalVectorStore`` of a fixed dimension that records its searches."""

    def __init__(self, dimension: int | None = None) -> None:
        super().__init__(dimension=dimension)
        self.searches: list[dict[str, Any]] = []

    async def search(
        self,
        vector: Sequence[float],
        *,
        limit: int = 50,
        filter: Any = None,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        self.searches.append({"limit": limit, "filter": filter, "min_score": min_score})
        return await super().search(vector, limit=limit, filter=filter, min_score=min_score)


class FakeEmbedder(HashingEmbedder):
    """The deterministic ``HashingEmbedder`` (texts sharing words are similar)."""


class FixedPageRank(InMemoryGraphStore):
    """A graph store whose ``pagerank`` answers fixed scores."""

    def __init__(self, scores: dict[str, Any]) -> None:
        super().__init__()
        self.scores = scores
        self.calls = 0

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]:
        self.calls += 1
        return {i: v for i, v in self.scores.items() if ids is None or i in ids}


class WordOverlapReranker:
    """Relevance = share of the query's words found in the document."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls.append((query, list(documents)))
        words = set(_WORD.findall(query.lower()))
        return [len(words & set(_WORD.findall(d.lower()))) / max(1, len(words)) for d in documents]


class FixedReranker:
    """Returns whatever it was given (to test validation of reranker output)."""

    def __init__(self, scores: Any) -> None:
        self.scores = scores

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return self.scores  # type: ignore[no-any-return]


class FixedEmbedder:
    """Returns a fixed vector and claims a dimension (to test validation of embedder output)."""

    def __init__(self, vector: Any, dimension: int) -> None:
        self.vector = vector
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector for _ in texts]

    async def embed_query(self, text: str) -> list[float]:
        return self.vector  # type: ignore[no-any-return]
