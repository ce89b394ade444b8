"""The dashboard's graph of a result set: typed edges among the results' pages, and degree numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["edges_among_pages", "graph_numbers"]

_DEGREE_BUCKETS = ((0, 0), (1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, 50), (51, None))


def edges_among_pages(
    heads: Mapping[str, int | None],
    own: Mapping[str, list[int]],
    pages: Mapping[str, list[int]],
    names: Sequence[str],
    external: Mapping[str, str | None],
    columns: Any,
    typed: Mapping[str, Any],
    untyped: Any,
) -> list[dict[str, Any]]:
    """Typed edges between the results, from the relations among their pages (CPU: off the loop).

    ``heads[page]`` is the page's adjacency position, ``own[page]`` the positions of the page
    and of its results, ``pages[page]`` the indexes of its results (``names`` are the results'
    client ids). The page's other passages (the sources of ``PART_OF`` relations to it) are
    found in ``columns``, the ``PART_OF`` matrix by column (or ``None``).
    """
    owner: dict[int, str] = {}
    for page, positions in own.items():
        for p in positions:
            owner.setdefault(p, page)
        head = heads[page]
        if columns is not None and head is not None:
            start, stop = columns.indptr[head], columns.indptr[head + 1]
            for p in columns.indices[start:stop].tolist():
                owner.setdefault(int(p), page)
    rows = np.array(sorted(owner), dtype=np.int64)
    found: dict[tuple[str, str, str], float] = {}
    seen: set[tuple[str, str]] = set()

    def collect(rel_type: str, matrix: Any, skip_seen: bool) -> None:
        sub = matrix[rows][:, rows].tocoo()
        for s, t, w in zip(sub.row.tolist(), sub.col.tolist(), sub.data.tolist(), strict=True):
            a, b = owner[int(rows[s])], owner[int(rows[t])]
            if a == b or (skip_seen and (a, b) in seen):
                continue
            if not skip_seen:
                seen.add((a, b))
            key = (a, b, rel_type)
            found[key] = max(found.get(key, 0.0), float(w))

    for rel_type, matrix in typed.items():
        collect(rel_type, matrix, skip_seen=False)
    collect("OTHER", untyped, skip_seen=True)  # related by types this server does not know by name
    edges: list[dict[str, Any]] = []
    for (a, b, rel_type), weight in sorted(found.items(), key=lambda kv: (min(pages[kv[0][0]]), kv[0])):
        for i in pages[a]:
            for j in pages[b]:
                edge: dict[str, Any] = {"source": names[i], "target": names[j], "type": rel_type, "weight": weight}
                if names[i] != external[a] or names[j] != external[b]:
                    edge["pages"] = [external[a], external[b]]
                edges.append(edge)
    return edges


def graph_numbers(positions: Sequence[int], typed: Mapping[str, Any], untyped: Any) -> dict[str, Any]:
    """Relations by type and the degree distribution among ``positions`` (CPU: off the loop)."""
    rows = np.array(positions, dtype=np.int64)
    by_type: dict[str, int] = {}
    for rel_type, matrix in typed.items():
        n = int(matrix[rows][:, rows].nnz) if len(rows) else 0
        if n:
            by_type[rel_type] = n
    sub = untyped[rows][:, rows] if len(rows) else None
    relations = sum(by_type.values())
    if sub is not None:
        # Pairs related only by types this server does not know by name.
        present = (sub != 0).astype(np.int8)
        for t in typed:
            present = present - (typed[t][rows][:, rows] != 0).astype(np.int8)
        other = int((present.tocsr().data > 0).sum())
        if other:
            by_type["OTHER"] = other
            relations += other
        sym = (sub != 0).astype(np.int8)
        sym = ((sym + sym.T) != 0).astype(np.int8)
        degrees = np.asarray(sym.sum(axis=1)).ravel()
    else:
        degrees = np.zeros(0, dtype=np.int64)
    distribution = {}
    for low, high in _DEGREE_BUCKETS:
        mask = degrees >= low if high is None else (degrees >= low) & (degrees <= high)
        label = f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}")
        distribution[label] = int(mask.sum())
    return {
        "relations": relations,
        "relations_by_type": dict(sorted(by_type.items())),
        "degree": {
            "distribution": distribution,
            "max": int(degrees.max()) if len(degrees) else 0,
            "mean": float(degrees.mean()) if len(degrees) else 0.0,
        },
    }
