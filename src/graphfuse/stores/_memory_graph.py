"""InMemoryGraphStore: a dict-backed GraphStore with the exact semantics of SQLiteGraphStore."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._core._errors import InvalidInput, NotFound
from .._core._filters import FilterLike
from .._core._types import Document, RelatedDocument, Relation, check_id
from ._graph_index import GraphIndex
from ._records import (
    check_depth,
    check_ids,
    check_limit,
    check_relation_types,
    check_relations,
    document_rows,
    parse_filter,
    row_to_document,
)

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["InMemoryGraphStore"]


class InMemoryGraphStore:
    """A graph store in process memory: a fake for your tests, not for production.

    It validates, rejects and answers exactly like :class:`SQLiteGraphStore` (documents go
    through the same JSON encoding, so what you read back is what SQLite would return), and
    it shares the same traversal and PageRank code. Nothing is persisted.
    """

    in_memory_only = True
    """Its async methods never suspend (no I/O, no thread hop): stages over it may run inline."""

    def __init__(self) -> None:
        self._documents: dict[str, Document] = {}
        # (source, target, type) -> (relation, metadata JSON)
        self._relations: dict[tuple[str, str, str], tuple[Relation, str]] = {}
        self._lock = threading.RLock()
        self._index: GraphIndex | None = None
        self._generation = 0
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidInput("this InMemoryGraphStore is closed")

    def _changed(self) -> None:
        self._index = None
        self._generation += 1

    async def generation(self) -> int:
        """A counter that changes with every write: a cache stamp (:class:`~graphfuse.Versioned`)."""
        self._check_open()
        return self._generation

    async def store_documents(self, documents: Sequence[Document]) -> None:
        """Upsert documents by id, atomically (a bad batch raises ``InvalidInput``, writes nothing)."""
        self._check_open()
        decoded = [row_to_document(row) for row in document_rows(documents)]
        if decoded:
            with self._lock:
                for doc in decoded:
                    self._documents[doc.id] = doc
                self._changed()

    async def get_document(self, id: str) -> Document:
        """The document ``id``; ``NotFound`` when it does not exist."""
        self._check_open()
        check_id(id)
        with self._lock:
            doc = self._documents.get(id)
        if doc is None:
            raise NotFound(f"document {id!r} not found")
        return doc

    async def get_documents(self, ids: Sequence[str], *, filter: FilterLike | None = None) -> dict[str, Document]:
        """Documents by id in input order, omitting missing ids and those ``filter`` rejects."""
        self._check_open()
        wanted = check_ids(ids)
        flt = parse_filter(filter)
        with self._lock:
            found = [self._documents.get(i) for i in wanted]
        return {d.id: d for d in found if d is not None and (flt is None or flt.matches(d.metadata))}

    async def delete_documents(self, ids: Sequence[str]) -> int:
        """Delete documents and every relation touching them; returns how many existed."""
        self._check_open()
        wanted = set(check_ids(ids))
        with self._lock:
            gone = wanted & self._documents.keys()
            if gone:
                for doc_id in gone:
                    del self._documents[doc_id]
                for key in [k for k in self._relations if k[0] in gone or k[1] in gone]:
                    del self._relations[key]
                self._changed()
        return len(gone)

    def iter_documents(self, *, filter: FilterLike | None = None, batch_size: int = 1000) -> AsyncIterator[Document]:
        """Every document (matching ``filter``), in the order they were first stored.

        Same contract as :meth:`SQLiteGraphStore.iter_documents`; here the documents are
        those present when the iteration starts.
        """
        self._check_open()
        flt = parse_filter(filter)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        with self._lock:
            documents = list(self._documents.values())

        async def generate() -> AsyncIterator[Document]:
            for doc in documents:
                if flt is None or flt.matches(doc.metadata):
                    yield doc

        return generate()

    async def count_documents(self) -> int:
        """How many documents the store holds."""
        return len(self._documents)

    async def count_relations(self) -> int:
        """How many relations the store holds."""
        return len(self._relations)

    async def create_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations, idempotent per (source, target, type); re-creating updates weight/metadata.

        A relation to a missing document raises ``NotFound``, a self-loop ``InvalidInput``;
        either way nothing of the batch is written.
        """
        self._check_open()
        batch = check_relations(relations)
        with self._lock:
            for r, _ in batch.values():
                for end in (r.source, r.target):
                    if end not in self._documents:
                        raise NotFound(f"relation {r.source!r} -[{r.type}]-> {r.target!r}: document {end!r} not found")
            if batch:
                self._relations.update(batch)
                self._changed()

    async def delete_relations(self, relations: Sequence[Relation]) -> int:
        """Delete relations matched by (source, target, type); returns how many existed."""
        self._check_open()
        batch = check_relations(relations)
        with self._lock:
            deleted = sum(self._relations.pop(key, None) is not None for key in batch)
            if deleted:
                self._changed()
        return deleted

    async def relations(self, ids: Sequence[str], *, limit: int | None = None) -> list[Relation]:
        """Same contract as :meth:`SQLiteGraphStore.relations`."""
        self._check_open()
        wanted = set(check_ids(ids))
        limit = check_limit(limit)
        with self._lock:
            out = [
                Relation(r.source, r.target, r.type, r.weight, r.metadata)
                for r, _ in self._relations.values()
                if r.source in wanted or r.target in wanted
            ]
        if limit is not None and len(out) > limit:
            out = sorted(out, key=lambda r: -r.weight)[:limit]
        return sorted(out, key=lambda r: (r.source, r.target, r.type))

    async def related(
        self,
        ids: Sequence[str],
        *,
        depth: int = 2,
        filter: FilterLike | None = None,
        relation_types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[RelatedDocument]:
        """Same contract as :meth:`SQLiteGraphStore.related`."""
        self._check_open()
        seeds = check_ids(ids)
        depth = check_depth(depth)
        flt = parse_filter(filter)
        types = check_relation_types(relation_types)
        limit = check_limit(limit)
        if not seeds:
            return []
        index = self._current_index()
        allowed = None if flt is None else index.metadata_mask(flt)
        return index.related(seeds, depth, allowed, types, limit)

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]:
        """Same contract as :meth:`SQLiteGraphStore.pagerank`."""
        self._check_open()
        wanted = None if ids is None else check_ids(ids)
        return self._current_index().scores(wanted)

    async def refresh_pagerank(self) -> None:
        """Compute PageRank now (kept until the next write)."""
        self._check_open()
        self._current_index().pagerank()

    async def adjacency(self, relation_types: Sequence[str] | None = None) -> tuple[tuple[str, ...], sp.csr_matrix]:
        """Same contract as :meth:`SQLiteGraphStore.adjacency`."""
        self._check_open()
        types = check_relation_types(relation_types)
        index = self._current_index()
        return index.id_tuple, index.matrix(types)

    async def metadata_mask(self, filter: FilterLike) -> tuple[tuple[str, ...], npt.NDArray[np.bool_]]:
        """Same contract as :meth:`SQLiteGraphStore.metadata_mask`."""
        self._check_open()
        flt = parse_filter(filter)
        index = self._current_index()
        if flt is None:
            return index.id_tuple, np.ones(len(index.ids), dtype=np.bool_)
        return index.id_tuple, index.metadata_mask(flt)

    def _current_index(self) -> GraphIndex:
        with self._lock:
            if self._index is None:
                ids = list(self._documents)
                position = {doc_id: i for i, doc_id in enumerate(ids)}
                rels = [r for r, _ in self._relations.values()]
                type_codes: dict[str, int] = {}
                m = len(rels)
                docs = [self._documents[i].metadata for i in ids]
                self._index = GraphIndex(
                    ids,
                    np.fromiter((position[r.source] for r in rels), np.int64, m),
                    np.fromiter((position[r.target] for r in rels), np.int64, m),
                    np.fromiter((type_codes.setdefault(r.type, len(type_codes)) for r in rels), np.int64, m),
                    list(type_codes),
                    np.fromiter((r.weight for r in rels), np.float64, m),
                    lambda: docs,
                )
            return self._index

    async def close(self) -> None:
        """Mark the store closed; later calls raise ``InvalidInput``."""
        self._closed = True

    def __repr__(self) -> str:
        return f"InMemoryGraphStore(documents={len(self._documents)}, relations={len(self._relations)})"
