"""The vector store's matrix: unit vectors, cosine scores and the exact top ``limit`` of a search."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .._core._errors import InvalidInput
from .._core._types import VectorHit

__all__ = ["Matrix", "exact_search", "unit_vector"]

Matrix = npt.NDArray[np.float32]

_FLOAT32_MAX = float(np.finfo(np.float32).max)
# Below this share of matching rows, score only the matching rows instead of all of them.
_GATHER_SHARE = 0.25


def unit_vector(vector: Any, dimension: int | None, what: str) -> npt.NDArray[np.float32]:
    """``vector`` L2-normalised as float32, or ``InvalidInput`` naming ``what`` and the fault."""
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


def exact_search(
    ids: list[str],
    matrix: Matrix,
    query: npt.NDArray[np.float32],
    limit: int,
    rows: npt.NDArray[np.int64] | None,
    min_score: float | None,
) -> list[VectorHit]:
    """The ``limit`` rows of ``matrix`` most similar to ``query``, best first (ties by row).

    ``rows`` are the rows a filter allows (``None``: all), ``min_score`` applies before ``limit``.
    """
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
        VectorHit(ids[row], min(1.0, max(-1.0, s))) for row, s in zip(found.tolist(), scores[top].tolist(), strict=True)
    ]
