"""QdrantVectorStore: the contract suite in local mode (memory, disk), a server when configured,
and the behaviours specific to Qdrant (collections, ids, errors, the registered factory)."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from graphfuse_qdrant import QdrantVectorStore
from graphfuse_qdrant._plugin import make_qdrant_vector_store
from graphfuse_qdrant._store import ID_KEY, point_id
from qdrant_client import QdrantClient, models

from graphfuse import (
    AuthenticationFailed,
    ConnectionFailed,
    DeadlineExceeded,
    Document,
    InvalidInput,
    RateLimited,
    StoreCorrupted,
    VectorRecord,
    VectorSource,
    VectorStore,
    deadline,
)
from graphfuse.embedders import HashingEmbedder
from graphfuse.rerankers import EmbeddingReranker
from graphfuse.retry import RetryPolicy
from graphfuse.testing import VectorStoreContract

SERVER_URL = os.environ.get("GRAPHFUSE_QDRANT_URL")


class TestQdrantInMemoryContract(VectorStoreContract):
    @pytest.fixture
    async def vector_store(self) -> AsyncIterator[QdrantVectorStore]:
        store = QdrantVectorStore("contract", location=":memory:")
        yield store
        await store.close()


class TestQdrantOnDiskContract(VectorStoreContract):
    @pytest.fixture
    async def vector_store(self, tmp_path: Path) -> AsyncIterator[QdrantVectorStore]:
        store = QdrantVectorStore("contract", path=str(tmp_path / "qdrant"))
        yield store
        await store.close()


@pytest.mark.skipif(SERVER_URL is None, reason="GRAPHFUSE_QDRANT_URL is not set: Qdrant server tests skipped")
class TestQdrantServerContract(VectorStoreContract):
    @pytest.fixture
    async def vector_store(self) -> AsyncIterator[QdrantVectorStore]:
        name = f"graphfuse-test-{uuid.uuid4().hex}"
        store = QdrantVectorStore(name, url=SERVER_URL, api_key=os.environ.get("GRAPHFUSE_QDRANT_API_KEY"))
        yield store
        client = QdrantClient(url=SERVER_URL, api_key=os.environ.get("GRAPHFUSE_QDRANT_API_KEY"))
        client.delete_collection(name)
        client.close()
        await store.close()


async def test_data_persists_on_disk(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    store = QdrantVectorStore("docs", path=path)
    await store.upsert([VectorRecord("a", [1.0, 0.0, 0.0], {"tenant": "t1"})])
    await store.close()
    reopened = QdrantVectorStore("docs", path=path)
    try:
        assert await reopened.count() == 1
        assert reopened.dimension == 3
        hits = await reopened.search([1.0, 0.0, 0.0], filter={"tenant": "t1"})
        assert [h.id for h in hits] == ["a"]
    finally:
        await reopened.close()


class CountingEmbedder(HashingEmbedder):
    """The HashingEmbedder, remembering every text it was asked to embed as a document."""

    def __init__(self) -> None:
        super().__init__(32)
        self.documents: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return await super().embed_documents(texts)


async def test_the_reranker_scores_by_the_stored_vectors_and_embeds_no_document() -> None:
    """The store is a VectorSource, so EmbeddingReranker reads vectors from Qdrant, not the embedder."""
    embedder = CountingEmbedder()
    texts = {"a": "frozen models raise on assignment", "b": "install it with pip", "c": "models and fields"}
    store = QdrantVectorStore("docs", location=":memory:")
    try:
        assert isinstance(store, VectorSource)
        vectors = await embedder.embed_documents(list(texts.values()))
        await store.upsert([VectorRecord(k, v) for k, v in zip(texts, vectors, strict=True)])
        embedder.documents.clear()
        # Batches of one: the lookup is split by batch_size and still finds every id.
        small = QdrantVectorStore("docs", location=":memory:", batch_size=1)
        await small.upsert([VectorRecord(k, v) for k, v in zip(texts, vectors, strict=True)])
        assert set(await small.get_vectors(["c", "a", "b", "missing"])) == {"a", "b", "c"}
        await small.close()
        query = "do frozen models raise"
        docs = [Document(k, t) for k, t in texts.items()]
        scores = await EmbeddingReranker(embedder, vector_store=store).rerank_documents(query, docs)
        assert embedder.documents == []
        by_text = await EmbeddingReranker(HashingEmbedder(32)).rerank(query, list(texts.values()))
        assert scores == pytest.approx(by_text, abs=1e-5)
    finally:
        await store.close()


async def test_get_vectors_refuses_a_point_written_without_a_graphfuse_id(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    client = QdrantClient(path=path)
    client.create_collection("docs", vectors_config=models.VectorParams(size=3, distance=models.Distance.COSINE))
    client.upsert("docs", points=[models.PointStruct(id=point_id("a"), vector=[1.0, 0.0, 0.0], payload={})])
    client.close()
    store = QdrantVectorStore("docs", path=path)
    try:
        with pytest.raises(StoreCorrupted, match="no GraphFuse id"):
            await store.get_vectors(["a"])
    finally:
        await store.close()


async def test_existing_collection_of_another_dimension_is_not_recreated(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    store = QdrantVectorStore("docs", path=path)
    await store.upsert([VectorRecord("a", [1.0, 0.0, 0.0])])
    await store.close()
    reopened = QdrantVectorStore("docs", path=path, dimension=5)
    try:
        with pytest.raises(InvalidInput, match="dimension 3"):
            await reopened.upsert([VectorRecord("b", [1.0] * 5)])
    finally:
        await reopened.close()
    again = QdrantVectorStore("docs", path=path)
    try:
        with pytest.raises(InvalidInput):
            await again.upsert([VectorRecord("b", [1.0] * 5)])
        assert await again.count() == 1
    finally:
        await again.close()


async def test_configured_dimension_is_enforced_from_the_first_write() -> None:
    store = QdrantVectorStore("docs", dimension=3)
    try:
        assert store.dimension == 3
        with pytest.raises(InvalidInput):
            await store.upsert([VectorRecord("a", [1.0, 2.0])])
        assert await store.count() == 0
    finally:
        await store.close()


async def test_collection_with_another_distance_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    client = QdrantClient(path=path)
    client.create_collection("dot", vectors_config=models.VectorParams(size=3, distance=models.Distance.DOT))
    client.close()
    store = QdrantVectorStore("dot", path=path)
    try:
        with pytest.raises(InvalidInput, match="Cosine"):
            await store.count()
    finally:
        await store.close()


async def test_points_use_uuid5_ids_and_keep_the_original_id(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    store = QdrantVectorStore("docs", path=path, batch_size=2)
    await store.upsert([VectorRecord(f"doc/{i}", [1.0, float(i)], {"n": i}) for i in range(5)])
    await store.close()
    client = QdrantClient(path=path)
    try:
        points = client.retrieve("docs", ids=[point_id("doc/3")], with_payload=True)
        assert len(points) == 1
        assert str(points[0].id) == str(uuid.UUID(point_id("doc/3")))
        assert points[0].payload == {
            "n": 3,
            ID_KEY: "doc/3",
            "_graphfuse_keys": ["n"],
            "_graphfuse_metadata": '{"n": 3}',
        }
        assert client.count("docs").count == 5
    finally:
        client.close()
    assert point_id("doc/3") == point_id("doc/3") != point_id("doc/4")


async def test_reserved_and_unserialisable_metadata_write_nothing() -> None:
    store = QdrantVectorStore("docs")
    try:
        with pytest.raises(InvalidInput, match=ID_KEY):
            await store.upsert([VectorRecord("ok", [1.0, 0.0]), VectorRecord("bad", [1.0, 0.0], {ID_KEY: "x"})])
        with pytest.raises(InvalidInput, match="JSON"):
            await store.upsert([VectorRecord("ok", [1.0, 0.0]), VectorRecord("bad", [1.0, 0.0], {"x": object()})])
        assert await store.count() == 0
    finally:
        await store.close()


async def test_string_range_filter_is_refused() -> None:
    store = QdrantVectorStore("docs")
    try:
        await store.upsert([VectorRecord("a", [1.0, 0.0], {"name": "b"})])
        with pytest.raises(InvalidInput, match="numbers only"):
            await store.search([1.0, 0.0], filter={"name": {"$gt": "a"}})
    finally:
        await store.close()


async def test_same_folder_twice_raises_connection_failed(tmp_path: Path) -> None:
    path = str(tmp_path / "qdrant")
    store = QdrantVectorStore("docs", path=path)
    try:
        with pytest.raises(ConnectionFailed, match="not available"):
            QdrantVectorStore("docs", path=path)
    finally:
        await store.close()


async def test_closed_store_raises_and_close_is_idempotent() -> None:
    store = QdrantVectorStore("docs")
    await store.upsert([VectorRecord("a", [1.0, 0.0])])
    await store.close()
    await store.close()
    with pytest.raises(ConnectionFailed, match="closed"):
        await store.count()


def test_constructor_validation() -> None:
    with pytest.raises(InvalidInput):
        QdrantVectorStore("")
    with pytest.raises(InvalidInput):
        QdrantVectorStore("docs", url="http://localhost:6333", path="/tmp/x")
    with pytest.raises(InvalidInput):
        QdrantVectorStore("docs", batch_size=0)
    with pytest.raises(InvalidInput):
        QdrantVectorStore("docs", dimension=0)


def test_is_a_vector_store() -> None:
    assert isinstance(QdrantVectorStore("docs"), VectorStore)


# -- server-mode error mapping, against a local HTTP server speaking Qdrant's REST shapes -------


class _Handler(BaseHTTPRequestHandler):
    status = 500
    headers_out: dict[str, str] = {}  # noqa: RUF012
    # Statuses to answer first, one per request, before ``status``; requests seen so far.
    script: list[int] = []  # noqa: RUF012
    seen: list[str] = []  # noqa: RUF012

    def _reply(self) -> None:
        self.seen.append(self.path)
        status = self.script.pop(0) if self.script else self.status
        if status == 200:
            body = b'{"result": {"exists": false}, "status": "ok", "time": 0.0}'
        else:
            body = b'{"status": {"error": "nope"}, "time": 0.0}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in self.headers_out.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _reply

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def fake_qdrant() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"status": 500, "headers_out": {}, "script": [], "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "headers", "error"),
    [
        (401, {}, AuthenticationFailed),
        (403, {}, AuthenticationFailed),
        (429, {"Retry-After": "7"}, RateLimited),
        (500, {}, ConnectionFailed),
        (503, {}, ConnectionFailed),
    ],
)
async def test_server_errors_are_mapped(
    fake_qdrant: tuple[str, type[_Handler]], status: int, headers: dict[str, str], error: type[Exception]
) -> None:
    url, handler = fake_qdrant
    handler.status = status
    handler.headers_out = headers
    store = QdrantVectorStore("docs", url=url, timeout=5, retry=RetryPolicy(attempts=1))
    try:
        with pytest.raises(error) as info:
            await store.count()
        if isinstance(info.value, RateLimited):
            assert info.value.retry_after == 7.0
    finally:
        await store.close()


async def test_server_errors_are_retried(fake_qdrant: tuple[str, type[_Handler]]) -> None:
    url, handler = fake_qdrant
    handler.script = [503, 502, 200]
    store = QdrantVectorStore("docs", url=url, timeout=5, retry=RetryPolicy(attempts=3, initial=0.01, jitter=0.0))
    try:
        assert await store.count() == 0
    finally:
        await store.close()
    assert len(handler.seen) == 3
    assert all(path.endswith("/collections/docs/exists") for path in handler.seen)


async def test_authentication_errors_are_not_retried(fake_qdrant: tuple[str, type[_Handler]]) -> None:
    url, handler = fake_qdrant
    handler.status = 401
    store = QdrantVectorStore("docs", url=url, timeout=5, retry=RetryPolicy(attempts=3, initial=0.01, jitter=0.0))
    try:
        with pytest.raises(AuthenticationFailed):
            await store.count()
    finally:
        await store.close()
    assert len(handler.seen) == 1


async def test_deadline_stops_a_slow_call(fake_qdrant: tuple[str, type[_Handler]]) -> None:
    url, handler = fake_qdrant
    handler.status = 503
    store = QdrantVectorStore("docs", url=url, timeout=5, retry=RetryPolicy(attempts=50, initial=1.0, jitter=0.0))
    try:
        with deadline(0.5), pytest.raises(DeadlineExceeded):
            await store.count()
    finally:
        await store.close()
    assert len(handler.seen) < 50


async def test_unreachable_server_raises_connection_failed() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = QdrantVectorStore("docs", url=f"http://127.0.0.1:{port}", timeout=2, retry=RetryPolicy(attempts=1))
    try:
        with pytest.raises(ConnectionFailed):
            await store.upsert([VectorRecord("a", [1.0, 0.0])])
    finally:
        await store.close()


# -- the registered factory --------------------------------------------------------------------


async def test_factory_reads_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHFUSE_QDRANT_URL", raising=False)
    monkeypatch.setenv("GRAPHFUSE_QDRANT_PATH", str(tmp_path / "env-qdrant"))
    store = make_qdrant_vector_store(collection="fromenv")
    try:
        await store.upsert([VectorRecord("a", [1.0, 0.0])])
    finally:
        await store.close()
    assert (tmp_path / "env-qdrant").is_dir()
    monkeypatch.delenv("GRAPHFUSE_QDRANT_PATH")
    in_memory = make_qdrant_vector_store()
    try:
        assert in_memory.collection == "graphfuse"
        assert await in_memory.count() == 0
    finally:
        await in_memory.close()


def test_registered_as_a_plugin() -> None:
    from graphfuse.plugins import get_registry

    registry = get_registry()
    store = registry.create("vector_store", "qdrant", location=":memory:")
    assert isinstance(store, QdrantVectorStore)
