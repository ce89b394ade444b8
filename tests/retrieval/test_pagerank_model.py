"""The one PageRank: its model solved exactly, networkx's PageRank, and the personalized walk's seeds."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graphfuse._pagerank import power_iteration, walk_matrix
from graphfuse.multihop import personalized_pagerank
from graphfuse.stores import pagerank_scores


def exact(adjacency: np.ndarray, restart: np.ndarray, damping: float) -> np.ndarray:
    """The model's fixed point by linear algebra: dangling mass restarts like the rest."""
    out = adjacency.sum(axis=1)
    walk = np.divide(adjacency, out[:, None], out=np.zeros_like(adjacency), where=out[:, None] > 0).T
    r = restart / restart.sum()
    walk = walk + np.outer(r, out == 0)  # a dangling node's mass goes to r
    x = np.linalg.solve(np.eye(len(r)) - damping * walk, (1 - damping) * r)
    return x / x.sum()


@pytest.mark.parametrize("reverse_weight", [0.0, 0.25])
def test_power_iteration_reaches_the_model_fixed_point(reverse_weight: float) -> None:
    a = np.array([[0, 2, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=np.float64)  # node 3 dangles
    restart = np.array([1.0, 0.0, 0.0, 3.0])
    walk, dangling = walk_matrix(sp.csr_matrix(a), reverse_weight=reverse_weight)
    assert dangling.tolist() == [False, False, False, True]
    x = power_iteration(walk, dangling, restart, damping=0.7, tolerance=1e-14, max_iterations=1000)
    assert x.sum() == pytest.approx(1.0)
    assert np.allclose(x, exact(a + reverse_weight * a.T, restart, 0.7), atol=1e-10)


def test_a_bad_start_is_ignored_and_a_good_one_reaches_the_same_point() -> None:
    walk, dangling = walk_matrix(sp.csr_matrix(np.array([[0, 1.0], [0, 0]])))
    cold = power_iteration(walk, dangling, np.ones(2), damping=0.85, tolerance=1e-12, max_iterations=500)
    for start in (np.array([np.nan, 1.0]), np.array([-1.0, 2.0]), np.zeros(2), np.ones(3), np.array([5.0, 1.0])):
        got = power_iteration(
            walk, dangling, np.ones(2), damping=0.85, tolerance=1e-12, max_iterations=500, start=start
        )
        assert np.allclose(got, cold, atol=1e-9)


def test_store_pagerank_is_networkx_pagerank() -> None:
    rng = np.random.default_rng(7)
    n, m = 60, 150
    sources, targets = rng.integers(0, n, m), rng.integers(0, n, m)
    weights = rng.random(m)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for s, t, w in zip(sources.tolist(), targets.tolist(), weights.tolist(), strict=True):
        g.add_edge(s, t, weight=g.get_edge_data(s, t, {"weight": 0.0})["weight"] + w)
    theirs = nx.pagerank(g, weight="weight")
    expected = np.array([theirs[i] for i in range(n)])
    assert np.allclose(pagerank_scores(n, sources, targets, weights), expected / expected.max(), atol=1e-4)


def test_an_isolated_seed_keeps_its_mass_in_the_personalized_walk() -> None:
    # 0 - 1 related, 2 alone; both 0 and 2 are seeds.
    a = sp.csr_matrix(np.array([[0, 1.0, 0], [0, 0, 0], [0, 0, 0]]))
    x = personalized_pagerank(a, np.array([1.0, 0.0, 1.0]), damping=0.5, iterations=200)
    assert x[2] == pytest.approx(0.5)  # a seed that leads nowhere keeps what it started with
    assert x[0] + x[1] == pytest.approx(0.5)
    assert x[0] > x[1] > 0
