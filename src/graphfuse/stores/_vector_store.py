"""LocalVectorStore: exact cosine search over a float32 matrix, persisted in SQLite."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import InvalidInput, StoreCorrupted
from .._filters import FilterLike, MetadataFilter
from .._types import VectorHit, VectorRecord
from . import _hnsw
from ._metadata_index import MetadataIndex
from ._records import CHECK_HINT, check_ids, decode_metadata, encode_metadata
from ._sqlite import Database, chunks, scalar

__all__ = ["LocalVectorStore"]

APPLICATION_ID = 0x47464702  # "GFG" + 2: a GraphFuse vector store
# Each row keeps a CRC-32 of itself (id, vector bytes, metadata), written with the row and
# verified when the store is loaded and by `graphfuse check`.
FORMAT_VERSION = 2

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER);
INSERT INTO meta VALUES ('generation', 0), ('dimension', NULL);
CREATE TABLE vectors (id TEXT PRIMARY KEY, vector BLOB NOT NULL, metadata TEXT NOT NULL, checksum INTEGER)
"""
_UPSERT = (
    "INSERT INTO vectors (id, vector, metadata, checksum) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
    "vector = excluded.vector, metadata = excluded.metadata, checksum = excluded.checksum"
)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_GENERATION = "SELECT value FROM meta WHERE key = 'generation'"
_BUMP = "UPDATE meta SET value = value + 1 WHERE key = 'generation'"
# Below this share of matching rows, score only the matching rows instead of all of them.
_GATHER_SHARE = 0.25
# Rebuild the approximate index once this share of its labels are tombstones.
_REBUILD_DEAD_SHARE = 0.25
DEFAULT_APPROXIMATE_THRESHOLD = 100_000

_log = logging.getLogger("graphfuse.stores.vectors")

Matrix = npt.NDArray[np.float32]


def row_checksum(doc_id: str | bytes, vector: bytes, metadata: str | bytes) -> int:
    """The CRC-32 a version-2 vector store keeps with a row: over the id (length-prefixed), the
    vector's bytes and the metadata JSON, as UTF-8."""
    head = doc_id.encode("utf-8") if isinstance(doc_id, str) else doc_id
    tail = metadata.encode("utf-8") if isinstance(metadata, str) else metadata
    crc = zlib.crc32(len(head).to_bytes(4, "little") + head)
    return zlib.crc32(tail, zlib.crc32(vector, crc))


def checksum_matches(doc_id: object, vector: object, metadata: object, checksum: object) -> bool:
    """True when a stored row's parts are of the types written and match ``checksum``."""
    if not isinstance(doc_id, (str, bytes)) or not isinstance(vector, bytes) or not isinstance(metadata, (str, bytes)):
        return False
    return checksum == row_checksum(doc_id, vector, metadata)


def _unit(vector: Any, dimension: int | None, what: str) -> npt.NDArray[np.float32]:
    try:
        # float64 first: a value beyond float32's range would silently become infinity, and
        # the norm of large values would overflow (leaving a zero vector after division).
        v = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidInput(f"{what}: not a sequence of numbers ({exc})") from None
    if v.ndim != 1 or v.size == 0:
        raise InvalidInput(f"{what}: must be a flat, non-empty sequence of floats")
    if dimension is not None and v.size != dimension:
        raise InvalidInput(f"{what}: dimension {v.size} does not match the store's dimension {dimension}")
    finite = np.isfinite(v)
    if not finite.all():
        at = int(np.flatnonzero(~finite)[0])
        raise InvalidInput(f"{what}: contains NaN or infinity (value {v[at]!r} at position {at})")
    big = np.abs(v) > _FLOAT32_MAX
    if big.any():
        at = int(np.flatnonzero(big)[0])
        raise InvalidInput(f"{what}: value {v[at]!r} at position {at} is beyond the float32 range vectors are kept in")
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        raise InvalidInput(f"{what}: is all zeros (cosine similarity is undefined)")
    unit: npt.NDArray[np.float32] = (v / norm).astype(np.float32)
    return unit


def _similarities(matrix: Matrix, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    # A single-threaded SIMD loop, not BLAS: the product is memory-bound and a second BLAS thread
    # costs scheduler ticks on a busy machine (docs/benchmarks.md, "Vector search").
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query)
    return scores


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
        self._threshold = approximate_threshold
        self._ef_search = ef_search
        self._hnsw: _hnsw.HNSWIndex | None = None
        self._labels: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._hnsw_dirty = False
        self._warned_no_faiss = False
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
            self._db = Database(
                path,
                application_id=APPLICATION_ID,
                version=FORMAT_VERSION,
                schema=_SCHEMA,
                kind="vector store",
                readonly=readonly,
                create=create,
            )
            try:
                with self._db.guard() if readonly else self._db.write() as c:
                    stored = scalar(c, "SELECT value FROM meta WHERE key = 'dimension'")
                    if stored is None and dimension is not None and not readonly:
                        c.execute("UPDATE meta SET value = ? WHERE key = 'dimension'", (dimension,))
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
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInput(f"ef_search must be a positive integer, got {value!r}")
        with self._lock:
            self._ef_search = value
            if self._hnsw is not None:
                self._hnsw.ef_search = value

    @property
    def index_kind(self) -> str:
        """``"hnsw"`` while searches use the approximate index, else ``"exact"``."""
        return "exact" if self._hnsw is None else "hnsw"

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInput("this LocalVectorStore is closed")

    # -- loading and syncing ----------------------------------------------------------------

    def _load(self) -> None:
        assert self._db is not None
        with self._db.snapshot() as c:
            generation = scalar(c, _GENERATION)
            dimension = scalar(c, "SELECT value FROM meta WHERE key = 'dimension'")
            rows = c.execute("SELECT id, vector, metadata, checksum FROM vectors").fetchall()
        ids = [r[0] for r in rows]
        if self._dimension is not None and dimension is not None and dimension != self._dimension and self._ids:
            # Nothing GraphFuse does changes a store's dimension once it holds vectors: the file was replaced.
            raise StoreCorrupted(
                f"vector store {self._db.path!r} changed its dimension from {self._dimension} to {dimension} "
                f"while open (the file was replaced or rewritten by something else); {CHECK_HINT}"
            )
        if rows and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
            raise StoreCorrupted(
                f"vector store {self._db.path!r} holds {len(rows)} vectors but records no valid dimension "
                f"({dimension!r}); {CHECK_HINT}"
            )
        size = 4 * (dimension or 0)
        wrong = [r[0] for r in rows if not isinstance(r[1], bytes) or len(r[1]) != size]
        if wrong:
            shown = ", ".join(map(repr, wrong[:5])) + (" ..." if len(wrong) > 5 else "")
            raise StoreCorrupted(
                f"vector store {self._db.path!r}: {len(wrong)} stored vector(s) are not {dimension} float32 values "
                f"({shown}); {CHECK_HINT}"
            )
        # Each row was written with its checksum: one without (None) was written by something else.
        wrong = [r[0] for r in rows if not checksum_matches(*r)]
        if wrong:
            shown = ", ".join(map(repr, wrong[:5])) + (" ..." if len(wrong) > 5 else "")
            raise StoreCorrupted(
                f"vector store {self._db.path!r}: {len(wrong)} stored row(s) ({shown}) do not match their "
                f"checksum (the file was damaged, or written by something else); {CHECK_HINT}"
            )
        matrix = np.zeros((len(rows), dimension or 0), dtype=np.float32)
        for i, r in enumerate(rows):
            matrix[i] = np.frombuffer(r[1], dtype=np.float32)
        finite = np.isfinite(matrix).all(axis=1)
        if not finite.all():
            wrong = [ids[i] for i in np.flatnonzero(~finite)]
            shown = ", ".join(map(repr, wrong[:5])) + (" ..." if len(wrong) > 5 else "")
            raise StoreCorrupted(
                f"vector store {self._db.path!r}: {len(wrong)} stored vector(s) ({shown}) hold NaN or infinity; "
                f"{CHECK_HINT}"
            )
        where = f"vector store {self._db.path!r}: vector"
        metadata = [decode_metadata(r[2], f"{where} {r[0]!r}") for r in rows]
        with self._lock:
            self._dimension = dimension
            self._ids = ids
            self._position = {doc_id: i for i, doc_id in enumerate(ids)}
            self._metadata = metadata
            self._buffer = matrix
            self._metadata_index = None
            self._generation = generation
            self._hnsw, self._hnsw_dirty = None, False
            if self._wants_hnsw() and dimension is not None:
                self._attach(_hnsw.HNSWIndex.load(self._db.path, generation, dimension, self._ef_search))

    # -- the approximate index ----------------------------------------------------------------

    def _wants_hnsw(self) -> bool:
        if self._threshold is None or len(self._ids) < self._threshold:
            return False
        if _hnsw.faiss_available():
            return True
        if not self._warned_no_faiss:
            self._warned_no_faiss = True
            _log.warning(
                "%r: %d vectors reached the approximate-index threshold (%d) but faiss is not installed "
                "(pip install 'graphfuse[ann]'): searches stay exact",
                self,
                len(self._ids),
                self._threshold,
            )
        return False

    def _attach(self, index: _hnsw.HNSWIndex | None) -> None:
        """Use a loaded index if it covers exactly the store's rows (else it is stale)."""
        if index is None:
            return
        label_of = {doc_id: label for label, doc_id in enumerate(index.ids) if doc_id is not None}
        if len(label_of) != len(self._ids):
            return
        labels = np.fromiter((label_of.get(i, -1) for i in self._ids), dtype=np.int64, count=len(self._ids))
        if labels.size and labels.min() < 0:
            return
        self._hnsw, self._labels = index, labels

    def _build_hnsw(self) -> None:
        assert self._dimension is not None
        n = len(self._ids)
        _log.info("%r: building the approximate (HNSW) index over %d vectors", self, n)
        index = _hnsw.HNSWIndex(self._dimension, ef_search=self._ef_search)
        step = 65_536
        for start in range(0, n, step):
            index.add(self._ids[start : start + step], self._buffer[start : min(n, start + step)])
        self._hnsw, self._labels = index, np.arange(n, dtype=np.int64)
        self._hnsw_dirty = True
        self._save_hnsw()

    def _save_hnsw(self) -> None:
        if self._hnsw is not None and self._hnsw_dirty and self._db is not None and not self._db.readonly:
            self._hnsw.save(self._db.path, self._generation)
            self._hnsw_dirty = False

    def _save_hnsw_locked(self) -> None:
        with self._lock:
            self._save_hnsw()

    def _ensure_hnsw(self) -> bool:
        """Switch to (or refresh) the approximate index when the store is large enough."""
        if not self._wants_hnsw():
            if self._hnsw is not None:  # shrank below the threshold
                self._hnsw, self._hnsw_dirty = None, False
                if self._db is not None and not self._db.readonly:
                    _hnsw.drop(self._db.path)
                _log.info("%r: %d vectors, below the threshold again: exact search", self, len(self._ids))
            return False
        if self._hnsw is None:
            if self._threshold is not None and len(self._ids) >= self._threshold:
                _log.info(
                    "%r: %d vectors reached the approximate-index threshold (%d): switching to HNSW",
                    self,
                    len(self._ids),
                    self._threshold,
                )
            self._build_hnsw()
        elif self._hnsw.dead > _REBUILD_DEAD_SHARE * self._hnsw.size:
            self._build_hnsw()
        return True

    async def build_index(self) -> str:
        """Build (or load) the approximate index now if the store is large enough, and save it.

        Returns :attr:`index_kind`. Searches do this themselves when needed; call it after a
        bulk load to pay the build before the first query.
        """
        self._check_open()

        def build() -> str:
            with self._lock:
                self._sync()
                if self._ensure_hnsw():
                    self._save_hnsw()
                return self.index_kind

        return await asyncio.to_thread(build)

    def _sync(self) -> None:
        """Reload when another store object or process has written since we last looked."""
        if self._db is not None:
            with self._db.guard() as c:
                current = scalar(c, _GENERATION)
            if current != self._generation:
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
                v = _unit(r.vector, dimension, f"vector {r.id!r}")
                dimension = v.size
                ids.append(r.id)
                vectors.append(v)
                metadata.append(encode_metadata(r.metadata, f"vector {r.id!r}"))
            block = np.vstack(vectors)
            assert dimension is not None  # the batch is non-empty
            if self._db is not None:
                with self._db.write() as c:
                    stored = scalar(c, "SELECT value FROM meta WHERE key = 'dimension'")
                    if stored is not None and stored != dimension:
                        # Another process fixed the dimension after our last sync.
                        raise InvalidInput(
                            f"vector store {self._db.path!r}: dimension {dimension} does not match the "
                            f"store's dimension {stored}"
                        )
                    behind = scalar(c, _GENERATION) != self._generation
                    c.execute("UPDATE meta SET value = ? WHERE key = 'dimension'", (dimension,))
                    rows = [(i, v.tobytes(), m) for i, v, m in zip(ids, vectors, metadata, strict=True)]
                    c.executemany(_UPSERT, [(*r, row_checksum(*r)) for r in rows])
                    c.execute(_BUMP)
                    generation = scalar(c, _GENERATION)
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
        if self._hnsw is not None:
            if old:
                self._hnsw.remove(self._labels[rows])
            added = self._hnsw.add(ids, block)
            labels = np.concatenate([self._labels, np.full(len(new), -1, dtype=np.int64)])
            for k, i in enumerate(new):
                labels[n + k] = added[i]
            if old:
                labels[rows] = added[old]
            self._labels = labels
            self._hnsw_dirty = True

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
                deleted = 0
                with self._db.write() as c:
                    behind = scalar(c, _GENERATION) != self._generation
                    for part in chunks(gone):
                        sql = f"DELETE FROM vectors WHERE id IN ({','.join('?' * len(part))})"
                        deleted += c.execute(sql, part).rowcount
                    c.execute(_BUMP)
                    generation = scalar(c, _GENERATION)
                if behind:
                    self._load()  # as in _upsert: another writer got in between
                    return deleted
                self._generation = generation
            else:
                self._generation += 1
            drop = {self._position[i] for i in gone}
            keep = [row for row in range(len(self._ids)) if row not in drop]
            if self._hnsw is not None:
                self._hnsw.remove(self._labels[sorted(drop)])
                self._labels = self._labels[keep]
                self._hnsw_dirty = True
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
        return int(await asyncio.to_thread(self._file_generation))

    def _file_generation(self) -> int:
        assert self._db is not None
        with self._db.guard() as c:
            return int(scalar(c, _GENERATION))

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
        query = _unit(vector, None, "query vector")
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
            if ids and limit and not exact and self._ensure_hnsw():
                return self._search_hnsw(query, limit, rows, min_score)
        if not ids or limit == 0:
            return []
        if rows is None:
            scores = _similarities(matrix, query)
        elif rows.size < _GATHER_SHARE * len(ids):
            scores = _similarities(matrix[rows], query)
        else:
            scores = _similarities(matrix, query)[rows]
        if min_score is not None:
            keep = np.flatnonzero(scores >= min_score)
            rows = keep if rows is None else rows[keep]
            scores = scores[keep]
        k = min(limit, scores.size)
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.lexsort((top, -scores[top]))]
        found = top if rows is None else rows[top]
        return [
            VectorHit(ids[row], min(1.0, max(-1.0, s)))
            for row, s in zip(found.tolist(), scores[top].tolist(), strict=True)
        ]

    def _search_hnsw(
        self, query: npt.NDArray[np.float32], limit: int, rows: npt.NDArray[np.int64] | None, min_score: float | None
    ) -> list[VectorHit]:
        assert self._hnsw is not None
        if rows is not None and rows.size == 0:
            return []
        allowed = None if rows is None else self._labels[rows]
        scores, labels = self._hnsw.search(query, limit, allowed)
        ids = self._hnsw.ids
        hits = [
            VectorHit(doc_id, min(1.0, max(-1.0, s)))
            for label, s in zip(labels.tolist(), scores.tolist(), strict=True)
            if (doc_id := ids[label]) is not None
        ]
        return hits if min_score is None else [h for h in hits if h.score >= min_score]

    async def close(self) -> None:
        """Save a changed approximate index, then close the database (idempotent).

        An in-memory store drops its vectors.
        """
        if not self._closed:
            self._closed = True
            if self._db is not None:
                try:
                    await asyncio.to_thread(self._save_hnsw_locked)
                finally:
                    self._db.close()

    async def __aenter__(self) -> LocalVectorStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"LocalVectorStore({self.path!r}, dimension={self._dimension})"
