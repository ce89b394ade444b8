"""The :class:`CacheStoreContract` suite: every promise of :class:`graphfuse.CacheStore`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_asyncio

from .._core._errors import InvalidInput
from .._core._protocols import CacheStore

__all__ = ["CacheStoreContract"]

_ALL_BYTES = bytes(range(256))


@pytest.mark.asyncio
class CacheStoreContract:
    """Subclass and provide an async ``cache_store`` fixture yielding an empty store.

    To check that namespaces do not collide, also override ``other_namespace_cache_store``:
    a second store over the *same* backend (same server, same database) with another
    namespace. Without it, that test is skipped.

    ``ttl_seconds`` is the short TTL the expiry tests use (the test waits a little longer
    than that); raise it for backends with coarse expiry clocks.
    """

    ttl_seconds = 0.3

    @pytest_asyncio.fixture
    async def other_namespace_cache_store(self) -> Any:
        pytest.skip("the subclass does not provide other_namespace_cache_store")

    async def _expire(self) -> None:
        await asyncio.sleep(self.ttl_seconds * 2 + 0.2)

    async def test_missing_key(self, cache_store: CacheStore) -> None:
        assert await cache_store.get("missing") is None

    async def test_set_get_overwrite(self, cache_store: CacheStore) -> None:
        await cache_store.set("k", b"one")
        assert await cache_store.get("k") == b"one"
        await cache_store.set("k", b"two")
        assert await cache_store.get("k") == b"two"

    async def test_binary_safe_values(self, cache_store: CacheStore) -> None:
        await cache_store.set("all", _ALL_BYTES)
        await cache_store.set("empty", b"")
        await cache_store.set("big", _ALL_BYTES * 4096)
        assert await cache_store.get("all") == _ALL_BYTES
        got = await cache_store.get("empty")
        assert got == b""
        assert got is not None
        assert await cache_store.get("big") == _ALL_BYTES * 4096
        assert await cache_store.get_many(["all", "empty"]) == [_ALL_BYTES, b""]

    async def test_unusual_keys(self, cache_store: CacheStore) -> None:
        keys = ["with space", "ünïcødé:文書", "a:b:c", "*", "?[x]", "x" * 1000]
        for i, key in enumerate(keys):
            await cache_store.set(key, str(i).encode())
        assert await cache_store.get_many(keys) == [str(i).encode() for i in range(len(keys))]
        assert await cache_store.get("a:b") is None

    async def test_values_must_be_bytes(self, cache_store: CacheStore) -> None:
        bad: Any = "text"
        with pytest.raises(InvalidInput):
            await cache_store.set("k", bad)
        with pytest.raises(InvalidInput):
            await cache_store.set_many({"ok": b"1", "bad": bad})
        assert await cache_store.get_many(["k", "ok", "bad"]) == [None, None, None]

    async def test_invalid_ttl(self, cache_store: CacheStore) -> None:
        for ttl in (0, -1.0):
            with pytest.raises(InvalidInput):
                await cache_store.set("k", b"v", ttl=ttl)
            with pytest.raises(InvalidInput):
                await cache_store.set_many({"k": b"v"}, ttl=ttl)
        assert await cache_store.get("k") is None

    async def test_ttl_expiry(self, cache_store: CacheStore) -> None:
        await cache_store.set("short", b"1", ttl=self.ttl_seconds)
        await cache_store.set("forever", b"2")
        await cache_store.set("long", b"3", ttl=3600)
        assert await cache_store.get("short") == b"1"
        await self._expire()
        assert await cache_store.get("short") is None
        assert await cache_store.get("forever") == b"2"
        assert await cache_store.get("long") == b"3"

    async def test_set_without_ttl_clears_previous_ttl(self, cache_store: CacheStore) -> None:
        await cache_store.set("k", b"1", ttl=self.ttl_seconds)
        await cache_store.set("k", b"2")
        await self._expire()
        assert await cache_store.get("k") == b"2"

    async def test_get_many_order_and_missing(self, cache_store: CacheStore) -> None:
        await cache_store.set("a", b"A")
        await cache_store.set("c", b"C")
        assert await cache_store.get_many(["c", "missing", "a", "c"]) == [b"C", None, b"A", b"C"]
        assert await cache_store.get_many([]) == []

    async def test_set_many(self, cache_store: CacheStore) -> None:
        items = {f"k{i}": bytes([i]) * i for i in range(50)}
        await cache_store.set_many(items)
        assert await cache_store.get_many(list(items)) == list(items.values())
        await cache_store.set_many({})

    async def test_set_many_ttl(self, cache_store: CacheStore) -> None:
        await cache_store.set_many({"a": b"1", "b": b"2"}, ttl=self.ttl_seconds)
        await cache_store.set("c", b"3")
        assert await cache_store.get_many(["a", "b"]) == [b"1", b"2"]
        await self._expire()
        assert await cache_store.get_many(["a", "b", "c"]) == [None, None, b"3"]

    async def test_delete(self, cache_store: CacheStore) -> None:
        await cache_store.set("k", b"v")
        assert await cache_store.delete("k") is True
        assert await cache_store.get("k") is None
        assert await cache_store.delete("k") is False
        assert await cache_store.delete("never") is False

    async def test_concurrent_sets(self, cache_store: CacheStore) -> None:
        await asyncio.gather(*(cache_store.set(f"c{i}", str(i).encode()) for i in range(32)))
        assert await cache_store.get_many([f"c{i}" for i in range(32)]) == [str(i).encode() for i in range(32)]

    async def test_namespaces_do_not_collide(
        self, cache_store: CacheStore, other_namespace_cache_store: CacheStore
    ) -> None:
        other = other_namespace_cache_store
        await cache_store.set("shared", b"mine")
        assert await other.get("shared") is None
        await other.set("shared", b"theirs")
        await other.set_many({"only-theirs": b"x"})
        assert await cache_store.get("shared") == b"mine"
        assert await cache_store.get_many(["shared", "only-theirs"]) == [b"mine", None]
        assert await other.delete("shared") is True
        assert await cache_store.get("shared") == b"mine"
