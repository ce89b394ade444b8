"""The LLM graph extractor's cache: one SQLite file, a reply per (unit text, extractor identity)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from .._core._errors import InvalidInput

__all__ = ["ExtractionCache", "extraction_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS extractions (
    key TEXT PRIMARY KEY,
    extractor TEXT NOT NULL,
    graph TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
)
"""


def extraction_key(identity: str, text: str) -> str:
    """The cache key of ``text`` extracted by the extractor ``identity``: a SHA-256 of both."""
    return hashlib.sha256(f"{identity}\0{text}".encode()).hexdigest()


class ExtractionCache:
    """Extractions kept across runs in the SQLite file ``path`` (created with its folder).

    Keyed by :func:`extraction_key`: a changed text, model, prompt version or type list misses,
    anything else hits. Safe to use from several threads of one process.
    """

    def __init__(self, path: str | Path) -> None:
        if not isinstance(path, (str, Path)) or not str(path):
            raise InvalidInput(f"cache must be a file path, got {path!r}")
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidInput(f"cache {str(self.path)!r} is a folder; give a file path")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"ExtractionCache({str(self.path)!r})"

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[str, int, int]]:
        """``{key: (graph JSON, prompt tokens, completion tokens)}`` for the keys held."""
        out: dict[str, tuple[str, int, int]] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = list(keys[i : i + 500])
                rows = self._db.execute(
                    "SELECT key, graph, prompt_tokens, completion_tokens FROM extractions "
                    f"WHERE key IN ({','.join('?' * len(part))})",
                    part,
                )
                out.update({k: (g, int(p), int(c)) for k, g, p, c in rows})
        return out

    def put_many(self, rows: Iterable[tuple[str, str, str, int, int]]) -> None:
        """Store ``(key, extractor identity, graph JSON, prompt tokens, completion tokens)`` rows at once."""
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO extractions VALUES (?, ?, ?, ?, ?, ?)",
                    [(*row, now) for row in rows],
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM extractions").fetchone()[0])

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            self._db.close()
