"""SQLiteGraphStore: documents and typed relations in SQLite, traversal over an in-memory CSR."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._core._errors import ConnectionFailed, InvalidInput, NotFound
from .._core._filters import FilterLike
from .._core._types import Document, RelatedDocument, Relation, check_id
from ..defaults import DOCUMENT_CACHE_CHARS
from ._document_cache import DocumentCache
from ._graph_index import GraphIndex
from ._records import (
    check_depth,
    check_ids,
    check_limit,
    check_relation_types,
    check_relations,
    decode_metadata,
    document_rows,
    parse_filter,
    row_to_document,
)
from ._sqlite import Database, chunks, scalar

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["SQLiteGraphStore"]

APPLICATION_ID = 0x47464701  # "GFG" + 1: a GraphFuse graph store
FORMAT_VERSION = 1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta VALUES ('generation', 0), ('pagerank_generation', -1);
CREATE TABLE documents (
    node INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    content TEXT,
    metadata TEXT NOT NULL,
    created_at TEXT,
    updated_at TEXT
);
CREATE TABLE relations (
    source INTEGER NOT NULL REFERENCES documents(node) ON DELETE CASCADE,
    target INTEGER NOT NULL REFERENCES documents(node) ON DELETE CASCADE,
    type TEXT NOT NULL,
    weight REAL NOT NULL,
    metadata TEXT NOT NULL,
    PRIMARY KEY (source, target, type),
    CHECK (source <> target)
) WITHOUT ROWID;
CREATE INDEX relations_by_target ON relations(target);
CREATE TABLE pagerank (
    node INTEGER PRIMARY KEY REFERENCES documents(node) ON DELETE CASCADE,
    score REAL NOT NULL
)
"""

_STALE_RETRIES = 5
_BUMP = "UPDATE meta SET value = value + 1 WHERE key = 'generation'"
_GENERATION = "SELECT value FROM meta WHERE key = 'generation'"
_UPSERT = (
    "INSERT INTO documents (id, content, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT(id) DO UPDATE SET content = excluded.content, metadata = excluded.metadata, "
    "created_at = excluded.created_at, updated_at = excluded.updated_at"
)
_SELECT_DOCS = "SELECT id, content, metadata, created_at, updated_at FROM documents WHERE id IN ({})"


class SQLiteGraphStore:
    """The embedded graph store: SQLite (WAL) is the source of truth, a CSR serves traversal.

    ``path`` is a file (created if missing) or ``":memory:"``. Every write is one
    transaction and bumps a generation counter in the file; reads compare it with the
    generation their in-memory adjacency was built at, so writes by this store, by another
    store object or by another process are all seen. The adjacency (and PageRank) is
    rebuilt lazily on the first traversal after a write: batch your writes.

    Safe to share across threads and tasks; several processes may read while one writes.
    ``readonly=True`` opens an existing file for reading only (it works on a read-only file
    or directory): writes raise ``InvalidInput`` and PageRank is computed in memory.
    ``create=False`` refuses a missing or empty file (``StoreCorrupted``) instead of
    initialising it: a store directory opens its files so, since they exist once it was created.
    Documents read are kept decoded for the file's current generation, up to
    ``document_cache`` characters (:data:`~graphfuse.defaults.DOCUMENT_CACHE_CHARS`; 0 keeps
    none): a write by anyone empties it, so a read never returns what was overwritten.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        readonly: bool = False,
        create: bool = True,
        document_cache: int = DOCUMENT_CACHE_CHARS,
    ) -> None:
        if isinstance(document_cache, bool) or not isinstance(document_cache, int) or document_cache < 0:
            raise InvalidInput(f"document_cache must be a number of characters >= 0, got {document_cache!r}")
        self._db = Database(
            path,
            application_id=APPLICATION_ID,
            version=FORMAT_VERSION,
            schema=_SCHEMA,
            kind="graph store",
            readonly=readonly,
            create=create,
        )
        # (index, generation it was built at), replaced as one object so readers never mix them.
        self._cached: tuple[GraphIndex, int] | None = None
        self._index_lock = threading.Lock()
        self._documents = DocumentCache(document_cache)
        self._closed = False

    @property
    def path(self) -> str:
        """The database file (or ``":memory:"``)."""
        return self._db.path

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInput("this SQLiteGraphStore is closed")

    # -- documents -------------------------------------------------------------------------

    async def store_documents(self, documents: Sequence[Document]) -> None:
        """Upsert documents by id, atomically (a bad batch raises ``InvalidInput``, writes nothing)."""
        self._check_open()
        rows = document_rows(documents)
        if rows:
            await asyncio.to_thread(self._store_documents, rows)

    def _store_documents(self, rows: list[Any]) -> None:
        with self._db.write() as c:
            c.executemany(_UPSERT, rows)
            c.execute(_BUMP)

    async def get_document(self, id: str) -> Document:
        """The document ``id``; ``NotFound`` when it does not exist."""
        check_id(id)
        found = await self.get_documents([id])
        if id not in found:
            raise NotFound(f"document {id!r} not found")
        return found[id]

    async def get_documents(self, ids: Sequence[str], *, filter: FilterLike | None = None) -> dict[str, Document]:
        """Documents by id in input order, omitting missing ids and those ``filter`` rejects."""
        self._check_open()
        wanted = list(dict.fromkeys(check_ids(ids)))
        flt = parse_filter(filter)
        if not wanted:
            return {}
        generation = self._generation_now()
        found, missing = self._documents.lookup(wanted, generation) if generation is not None else ({}, wanted)
        if missing:
            read, rows = await asyncio.to_thread(self._select_documents, missing, wanted, generation)
            if read != generation:
                found = {}  # another generation than the cached documents': all of them read again
            where = f"graph store {self.path!r}"
            decoded = [(row_to_document(row, where), len(row[2])) for row in rows.values()]
            self._documents.add(decoded, read)
            found.update((doc.id, doc) for doc, _ in decoded)
        out: dict[str, Document] = {}
        for doc_id in wanted:
            doc = found.get(doc_id)
            if doc is not None and (flt is None or flt.matches(doc.metadata)):
                out[doc_id] = doc
        return out

    def _select_documents(
        self, missing: list[str], wanted: list[str], generation: int | None
    ) -> tuple[int, dict[str, tuple[Any, ...]]]:
        """The file's generation and the rows of ``missing`` (of all ``wanted`` when the file is
        no longer at ``generation``), read in one snapshot."""
        rows: dict[str, tuple[Any, ...]] = {}
        with self._db.snapshot() as c:
            read = int(scalar(c, _GENERATION))
            for part in chunks(missing if read == generation else wanted):
                for row in c.execute(_SELECT_DOCS.format(",".join("?" * len(part))), part):
                    rows[row[0]] = row
        return read, rows

    def _generation_now(self) -> int | None:
        """The file's generation read on the caller's thread, or ``None`` if the connection is busy.

        Reading it is one indexed row from SQLite's page cache; if another thread holds the
        connection (a long write), the caller takes the worker-thread path instead of blocking
        the event loop.
        """
        if not self._db.lock.acquire(blocking=False):
            return None
        try:
            return int(scalar(self._db.conn, _GENERATION))
        except sqlite3.Error:
            return None  # the worker-thread path reports it properly
        finally:
            self._db.lock.release()

    def iter_documents(self, *, filter: FilterLike | None = None, batch_size: int = 1000) -> AsyncIterator[Document]:
        """Every document (matching ``filter``), in the order they were first stored.

        ``async for doc in store.iter_documents(): ...`` reads ``batch_size`` documents per
        query (each in a worker thread), so the whole store is never in memory at once. Writes
        made during the iteration do not break it: each document is yielded at most once, a
        document stored or deleted meanwhile may or may not be seen, and an updated one is seen
        in the version current when its batch is read. Bad arguments raise ``InvalidInput``
        here, before the iteration starts.
        """
        self._check_open()
        flt = parse_filter(filter)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")

        async def generate() -> AsyncIterator[Document]:
            after = 0
            while True:
                self._check_open()
                rows = await asyncio.to_thread(self._document_page, after, batch_size)
                for row in rows:
                    doc = row_to_document(row[1:], f"graph store {self.path!r}")
                    if flt is None or flt.matches(doc.metadata):
                        yield doc
                if len(rows) < batch_size:
                    return
                after = rows[-1][0]

        return generate()

    def _document_page(self, after: int, size: int) -> list[tuple[Any, ...]]:
        # Keyset pagination on the node number: an upsert keeps a document's node, so no
        # document moves behind the cursor.
        with self._db.guard() as c:
            return c.execute(
                "SELECT node, id, content, metadata, created_at, updated_at FROM documents "
                "WHERE node > ? ORDER BY node LIMIT ?",
                (after, size),
            ).fetchall()

    async def delete_documents(self, ids: Sequence[str]) -> int:
        """Delete documents and every relation touching them; returns how many existed."""
        self._check_open()
        wanted = list(dict.fromkeys(check_ids(ids)))
        return await asyncio.to_thread(self._delete_documents, wanted) if wanted else 0

    def _delete_documents(self, ids: list[str]) -> int:
        deleted = 0
        with self._db.write() as c:
            for part in chunks(ids):
                deleted += c.execute(f"DELETE FROM documents WHERE id IN ({','.join('?' * len(part))})", part).rowcount
            if deleted:
                c.execute(_BUMP)
        return deleted

    async def count_documents(self) -> int:
        """How many documents the store holds."""
        self._check_open()
        return int(await asyncio.to_thread(self._scalar, "SELECT count(*) FROM documents"))

    async def count_relations(self) -> int:
        """How many relations the store holds."""
        self._check_open()
        return int(await asyncio.to_thread(self._scalar, "SELECT count(*) FROM relations"))

    async def generation(self) -> int:
        """A counter that changes with every write to the file (by any process): a cache stamp."""
        self._check_open()
        return int(await asyncio.to_thread(self._scalar, _GENERATION))

    def _scalar(self, sql: str) -> Any:
        with self._db.guard() as c:
            return scalar(c, sql)

    # -- relations -------------------------------------------------------------------------

    async def create_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, idempotent per (source, target, type); re-creating updates weight/metadata.

        A relation to a missing document raises ``NotFound``, a self-loop ``InvalidInput``;
        either way nothing of the batch is written.
        """
        self._check_open()
        batch = check_relations(relations)
        if batch:
            await asyncio.to_thread(self._create_relations, list(batch.values()))

    def _nodes(self, c: sqlite3.Connection, ids: list[str]) -> dict[str, int]:
        nodes: dict[str, int] = {}
        for part in chunks(ids):
            nodes.update(c.execute(f"SELECT id, node FROM documents WHERE id IN ({','.join('?' * len(part))})", part))
        return nodes

    def _create_relations(self, relations: list[tuple[Relation, str]]) -> None:
        ids = list(dict.fromkeys(i for r, _ in relations for i in (r.source, r.target)))
        # Every end is checked inside the same transaction, so SQLite's per-row foreign-key
        # checks would only repeat that work (they double the insert time); they stay on for
        # everything else, ON DELETE CASCADE included.
        with self._db.write(foreign_keys=False) as c:
            nodes = self._nodes(c, ids)
            for r, _ in relations:
                for end in (r.source, r.target):
                    if end not in nodes:
                        raise NotFound(f"relation {r.source!r} -[{r.type}]-> {r.target!r}: document {end!r} not found")
            c.executemany(
                "INSERT INTO relations (source, target, type, weight, metadata) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(source, target, type) DO UPDATE SET "
                "weight = excluded.weight, metadata = excluded.metadata",
                [(nodes[r.source], nodes[r.target], r.type, float(r.weight), m) for r, m in relations],
            )
            c.execute(_BUMP)

    async def delete_relations(self, relations: Sequence[Relation]) -> int:
        """Delete relations matched by (source, target, type); returns how many existed."""
        self._check_open()
        batch = check_relations(relations)
        return await asyncio.to_thread(self._delete_relations, list(batch)) if batch else 0

    def _delete_relations(self, keys: list[tuple[str, str, str]]) -> int:
        with self._db.write() as c:
            nodes = self._nodes(c, list({i for k in keys for i in k[:2]}))
            params = [(nodes[s], nodes[t], typ) for s, t, typ in keys if s in nodes and t in nodes]
            deleted = 0
            for p in params:
                deleted += c.execute("DELETE FROM relations WHERE source = ? AND target = ? AND type = ?", p).rowcount
            if deleted:
                c.execute(_BUMP)
        return deleted

    async def relations(self, ids: Sequence[str], *, limit: int | None = None) -> list[Relation]:
        """The relations touching any of ``ids`` (either end), sorted by (source, target, type).

        Used to serialize a neighbourhood (:mod:`graphfuse.context`); unknown ids are ignored.
        ``limit`` caps how many are returned (the strongest first when capped).
        """
        self._check_open()
        wanted = list(dict.fromkeys(check_ids(ids)))
        limit = check_limit(limit)
        if not wanted:
            return []
        rows = await asyncio.to_thread(self._select_relations, wanted)
        where = f"graph store {self.path!r}: relation"
        out = [
            Relation(s, t, typ, w, decode_metadata(m, f"{where} {s!r} -[{typ}]-> {t!r}")) for s, t, typ, w, m in rows
        ]
        if limit is not None and len(out) > limit:
            out = sorted(out, key=lambda r: -r.weight)[:limit]
        return sorted(out, key=lambda r: (r.source, r.target, r.type))

    def _select_relations(self, ids: list[str]) -> list[tuple[Any, ...]]:
        rows: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        sql = (
            "SELECT s.id, t.id, r.type, r.weight, r.metadata FROM relations r "
            "JOIN documents s ON s.node = r.source JOIN documents t ON t.node = r.target "
            "WHERE r.{end} IN (SELECT node FROM documents WHERE id IN ({marks}))"
        )
        with self._db.snapshot() as c:
            for part in chunks(ids):
                marks = ",".join("?" * len(part))
                for end in ("source", "target"):
                    for row in c.execute(sql.format(end=end, marks=marks), part):
                        rows[(row[0], row[1], row[2])] = row
        return list(rows.values())

    # -- traversal and PageRank -------------------------------------------------------------

    async def related(
        self,
        ids: Sequence[str],
        *,
        depth: int = 2,
        filter: FilterLike | None = None,
        relation_types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[RelatedDocument]:
        """Documents within ``depth`` hops (1-3) of any seed, closest first then by id.

        Relations are followed in both directions; seeds are excluded from the result and
        unknown seeds are ignored. With ``filter``, a document that does not match is neither
        returned nor passed through (seeds themselves are always expanded).
        """
        self._check_open()
        seeds = check_ids(ids)
        depth = check_depth(depth)
        flt = parse_filter(filter)
        types = check_relation_types(relation_types)
        limit = check_limit(limit)
        if not seeds:
            return []

        fresh = self._fresh_index()
        if fresh is not None and (flt is None or fresh.has_metadata):
            # Traversal over the current in-memory CSR is sub-millisecond work: run it inline.
            allowed = None if flt is None else fresh.metadata_mask(flt)
            return fresh.related(seeds, depth, allowed, types, limit)

        def run() -> list[RelatedDocument]:
            for _ in range(_STALE_RETRIES):
                index = self._current_index()[0]
                try:
                    allowed = None if flt is None else index.metadata_mask(flt)
                except _Stale:
                    continue
                return index.related(seeds, depth, allowed, types, limit)
            raise ConnectionFailed(f"graph store {self.path!r} kept changing during a filtered traversal")

        return await asyncio.to_thread(run)

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]:
        """PageRank (damping 0.85, max normalised to 1) of ``ids`` (all when ``None``).

        Computed on first use after a write and cached; :meth:`refresh_pagerank` computes and
        persists it so other processes and later runs read it without building the graph.
        """
        self._check_open()
        wanted = None if ids is None else check_ids(ids)
        if wanted is not None and not wanted:
            return {}
        fresh = self._fresh_index()
        if fresh is not None and fresh.has_pagerank:
            return fresh.scores(wanted)
        return await asyncio.to_thread(self._pagerank, wanted)

    def _pagerank(self, ids: list[str] | None) -> dict[str, float]:
        with self._db.guard() as c:
            generation = scalar(c, _GENERATION)
            cached = self._cached
            if cached is None or cached[1] != generation:
                stored = self._stored_pagerank(c, generation, ids)
                if stored is not None:
                    return stored
        return self._current_index()[0].scores(ids)

    def _stored_pagerank(
        self, c: sqlite3.Connection, generation: int, ids: list[str] | None
    ) -> dict[str, float] | None:
        if scalar(c, "SELECT value FROM meta WHERE key = 'pagerank_generation'") != generation:
            return None
        sql = "SELECT d.id, p.score FROM pagerank p JOIN documents d ON d.node = p.node"
        if ids is None:
            return dict(c.execute(sql).fetchall())
        out: dict[str, float] = {}
        for part in chunks(list(dict.fromkeys(ids))):
            out.update(c.execute(f"{sql} WHERE d.id IN ({','.join('?' * len(part))})", part))
        return {i: out[i] for i in ids if i in out}

    async def refresh_pagerank(self) -> None:
        """Compute PageRank now and persist it in the database (skipped if a write intervenes)."""
        self._check_open()
        await asyncio.to_thread(self._refresh_pagerank)

    def _refresh_pagerank(self) -> None:
        if self._db.readonly:
            return  # computed on demand instead (pagerank() caches it in memory)
        index, generation = self._current_index()
        scores = index.pagerank()
        with self._db.write() as c:
            if scalar(c, "SELECT value FROM meta WHERE key = 'pagerank_generation'") == generation:
                return
            if scalar(c, _GENERATION) != generation:
                return
            nodes = self._nodes(c, index.ids)
            c.execute("DELETE FROM pagerank")
            c.executemany(
                "INSERT INTO pagerank (node, score) VALUES (?, ?)",
                ((nodes[i], s) for i, s in zip(index.ids, scores.tolist(), strict=True)),
            )
            c.execute("UPDATE meta SET value = ? WHERE key = 'pagerank_generation'", (generation,))

    async def adjacency(self, relation_types: Sequence[str] | None = None) -> tuple[tuple[str, ...], sp.csr_matrix]:
        """``(ids, matrix)``: the whole graph as a directed, weighted sparse adjacency.

        ``matrix`` is an ``n x n`` :class:`scipy.sparse.csr_matrix` over ``ids`` (every
        document, in storage order) whose ``[i, j]`` is the summed weight of the relations
        ``ids[i] -> ids[j]`` (several types between one pair add up); with ``relation_types``,
        only relations of those types count. It is a snapshot of the current generation:
        later writes do not change it (call again to see them), and the same objects are
        returned until the graph changes, so callers can cache what they derive from it by
        identity. Both are shared: the ids are a tuple and the matrix's arrays are read-only.
        Building it after a write runs in a worker thread; a current one is returned inline.
        """
        self._check_open()
        types = check_relation_types(relation_types)
        fresh = self._fresh_index()
        if fresh is not None:
            matrix = fresh.cached_matrix(types)
            if matrix is not None:
                return fresh.id_tuple, matrix

        def build() -> tuple[tuple[str, ...], sp.csr_matrix]:
            index = self._current_index()[0]
            return index.id_tuple, index.matrix(types)

        return await asyncio.to_thread(build)

    async def metadata_mask(self, filter: FilterLike) -> tuple[tuple[str, ...], npt.NDArray[np.bool_]]:
        """``(ids, mask)``: which documents match ``filter``, over the ids of :meth:`adjacency`.

        ``mask[i]`` is True when ``ids[i]``'s metadata matches (the semantics of
        :meth:`~graphfuse.MetadataFilter.matches`, evaluated on typed columns). ``ids`` is the
        same tuple :meth:`adjacency` returns for the same generation of the graph.
        """
        self._check_open()
        flt = parse_filter(filter)

        def run() -> tuple[tuple[str, ...], npt.NDArray[np.bool_]]:
            for _ in range(_STALE_RETRIES):
                index = self._current_index()[0]
                if flt is None:
                    return index.id_tuple, np.ones(len(index.ids), dtype=np.bool_)
                try:
                    return index.id_tuple, index.metadata_mask(flt)
                except _Stale:
                    continue
            raise ConnectionFailed(f"graph store {self.path!r} kept changing while a filter was evaluated")

        return await asyncio.to_thread(run)

    def _fresh_index(self) -> GraphIndex | None:
        """The cached index if it matches the database's generation, checked without waiting
        (:meth:`_generation_now`)."""
        cached = self._cached
        if cached is None:
            return None
        generation = self._generation_now()
        return cached[0] if generation is not None and generation == cached[1] else None

    def _current_index(self) -> tuple[GraphIndex, int]:
        """The adjacency for the database's current generation, rebuilt if it is stale."""
        with self._index_lock:
            with self._db.guard() as c:
                generation = scalar(c, _GENERATION)
            cached = self._cached
            if cached is None or cached[1] != generation:
                previous = cached
                cached = self._cached = self._build_index()
                if previous is not None:
                    cached[0].warm_from(previous[0])
            return cached

    def _build_index(self) -> tuple[GraphIndex, int]:
        # Relations come back as four comma-joined strings parsed by numpy in C, not as one Python
        # tuple per relation (millions of objects). Relation types cannot contain commas.
        with self._db.snapshot() as c:
            generation = scalar(c, _GENERATION)
            nodes_ids = c.execute("SELECT node, id FROM documents ORDER BY node").fetchall()
            joined = c.execute(
                "SELECT group_concat(source), group_concat(target), group_concat(type), group_concat(weight) "
                "FROM relations"
            ).fetchone()
        ids = [r[1] for r in nodes_ids]
        nodes = np.fromiter((r[0] for r in nodes_ids), np.int64, len(nodes_ids))
        # node number -> position in ids (node numbers are rowids: sparse after deletions)
        lookup = np.full(int(nodes[-1]) + 1 if len(nodes) else 1, -1, dtype=np.int64)
        lookup[nodes] = np.arange(len(nodes))
        sources = lookup[_parse(joined[0], np.int64)]
        targets = lookup[_parse(joined[1], np.int64)]
        names = joined[2].split(",") if joined[2] else []
        type_codes = {t: i for i, t in enumerate(sorted(set(names)))}
        codes = np.fromiter(map(type_codes.__getitem__, names), np.int64, len(names))
        weights = _parse(joined[3], np.float64)
        db = self._db

        def metadata() -> list[dict[str, Any]]:
            # Loaded only when a filtered traversal needs it, from the same generation.
            with db.snapshot() as c:
                if scalar(c, _GENERATION) != generation:
                    raise _Stale
                rows = c.execute("SELECT id, metadata FROM documents ORDER BY node").fetchall()
            return [decode_metadata(r[1], f"graph store {db.path!r}: document {r[0]!r}") for r in rows]

        index = GraphIndex(ids, sources, targets, codes, list(type_codes), weights, metadata)
        return index, generation

    async def close(self) -> None:
        """Close the database connection (idempotent)."""
        if not self._closed:
            self._closed = True
            self._db.close()

    async def __aenter__(self) -> SQLiteGraphStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"SQLiteGraphStore({self.path!r})"


def _parse(joined: str | None, dtype: type[np.int64] | type[np.float64]) -> Any:
    """Numbers from a ``group_concat`` string (``None`` for an empty table)."""
    if not joined:
        return np.zeros(0, dtype=dtype)
    return np.fromstring(joined, dtype=dtype, sep=",")


class _Stale(Exception):
    """Internal: the database moved on while a lazily loaded part of the index was read."""
