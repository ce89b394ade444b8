"""Vectors remembered per embedder, by the SHA-256 of the text: what context assembly and the
bi-encoder reranker embed again and again (the sentences and documents of frequent results).

One bounded, least-recently-used table per embedder object, held weakly: it lives as long as the
embedder does, and two embedders never share vectors (whatever their names say). Keys are content
hashes, so equal texts from different documents (or from a document loaded twice) share an entry.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core._errors import GraphFuseError, PluginError
from .._core._protocols import Embedder

__all__ = ["DEFAULT_MAX_VECTORS", "VectorMemo", "memo_for"]

DEFAULT_MAX_VECTORS = 50_000
"""Entries kept per embedder (about 75 MB of float32 vectors at 384 dimensions)."""


def _digest(kind: str, text: str) -> bytes:
    return hashlib.sha256(f"{kind}\x00{text}".encode("utf-8", "surrogatepass")).digest()


class VectorMemo:
    """The vectors one embedder returned, by ``(kind, SHA-256 of the text)``; at most ``max_vectors``.

    :meth:`embed_documents` and :meth:`embed_query` return float64 arrays; only texts not held are
    sent to the embedder (distinct ones, in one ``embed_documents`` call). What the embedder raises
    passes unchanged (callers say what they were doing); vectors of the wrong shape or count, or not
    finite, raise ``error`` (default :class:`~graphfuse.PluginError`) naming the embedder, and are
    not remembered.
    """

    __slots__ = ("_embedder", "_lock", "_max", "_table")

    def __init__(self, embedder: Embedder, max_vectors: int = DEFAULT_MAX_VECTORS) -> None:
        self._embedder = weakref.ref(embedder)
        self._max = max_vectors
        self._table: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._table)

    def _inner(self) -> Embedder:
        embedder = self._embedder()
        if embedder is None:  # pragma: no cover - callers hold the embedder while they ask
            raise PluginError("the embedder of this vector memo is gone")
        return embedder

    def _get(self, keys: Sequence[bytes]) -> list[np.ndarray | None]:
        with self._lock:
            out: list[np.ndarray | None] = []
            for k in keys:
                v = self._table.get(k)
                if v is not None:
                    self._table.move_to_end(k)
                out.append(v)
            return out

    def _put(self, pairs: Sequence[tuple[bytes, np.ndarray]]) -> None:
        with self._lock:
            for k, v in pairs:
                self._table[k] = v
                self._table.move_to_end(k)
            while len(self._table) > self._max:
                self._table.popitem(last=False)

    async def embed_documents(self, texts: Sequence[str], *, error: type[GraphFuseError] = PluginError) -> np.ndarray:
        """A ``(len(texts), dimension)`` array: one row per text, in order."""
        keys = [_digest("doc", t) for t in texts]
        found = self._get(keys)
        missing: dict[bytes, str] = {}
        for k, t, v in zip(keys, texts, found, strict=True):
            if v is None:
                missing.setdefault(k, t)
        if missing:
            embedder = self._inner()
            vectors = await embedder.embed_documents(list(missing.values()))
            matrix = _matrix(embedder, vectors, len(missing), error)
            fresh = dict(zip(missing, matrix, strict=True))
            self._put(list(fresh.items()))
            found = [v if v is not None else fresh[k] for k, v in zip(keys, found, strict=True)]
        if not found:
            return np.zeros((0, 0))
        rows = [v for v in found if v is not None]
        widths = {r.shape[0] for r in rows}
        if len(widths) != 1:
            raise error(f"embedder {type(self._inner()).__name__} returned vectors of different sizes (wrong shape)")
        return np.vstack(rows)

    async def embed_query(self, text: str, *, error: type[GraphFuseError] = PluginError) -> np.ndarray:
        """The query's vector (a 1-d array)."""
        key = _digest("query", text)
        held = self._get([key])[0]
        if held is not None:
            return held
        embedder = self._inner()
        vector = np.asarray(await embedder.embed_query(text), dtype=np.float64)
        if vector.ndim != 1 or not vector.size or not np.isfinite(vector).all():
            raise error(f"embedder {type(embedder).__name__} returned a query vector of the wrong shape {vector.shape}")
        self._put([(key, vector)])
        return vector


def _matrix(embedder: Embedder, vectors: Any, expected: int, error: type[GraphFuseError]) -> np.ndarray:
    who = type(embedder).__name__
    try:
        m = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise error(f"embedder {who} returned vectors that are not a matrix of numbers: {exc}") from exc
    if m.ndim != 2 or m.shape[0] != expected or not m.shape[1] or not np.isfinite(m).all():
        raise error(f"embedder {who} returned vectors of the wrong shape {m.shape} for {expected} texts")
    return m


_MEMOS: weakref.WeakKeyDictionary[Any, VectorMemo] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def memo_for(embedder: Embedder) -> VectorMemo | None:
    """The :class:`VectorMemo` of ``embedder`` (made on first use), or ``None`` for an embedder that
    cannot be held weakly or hashed (its vectors are then not remembered)."""
    with _MEMOS_LOCK:
        try:
            memo = _MEMOS.get(embedder)
            if memo is None:
                memo = _MEMOS[embedder] = VectorMemo(embedder)
        except TypeError:
            return None
        return memo
