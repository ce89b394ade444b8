"""When and how the vector store answers from its approximate (HNSW) index.

The store switches to the index at a size threshold (faiss installed), builds or reloads it,
keeps it in step with its own writes (a label per row; removed rows are tombstones, rebuilt
past a share of them) and saves it beside the SQLite file for the next open.
"""

from __future__ import annotations

import logging

import numpy as np
import numpy.typing as npt

from .._core._types import VectorHit
from . import _hnsw
from ._sqlite import Database
from ._vector_matrix import Matrix

__all__ = ["Approximate"]

# Rebuild the approximate index once this share of its labels are tombstones.
_REBUILD_DEAD_SHARE = 0.25

_log = logging.getLogger("graphfuse.stores.vectors")


class Approximate:
    """The approximate index of one store (``index`` is ``None`` while searches are exact).

    ``labels[row]`` is the index label of the store's row ``row``. The caller holds the
    store's lock around every call.
    """

    def __init__(self, threshold: int | None, ef_search: int) -> None:
        self.threshold = threshold
        self._ef_search = ef_search
        self.index: _hnsw.HNSWIndex | None = None
        self.labels: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.dirty = False
        self._warned_no_faiss = False

    @property
    def ef_search(self) -> int:
        """The search beam, applied to the index now and to any built later."""
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        self._ef_search = value
        if self.index is not None:
            self.index.ef_search = value

    def forget(self) -> None:
        """Drop the index from memory (the store reloaded its rows)."""
        self.index, self.dirty = None, False

    def wants(self, owner: object, size: int) -> bool:
        """True when a store of ``size`` rows should search approximately (and faiss is there)."""
        if self.threshold is None or size < self.threshold:
            return False
        if _hnsw.faiss_available():
            return True
        if not self._warned_no_faiss:
            self._warned_no_faiss = True
            _log.warning(
                "%r: %d vectors reached the approximate-index threshold (%d) but faiss is not installed "
                "(pip install 'graphfuse[ann]'): searches stay exact",
                owner,
                size,
                self.threshold,
            )
        return False

    def attach(self, index: _hnsw.HNSWIndex | None, ids: list[str]) -> None:
        """Use a loaded index if it covers exactly the store's rows ``ids`` (else it is stale)."""
        if index is None:
            return
        label_of = {doc_id: label for label, doc_id in enumerate(index.ids) if doc_id is not None}
        if len(label_of) != len(ids):
            return
        labels = np.fromiter((label_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
        if labels.size and labels.min() < 0:
            return
        self.index, self.labels = index, labels

    def _build(
        self, owner: object, ids: list[str], buffer: Matrix, dimension: int, db: Database | None, generation: int
    ) -> None:
        n = len(ids)
        _log.info("%r: building the approximate (HNSW) index over %d vectors", owner, n)
        index = _hnsw.HNSWIndex(dimension, ef_search=self._ef_search)
        step = 65_536
        for start in range(0, n, step):
            index.add(ids[start : start + step], buffer[start : min(n, start + step)])
        self.index, self.labels = index, np.arange(n, dtype=np.int64)
        self.dirty = True
        self.save(db, generation)

    def save(self, db: Database | None, generation: int) -> None:
        """Save a changed index beside a writable store file."""
        if self.index is not None and self.dirty and db is not None and not db.readonly:
            self.index.save(db.path, generation)
            self.dirty = False

    def ensure(
        self, owner: object, ids: list[str], buffer: Matrix, dimension: int | None, db: Database | None, generation: int
    ) -> bool:
        """Switch to (or refresh) the approximate index when the store is large enough."""
        if not self.wants(owner, len(ids)):
            if self.index is not None:  # shrank below the threshold
                self.index, self.dirty = None, False
                if db is not None and not db.readonly:
                    _hnsw.drop(db.path)
                _log.info("%r: %d vectors, below the threshold again: exact search", owner, len(ids))
            return False
        assert dimension is not None
        if self.index is None:
            if self.threshold is not None and len(ids) >= self.threshold:
                _log.info(
                    "%r: %d vectors reached the approximate-index threshold (%d): switching to HNSW",
                    owner,
                    len(ids),
                    self.threshold,
                )
            self._build(owner, ids, buffer, dimension, db, generation)
        elif self.index.dead > _REBUILD_DEAD_SHARE * self.index.size:
            self._build(owner, ids, buffer, dimension, db, generation)
        return True

    def follow_upsert(
        self, ids: list[str], block: Matrix, n: int, new: list[int], old: list[int], rows: list[int]
    ) -> None:
        """Follow an upsert: batch ``ids`` (``block``), ``new`` appended after row ``n``, ``old`` at ``rows``."""
        if self.index is None:
            return
        if old:
            self.index.remove(self.labels[rows])
        added = self.index.add(ids, block)
        labels = np.concatenate([self.labels, np.full(len(new), -1, dtype=np.int64)])
        for k, i in enumerate(new):
            labels[n + k] = added[i]
        if old:
            labels[rows] = added[old]
        self.labels = labels
        self.dirty = True

    def follow_delete(self, dropped: list[int], keep: list[int]) -> None:
        """Follow a delete of rows ``dropped`` (sorted); ``keep`` are the rows left, in order."""
        if self.index is None:
            return
        self.index.remove(self.labels[dropped])
        self.labels = self.labels[keep]
        self.dirty = True

    def search(
        self, query: npt.NDArray[np.float32], limit: int, rows: npt.NDArray[np.int64] | None, min_score: float | None
    ) -> list[VectorHit]:
        """The approximate ``limit`` nearest of the allowed ``rows`` (``None``: all)."""
        assert self.index is not None
        if rows is not None and rows.size == 0:
            return []
        allowed = None if rows is None else self.labels[rows]
        scores, labels = self.index.search(query, limit, allowed)
        ids = self.index.ids
        hits = [
            VectorHit(doc_id, min(1.0, max(-1.0, s)))
            for label, s in zip(labels.tolist(), scores.tolist(), strict=True)
            if (doc_id := ids[label]) is not None
        ]
        return hits if min_score is None else [h for h in hits if h.score >= min_score]
