"""The on-disk cache of answers and verdicts that makes a comparison resumable."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from .._core._errors import InvalidInput, StoreCorrupted

__all__ = ["CompareCache", "cache_key"]


def cache_key(*parts: Any) -> str:
    """A SHA-256 of the JSON of ``parts`` (pipeline, question, model, prompt, ...)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class CompareCache:
    """Answers and verdicts by key, in one SQLite file (WAL), so an interrupted run continues.

    Only successes are stored: errors and judge failures are tried again on the next run.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        if p.is_dir():
            raise InvalidInput(f"cache path {str(p)!r} is a directory, not a file")
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(p, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupted(f"comparison cache {str(p)!r} is not a usable SQLite file: {exc}") from exc
        self.path = p
        self._lock = threading.Lock()

    def _get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value: dict[str, Any] = json.loads(row[0])
        return value

    def _set(self, key: str, value: dict[str, Any]) -> None:
        blob = json.dumps(value, sort_keys=True)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)", (key, blob))

    async def get(self, key: str) -> dict[str, Any] | None:
        """The stored value, or ``None``."""
        return await asyncio.to_thread(self._get, key)

    async def set(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` (a JSON-ready dict) under ``key``."""
        await asyncio.to_thread(self._set, key, value)

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
