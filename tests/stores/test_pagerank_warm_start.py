"""PageRank warm-started from the scores before an update reaches the same fixed point."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphfuse import Document, Relation
from graphfuse.stores import SQLiteGraphStore, pagerank_scores


def _graph(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sources = rng.integers(0, n, 5 * n)
    targets = (rng.zipf(1.5, 5 * n) - 1) % n  # power-law in-degrees
    return sources, targets, np.ones(5 * n)


def test_warm_start_matches_a_cold_start() -> None:
    s, t, w = _graph(2000, 0)
    cold = pagerank_scores(2000, s, t, w)
    # Scores of a slightly different graph as the start vector.
    before = pagerank_scores(2000, s[:-100], t[:-100], w[:-100])
    warm = pagerank_scores(2000, s, t, w, start=before)
    assert np.allclose(warm, cold, atol=1e-4)
    # A useless start (zeros, wrong length) falls back to the uniform one.
    assert np.allclose(pagerank_scores(2000, s, t, w, start=np.zeros(2000)), cold)
    assert np.allclose(pagerank_scores(2000, s, t, w, start=np.ones(5)), cold)


async def test_store_pagerank_after_an_update_equals_a_fresh_computation(tmp_path: Path) -> None:
    s, t, _ = _graph(500, 1)
    docs = [Document(f"n{i:04d}", "x") for i in range(520)]
    rels = [Relation(f"n{a:04d}", f"n{b:04d}") for a, b in zip(s.tolist(), t.tolist(), strict=True) if a != b]
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    await store.store_documents(docs[:500])
    await store.create_relations(rels)
    await store.pagerank()
    # A small update: new nodes linking into the graph; the next PageRank is warm-started.
    extra = [Relation(f"n{500 + i:04d}", f"n{i:04d}") for i in range(20)]
    await store.store_documents(docs[500:])
    await store.create_relations(extra)
    warm = await store.pagerank()
    fresh_store = SQLiteGraphStore(tmp_path / "fresh.sqlite")
    await fresh_store.store_documents(docs)
    await fresh_store.create_relations(rels + extra)
    cold = await fresh_store.pagerank()
    assert warm.keys() == cold.keys()
    assert max(abs(warm[k] - cold[k]) for k in cold) < 1e-3
    await store.close()
    await fresh_store.close()
