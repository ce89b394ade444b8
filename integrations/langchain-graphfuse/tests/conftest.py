"""Shared fixtures: a small linked corpus on the in-memory backend (real GraphFuse stores)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from graphfuse import Document, Pipeline, Relation, VectorRecord, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import GraphExpansion, Hydrate, SemanticSearch
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)

# id, text, age in days (None: no timestamp), access_count (None: missing), tenant
CORPUS: list[tuple[str, str, int | None, int | None, str]] = [
    ("ada", "Ada Lovelace wrote the first published computer program for the Analytical Engine.", 400, 900, "acme"),
    (
        "babbage",
        "Charles Babbage designed the Analytical Engine, a mechanical general-purpose computer.",
        30,
        50,
        "acme",
    ),
    ("engine", "The Analytical Engine used punched cards borrowed from the Jacquard loom.", 5, 10, "acme"),
    ("jacquard", "Joseph Marie Jacquard invented a loom controlled by punched cards.", 200, None, "acme"),
    ("turing", "Alan Turing described a universal machine that can compute anything computable.", 10, 300, "acme"),
    ("hopper", "Grace Hopper built the first compiler and popularised machine-independent languages.", None, 5, "acme"),
    ("secret", "Confidential: the Analytical Engine restoration budget for next year.", 1, 1000, "globex"),
    ("loom", "Looms wove patterns in silk long before any computer existed.", 800, 0, "acme"),
]
LINKS = [("ada", "babbage"), ("babbage", "engine"), ("engine", "jacquard"), ("jacquard", "loom"), ("turing", "hopper")]
DIMENSION = 256


def corpus_documents() -> list[Document]:
    docs = []
    for doc_id, text, age, access, tenant in CORPUS:
        metadata: dict[str, Any] = {"tenant": tenant, "title": doc_id.title()}
        if access is not None:
            metadata["access_count"] = access
        created = None if age is None else NOW - timedelta(days=age)
        docs.append(Document(doc_id, text, metadata, created_at=created))
    return docs


@dataclass
class Backend:
    graph_store: InMemoryGraphStore
    vector_store: LocalVectorStore
    embedder: HashingEmbedder

    def pipeline(self, *, expand: bool = True) -> Pipeline:
        stages: list[Any] = [SemanticSearch(self.vector_store, self.embedder, limit=20), Hydrate(self.graph_store)]
        if expand:
            stages.append(GraphExpansion(self.graph_store, depth=1))
        return Pipeline(stages, WeightedScorer({"semantic": 0.7, "graph": 0.3}))


async def build_backend() -> Backend:
    graph_store = InMemoryGraphStore()
    vector_store = LocalVectorStore(dimension=DIMENSION)
    embedder = HashingEmbedder(dimension=DIMENSION)
    docs = corpus_documents()
    await graph_store.store_documents(docs)
    await graph_store.create_relations([Relation(a, b, "LINKS") for a, b in LINKS])
    vectors = await embedder.embed_documents([d.content or "" for d in docs])
    await vector_store.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(docs, vectors, strict=True)])
    return Backend(graph_store, vector_store, embedder)


@pytest.fixture(scope="session")
def backend() -> Backend:
    return run_sync(build_backend())


@pytest.fixture
def now() -> datetime:
    return NOW


@pytest.fixture
def clock() -> Any:
    return lambda: NOW


@pytest.fixture
def corpus_texts() -> dict[str, str]:
    return {row[0]: row[1] for row in CORPUS}
