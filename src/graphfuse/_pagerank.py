"""PageRank by power iteration: the one implementation behind the embedded stores' PageRank
(:func:`graphfuse.stores.pagerank_scores`) and multihop's personalized PageRank
(:class:`graphfuse.multihop.PersonalizedPageRank`).

One model: ``x = d (W x + m(x) r) + (1 - d) r``, where ``W`` walks each node's relations in
proportion to their weights, ``r`` is the restart distribution (uniform for PageRank, the seeds
for personalized PageRank), ``m(x)`` the mass at dangling nodes (no relation to walk), which
restarts like the rest, and ``d`` the damping. Iteration stops when the L1 change falls below
``tolerance``. Each caller's damping, tolerance and graph are in docs/stages.md, "PageRank".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["power_iteration", "walk_matrix"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def walk_matrix(adjacency: sp.spmatrix, *, reverse_weight: float = 0.0) -> tuple[sp.csr_matrix, BoolArray]:
    """``(W, dangling)``: the column-stochastic step of a walk over the weighted ``adjacency``.

    ``adjacency[i, j]`` is the weight of the relations ``i -> j``; a step from ``i`` follows them
    forwards with their weight and, when ``reverse_weight > 0``, backwards with ``reverse_weight``
    times it, each in proportion to its share of ``i``'s total. ``W[j, i]`` is the probability of
    stepping from ``i`` to ``j``; ``dangling[i]`` is true when ``i`` has nothing to follow (its
    column of ``W`` is zero).
    """
    import scipy.sparse as sp  # on first use: importing graphfuse.stores does not load scipy

    a = sp.csr_matrix(adjacency, dtype=np.float64)
    u = (a + reverse_weight * a.T).tocsr() if reverse_weight > 0 else a
    out = np.asarray(u.sum(axis=1)).ravel()
    dangling = out == 0
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=~dangling)
    return sp.csr_matrix((sp.diags(inverse) @ u).T), dangling


def power_iteration(
    walk: sp.csr_matrix,
    dangling: BoolArray,
    restart: FloatArray,
    *,
    damping: float,
    tolerance: float,
    max_iterations: int,
    start: FloatArray | None = None,
) -> FloatArray:
    """The PageRank vector (sums to 1) of the module's model, from :func:`walk_matrix`'s ``walk`` and ``dangling``.

    ``restart`` (non-negative, any scale, positive sum) is normalised to sum 1. ``start`` (same
    length, non-negative, finite, positive sum; else ignored) warm-starts the iteration, e.g. from
    the scores before a small update: same fixed point, fewer steps; by default the walk starts
    from ``restart``. At most ``max_iterations`` steps.
    """
    r = np.asarray(restart, dtype=np.float64)
    r = r / r.sum()
    x: FloatArray = r.copy()
    usable = start is not None and start.shape == r.shape and bool(np.all(np.isfinite(start)))
    if start is not None and usable and start.min() >= 0 and start.sum() > 0:
        x = start / start.sum()
    stuck = np.flatnonzero(dangling)
    teleport = (1.0 - damping) * r
    for _ in range(max_iterations):
        previous = x
        # d (W x + m r) + (1 - d) r, in place: the same sums without a temporary array per step.
        x = np.asarray(walk @ previous, dtype=np.float64)
        if stuck.size:
            x += previous[stuck].sum() * r
        x *= damping
        x += teleport
        if np.abs(x - previous).sum() < tolerance:
            break
    return x
