"""An immutable in-memory view of a graph: CSR adjacency, traversal and PageRank.

Both graph stores build one of these lazily from their source of truth and drop it on every
write. Node ``i`` is ``ids[i]``; relations are kept twice, once per direction, because
traversal ignores direction (PageRank does not: it walks relations source -> target).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from .._core._filters import MetadataFilter
from .._core._types import RelatedDocument
from .._pagerank import power_iteration, walk_matrix
from ._metadata_index import MetadataIndex

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["GraphIndex", "pagerank_scores"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

DAMPING = 0.85
TOLERANCE = 1e-6
MAX_ITERATIONS = 200


def pagerank_scores(
    n: int, sources: IntArray, targets: IntArray, weights: FloatArray, *, start: FloatArray | None = None
) -> FloatArray:
    """Weighted PageRank by power iteration, normalised so the maximum is 1.

    GraphFuse's one PageRank (:mod:`graphfuse._pagerank`, docs/stages.md "PageRank") over the
    relations ``sources[k] -> targets[k]`` of weight ``weights[k]`` (parallel relations add
    their weights), walked in their direction, with a uniform restart: the model and stopping
    rule of ``networkx.pagerank`` (damping 0.85, dangling nodes spread uniformly, stop when the
    L1 change is below ``n * 1e-6``), so the two agree to about 1e-6. ``start`` (non-negative,
    length ``n``, any scale) warm-starts the iteration, e.g. from the scores before a small
    update: same fixed point, fewer iterations.
    """
    if n == 0:
        return np.zeros(0)
    import scipy.sparse as sp  # imported on first use: commands that never rank skip it

    walk, dangling = walk_matrix(sp.csr_matrix((weights, (sources, targets)), shape=(n, n)))
    x = power_iteration(
        walk,
        dangling,
        np.full(n, 1.0 / n),
        damping=DAMPING,
        tolerance=n * TOLERANCE,
        max_iterations=MAX_ITERATIONS,
        start=start,
    )
    top = x.max()
    return x / top if top > 0 else x


class GraphIndex:
    """CSR adjacency over ``ids`` with lazily built metadata columns and PageRank."""

    def __init__(
        self,
        ids: Sequence[str],
        sources: IntArray,
        targets: IntArray,
        type_codes: IntArray,
        type_names: Sequence[str],
        weights: FloatArray,
        metadata: Callable[[], Sequence[Mapping[str, Any]]],
        pagerank: FloatArray | None = None,
    ) -> None:
        n = len(ids)
        self.ids = list(ids)
        self.id_tuple = tuple(self.ids)  # handed out by the stores' adjacency(): callers cannot change it
        self.position = {doc_id: i for i, doc_id in enumerate(self.ids)}
        self._sources, self._targets, self._weights = sources, targets, weights
        self._type_codes = type_codes
        rows = np.concatenate([sources, targets])
        cols = np.concatenate([targets, sources])
        codes = np.concatenate([type_codes, type_codes])
        order = np.argsort(rows)  # order within a row does not matter
        self._rows = rows[order]
        self._indices = cols[order]
        self._codes = codes[order]
        self._indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=self._indptr[1:])
        self._type_code = {name: code for code, name in enumerate(type_names)}
        # rank[i]: position of ids[i] in sorted id order, to order results by id with numpy.
        self._rank = np.empty(n, dtype=np.int64)
        self._rank[sorted(range(n), key=self.ids.__getitem__)] = np.arange(n)
        self._metadata_source = metadata
        self._metadata: MetadataIndex | None = None
        self._typed: dict[frozenset[str], tuple[IntArray, IntArray]] = {}
        self._matrices: dict[frozenset[str] | None, sp.csr_matrix] = {}
        self._pagerank = pagerank
        self._pagerank_values: list[float] | None = None  # _pagerank as Python floats, for lookups by id
        self._warm: GraphIndex | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def relation_count(self) -> int:
        return int(self._sources.size)

    @property
    def has_metadata(self) -> bool:
        """True once the metadata columns are loaded (filters need no more I/O)."""
        return self._metadata is not None

    @property
    def has_pagerank(self) -> bool:
        """True once PageRank is computed."""
        return self._pagerank is not None

    def metadata_mask(self, flt: MetadataFilter) -> npt.NDArray[np.bool_]:
        """True for every node whose metadata matches ``flt``."""
        if self._metadata is None:
            with self._lock:
                if self._metadata is None:
                    self._metadata = MetadataIndex(self._metadata_source())
        return self._metadata.mask(flt)

    def _adjacency(self, types: frozenset[str] | None) -> tuple[IntArray, IntArray]:
        if types is None:
            return self._indptr, self._indices
        cached = self._typed.get(types)
        if cached is None:
            codes = [self._type_code[t] for t in types if t in self._type_code]
            keep = np.isin(self._codes, codes)
            indptr = np.zeros(len(self.ids) + 1, dtype=np.int64)
            np.cumsum(np.bincount(self._rows[keep], minlength=len(self.ids)), out=indptr[1:])
            cached = (indptr, self._indices[keep])
            with self._lock:
                if len(self._typed) >= 32:
                    self._typed.clear()
                self._typed[types] = cached
        return cached

    def cached_matrix(self, types: frozenset[str] | None) -> sp.csr_matrix | None:
        """The matrix :meth:`matrix` returns, if it is built already (no work done)."""
        return self._matrices.get(types)

    def matrix(self, types: frozenset[str] | None) -> sp.csr_matrix:
        """Directed weighted adjacency: ``[i, j]`` sums the weights of relations ``ids[i] -> ids[j]``.

        Only relations of ``types`` when given. Built once per index and types, then shared:
        its arrays are made read-only so no caller can change what the others read.
        """
        cached = self._matrices.get(types)
        if cached is not None:
            return cached
        sources, targets, weights = self._sources, self._targets, self._weights
        if types is not None:
            keep = np.isin(self._type_codes, [self._type_code[t] for t in types if t in self._type_code])
            sources, targets, weights = sources[keep], targets[keep], weights[keep]
        n = len(self.ids)
        import scipy.sparse as sp

        matrix = sp.csr_matrix((weights, (sources, targets)), shape=(n, n), dtype=np.float64)
        for array in (matrix.data, matrix.indices, matrix.indptr):
            array.flags.writeable = False
        with self._lock:
            if len(self._matrices) >= 32:
                self._matrices.clear()
            return self._matrices.setdefault(types, matrix)

    def related(
        self,
        seeds: Sequence[str],
        depth: int,
        allowed: npt.NDArray[np.bool_] | None,
        types: frozenset[str] | None,
        limit: int | None,
    ) -> list[RelatedDocument]:
        """Breadth-first search from every seed at once, closest first, ties by id.

        A node outside ``allowed`` is neither returned nor expanded; seeds are always expanded.
        Each node's ``seed`` is the earliest (in ``seeds`` order) seed at its smallest distance.
        """
        seed_nodes: list[int] = []
        for s in seeds:
            i = self.position.get(s)
            if i is not None and i not in seed_nodes:
                seed_nodes.append(i)
        if not seed_nodes or limit == 0:
            return []
        indptr, indices = self._adjacency(types)
        visited = np.zeros(len(self.ids), dtype=np.bool_)
        frontier = np.asarray(seed_nodes, dtype=np.int64)
        visited[frontier] = True
        origin = np.arange(frontier.size, dtype=np.int64)
        found: list[tuple[IntArray, IntArray, int]] = []
        total = 0
        for distance in range(1, depth + 1):
            starts = indptr[frontier]
            counts = indptr[frontier + 1] - starts
            n_edges = int(counts.sum())
            if n_edges == 0:
                break
            offsets = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(n_edges)
            nodes = indices[offsets]
            nodes_origin = np.repeat(origin, counts)
            keep = ~visited[nodes]
            if allowed is not None:
                keep &= allowed[nodes]
            nodes, nodes_origin = nodes[keep], nodes_origin[keep]
            if nodes.size == 0:
                break
            order = np.lexsort((nodes_origin, nodes))
            nodes, nodes_origin = nodes[order], nodes_origin[order]
            first = np.ones(nodes.size, dtype=np.bool_)
            first[1:] = nodes[1:] != nodes[:-1]
            frontier, origin = nodes[first], nodes_origin[first]
            visited[frontier] = True
            found.append((frontier, origin, distance))
            total += frontier.size
            if limit is not None and total >= limit:
                break  # later hops are farther: they cannot make the cut
        if not found:
            return []
        nodes = np.concatenate([f[0] for f in found])
        origins = np.concatenate([f[1] for f in found])
        distances = np.concatenate([np.full(f[0].size, f[2]) for f in found])
        order = np.lexsort((self._rank[nodes], distances))
        if limit is not None:
            order = order[:limit]
        ids, seed_ids = self.ids, [self.ids[i] for i in seed_nodes]
        return [
            RelatedDocument(ids[node], int(dist), seed_ids[seed])
            for node, dist, seed in zip(
                nodes[order].tolist(), distances[order].tolist(), origins[order].tolist(), strict=True
            )
        ]

    def pagerank(self) -> FloatArray:
        """Normalised PageRank of every node (computed once per index)."""
        if self._pagerank is None:
            with self._lock:
                if self._pagerank is None:
                    start, self._warm = self._warm_start(), None
                    self._pagerank = pagerank_scores(
                        len(self.ids), self._sources, self._targets, self._weights, start=start
                    )
        return self._pagerank

    def warm_from(self, previous: GraphIndex) -> None:
        """Warm-start this index's PageRank from ``previous``'s (when it has computed it)."""
        if previous._pagerank is not None:
            self._warm = previous

    def _warm_start(self) -> FloatArray | None:
        old = self._warm
        if old is None or old._pagerank is None or not len(old.ids):
            return None
        ranks = old._pagerank
        fill = float(ranks.mean())
        m = len(old.ids)
        if len(self.ids) >= m and self.ids[:m] == old.ids:  # appended nodes only: the usual update
            return np.concatenate([ranks, np.full(len(self.ids) - m, fill)])
        where = np.fromiter((old.position.get(i, -1) for i in self.ids), dtype=np.int64, count=len(self.ids))
        return np.where(where >= 0, ranks[np.maximum(where, 0)], fill)

    def scores(self, ids: Sequence[str] | None) -> dict[str, float]:
        values = self._pagerank_values
        if values is None:
            # The scores as Python floats (what float(ranks[i]) gives), converted once per index: a lookup by
            # id is then a list index instead of a numpy scalar conversion.
            values = self._pagerank_values = cast("list[float]", self.pagerank().tolist())
        if ids is None:
            return dict(zip(self.ids, values, strict=True))
        position = self.position
        out: dict[str, float] = {}
        for doc_id in ids:
            i = position.get(doc_id)
            if i is not None:
                out[doc_id] = values[i]
        return out
