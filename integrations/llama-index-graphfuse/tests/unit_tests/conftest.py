"""Shared fixtures: a small graph corpus in the in-memory and SQLite graph stores, and a fixed clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from graphfuse import Document, GraphStore, Relation
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)

DOCS = [
    Document(
        "a",
        "Alpha reactors power the northern grid.",
        {"tenant": "acme", "access_count": 10},
        created_at=NOW - timedelta(days=1),
    ),
    Document(
        "b",
        "The northern grid links to the harbour substation.",
        {"tenant": "acme", "access_count": 100},
        created_at=NOW - timedelta(days=90),
    ),
    Document(
        "c",
        "The harbour substation was rebuilt after the flood.",
        {"tenant": "acme", "access_count": 0},
        created_at=NOW - timedelta(days=400),
    ),
    Document(
        "d", "Flood defences were funded by the city council.", {"tenant": "acme"}, created_at=NOW - timedelta(days=30)
    ),
    Document(
        "x",
        "Secret plans of another tenant about the harbour.",
        {"tenant": "other", "access_count": 5},
        created_at=NOW - timedelta(days=2),
    ),
    Document("e", "Unrelated notes about gardening tomatoes.", {"tenant": "acme", "access_count": 1}),
]
RELATIONS = [Relation("a", "b"), Relation("b", "c"), Relation("c", "d"), Relation("b", "x")]


def clock() -> datetime:
    return NOW


@pytest.fixture(params=["memory", "sqlite"])
async def graph_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[GraphStore]:
    """The corpus in the in-memory fake and in the embedded SQLite store (each test runs on both)."""
    store: GraphStore = InMemoryGraphStore() if request.param == "memory" else SQLiteGraphStore(tmp_path / "graph.db")
    await store.store_documents(DOCS)
    await store.create_relations(RELATIONS)
    yield store
    await store.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(64)


@pytest.fixture
async def vector_store(embedder: HashingEmbedder) -> AsyncIterator[LocalVectorStore]:
    from graphfuse import VectorRecord

    store = LocalVectorStore(dimension=64)
    vectors = await embedder.embed_documents([d.content or "" for d in DOCS])
    await store.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(DOCS, vectors, strict=True)])
    yield store
    await store.close()
