"""AdaptiveScorer: per-query lexical/vector weights from ranking confidence, scaled by the corpus."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query, RunContext
from graphfuse.indexing import EntityMatcher, TitleLinker
from graphfuse.multihop import MULTIHOP_WEIGHTS, BM25Index, adaptive_strength
from graphfuse.scoring import AdaptiveScorer, WeightedScorer, ranking_confidence

BASE = {"semantic": 1.0, "ppr": 3.0, "entity": 1.0}


def cands(*signals: Mapping[str, float]) -> list[Candidate]:
    return [Candidate(Document(f"d{i}"), s) for i, s in enumerate(signals)]


def test_ranking_confidence_edges() -> None:
    assert ranking_confidence([]) == 0.0
    assert ranking_confidence([0.0, 0.0]) == 0.0  # nothing found
    assert ranking_confidence([0.7]) == 1.0  # a single hit stands out entirely
    assert ranking_confidence([0.5, 0.5, 0.5, 0.5, 0.5]) == 0.0  # flat
    assert ranking_confidence([1.0, 0.9, 0.8, 0.7, 0.2], depth=5) == pytest.approx(0.8)
    assert ranking_confidence([1.0, 0.9, 0.8, 0.7, 0.2], depth=2) == pytest.approx(0.1)
    assert ranking_confidence([0.2, 1.0, 0.6], depth=5) == pytest.approx(0.8)  # order does not matter


def test_peaked_lexical_ranking_gets_the_full_lexical_weight() -> None:
    scorer = AdaptiveScorer(BASE, lexical_weight=2.0, vector_boost=0.0)
    peaked = cands({"bm25": 1.0}, {"bm25": 0.3}, {"bm25": 0.2})
    flat = cands({"bm25": 1.0}, {"bm25": 0.95}, {"bm25": 0.9})
    assert scorer.fusion(peaked).weights["bm25"] == pytest.approx(2.0)  # 0.7 / 0.4 capped at 1
    assert scorer.fusion(flat).weights["bm25"] == pytest.approx(2.0 * 0.05 / 0.4)
    assert scorer.fusion(peaked).features["lexical_confidence"] == pytest.approx(0.7)


def test_vector_weight_grows_with_vector_confidence() -> None:
    scorer = AdaptiveScorer(BASE, lexical_weight=0.0, vector_boost=2.0)
    sure = cands(*({"semantic": v} for v in (0.9, 0.5, 0.5, 0.5, 0.4)))
    unsure = cands(*({"semantic": v} for v in (0.5, 0.5, 0.5, 0.5, 0.5)))
    assert scorer.fusion(sure).weights["semantic"] == pytest.approx(3.0)
    assert scorer.fusion(unsure).weights["semantic"] == pytest.approx(1.0)
    assert scorer.fusion(sure).weights["ppr"] == 3.0  # graph signals keep their base weight


def test_strength_zero_is_exactly_the_fixed_weights() -> None:
    signals = ({"semantic": 0.9, "bm25": 1.0, "ppr": 0.2}, {"semantic": 0.1, "bm25": 0.1, "entity": 1.0})
    fixed = WeightedScorer(BASE)
    pinned = AdaptiveScorer(BASE, strength=0.0)
    assert pinned.score(cands(*signals)) == fixed.score(cands(*signals))
    assert dict(pinned.fusion(cands(*signals)).weights) == BASE
    # the same candidates with full strength rank differently: bm25 now counts
    adapted = AdaptiveScorer(BASE, strength=1.0).score(cands(*signals))
    assert adapted != fixed.score(cands(*signals))


def test_no_lexical_signal_and_no_candidates() -> None:
    scorer = AdaptiveScorer(BASE)
    only_vectors = cands({"semantic": 0.8}, {"semantic": 0.2})
    assert scorer.fusion(only_vectors).weights["bm25"] == 0.0
    assert scorer.score([]) == []
    assert scorer.explain([]) == []
    assert scorer.fusion([]).weights["semantic"] == 1.0


def test_explain_contributions_reveal_the_chosen_weights() -> None:
    scorer = AdaptiveScorer(BASE)
    c = cands({"semantic": 0.9, "bm25": 1.0}, {"semantic": 0.4, "bm25": 0.2}, {"semantic": 0.3, "ppr": 0.5})
    weights = scorer.fusion(c).weights
    parts = scorer.explain(c)
    assert parts[0]["bm25"] == pytest.approx(weights["bm25"] * 1.0)
    assert parts[2]["ppr"] == pytest.approx(3.0 * 0.5)
    assert scorer.score(c) == pytest.approx([sum(p.values()) for p in parts])
    assert scorer.score_signals((), [x.signals for x in c]) == scorer.score(c)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lexical_weight": -1.0},
        {"vector_boost": float("nan")},
        {"reference": 0.0},
        {"lexical_depth": 1},
        {"vector_depth": True},
        {"strength": 1.5},
        {"lexical": ""},
    ],
)
def test_bad_parameters_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        AdaptiveScorer(BASE, **kwargs)  # type: ignore[arg-type]


def test_adaptive_strength_from_the_corpus() -> None:
    bm25 = BM25Index([("a", "Alpha is a town", {}), ("b", "Beta is a river", {})])
    titled = TitleLinker()
    titled.add("Alpha", "a")
    titled.add("Beta", "b")
    half = TitleLinker()
    half.add("Alpha", "a")
    assert adaptive_strength(None, titled) == 0.0  # no lexical ranking to weigh
    assert adaptive_strength(BM25Index([]), titled) == 0.0  # empty store
    assert adaptive_strength(bm25, titled) == 0.0  # titles give the graph: fixed weights
    assert adaptive_strength(bm25, half) == pytest.approx(0.5)
    assert adaptive_strength(bm25, None) == 1.0
    assert adaptive_strength(bm25, titled, EntityMatcher({"wolfgang schulz": "e1"})) == 1.0  # text graph
    assert adaptive_strength(bm25, titled, EntityMatcher({})) == 0.0  # no entities found


class _Given:
    name = "given"

    def __init__(self, signals: Sequence[Mapping[str, float]]) -> None:
        self._signals = signals

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return cands(*self._signals)


def test_pipeline_results_show_the_adapted_weights() -> None:
    signals = [{"semantic": 0.5, "bm25": 1.0}, {"semantic": 0.6, "bm25": 0.1}, {"semantic": 0.55}]
    scorer = AdaptiveScorer(MULTIHOP_WEIGHTS)
    results = Pipeline([_Given(signals)], scorer).retrieve("q", top_k=3)
    weights = scorer.fusion(cands(*signals)).weights
    assert weights["bm25"] == pytest.approx(2.0)
    top = results[0]
    assert top.id == "d0"  # the peaked lexical hit wins, which the fixed weights would not rank first
    assert top.contributions["bm25"] / top.signals["bm25"] == pytest.approx(weights["bm25"])
    fixed = Pipeline([_Given(signals)], WeightedScorer(MULTIHOP_WEIGHTS)).retrieve("q", top_k=3)
    assert fixed[0].id == "d1"


def test_multihop_preset_adaptive_by_default_fixed_on_request() -> None:
    from graphfuse.embedders import HashingEmbedder
    from graphfuse.multihop import multihop
    from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(None), HashingEmbedder()
    bm25 = BM25Index([("a", "chat about lunch", {}), ("b", "chat about trains", {})])
    adapted = multihop(graph, vectors, embedder, bm25=bm25, linker=TitleLinker())
    assert isinstance(adapted.scorer, AdaptiveScorer)
    assert "strength=1.0" in repr(adapted.scorer)  # no titles: the rankings decide
    pinned = multihop(graph, vectors, embedder, bm25=bm25, linker=TitleLinker(), adaptive=False)
    assert type(pinned.scorer) is WeightedScorer
    assert dict(pinned.scorer.weights) == dict(MULTIHOP_WEIGHTS)
    with pytest.raises(InvalidInput, match="adaptive"):
        multihop(graph, vectors, embedder, adaptive="yes")  # type: ignore[arg-type]


def test_a_second_hop_the_first_stage_missed_leaves_the_ranking_to_the_graph() -> None:
    scorer = AdaptiveScorer(BASE, lexical_weight=2.0, vector_boost=2.0)
    first = ({"bm25": 1.0, "semantic": 0.9}, {"bm25": 0.2, "semantic": 0.3}, {"semantic": 0.3})
    assert scorer.fusion(cands(*first)).weights["bm25"] == pytest.approx(2.0)
    # The bridge search found a passage neither search did, surely (1.0): fixed weights.
    found = scorer.fusion(cands(*first, {"bridge": 1.0, "ppr": 0.4}))
    assert found.features["second_hop"] == 1.0
    assert found.features["strength"] == 0.0
    assert dict(found.weights) == BASE
    # Half sure: half the adaptation.
    half = scorer.fusion(cands(*first, {"bridge": 0.5}))
    assert half.weights["bm25"] == pytest.approx(1.0)
    assert half.features["strength"] == pytest.approx(0.5)
    # A bridge hit the first stage had found too is no second hop.
    known = scorer.fusion(cands({"bm25": 1.0, "semantic": 0.9, "bridge": 1.0}, *first[1:]))
    assert known.features["second_hop"] == 0.0
    assert known.weights["bm25"] == pytest.approx(2.0)
    # second_hop=None turns the rule off.
    off = AdaptiveScorer(BASE, second_hop=None).fusion(cands(*first, {"bridge": 1.0}))
    assert off.weights["bm25"] == pytest.approx(2.0)
    with pytest.raises(InvalidInput, match="second_hop"):
        AdaptiveScorer(BASE, second_hop="")


def test_time_signals_weigh_more_as_far_as_the_query_adapts() -> None:
    base = {**BASE, "time": 1.0, "event": 1.0}
    scorer = AdaptiveScorer(base, time_boost=2.0)
    dated = ({"bm25": 1.0, "semantic": 0.9, "time": 1.0}, {"bm25": 0.2, "semantic": 0.3, "event": 0.5})
    weights = scorer.fusion(cands(*dated)).weights
    assert weights["time"] == pytest.approx(3.0)
    assert weights["event"] == pytest.approx(3.0)
    assert weights["ppr"] == 3.0
    # Half the strength, half the boost; a second hop (fixed weights) or strength 0, none.
    assert AdaptiveScorer(base, strength=0.5).fusion(cands(*dated)).weights["time"] == pytest.approx(2.0)
    assert scorer.fusion(cands(*dated, {"bridge": 1.0})).weights["time"] == 1.0
    assert AdaptiveScorer(base, strength=0.0).fusion(cands(*dated)).weights["time"] == 1.0
    assert AdaptiveScorer(base, time=()).fusion(cands(*dated)).weights["time"] == 1.0
    assert "time" not in AdaptiveScorer(BASE).fusion(cands(*dated)).weights  # no base weight, none added
    with pytest.raises(InvalidInput, match="time must be a sequence"):
        AdaptiveScorer(base, time="time")
    with pytest.raises(InvalidInput, match="time_boost"):
        AdaptiveScorer(base, time_boost=-1.0)


def test_boosts_are_the_rules_multipliers_of_the_two_rankings() -> None:
    scorer = AdaptiveScorer(BASE, lexical_weight=2.0, vector_boost=2.0)
    sure = ({"bm25": 1.0, "semantic": 0.9}, {"bm25": 0.2, "semantic": 0.4}, *({"semantic": 0.4} for _ in range(3)))
    boosts = scorer.boosts([dict(s) for s in sure])
    assert dict(boosts) == pytest.approx({"bm25": 3.0, "semantic": 3.0})
    # The same multiplier the scorer gives the vector weight.
    assert scorer.fusion(cands(*sure)).weights["semantic"] == pytest.approx(BASE["semantic"] * boosts["semantic"])
    flat = ({"bm25": 1.0, "semantic": 0.5}, {"bm25": 1.0, "semantic": 0.5})
    assert dict(scorer.boosts(flat)) == {"bm25": 1.0, "semantic": 1.0}
    # Strength 0, or a second hop the first stage missed: nothing is boosted.
    assert dict(AdaptiveScorer(BASE, strength=0.0).boosts(sure)) == {"bm25": 1.0, "semantic": 1.0}
    assert dict(scorer.boosts([*sure, {"bridge": 1.0}])) == {"bm25": 1.0, "semantic": 1.0}
    assert dict(scorer.boosts([])) == {"bm25": 1.0, "semantic": 1.0}
