"""InMemoryCacheStore beyond the contract suite: the LRU bound, TTL on an injected clock, threads."""

from __future__ import annotations

import asyncio
import threading

import pytest

from graphfuse import InvalidInput
from graphfuse.stores import InMemoryCacheStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_least_recently_used_is_evicted() -> None:
    cache = InMemoryCacheStore(max_items=3)
    await cache.set_many({"a": b"1", "b": b"2", "c": b"3"})
    assert await cache.get("a") == b"1"  # a is now the most recent
    await cache.set("d", b"4")
    assert await cache.get_many(["a", "b", "c", "d"]) == [b"1", None, b"3", b"4"]
    assert len(cache) == 3


async def test_ttl_on_an_injected_clock() -> None:
    clock = Clock()
    cache = InMemoryCacheStore(clock=clock)
    await cache.set("short", b"x", ttl=10)
    await cache.set_many({"m1": b"1", "m2": b"2"}, ttl=20)
    await cache.set("forever", b"y")
    clock.now += 10
    assert await cache.get("short") is None
    assert await cache.get_many(["m1", "m2", "forever"]) == [b"1", b"2", b"y"]
    clock.now += 10
    assert await cache.get_many(["m1", "m2", "forever"]) == [None, None, b"y"]
    assert await cache.delete("m1") is False
    assert len(cache) == 1


@pytest.mark.parametrize("max_items", [0, -1, True, 1.5])
def test_bad_bound(max_items: object) -> None:
    with pytest.raises(InvalidInput):
        InMemoryCacheStore(max_items=max_items)  # type: ignore[arg-type]


async def test_bad_set_many_stores_nothing() -> None:
    cache = InMemoryCacheStore()
    with pytest.raises(InvalidInput):
        await cache.set_many({"ok": b"1", "bad": "text"})  # type: ignore[dict-item]
    with pytest.raises(InvalidInput):
        await cache.set_many({"ok": b"1"}, ttl=0)
    assert await cache.get("ok") is None
    with pytest.raises(InvalidInput):
        await cache.get("")


def test_threads_share_one_cache() -> None:
    cache = InMemoryCacheStore(max_items=500)

    def work(k: int) -> None:
        for i in range(200):
            asyncio.run(cache.set(f"{k}:{i}", bytes([k])))
            asyncio.run(cache.get(f"{k}:{i // 2}"))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 500
