"""InMemoryCacheStore: an in-process bytes cache with TTL and an LRU bound."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence

from .._core._errors import InvalidInput

__all__ = ["InMemoryCacheStore"]


def _check_ttl(ttl: float | None) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
        raise InvalidInput(f"ttl must be a positive number of seconds or None, got {ttl!r}")
    return float(ttl)


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInput(f"cache key must be a non-empty string, got {key!r}")
    return key


def _check_value(key: str, value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidInput(f"cache value for {key!r} must be bytes, got {type(value).__name__}")
    return bytes(value)


class InMemoryCacheStore:
    """The embedded default cache: at most ``max_items`` entries, least recently used evicted.

    Entries with a TTL expire that many seconds after they were set (monotonic clock,
    injectable as ``clock`` for tests). All operations are a few dict operations under a
    lock, so they run inline and the store is safe to share across threads and tasks.
    """

    def __init__(self, max_items: int = 100_000, *, clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1:
            raise InvalidInput(f"max_items must be a positive integer, got {max_items!r}")
        self._max_items = max_items
        self._clock = clock
        # key -> (value, expiry or None); order = recency, most recent last
        self._items: OrderedDict[str, tuple[bytes, float | None]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            now = self._clock()
            return sum(1 for _, exp in self._items.values() if exp is None or exp > now)

    def _get(self, key: str, now: float) -> bytes | None:
        item = self._items.get(key)
        if item is None:
            return None
        value, expiry = item
        if expiry is not None and expiry <= now:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    def _set(self, key: str, value: bytes, expiry: float | None) -> None:
        self._items[key] = (value, expiry)
        self._items.move_to_end(key)
        while len(self._items) > self._max_items:
            self._items.popitem(last=False)

    async def get(self, key: str) -> bytes | None:
        """The value for ``key``, or ``None`` when it is missing or expired."""
        _check_key(key)
        with self._lock:
            return self._get(key, self._clock())

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """One value (or ``None``) per key, in order."""
        checked = [_check_key(k) for k in keys]
        with self._lock:
            now = self._clock()
            return [self._get(k, now) for k in checked]

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value`` under ``key``, expiring after ``ttl`` seconds if given."""
        data = _check_value(_check_key(key), value)
        seconds = _check_ttl(ttl)
        with self._lock:
            self._set(key, data, None if seconds is None else self._clock() + seconds)

    async def set_many(self, items: Mapping[str, bytes], *, ttl: float | None = None) -> None:
        """Store several values with one TTL (all checked before any is stored)."""
        checked = [(k, _check_value(_check_key(k), v)) for k, v in items.items()]
        seconds = _check_ttl(ttl)
        with self._lock:
            expiry = None if seconds is None else self._clock() + seconds
            for k, v in checked:
                self._set(k, v, expiry)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when it was present (and not expired)."""
        _check_key(key)
        with self._lock:
            present = self._get(key, self._clock()) is not None
            self._items.pop(key, None)
            return present

    async def close(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()

    def __repr__(self) -> str:
        return f"InMemoryCacheStore(max_items={self._max_items})"
