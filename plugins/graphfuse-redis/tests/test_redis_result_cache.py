"""graphfuse.ResultCache on a real redis-server: shared entries, writes, tenants, TTL, outages."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from graphfuse_redis import RedisCacheStore

from graphfuse import Candidate, Pipeline, Query, ResultCache, RunContext, presets
from graphfuse.context import aretrieve_context
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.retry import RetryPolicy
from graphfuse.stores import LocalStore


class Counting:
    """Passes candidates through and records each run: a hit leaves no trace here."""

    name = "count"

    def __init__(self, runs: list[str]) -> None:
        self.runs = runs

    def __repr__(self) -> str:
        return "Counting()"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.runs.append(query.text)
        return list(candidates)


@dataclass
class World:
    store: LocalStore
    embedder: HashingEmbedder
    pipeline: Pipeline
    runs: list[str]

    async def index(self, *records: SourceRecord) -> None:
        await Indexer(self.store.graph, self.store.vectors, self.embedder).aindex(list(records))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    store = LocalStore.open(tmp_path / "store")
    embedder = HashingEmbedder(dimension=64)
    await store.ause_embedder(embedder)
    w = World(store, embedder, Pipeline([Counting([])]), [])
    await w.index(
        *(
            SourceRecord(id=f"{tenant}/{i}", text=f"{tenant} orchard harvest {i}", metadata={"tenant": tenant})
            for tenant in ("acme", "globex")
            for i in range(3)
        )
    )
    base = await presets.abuild("minimal", graph_store=store.graph, vector_store=store.vectors, embedder=embedder)
    w.pipeline = Pipeline([*base.stages, Counting(w.runs)], base.scorer, passages=base.passages)
    try:
        yield w
    finally:
        await store.aclose()


@pytest.fixture
async def redis_cache(redis_url: str) -> AsyncIterator[RedisCacheStore]:
    cache = RedisCacheStore(redis_url, namespace=f"test-{uuid.uuid4().hex}")
    try:
        yield cache
    finally:
        await cache.close()


def _attach(w: World, cache: RedisCacheStore, **options: object) -> tuple[Pipeline, ResultCache]:
    rc = ResultCache(cache, [w.store.graph, w.store.vectors], namespace="shop", **options)  # type: ignore[arg-type]
    return w.pipeline.with_result_cache(rc, name="preset:minimal"), rc


async def test_entries_are_shared_through_redis(world: World, redis_cache: RedisCacheStore, redis_url: str) -> None:
    pipeline, rc = _attach(world, redis_cache)
    first = await pipeline.aretrieve("orchard harvest", top_k=4)
    # Another process's view: a new client, a new ResultCache, a new pipeline of the same name.
    other_store = RedisCacheStore(redis_url, namespace=redis_cache.namespace)
    try:
        other, other_rc = _attach(world, other_store)
        assert await other.aretrieve("orchard harvest", top_k=4) == first
        assert other_rc.counts == {"hits": 1, "misses": 0, "errors": 0}
    finally:
        await other_store.close()
    assert world.runs == ["orchard harvest"]
    assert rc.counts == {"hits": 0, "misses": 1, "errors": 0}
    raw = aioredis.Redis.from_url(redis_url)
    try:
        keys = await raw.keys(f"{redis_cache.namespace}:graphfuse:results:v1:*")
        assert len(keys) == 1
        assert 0 < await raw.pttl(keys[0]) <= 300_000  # the default TTL, in Redis' own expiry
    finally:
        await raw.aclose()


async def test_a_write_between_two_identical_queries_is_seen(world: World, redis_cache: RedisCacheStore) -> None:
    pipeline, rc = _attach(world, redis_cache)
    before = await pipeline.aretrieve("pomegranate juice", top_k=3)
    assert await pipeline.aretrieve("pomegranate juice", top_k=3) == before  # a hit while nothing changed
    await world.index(SourceRecord(id="acme/new", text="pomegranate juice pomegranate", metadata={"tenant": "acme"}))
    after = await pipeline.aretrieve("pomegranate juice", top_k=3)
    assert after[0].id == "acme/new"
    assert rc.counts == {"hits": 1, "misses": 2, "errors": 0}
    assert world.runs == ["pomegranate juice", "pomegranate juice"]


async def test_tenants_never_read_each_others_entries(world: World, redis_cache: RedisCacheStore) -> None:
    pipeline, rc = _attach(world, redis_cache)
    got = {}
    for _ in range(2):
        for tenant in ("acme", "globex"):
            got[tenant] = await pipeline.aretrieve("orchard harvest", filter={"tenant": tenant})
    assert {r.document.metadata["tenant"] for r in got["acme"]} == {"acme"}
    assert {r.document.metadata["tenant"] for r in got["globex"]} == {"globex"}
    assert rc.counts == {"hits": 2, "misses": 2, "errors": 0}


async def test_entries_expire_with_redis_ttl(world: World, redis_cache: RedisCacheStore, redis_url: str) -> None:
    pipeline, rc = _attach(world, redis_cache, ttl=0.2)
    await pipeline.aretrieve("orchard")
    raw = aioredis.Redis.from_url(redis_url)
    try:
        (key,) = await raw.keys(f"{redis_cache.namespace}:graphfuse:results:*")
        assert 0 < await raw.pttl(key) <= 200
        for _ in range(200):  # Redis removes it; we wait for that, not for a duration
            if not await raw.exists(key):
                break
            await asyncio.sleep(0.05)
        assert not await raw.exists(key)
    finally:
        await raw.aclose()
    await pipeline.aretrieve("orchard")
    assert rc.counts == {"hits": 0, "misses": 2, "errors": 0}
    assert world.runs == ["orchard", "orchard"]


async def test_a_request_may_skip_the_cache(world: World, redis_cache: RedisCacheStore) -> None:
    pipeline, rc = _attach(world, redis_cache)
    await pipeline.aretrieve("orchard")
    await pipeline.aretrieve("orchard", cache=False)
    await aretrieve_context(pipeline, "orchard", budget=200, cache=False)
    assert rc.counts == {"hits": 0, "misses": 1, "errors": 0}
    assert world.runs == ["orchard"] * 3


async def test_a_damaged_entry_in_redis_is_a_miss(world: World, redis_cache: RedisCacheStore, redis_url: str) -> None:
    pipeline, rc = _attach(world, redis_cache)
    good = await pipeline.aretrieve("orchard")
    raw = aioredis.Redis.from_url(redis_url)
    try:
        (key,) = await raw.keys(f"{redis_cache.namespace}:graphfuse:results:*")
        await raw.set(key, b'{"format": "graphfuse.results", "version": 1, "key": "x", "results": []}')
    finally:
        await raw.aclose()
    assert await pipeline.aretrieve("orchard") == good
    assert rc.counts == {"hits": 0, "misses": 2, "errors": 0}


async def test_redis_down_is_a_miss_with_one_warning(
    world: World, unused_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    down = RedisCacheStore(f"redis://127.0.0.1:{unused_port}/0", connect_timeout=0.5, retry=RetryPolicy(attempts=1))
    try:
        rc = ResultCache(down, [world.store.graph, world.store.vectors])
        pipeline = world.pipeline.with_result_cache(rc)
        with caplog.at_level(logging.WARNING, logger="graphfuse"):
            results = [await pipeline.aretrieve("orchard") for _ in range(3)]
    finally:
        await down.close()
    assert results[0] == results[1] == results[2] != []
    assert rc.counts == {"hits": 0, "misses": 3, "errors": 1}
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "result cache get failed (ConnectionFailed" in warnings[0]
