"""RedisCacheStore against a real redis-server: the contract suite plus Redis specifics."""

from __future__ import annotations

import socket
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from graphfuse_redis import RedisCacheStore

from graphfuse import AuthenticationFailed, CacheStore, ConnectionFailed, DeadlineExceeded, InvalidInput, deadline
from graphfuse.retry import RetryPolicy
from graphfuse.testing import CacheStoreContract


def _namespace() -> str:
    return f"test-{uuid.uuid4().hex}"


class TestRedisCacheStoreContract(CacheStoreContract):
    @pytest.fixture
    async def cache_store(self, redis_url: str) -> AsyncIterator[RedisCacheStore]:
        store = RedisCacheStore(redis_url, namespace=_namespace())
        yield store
        await store.close()

    @pytest.fixture
    async def other_namespace_cache_store(self, redis_url: str) -> AsyncIterator[RedisCacheStore]:
        store = RedisCacheStore(redis_url, namespace=_namespace())
        yield store
        await store.close()


async def test_keys_are_prefixed_with_the_namespace(redis_url: str) -> None:
    store = RedisCacheStore(redis_url, namespace="ns-check")
    raw = aioredis.Redis.from_url(redis_url)
    try:
        await store.set("k", b"v", ttl=60)
        assert await raw.get("ns-check:k") == b"v"
        assert 0 < await raw.pttl("ns-check:k") <= 60_000
        assert await raw.get("k") is None
    finally:
        await raw.delete("ns-check:k")
        await raw.aclose()
        await store.close()


async def test_default_ttl_applies_when_no_ttl_is_given(redis_url: str) -> None:
    namespace = _namespace()
    store = RedisCacheStore(redis_url, namespace=namespace, default_ttl=120)
    raw = aioredis.Redis.from_url(redis_url)
    try:
        await store.set("a", b"1")
        await store.set_many({"b": b"2"})
        await store.set("c", b"3", ttl=5)
        assert 60_000 < await raw.pttl(f"{namespace}:a") <= 120_000
        assert 60_000 < await raw.pttl(f"{namespace}:b") <= 120_000
        assert 0 < await raw.pttl(f"{namespace}:c") <= 5_000
    finally:
        await raw.aclose()
        await store.close()


def test_constructor_validation() -> None:
    for namespace in ("", "a:b", "x" * 65, "sp ace"):
        with pytest.raises(InvalidInput):
            RedisCacheStore(namespace=namespace)
    with pytest.raises(InvalidInput):
        RedisCacheStore("http://localhost:6379")
    with pytest.raises(InvalidInput):
        RedisCacheStore(default_ttl=0)
    with pytest.raises(InvalidInput):
        RedisCacheStore(socket_timeout=-1)


async def test_unreachable_server_raises_connection_failed(unused_port: int) -> None:
    store = RedisCacheStore(f"redis://127.0.0.1:{unused_port}/0", connect_timeout=1)
    try:
        with pytest.raises(ConnectionFailed):
            await store.get("k")
        with pytest.raises(ConnectionFailed):
            await store.set_many({"k": b"v"})
    finally:
        await store.close()


async def test_refused_credentials_raise_authentication_failed(redis_url: str) -> None:
    url = redis_url.replace("redis://", "redis://nobody:wrong@")
    store = RedisCacheStore(url)
    try:
        with pytest.raises(AuthenticationFailed):
            await store.get("k")
    finally:
        await store.close()


async def test_closed_store_raises_and_close_is_idempotent(redis_url: str) -> None:
    store = RedisCacheStore(redis_url, namespace=_namespace())
    await store.set("k", b"v")
    await store.close()
    await store.close()
    with pytest.raises(ConnectionFailed):
        await store.get("k")


async def test_is_a_cache_store(redis_url: str) -> None:
    store = RedisCacheStore(redis_url)
    try:
        assert isinstance(store, CacheStore)
    finally:
        await store.close()


async def test_deadline_cuts_off_a_server_that_does_not_answer() -> None:
    # A listening socket that never replies: only the caller's deadline ends the call.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        store = RedisCacheStore(f"redis://127.0.0.1:{port}/0", socket_timeout=30, retry=RetryPolicy(attempts=1))
        try:
            with deadline(0.3), pytest.raises(DeadlineExceeded):
                await store.get("k")
        finally:
            await store.close()


async def test_connection_failures_are_retried(unused_port: int) -> None:
    store = RedisCacheStore(
        f"redis://127.0.0.1:{unused_port}/0", retry=RetryPolicy(attempts=3, initial=0.01, jitter=0.0)
    )
    calls = 0
    real = store._once

    async def counting(*args: object) -> object:
        nonlocal calls
        calls += 1
        return await real(*args)  # type: ignore[arg-type]

    store._once = counting  # type: ignore[method-assign,assignment]
    try:
        with pytest.raises(ConnectionFailed):
            await store.get("k")
    finally:
        await store.close()
    assert calls == 3
