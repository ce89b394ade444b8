"""A small on-disk cache (SQLite key-value) so repeated evaluation runs do not re-embed."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence

__all__ = ["SQLiteCache"]


class SQLiteCache:
    """A :class:`~graphfuse.CacheStore` in one SQLite file (no TTL: entries are kept).

    Meant for :class:`~graphfuse.embedders.CachingEmbedder` in the evaluation harness; ``ttl``
    arguments are accepted and ignored.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._db = sqlite3.connect(os.fspath(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        self._lock = threading.Lock()

    def _get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = list(keys[i : i + 500])
                rows = self._db.execute(
                    f"SELECT key, value FROM kv WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
                found.update(rows)
        return [found.get(k) for k in keys]

    def _set_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", list(items.items()))
            self._db.execute("COMMIT")

    async def get(self, key: str) -> bytes | None:
        return (await self.get_many([key]))[0]

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        return await asyncio.to_thread(self._get_many, list(keys))

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        await self.set_many({key: value})

    async def set_many(self, items: Mapping[str, bytes], *, ttl: float | None = None) -> None:
        if items:
            await asyncio.to_thread(self._set_many, dict(items))

    async def delete(self, key: str) -> bool:
        def run() -> bool:
            with self._lock:
                return self._db.execute("DELETE FROM kv WHERE key = ?", (key,)).rowcount > 0

        return await asyncio.to_thread(run)

    async def close(self) -> None:
        with self._lock:
            self._db.close()
