"""LocalVectorStore: the vectors in memory, in step with their SQLite file and approximate index."""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._core._errors import InvalidInput
from .._core._filters import FilterLike, MetadataFilter
from .._core._types import VectorHit, VectorRecord
from . import _hnsw
from ._metadata_index import MetadataIndex
from ._records import check_ids, decode_metadata, encode_metadata
from ._sqlite import Database
from ._vector_ann import Approximate
from ._vector_file import (
    delete_rows,
    file_generation,
    load,
    open_file,
    upsert_rows,
)
from ._vector_matrix import Matrix, exact_search, unit_vector

__all__ = ["LocalVectorStore"]

DEFAULT_APPROXIMATE_THRESHOLD = 100_000


class LocalVectorStore:
    """The embedded vector store: exact cosine search with numpy, HNSW (faiss) when large.

    Vectors are L2-normalised and kept in one float32 matrix, so a search is one
    matrix-vector product plus a partial sort: exact results (timings in
    ``docs/benchmarks.md``; ``docs/backends/embedded.md`` compares it with other stores).
    Metadata filters are evaluated on typed numpy columns and applied before ``limit``.

    ``path=None`` keeps everything in memory; with a path, every write is one SQLite
    transaction (atomic: a bad batch writes nothing) and the matrix is reloaded at open, and
    again when another process has written. ``dimension`` is fixed by the constructor or by
    the first upsert. Safe to share across threads and tasks.

    From ``approximate_threshold`` vectors on (default 100,000; ``None`` never), searches go
    through an approximate HNSW index (faiss, ``pip install 'graphfuse[ann]'``; without it
    the store stays exact and logs a warning). The switch is logged and shown by
    :attr:`index_kind`. The index follows this object's own writes incrementally, is saved
    beside the SQLite file at :meth:`close` (or :meth:`build_index`), is reused at the next
    open, and is rebuilt when missing or stale (another process wrote since it was saved).
    ``ef_search`` trades latency for recall. ``search(..., exact=True)`` always scans.
    ``readonly=True`` opens an existing file for searching only: nothing is ever written to
    it (nor is the approximate index saved), writes raise ``InvalidInput``. ``create=False``
    refuses a missing or empty file (``StoreCorrupted``) instead of initialising it. A stored
    vector of the wrong size or holding NaN or infinity, a row whose checksum does not match
    (a file written by this version keeps a CRC-32 of every row) or metadata that is not JSON
    raises ``StoreCorrupted`` naming the rows (``graphfuse check`` lists them all).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        dimension: int | None = None,
        approximate_threshold: int | None = DEFAULT_APPROXIMATE_THRESHOLD,
        ef_search: int = 192,
        readonly: bool = False,
        create: bool = True,
    ) -> None:
        if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
            raise InvalidInput(f"dimension must be a positive integer, got {dimension!r}")
        if approximate_threshold is not None and (
            isinstance(approximate_threshold, bool)
            or not isinstance(approximate_threshold, int)
            or approximate_threshold < 1
        ):
            raise InvalidInput(
                f"approximate_threshold must be a positive integer or None, got {approximate_threshold!r}"
            )
        if isinstance(ef_search, bool) or not isinstance(ef_search, int) or ef_search < 1:
            raise InvalidInput(f"ef_search must be a positive integer, got {ef_search!r}")
        self._approximate = Approximate(approximate_threshold, ef_search)
        self._lock = threading.RLock()
        self._db: Database | None = None
        self._dimension = dimension
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._metadata: list[dict[str, Any]] = []
        # Rows [0, len(self._ids)) of _buffer are live; the rest is room to append into.
        self._buffer: Matrix = np.zeros((0, dimension or 0), dtype=np.float32)
        self._metadata_index: MetadataIndex | None = None
        self._generation = 0
        self._closed = False
        if path is not None:
            self._db, stored = open_file(path, dimension, readonly=readonly, create=create)
            try:
                if stored is not None and dimension is not None and stored != dimension:
                    raise InvalidInput(f"vector store {self._db.path!r} holds dimension {stored}, not {dimension}")
                self._load()
            except BaseException:
                self._db.close()
                raise

    @property
    def dimension(self) -> int | None:
        """The vector dimension, or ``None`` until it is set by the first upsert."""
        return self._dimension

    @property
    def path(self) -> str | None:
        """The database file, or ``None`` for an in-memory store."""
        return None if self._db is None else self._db.path

    @property
    def ef_search(self) -> int:
        """The HNSW search beam: larger finds more of the true nearest neighbours, more slowly.

        Settable at any time (the index is not rebuilt); a positive integer, else ``InvalidInput``.
        """
        return self._approximate.ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(f"ef_search must be a positive integer, got {value!r}")
        with self._lock:
            self._approximate.ef_search = value

    @property
    def index_kind(self) -> str:
        """``"hnsw"`` while searches use the approximate index, else ``"exact"``."""
        return "exact" if self._approximate.index is None else "hnsw"

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInput("this LocalVectorStore is closed")

    # -- loading and syncing ----------------------------------------------------------------

    def _load(self) -> None:
        assert self._db is not None
        loaded = load(self._db, self._dimension if self._ids else None)
        with self._lock:
            self._dimension = loaded.dimension
            self._ids = loaded.ids
            self._position = {doc_id: i for i, doc_id in enumerate(loaded.ids)}
            self._metadata = loaded.metadata
            self._buffer = loaded.matrix
            self._metadata_index = None
            self._generation = loaded.generation
            self._approximate.forget()
            if self._approximate.wants(self, len(self._ids)) and loaded.dimension is not None:
                index = _hnsw.HNSWIndex.load(self._db.path, loaded.generation, loaded.dimension, self.ef_search)
                self._approximate.attach(index, self._ids)

    # -- the approximate index ----------------------------------------------------------------

    def _ensure_approximate(self) -> bool:
        return self._approximate.ensure(self, self._ids, self._buffer, self._dimension, self._db, self._generation)

    async def build_index(self) -> str:
        """Build (or load) the approximate index now if the store is large enough, and save it.

        Returns :attr:`index_kind`. Searches do this themselves when needed; call it after a
        bulk load to pay the build before the first query.
        """
        self._check_open()

        def build() -> str:
            with self._lock:
                self._sync()
                if self._ensure_approximate():
                    self._approximate.save(self._db, self._generation)
                return self.index_kind

        return await asyncio.to_thread(build)

    def _sync(self) -> None:
        """Reload when another store object or process has written since we last looked."""
        if self._db is not None and file_generation(self._db) != self._generation:
            self._load()

    # -- writes -------------------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace vectors by id, atomically.

        The whole batch is checked first: a wrong dimension, a zero or non-finite vector, a
        duplicate id or non-JSON metadata raises ``InvalidInput`` and writes nothing.
        """
        self._check_open()
        if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
            raise InvalidInput(f"records must be a sequence of VectorRecord, got {type(records).__name__}")
        if not records:
            return
        await asyncio.to_thread(self._upsert, records)

    def _upsert(self, records: Sequence[VectorRecord]) -> None:
        with self._lock:
            self._sync()
            dimension = self._dimension
            ids: list[str] = []
            seen: set[str] = set()
            vectors: list[npt.NDArray[np.float32]] = []
            metadata: list[str] = []
            for r in records:
                if not isinstance(r, VectorRecord):
                    raise InvalidInput(f"records must be VectorRecord objects, got {type(r).__name__}")
                if r.id in seen:
                    raise InvalidInput(f"vector id {r.id!r} appears twice in one batch")
                seen.add(r.id)
                v = unit_vector(r.vector, dimension, f"vector {r.id!r}")
                dimension = v.size
                ids.append(r.id)
                vectors.append(v)
                metadata.append(encode_metadata(r.metadata, f"vector {r.id!r}"))
            block = np.vstack(vectors)
            assert dimension is not None  # the batch is non-empty
            if self._db is not None:
                rows = [(i, v.tobytes(), m) for i, v, m in zip(ids, vectors, metadata, strict=True)]
                behind, generation = upsert_rows(self._db, self._generation, rows, dimension)
                if behind:
                    # Someone wrote between our sync and our transaction: the in-memory copy
                    # misses their rows, so reload it (it includes ours) instead of patching it.
                    self._load()
                    return
                self._generation = generation
            else:
                self._generation += 1  # in memory: the counter generation() reports
            self._apply(ids, block, [decode_metadata(m) for m in metadata], dimension)

    def _apply(self, ids: list[str], block: Matrix, metadata: list[dict[str, Any]], dimension: int) -> None:
        # A search works on a view of rows [0, n) taken under the lock, so rows are only ever
        # written in place beyond n (appends); replacing live rows copies the buffer first.
        self._dimension = dimension
        n = len(self._ids)
        new = [i for i, doc_id in enumerate(ids) if doc_id not in self._position]
        old = [i for i, doc_id in enumerate(ids) if doc_id in self._position]
        buffer = self._buffer
        if buffer.shape[1] != dimension or n + len(new) > buffer.shape[0] or old:
            capacity = max(n + len(new), int(buffer.shape[0] * 1.5) if not old else buffer.shape[0], 1024)
            grown = np.empty((capacity, dimension), dtype=np.float32)
            if n:
                grown[:n] = buffer[:n]
            buffer = grown
        if old:
            rows = [self._position[ids[i]] for i in old]
            buffer[rows] = block[old]
            for i, row in zip(old, rows, strict=True):
                self._metadata[row] = metadata[i]
        if new:
            buffer[n : n + len(new)] = block[new]
            for k, i in enumerate(new):
                self._position[ids[i]] = n + k
                self._ids.append(ids[i])
                self._metadata.append(metadata[i])
        self._buffer = buffer
        self._metadata_index = None
        self._approximate.follow_upsert(ids, block, n, new, old, rows if old else [])

    async def delete(self, ids: Sequence[str]) -> int:
        """Delete vectors by id; returns how many existed."""
        self._check_open()
        wanted = list(dict.fromkeys(check_ids(ids)))
        return await asyncio.to_thread(self._delete, wanted) if wanted else 0

    def _delete(self, ids: list[str]) -> int:
        with self._lock:
            self._sync()
            gone = [i for i in ids if i in self._position]
            if not gone:
                return 0
            if self._db is not None:
                behind, generation, deleted = delete_rows(self._db, self._generation, gone)
                if behind:
                    self._load()  # as in _upsert: another writer got in between
                    return deleted
                self._generation = generation
            else:
                self._generation += 1
            drop = {self._position[i] for i in gone}
            keep = [row for row in range(len(self._ids)) if row not in drop]
            self._approximate.follow_delete(sorted(drop), keep)
            self._buffer = self._buffer[keep]
            self._ids = [self._ids[row] for row in keep]
            self._metadata = [self._metadata[row] for row in keep]
            self._position = {doc_id: i for i, doc_id in enumerate(self._ids)}
            self._metadata_index = None
            return len(gone)

    async def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` have a vector (after other processes' writes too): :class:`~graphfuse.VectorLookup`."""
        self._check_open()
        wanted = check_ids(ids)

        def run() -> set[str]:
            with self._lock:
                self._sync()
                return {i for i in wanted if i in self._position}

        return await asyncio.to_thread(run) if self._db is not None else {i for i in wanted if i in self._position}

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored (L2-normalised) vector of each of ``ids`` that has one: :class:`~graphfuse.VectorSource`."""
        self._check_open()
        wanted = check_ids(ids)

        def run() -> dict[str, list[float]]:
            with self._lock:
                self._sync()
                rows = {i: self._position[i] for i in wanted if i in self._position}
                block = self._buffer[list(rows.values())] if rows else None
            if block is None:
                return {}
            return dict(zip(rows, block.tolist(), strict=True))

        return await asyncio.to_thread(run) if self._db is not None else run()

    async def count(self) -> int:
        """How many vectors the store holds."""
        self._check_open()
        if self._db is None:
            return len(self._ids)
        return await asyncio.to_thread(self._count)

    async def generation(self) -> int:
        """A counter that changes with every write (by any process, for a file): a cache stamp
        (:class:`~graphfuse.Versioned`)."""
        self._check_open()
        if self._db is None:
            return self._generation
        return int(await asyncio.to_thread(file_generation, self._db))

    def _count(self) -> int:
        with self._lock:
            self._sync()
            return len(self._ids)

    # -- search -------------------------------------------------------------------------------

    async def search(
        self,
        vector: Sequence[float],
        *,
        limit: int = 50,
        filter: FilterLike | None = None,
        min_score: float | None = None,
        exact: bool = False,
    ) -> list[VectorHit]:
        """The ``limit`` most cosine-similar vectors, best first (ties by insertion order).

        ``filter`` and ``min_score`` apply before the limit. An empty store returns ``[]``.
        Large stores answer from the approximate index (see the class docstring) unless
        ``exact`` is true.
        """
        self._check_open()
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInput(f"limit must be a non-negative integer, got {limit!r}")
        if min_score is not None and (
            isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not math.isfinite(min_score)
        ):
            raise InvalidInput(f"min_score must be a finite number, got {min_score!r}")
        flt = MetadataFilter.parse(filter)
        query = unit_vector(vector, None, "query vector")
        return await asyncio.to_thread(self._search, query, limit, flt, min_score, exact)

    def _search(
        self,
        query: npt.NDArray[np.float32],
        limit: int,
        flt: MetadataFilter | None,
        min_score: float | None,
        exact: bool = False,
    ) -> list[VectorHit]:
        with self._lock:
            self._sync()
            ids = self._ids
            matrix = self._buffer[: len(ids)]
            if self._dimension is not None and query.size != self._dimension:
                raise InvalidInput(f"query vector: dimension {query.size} does not match the store's {self._dimension}")
            rows: npt.NDArray[np.int64] | None = None
            if flt is not None and ids:
                if self._metadata_index is None:
                    self._metadata_index = MetadataIndex(self._metadata)
                rows = np.flatnonzero(self._metadata_index.mask(flt))
            if ids and limit and not exact and self._ensure_approximate():
                return self._approximate.search(query, limit, rows, min_score)
        return exact_search(ids, matrix, query, limit, rows, min_score)

    def _save_approximate(self) -> None:
        with self._lock:
            self._approximate.save(self._db, self._generation)

    async def close(self) -> None:
        """Save a changed approximate index, then close the database (idempotent).

        An in-memory store drops its vectors.
        """
        if not self._closed:
            self._closed = True
            if self._db is not None:
                try:
                    await asyncio.to_thread(self._save_approximate)
                finally:
                    self._db.close()

    async def __aenter__(self) -> LocalVectorStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"LocalVectorStore({self.path!r}, dimension={self._dimension})"
