"""Scorers: weighted sum, weighted reciprocal rank fusion, callables, weight validation."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphfuse import Candidate, Document, InvalidInput
from graphfuse.scoring import (
    DEFAULT_WEIGHTS,
    CallableScorer,
    ReciprocalRankFusion,
    WeightedScorer,
    as_scorer,
    reciprocal_rank_fusion,
)

SIGNALS = ["semantic", "graph", "temporal", "pagerank", "access", "rerank", "plugin.signal"]
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
signal_maps = st.dictionaries(st.sampled_from(SIGNALS), unit, max_size=len(SIGNALS))
weight_maps = st.dictionaries(
    st.sampled_from(SIGNALS), st.floats(min_value=0.0, max_value=100.0, allow_nan=False), min_size=1
).filter(lambda w: any(w.values()))


def cands(*signals: Mapping[str, float]) -> list[Candidate]:
    return [Candidate(Document(f"d{i}"), s) for i, s in enumerate(signals)]


def test_default_weights() -> None:
    assert dict(DEFAULT_WEIGHTS) == {
        "semantic": 0.30,
        "graph": 0.25,
        "temporal": 0.15,
        "pagerank": 0.10,
        "access": 0.10,
        "rerank": 0.10,
    }
    assert sum(DEFAULT_WEIGHTS.values()) == pytest.approx(1.0)
    assert dict(WeightedScorer().weights) == dict(DEFAULT_WEIGHTS)


def test_weighted_sum_exact() -> None:
    s = WeightedScorer({"semantic": 0.5, "my_signal": 0.2})
    [score] = s.score(cands({"semantic": 0.8, "my_signal": 1.0, "ignored": 1.0}))
    assert score == pytest.approx(0.6)
    assert s.explain(cands({"semantic": 0.8, "ignored": 1.0})) == [{"semantic": pytest.approx(0.4)}]


@given(weight_maps, st.lists(signal_maps, max_size=8))
def test_weighted_properties(weights: dict[str, float], signals: list[dict[str, float]]) -> None:
    scorer = WeightedScorer(weights)
    candidates = cands(*signals)
    scores = scorer.score(candidates)
    assert len(scores) == len(candidates)
    for score, parts, c in zip(scores, scorer.explain(candidates), candidates, strict=True):
        assert score == pytest.approx(sum(parts.values()))
        assert 0.0 <= score <= sum(weights.values()) + 1e-9
        assert set(parts) <= set(weights) & set(c.signals)
        # A missing signal contributes exactly what a 0.0 signal does.
        zeroed = Candidate(c.document, {n: c.signals.get(n, 0.0) for n in weights})
        assert scorer.score([zeroed])[0] == pytest.approx(score)


@given(weight_maps, signal_maps, st.sampled_from(SIGNALS), unit)
def test_weighted_is_monotone_in_each_signal(
    weights: dict[str, float], signals: dict[str, float], name: str, bump: float
) -> None:
    scorer = WeightedScorer(weights)
    low = dict(signals)
    high = {**signals, name: max(signals.get(name, 0.0), bump)}
    assert scorer.score(cands(high))[0] >= scorer.score(cands(low))[0] - 1e-12


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"semantic": -0.1}, "must not be negative"),
        ({"semantic": float("nan")}, "finite"),
        ({"semantic": float("inf")}, "finite"),
        ({"semantic": True}, "finite"),
        ({"semantic": "1"}, "finite"),
        ({"semantic": 0.0, "graph": 0}, "greater than zero"),
        ({}, "non-empty"),
        ({"bad name": 1.0}, "signal name"),
    ],
)
def test_bad_weights(weights: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        WeightedScorer(weights)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=message):
        ReciprocalRankFusion(weights)  # type: ignore[arg-type]


def test_rrf_function_exact_and_duplicates_counted_once() -> None:
    fused = reciprocal_rank_fusion({"vector": ["a", "b", "a", "c"], "graph": ["c", "a"]}, k=60)
    assert fused["a"] == {"vector": pytest.approx(1 / 61), "graph": pytest.approx(1 / 62)}
    assert fused["b"] == {"vector": pytest.approx(1 / 62)}
    assert fused["c"] == {"vector": pytest.approx(1 / 63), "graph": pytest.approx(1 / 61)}


def test_rrf_weights_are_honoured() -> None:
    rankings = {"vector": ["a", "b"], "graph": ["b", "a"]}
    even = reciprocal_rank_fusion(rankings)
    assert sum(even["a"].values()) == pytest.approx(sum(even["b"].values()))
    tilted = reciprocal_rank_fusion(rankings, {"vector": 2.0, "graph": 1.0})
    assert sum(tilted["a"].values()) > sum(tilted["b"].values())
    assert tilted["a"]["vector"] == pytest.approx(2 / 61)
    only_graph = reciprocal_rank_fusion(rankings, {"graph": 1.0})
    assert set(only_graph["a"]) == {"graph"}  # unweighted sources are ignored when weights are given


@pytest.mark.parametrize("k", [0, -1, True, 1.5])
def test_rrf_bad_k(k: object) -> None:
    with pytest.raises(InvalidInput, match="k must be a positive integer"):
        reciprocal_rank_fusion({"s": ["a"]}, k=k)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="k must be a positive integer"):
        ReciprocalRankFusion(k=k)  # type: ignore[arg-type]


def test_rrf_scorer_ranks_by_signal_order() -> None:
    candidates = cands({"semantic": 0.9, "graph": 0.1}, {"semantic": 0.5, "graph": 0.9}, {"semantic": 0.1})
    scorer = ReciprocalRankFusion(k=60)
    scores = scorer.score(candidates)
    assert scores[0] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[1] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[2] == pytest.approx(1 / 63)
    weighted = ReciprocalRankFusion({"graph": 3.0, "semantic": 1.0}).score(candidates)
    assert weighted[1] > weighted[0] > weighted[2]
    assert ReciprocalRankFusion({"graph": 1.0}).score(candidates)[2] == 0.0
    assert scorer.k == 60
    assert scorer.weights is None
    assert "k=60" in repr(scorer)


@given(st.lists(signal_maps, min_size=1, max_size=8), st.integers(min_value=1, max_value=100))
def test_rrf_properties(signals: list[dict[str, float]], k: int) -> None:
    candidates = cands(*signals)
    scorer = ReciprocalRankFusion(k=k)
    scores = scorer.score(candidates)
    sources = {n for s in signals for n in s}
    for score, c in zip(scores, candidates, strict=True):
        assert 0.0 <= score <= len(c.signals) / (k + 1) + 1e-12
    assert sum(scores) <= len(sources) * sum(1 / (k + r) for r in range(1, len(candidates) + 1)) + 1e-9
    # Scores belong to documents, not positions: shuffling the input changes nothing.
    by_id = dict(zip([c.id for c in candidates], scores, strict=True))
    reversed_scores = scorer.score(candidates[::-1])
    assert dict(zip([c.id for c in candidates[::-1]], reversed_scores, strict=True)) == pytest.approx(by_id)


def test_callable_scorer() -> None:
    scorer = CallableScorer(lambda s: s.get("semantic", 0.0) * 2)
    assert scorer.score(cands({"semantic": 0.25}, {})) == [0.5, 0.0]
    assert scorer.explain(cands({"semantic": 0.25})) == [{}]
    assert isinstance(as_scorer(lambda s: 1.0), CallableScorer)
    weighted = WeightedScorer()
    assert as_scorer(weighted) is weighted


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None, "1", True])
def test_callable_scorer_rejects_non_numbers(bad: object) -> None:
    with pytest.raises(InvalidInput, match="expected a finite number"):
        CallableScorer(lambda s: bad).score(cands({}))  # type: ignore[arg-type, return-value]


def test_not_a_scorer() -> None:
    with pytest.raises(InvalidInput, match="not callable"):
        CallableScorer(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="neither"):
        as_scorer(3)  # type: ignore[arg-type]
