"""EmbeddingReranker over the index's stored vectors: no document embedded when the store has them.

Real stores (SQLite graph, SQLite-backed LocalVectorStore) indexed by the Indexer with the
deterministic HashingEmbedder; a store without VectorSource falls back to embedding the texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphfuse import (
    Document,
    InvalidInput,
    RanksDocuments,
    VectorHit,
    VectorRecord,
    VectorSource,
    VectorStore,
    presets,
)
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker, TokenChunker
from graphfuse.rerankers import EmbeddingReranker
from graphfuse.stages import Rerank
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore, aopen_store

LONG = " ".join(f"Paragraph {i} talks about installation and nothing else." for i in range(30))
LONG += " Frozen models raise a validation error on assignment."


class Counting(HashingEmbedder):
    """The HashingEmbedder, remembering every text it was asked to embed as a document."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension)
        self.documents: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return await super().embed_documents(texts)


class WithoutVectorSource:
    """A vector store with only the VectorStore protocol (as a third-party backend may be)."""

    def __init__(self, inner: LocalVectorStore) -> None:
        self._inner = inner

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        await self._inner.upsert(records)

    async def search(self, vector: Sequence[float], **options: Any) -> list[VectorHit]:
        return await self._inner.search(vector, **options)

    async def delete(self, ids: Sequence[str]) -> int:
        return await self._inner.delete(ids)

    async def count(self) -> int:
        return await self._inner.count()


@pytest.fixture
async def indexed(tmp_path: Path) -> Any:
    graph = SQLiteGraphStore(tmp_path / "graph.sqlite")
    vectors = LocalVectorStore(tmp_path / "vectors.sqlite")
    embedder = Counting()
    records = [
        SourceRecord("models", LONG, title="Models"),
        SourceRecord("install", "Install it with pip. See [Models](models).", title="Install"),
    ]
    await Indexer(graph, vectors, embedder, chunker=TokenChunker(32, 4), extractors=[TitleLinker()]).aindex(records)
    embedder.documents.clear()
    yield graph, vectors, embedder
    await vectors.close()
    await graph.close()


async def test_local_vector_store_hands_out_its_vectors(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    store = LocalVectorStore(path)
    assert isinstance(store, VectorSource)
    assert await store.get_vectors([]) == {}
    await store.upsert([VectorRecord("a", [3.0, 4.0]), VectorRecord("b", [0.0, 2.0])])
    # Another store object on the same file sees the write (read through SQLite).
    other = LocalVectorStore(path)
    got = await other.get_vectors(["b", "missing", "a"])
    assert set(got) == {"a", "b"}
    assert got["a"] == pytest.approx([0.6, 0.8])  # stored L2-normalised
    assert got["b"] == pytest.approx([0.0, 1.0])
    with pytest.raises(InvalidInput):
        await other.get_vectors("a")
    with pytest.raises(InvalidInput):
        await other.get_vectors([1])  # type: ignore[list-item]
    await other.close()
    await store.close()


async def test_rerank_documents_uses_the_stored_vectors_and_embeds_no_document(indexed: Any) -> None:
    graph, vectors, embedder = indexed
    reranker = EmbeddingReranker(embedder, vector_store=vectors)
    assert isinstance(reranker, RanksDocuments)
    docs = await graph.get_documents(["models", "install", "models#0"])
    assert docs["models"].metadata["graphfuse_chunks"] > 2
    query = "do frozen models raise on assignment"
    scores = await reranker.rerank_documents(query, [docs["models"], docs["install"], docs["models#0"]])
    assert embedder.documents == []
    q = np.asarray(await embedder.embed_query(query))
    # The split page: its best chunk; the others: their own stored vector.
    best_chunk = await vectors.search(q.tolist(), limit=1, filter={"parent_id": "models"})
    assert best_chunk[0].id != "models#0"
    stored = await vectors.get_vectors(["install", "models#0"])
    assert scores[0] == pytest.approx(max(0.0, best_chunk[0].score), abs=1e-6)
    assert scores[1] == pytest.approx(max(0.0, float(np.dot(q, stored["install"]))), abs=1e-6)
    assert scores[2] == pytest.approx(max(0.0, float(np.dot(q, stored["models#0"]))), abs=1e-6)
    assert scores[0] > scores[2]  # the page is not judged by its opening alone


async def test_a_document_without_a_stored_vector_is_embedded_from_its_text(indexed: Any) -> None:
    graph, vectors, embedder = indexed
    reranker = EmbeddingReranker(embedder, vector_store=vectors)
    entity = Document("entity:frozen", "frozen models")
    page = (await graph.get_documents(["install"]))["install"]
    scores = await reranker.rerank_documents("frozen models", [entity, page])
    assert embedder.documents == ["frozen models"]  # the entity only; the page has its vector
    assert scores[0] == pytest.approx(1.0)
    q = np.asarray(await embedder.embed_query("frozen models"))
    stored = (await vectors.get_vectors(["install"]))["install"]
    assert scores[1] == pytest.approx(max(0.0, float(np.dot(q, stored))), abs=1e-6)


async def test_a_store_without_vector_source_falls_back_to_embedding(indexed: Any) -> None:
    graph, vectors, embedder = indexed
    plain: VectorStore = WithoutVectorSource(vectors)
    assert not isinstance(plain, VectorSource)
    docs = list((await graph.get_documents(["models", "install"])).values())
    query = "frozen models"
    scores = await EmbeddingReranker(embedder, vector_store=plain).rerank_documents(query, docs)
    assert sorted(embedder.documents) == sorted(d.content for d in docs)
    by_text = await EmbeddingReranker(HashingEmbedder(64)).rerank(query, [d.content for d in docs])
    assert scores == pytest.approx(by_text)


async def test_the_standard_preset_reranks_without_embedding_a_page(indexed: Any) -> None:
    graph, vectors, embedder = indexed
    reranker = EmbeddingReranker(embedder, vector_store=vectors)
    pipeline = presets.standard(graph, vectors, embedder, reranker)
    results = await pipeline.aretrieve("do frozen models raise on assignment", top_k=2)
    assert embedder.documents == []
    assert results
    assert all("rerank" in r.signals for r in results)
    assert "models" in {r.document_id for r in results}
    # Without the vector store, the same pipeline embeds the pages' full texts.
    texts = EmbeddingReranker(embedder)
    await presets.standard(graph, vectors, embedder, texts).aretrieve("do frozen models raise on assignment", 2)
    assert LONG in embedder.documents


async def test_bad_input(indexed: Any, tmp_path: Path) -> None:
    graph, vectors, embedder = indexed
    reranker = EmbeddingReranker(embedder, vector_store=vectors)
    page = (await graph.get_documents(["install"]))["install"]
    with pytest.raises(InvalidInput, match="sequence of Document"):
        await reranker.rerank_documents("q", "install")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="Document objects"):
        await reranker.rerank_documents("q", ["install"])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="query"):
        await reranker.rerank_documents(None, [page])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="no content and no stored vector"):
        await reranker.rerank_documents("q", [Document("nowhere")])
    assert await reranker.rerank_documents("q", []) == []
    # A store indexed with another embedder (another dimension) is named, not mis-scored.
    with pytest.raises(InvalidInput, match="dimension"):
        await EmbeddingReranker(HashingEmbedder(32), vector_store=vectors).rerank_documents("q", [page])
    with pytest.raises(InvalidInput, match="vector_store"):
        EmbeddingReranker(embedder, vector_store="vectors.sqlite")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="embedder"):
        EmbeddingReranker("local")  # type: ignore[arg-type]


async def test_a_store_directory_reranks_by_its_own_vectors(tmp_path: Path) -> None:
    async with await aopen_store(tmp_path / "store", create=True, embedder="hashing") as store:
        await Indexer(store.graph, store.vectors, store.embedder, chunker=TokenChunker(32, 4)).aindex(
            [SourceRecord("models", LONG, title="Models")]
        )
        pipeline = await store.apipeline("standard")
        stage = pipeline.stages[-1]
        assert isinstance(stage, Rerank)
        page = (await store.graph.get_documents(["models"]))["models"]
        # Its text emptied, the page still scores by its chunks' stored vectors.
        hollow = Document(page.id, "", page.metadata)
        [score] = await stage.reranker.rerank_documents("frozen models raise", [hollow])  # type: ignore[attr-defined]
        assert score > 0.1
        [by_text] = await EmbeddingReranker(store.embedder).rerank_documents("frozen models raise", [hollow])
        assert by_text == 0.0
