"""ResultCache over a real store directory: hits, invalidation by writes, keys, TTL, failures."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from graphfuse import (
    Candidate,
    ConnectionFailed,
    Document,
    InvalidInput,
    Pipeline,
    Query,
    ResultCache,
    RunContext,
    Versioned,
    presets,
)
from graphfuse.context import aretrieve_context
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stores import InMemoryCacheStore, InMemoryGraphStore, LocalStore, LocalVectorStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class World:
    store: LocalStore
    embedder: HashingEmbedder
    pipeline: Pipeline
    runs: list[str]

    async def add(self, doc_id: str, text: str, **metadata: object) -> None:
        await Indexer(self.store.graph, self.store.vectors, self.embedder).aindex(
            [SourceRecord(id=doc_id, text=text, metadata=dict(metadata))]
        )


class Counting:
    """A stage that passes candidates through and records every run (so a hit is visible)."""

    name = "count"

    def __init__(self, runs: list[str]) -> None:
        self.runs = runs

    def __repr__(self) -> str:
        return "Counting()"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.runs.append(query.text)
        return list(candidates)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    store = LocalStore.open(tmp_path / "store")
    embedder = HashingEmbedder(dimension=64)
    await store.ause_embedder(embedder)
    when = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=timezone.utc)
    await Indexer(store.graph, store.vectors, embedder).aindex(
        [
            SourceRecord(
                id=f"d{i}",
                text=f"apple orchard harvest note {i} ünïcode",
                title=f"Note {i}",
                metadata={"tenant": "acme" if i % 2 else "globex", "n": i, "tags": ["x", "y"], "w": 0.1 * i},
                created_at=when,
            )
            for i in range(6)
        ]
    )
    base = await presets.abuild("no_rerank", graph_store=store.graph, vector_store=store.vectors, embedder=embedder)
    runs: list[str] = []
    # Without temporal decay, whose signal moves with the clock: runs are comparable exactly.
    stages = [s for s in base.stages if s.name != "temporal"]
    pipeline = Pipeline([*stages, Counting(runs)], base.scorer, passages=base.passages)
    try:
        yield World(store, embedder, pipeline, runs)
    finally:
        await store.aclose()


def _cached(w: World, cache: InMemoryCacheStore | None = None, **options: object) -> tuple[Pipeline, ResultCache]:
    rc = ResultCache(cache if cache is not None else InMemoryCacheStore(), [w.store.graph, w.store.vectors], **options)  # type: ignore[arg-type]
    return w.pipeline.with_result_cache(rc), rc


async def test_a_repeated_query_is_answered_from_the_cache_exactly(world: World) -> None:
    pipeline, rc = _cached(world)
    first = await pipeline.aretrieve("apple harvest", top_k=4)
    second = await pipeline.aretrieve("apple harvest", top_k=4)
    assert world.runs == ["apple harvest"]
    assert rc.counts == {"hits": 1, "misses": 1, "errors": 0}
    assert second == first
    for a, b in zip(first, second, strict=True):
        assert (a.id, a.score, dict(a.signals), dict(a.contributions)) == (
            b.id,
            b.score,
            dict(b.signals),
            dict(b.contributions),
        )
        assert a.document.content == b.document.content
        assert "ünïcode" in (b.document.content or "")
        assert dict(a.document.metadata) == dict(b.document.metadata)
        assert a.document.created_at == b.document.created_at
        assert b.document.created_at is not None
        assert a.document_title == b.document_title
    # The uncached pipeline gives the same answer.
    assert await world.pipeline.aretrieve("apple harvest", top_k=4, cache=False) == first


async def test_a_write_between_two_queries_is_seen(world: World) -> None:
    pipeline, rc = _cached(world)
    before = await pipeline.aretrieve("zebra crossing", top_k=3)
    assert "zebra" not in {r.id for r in before}
    await world.add("zebra", "zebra crossing zebra crossing")
    after = await pipeline.aretrieve("zebra crossing", top_k=3)
    assert after[0].id == "zebra"
    assert rc.counts["hits"] == 0
    assert rc.counts["misses"] == 2
    # A deletion too.
    await Indexer(world.store.graph, world.store.vectors, world.embedder).adelete(["zebra"])
    again = await pipeline.aretrieve("zebra crossing", top_k=3)
    assert "zebra" not in {r.id for r in again}
    assert rc.counts["hits"] == 0


async def test_a_write_by_another_store_object_is_seen(world: World, tmp_path: Path) -> None:
    pipeline, rc = _cached(world)
    await pipeline.aretrieve("walrus", top_k=3)
    other = LocalStore.open(tmp_path / "store")
    try:
        await other.ause_embedder(world.embedder)
        await Indexer(other.graph, other.vectors, world.embedder).aindex(
            [SourceRecord(id="walrus", text="walrus walrus")]
        )
    finally:
        await other.aclose()
    assert (await pipeline.aretrieve("walrus", top_k=3))[0].id == "walrus"
    assert rc.counts["hits"] == 0


async def test_every_part_of_the_request_is_in_the_key(world: World) -> None:
    pipeline, rc = _cached(world)
    calls: list[dict[str, object]] = [
        {},
        {"top_k": 2},
        {"filter": {"tenant": "acme"}},
        {"filter": {"tenant": "globex"}},
        {"options": {"semantic": {"limit": 3}}},
        {"min_score": 0.01},
        {"granularity": "document"},
        {"max_per_document": 2},
    ]
    answers = [await pipeline.aretrieve("apple harvest", **c) for c in calls]  # type: ignore[arg-type]
    assert rc.counts == {"hits": 0, "misses": len(calls), "errors": 0}
    assert {r.document.metadata["tenant"] for r in answers[2]} == {"acme"}
    assert {r.document.metadata["tenant"] for r in answers[3]} == {"globex"}
    # Each again: all hits, each its own answer.
    again = [await pipeline.aretrieve("apple harvest", **c) for c in calls]  # type: ignore[arg-type]
    assert again == answers
    assert rc.counts["hits"] == len(calls)
    # The same filter conditions in another order are the same request.
    f1 = await pipeline.aretrieve("apple", filter={"tenant": "acme", "n": {"$gte": 1}})
    f2 = await pipeline.aretrieve("apple", filter={"n": {"$gte": 1}, "tenant": "acme"})
    assert f1 == f2
    assert rc.counts["hits"] == len(calls) + 1


async def test_cache_false_skips_the_cache_for_one_call(world: World) -> None:
    pipeline, rc = _cached(world)
    await pipeline.aretrieve("apple harvest")
    await pipeline.aretrieve("apple harvest", cache=False)
    assert world.runs == ["apple harvest", "apple harvest"]
    assert rc.counts == {"hits": 0, "misses": 1, "errors": 0}
    assert pipeline.retrieve("apple harvest", cache=False)
    ctx = await aretrieve_context(pipeline, "apple harvest", budget=300, cache=False)
    assert ctx.sources
    assert rc.counts["hits"] == 0
    await aretrieve_context(pipeline, "apple harvest", budget=300)  # top_k 10: the first request's key
    assert rc.counts["hits"] == 1
    with pytest.raises(InvalidInput, match="cache must be True or False"):
        await pipeline.aretrieve("apple harvest", cache="no")  # type: ignore[arg-type]


async def test_entries_expire_after_the_ttl(world: World) -> None:
    clock = Clock()
    pipeline, rc = _cached(world, InMemoryCacheStore(clock=clock), ttl=300)
    await pipeline.aretrieve("apple")
    clock.now += 299
    await pipeline.aretrieve("apple")
    assert rc.counts["hits"] == 1
    clock.now += 1
    await pipeline.aretrieve("apple")
    assert rc.counts == {"hits": 1, "misses": 2, "errors": 0}
    assert world.runs == ["apple", "apple"]


async def test_damaged_and_foreign_entries_are_misses(world: World) -> None:
    store = InMemoryCacheStore()
    pipeline, rc = _cached(world, store)
    good = await pipeline.aretrieve("apple")
    keys = list(store._items)  # the one entry
    assert len(keys) == 1
    for junk in (
        b"\xff\xfe",
        b"{}",
        b'{"format": "graphfuse.results", "version": 99}',
        b"[1, 2]",
        b"",
        b"[" * 100_000,  # past the JSON parser's recursion limit
    ):
        await store.set(keys[0], junk)
        assert await pipeline.aretrieve("apple") == good
    assert rc.counts["hits"] == 0
    # A well-formed entry written for another key is foreign too.
    value = await store.get(keys[0])
    assert value is not None
    pear = await pipeline.aretrieve("pear")
    other = next(k for k in store._items if k != keys[0])
    await store.set(other, value)  # apple's results under pear's key
    assert await pipeline.aretrieve("pear") == pear
    assert rc.counts["hits"] == 0
    assert await pipeline.aretrieve("apple") == good
    assert rc.counts == {"hits": 1, "misses": 9, "errors": 0}


class BrokenCache:
    """A cache store whose server is down: every call fails as a RedisCacheStore's would."""

    def __init__(self) -> None:
        self.calls = 0

    async def get(self, key: str) -> bytes | None:
        self.calls += 1
        raise ConnectionFailed("redis GET failed: ConnectionRefusedError")

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        raise ConnectionFailed("down")

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        self.calls += 1
        raise ConnectionFailed("redis SET failed")

    async def set_many(self, items: Mapping[str, bytes], *, ttl: float | None = None) -> None:
        raise ConnectionFailed("down")

    async def delete(self, key: str) -> bool:
        raise ConnectionFailed("down")

    async def close(self) -> None:
        return None


async def test_a_failing_cache_store_is_a_miss_with_a_warning(world: World, caplog: pytest.LogCaptureFixture) -> None:
    broken = BrokenCache()
    rc = ResultCache(broken, [world.store.graph, world.store.vectors], cooldown=60)  # type: ignore[arg-type]
    pipeline = world.pipeline.with_result_cache(rc)
    with caplog.at_level(logging.WARNING, logger="graphfuse"):
        first = await pipeline.aretrieve("apple")
        second = await pipeline.aretrieve("apple")
    assert [r.id for r in first] == [r.id for r in second] == [r.id for r in await world.pipeline.aretrieve("apple")]
    assert broken.calls == 1  # the second query left the cache alone (cooldown)
    assert rc.counts == {"hits": 0, "misses": 2, "errors": 1}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "result cache get failed" in warnings[0]
    assert "60 s" in warnings[0]


def test_stores_without_a_generation_need_an_opt_in() -> None:
    class Remote:
        async def get_documents(self, ids: Sequence[str]) -> dict[str, Document]:
            return {}

    assert isinstance(InMemoryGraphStore(), Versioned)
    assert isinstance(LocalVectorStore(), Versioned)
    with pytest.raises(InvalidInput, match="Remote cannot say when it was written to"):
        ResultCache(InMemoryCacheStore(), [InMemoryGraphStore(), Remote()])
    with pytest.raises(InvalidInput, match="needs the stores"):
        ResultCache(InMemoryCacheStore(), [])
    rc = ResultCache(InMemoryCacheStore(), [InMemoryGraphStore(), Remote()], allow_unversioned=True)
    assert rc.versioned is False
    assert ResultCache(InMemoryCacheStore(), [InMemoryGraphStore()]).versioned is True
    for bad in ({"ttl": 0}, {"ttl": float("nan")}, {"timeout": -1}, {"max_entry_bytes": 0}, {"namespace": " "}):
        with pytest.raises(InvalidInput):
            ResultCache(InMemoryCacheStore(), [InMemoryGraphStore()], **bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="CacheStore"):
        ResultCache(object(), [InMemoryGraphStore()])  # type: ignore[arg-type]


async def test_in_memory_stores_move_their_generation_on_every_write() -> None:
    from graphfuse import Relation, VectorRecord

    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    seen = {(await graph.generation(), await vectors.generation())}
    await graph.store_documents([Document("a", "x"), Document("b", "y")])
    seen.add((await graph.generation(), await vectors.generation()))
    await graph.create_relations([Relation("a", "b")])
    seen.add((await graph.generation(), await vectors.generation()))
    await vectors.upsert([VectorRecord("a", [1.0, 0.0])])
    seen.add((await graph.generation(), await vectors.generation()))
    await vectors.delete(["a"])
    seen.add((await graph.generation(), await vectors.generation()))
    await graph.delete_documents(["a"])
    seen.add((await graph.generation(), await vectors.generation()))
    assert len(seen) == 6


async def test_named_pipelines_share_entries_and_a_changed_configuration_does_not(world: World) -> None:
    store = InMemoryCacheStore()
    rc = ResultCache(store, [world.store.graph, world.store.vectors], namespace="shop")
    a = world.pipeline.with_result_cache(rc, name="preset:test")
    b = Pipeline(world.pipeline.stages, world.pipeline.scorer, passages=world.pipeline.passages).with_result_cache(
        ResultCache(store, [world.store.graph, world.store.vectors], namespace="shop"), name="preset:test"
    )
    await a.aretrieve("apple")
    await b.aretrieve("apple")
    assert world.runs == ["apple"]
    # Unnamed: each pipeline object has entries of its own.
    c = world.pipeline.with_result_cache(rc)
    await c.aretrieve("apple")
    assert world.runs == ["apple", "apple"]
    # Same name, other weights: a different identity.
    from graphfuse.scoring import WeightedScorer

    d = a.with_scorer(WeightedScorer({"semantic": 1.0}))
    assert d.result_cache is rc
    await d.aretrieve("apple")
    assert world.runs == ["apple", "apple", "apple"]
    assert a.with_result_cache(None).result_cache is None


async def test_a_named_cache_refuses_components_without_a_configuration_repr(world: World) -> None:
    class Opaque:
        name = "opaque"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            return list(candidates)

    pipeline = Pipeline([*world.pipeline.stages, Opaque()])
    rc = ResultCache(InMemoryCacheStore(), [world.store.graph])
    with pytest.raises(InvalidInput, match="shows no configuration"):
        pipeline.with_result_cache(rc, name="mine")
    assert pipeline.with_result_cache(rc).result_cache is rc  # unnamed: fine, entries are its own
    with pytest.raises(InvalidInput, match="ResultCache"):
        pipeline.with_result_cache(InMemoryCacheStore())  # type: ignore[arg-type]


async def test_results_that_do_not_round_trip_are_not_stored(world: World) -> None:
    class Tupled:
        name = "tupled"

        def __repr__(self) -> str:
            return "Tupled()"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            return [Candidate(Document("t1", "text", {"pair": (1, 2)}), {"semantic": 0.5})]

    store = InMemoryCacheStore()
    rc = ResultCache(store, [world.store.graph])
    pipeline = Pipeline([Tupled()]).with_result_cache(rc)
    first = await pipeline.aretrieve("q")
    assert first[0].document.metadata["pair"] == (1, 2)
    assert len(store) == 0  # JSON would give a list back: not cached
    assert await pipeline.aretrieve("q") == first
    assert rc.counts["hits"] == 0
    small = ResultCache(store, [world.store.graph], max_entry_bytes=10)
    await world.pipeline.with_result_cache(small).aretrieve("apple")
    assert len(store) == 0
