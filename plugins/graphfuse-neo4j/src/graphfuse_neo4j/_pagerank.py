"""PageRank without GDS: the core's scipy power iteration over relations streamed from Neo4j.

Used by a refresh of the stored scores only (``Neo4jGraphStore.refresh_pagerank``); a pure
function of the nodes and edges, so it is tested in process against the embedded stores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphfuse.stores import pagerank_scores

__all__ = ["pagerank_from_edges"]


def pagerank_from_edges(nodes: Sequence[str], edges: Sequence[tuple[str, str, float]]) -> dict[str, float]:
    """Weighted PageRank (source -> target) of every node, normalised to max 1.

    Same model as GraphFuse's embedded stores (damping 0.85, dangling mass spread uniformly).
    Edges whose endpoints are not in ``nodes`` are ignored.
    """
    position = {node: i for i, node in enumerate(dict.fromkeys(nodes))}
    kept = [(position[s], position[t], w) for s, t, w in edges if s in position and t in position]
    sources = np.fromiter((e[0] for e in kept), dtype=np.int64, count=len(kept))
    targets = np.fromiter((e[1] for e in kept), dtype=np.int64, count=len(kept))
    weights = np.fromiter((e[2] for e in kept), dtype=np.float64, count=len(kept))
    scores = pagerank_scores(len(position), sources, targets, weights)
    return dict(zip(position, scores.tolist(), strict=False))
