"""Shared fixtures for the core tests: a small two-tenant corpus in the embedded stores (memory and SQLite)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from graphfuse import Document, Embedder, GraphStore, Relation, VectorRecord, VectorStore
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

# Property tests check behaviour, not speed: no per-example deadline and no "input generation is
# slow" health check, which fails on a busy machine without saying anything about the code.
settings.register_profile("graphfuse", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("graphfuse")

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
DAY = timedelta(days=1)

# id: (tenant, content, created_at, access_count or None for "no key")
CORPUS: dict[str, tuple[str, str, datetime | None, Any]] = {
    "a": ("acme", "apple orchard harvest in autumn", NOW - 90 * DAY, 10),
    "b": ("acme", "banana plantation near the coast", NOW - 180 * DAY, 20),
    "c": ("acme", "cherry blossom season in spring", NOW + DAY, 0),
    "d": ("acme", "date palm oasis in the desert", None, None),
    "x": ("globex", "apple secret merger plans", NOW, 5),
    "y": ("acme", "yam field after the rain", NOW - DAY, "7"),
}
# a - b - c - d is an acme chain; a - x - y crosses into globex and back.
RELATIONS = [
    Relation("a", "b", "CITES"),
    Relation("b", "c", "CITES"),
    Relation("c", "d", "MENTIONS"),
    Relation("a", "x", "CITES"),
    Relation("x", "y", "CITES"),
]
DIMENSION = 64


def corpus_documents() -> list[Document]:
    docs = []
    for doc_id, (tenant, content, created, access) in CORPUS.items():
        metadata: dict[str, Any] = {"tenant": tenant}
        if access is not None:
            metadata["access_count"] = access
        docs.append(Document(doc_id, content, metadata, created_at=created))
    return docs


def clock() -> datetime:
    return NOW


@dataclass
class World:
    """The corpus in a graph store and a vector store, with the embedder that indexed it."""

    kind: str
    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder

    async def load(self) -> None:
        docs = corpus_documents()
        await self.graph.store_documents(docs)
        await self.graph.create_relations(RELATIONS)
        vectors = await self.embedder.embed_documents([d.content or "" for d in docs])
        await self.vectors.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(docs, vectors, strict=True)])


def _make_world(kind: str, tmp_path: Path) -> World:
    graph: GraphStore = InMemoryGraphStore() if kind == "memory" else SQLiteGraphStore(tmp_path / "graph.db")
    return World(kind, graph, LocalVectorStore(), HashingEmbedder(dimension=DIMENSION))


BACKENDS = ["memory", "sqlite"]


@pytest.fixture(params=BACKENDS)
async def world(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    w = _make_world(request.param, tmp_path)
    await w.load()
    yield w
    await w.graph.close()
    await w.vectors.close()


@pytest.fixture
def fixed_clock() -> Callable[[], datetime]:
    return clock
