"""An approximate (HNSW, faiss) index over a LocalVectorStore's rows, persisted beside it.

faiss labels are insertion order; the index maps each label to a document id and keeps a
tombstone bitmap (faiss's HNSW cannot remove), which every search passes as an id selector.
A metadata filter becomes a label selector too: faiss checks it while walking the graph
(pre-filtering), which kept recall@10 where post-filtering lost it (see
``docs/backends/approximate.md``).

On disk the index is two files beside the SQLite file: ``<name>.hnsw-<token>.faiss`` (the
faiss graph and vectors) and ``<name>.hnsw.json`` (header, ids, tombstones), which names the
token. Each is written to a temporary file and renamed into place, the header last: a crash
at any point leaves either the old index or none, never a torn one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._core._errors import InvalidInput

__all__ = ["HNSWIndex", "faiss_available"]

FORMAT = "graphfuse-hnsw"
FORMAT_VERSION = 1
_CHUNK = 1 << 20


def faiss_available() -> bool:
    """Whether ``faiss`` (``graphfuse[ann]``) can be imported."""
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover - checked by faiss_available first
        raise InvalidInput("the approximate vector index needs faiss: pip install 'graphfuse[ann]'") from exc
    return faiss


def header_path(store_path: str) -> Path:
    return Path(f"{store_path}.hnsw.json")


def _atomic_write(path: Path, chunks: Any) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class HNSWIndex:
    """faiss ``IndexHNSWFlat`` (inner product on unit vectors = cosine) with id mapping and tombstones."""

    def __init__(self, dimension: int, *, m: int = 32, ef_construction: int = 40, ef_search: int = 192) -> None:
        faiss = _faiss()
        self.dimension = dimension
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self._index = faiss.IndexHNSWFlat(dimension, m, faiss.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = ef_construction
        self.ids: list[str | None] = []
        self._alive = np.zeros(0, dtype=bool)
        self.dead = 0

    @property
    def size(self) -> int:
        """Labels in the graph, tombstones included."""
        return len(self.ids)

    def add(self, ids: list[str], block: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        """Add unit vectors; returns their labels."""
        start = len(self.ids)
        self._index.add(np.ascontiguousarray(block, dtype=np.float32))
        self.ids.extend(ids)
        self._alive = np.concatenate([self._alive, np.ones(len(ids), dtype=bool)])
        return np.arange(start, start + len(ids), dtype=np.int64)

    def remove(self, labels: npt.NDArray[np.int64]) -> None:
        """Tombstone labels (their vectors stay in the graph as waypoints)."""
        labels = labels[self._alive[labels]]
        self._alive[labels] = False
        for label in labels.tolist():
            self.ids[label] = None
        self.dead += int(labels.size)

    def search(
        self, query: npt.NDArray[np.float32], k: int, allowed: npt.NDArray[np.int64] | None
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Top ``k`` (scores, labels) among live labels (and ``allowed`` ones when given)."""
        faiss = _faiss()
        if allowed is None and self.dead == 0:
            mask = None
            ef = self.ef_search
        else:
            mask = self._alive.copy() if allowed is None else np.zeros(self.size, dtype=bool)
            if allowed is not None:
                mask[allowed] = True
                mask &= self._alive
            live = int(mask.sum())
            if live == 0:
                return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
            # A selective filter leaves fewer usable neighbours per hop: widen the beam.
            share = live / max(1, self.size)
            ef = int(self.ef_search * min(4.0, max(1.0, (0.5 / share) ** 0.5)))
        ef = max(ef, k)
        if mask is None:
            params = faiss.SearchParametersHNSW(efSearch=ef)
            scores, labels = self._index.search(query[None, :], k, params=params)
        else:
            bits = np.packbits(mask, bitorder="little")
            selector = faiss.IDSelectorBitmap(self.size, faiss.swig_ptr(bits))
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
            scores, labels = self._index.search(query[None, :], k, params=params)
        keep = labels[0] >= 0
        return scores[0][keep], labels[0][keep].astype(np.int64)

    # -- persistence ------------------------------------------------------------------------

    def save(self, store_path: str, generation: int) -> None:
        """Write index and header atomically (header last), then drop older index files.

        Saves are serialised across processes by a lock file, so cleaning up never removes
        another process's file in flight.
        """
        with _save_lock(store_path):
            self._save(store_path, generation)

    def _save(self, store_path: str, generation: int) -> None:
        faiss = _faiss()
        header = header_path(store_path)
        token = secrets.token_hex(8)
        data_path = Path(f"{store_path}.hnsw-{token}.faiss")
        raw = faiss.serialize_index(self._index)
        view = memoryview(raw)
        _atomic_write(data_path, (view[i : i + _CHUNK] for i in range(0, len(view), _CHUNK)))
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "token": token,
            "generation": generation,
            "dimension": self.dimension,
            "m": self.m,
            "ef_construction": self.ef_construction,
            "ids": self.ids,
        }
        try:
            _atomic_write(header, [json.dumps(meta).encode("utf-8")])
        except BaseException:
            data_path.unlink(missing_ok=True)
            raise
        remove_orphans(store_path, keep=data_path.name)

    @classmethod
    def load(cls, store_path: str, generation: int, dimension: int, ef_search: int) -> HNSWIndex | None:
        """The persisted index if it is whole and of ``generation``; ``None`` when missing or stale."""
        faiss = _faiss()
        try:
            meta = json.loads(header_path(store_path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        if (
            not isinstance(meta, dict)
            or meta.get("format") != FORMAT
            or meta.get("version") != FORMAT_VERSION
            or meta.get("generation") != generation
            or meta.get("dimension") != dimension
            or not isinstance(meta.get("ids"), list)
        ):
            return None
        data_path = Path(f"{store_path}.hnsw-{meta['token']}.faiss")
        try:
            raw = np.fromfile(data_path, dtype=np.uint8)
            index = faiss.deserialize_index(raw)
        except (OSError, RuntimeError, ValueError):
            return None
        if index.ntotal != len(meta["ids"]) or index.d != dimension:
            return None
        self = cls.__new__(cls)
        self.dimension = dimension
        self.m, self.ef_construction, self.ef_search = int(meta["m"]), int(meta["ef_construction"]), ef_search
        self._index = index
        self.ids = meta["ids"]
        self._alive = np.fromiter((i is not None for i in self.ids), dtype=bool, count=len(self.ids))
        self.dead = int(len(self.ids) - self._alive.sum())
        return self


@contextlib.contextmanager
def _save_lock(store_path: str) -> Any:
    with open(f"{store_path}.hnsw.lock", "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def remove_orphans(store_path: str, keep: str | None) -> None:
    """Delete index files of ``store_path`` other than ``keep`` (left by crashes or older saves)."""
    base = Path(store_path)
    for p in base.parent.glob(f"*{base.name}.hnsw*"):
        if p.name == keep or p.name == header_path(store_path).name:
            continue
        if p.name.endswith((".faiss", ".tmp")):
            with contextlib.suppress(OSError):
                p.unlink()


def drop(store_path: str) -> None:
    """Delete every index file of ``store_path``."""
    with _save_lock(store_path):
        with contextlib.suppress(OSError):
            header_path(store_path).unlink()
        remove_orphans(store_path, keep=None)
