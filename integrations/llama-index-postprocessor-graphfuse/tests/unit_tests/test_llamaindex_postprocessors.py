"""The GraphFuse node postprocessors on their own: signals, fusion, bad input, sync and async paths."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import timedelta

import pytest
from _llamaindex_post_corpus import DOCS, NOW, clock
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    GraphExpansionPostprocessor,
    PageRankPostprocessor,
    RerankPostprocessor,
    StagePostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import SIGNALS_KEY

from graphfuse import Candidate, InvalidInput, NoCandidates, NotFound, Query, RunContext, StageFailed
from graphfuse.plugins import Components


def make_nodes(
    ids: Sequence[str] = ("a", "b", "c"), scores: Sequence[float | None] = (0.9, 0.0, 0.5)
) -> list[NodeWithScore]:
    by_id = {d.id: d for d in DOCS}
    out = []
    for doc_id, score in zip(ids, scores, strict=True):
        d = by_id[doc_id]
        meta = dict(d.metadata)
        if d.created_at is not None:
            meta["created_at"] = d.created_at.isoformat()
        out.append(NodeWithScore(node=TextNode(id_=d.id, text=d.content, metadata=meta), score=score))
    return out


def signals(nodes: list[NodeWithScore]) -> dict[str, dict[str, float]]:
    return {n.node.node_id: n.node.metadata[SIGNALS_KEY] for n in nodes}


async def test_temporal_sets_half_life_decay_and_keeps_order_and_scores() -> None:
    nodes = make_nodes()
    out = await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(nodes)
    assert [n.node.node_id for n in out] == ["a", "b", "c"]
    assert [n.score for n in out] == [0.9, 0.0, 0.5]
    s = signals(out)
    assert s["b"]["temporal"] == pytest.approx(0.5)  # 90 days old = one half-life
    assert s["a"]["temporal"] == pytest.approx(0.5 ** (1 / 90))
    # The incoming score is recorded once as the semantic signal, and 0.0 stays 0.0.
    assert s["b"]["semantic"] == 0.0
    assert s["a"]["semantic"] == 0.9
    # The input nodes are not mutated.
    assert SIGNALS_KEY not in nodes[0].node.metadata


async def test_signals_never_reach_embedding_or_llm_text() -> None:
    out = await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(make_nodes())
    node = out[0].node
    assert SIGNALS_KEY in node.metadata
    assert SIGNALS_KEY not in node.get_content(metadata_mode=MetadataMode.EMBED)
    assert SIGNALS_KEY not in node.get_content(metadata_mode=MetadataMode.LLM)
    assert "tenant" in node.get_content(metadata_mode=MetadataMode.LLM)


@pytest.mark.parametrize(("missing", "expected"), [("neutral", 0.5), ("zero", 0.0)])
async def test_temporal_missing_timestamp_policy(missing: str, expected: float) -> None:
    nodes = [NodeWithScore(node=TextNode(id_="n", text="no date"), score=0.3)]
    out = await TemporalDecayPostprocessor(clock=clock, missing=missing).apostprocess_nodes(nodes)
    assert signals(out)["n"]["temporal"] == expected


async def test_temporal_missing_timestamp_error_names_the_node() -> None:
    nodes = [NodeWithScore(node=TextNode(id_="n", text="no date"), score=0.3)]
    with pytest.raises(InvalidInput, match="'n'"):
        await TemporalDecayPostprocessor(clock=clock, missing="error").apostprocess_nodes(nodes)


async def test_temporal_accepts_datetime_and_posix_timestamps() -> None:
    old = NOW - timedelta(days=180)
    nodes = [
        NodeWithScore(node=TextNode(id_="dt", text="x", metadata={"created_at": old}), score=0.1),
        NodeWithScore(node=TextNode(id_="ts", text="y", metadata={"created_at": old.timestamp()}), score=0.1),
    ]
    s = signals(await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(nodes))
    assert s["dt"]["temporal"] == pytest.approx(0.25)
    assert s["ts"]["temporal"] == pytest.approx(0.25)


async def test_bad_timestamp_is_invalid_input() -> None:
    nodes = [NodeWithScore(node=TextNode(id_="n", text="x", metadata={"created_at": "last tuesday"}), score=0.1)]
    with pytest.raises(InvalidInput, match="ISO 8601"):
        await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(nodes)


async def test_bad_configuration_is_invalid_input(graph_store: object) -> None:
    with pytest.raises(InvalidInput, match="half_life"):
        TemporalDecayPostprocessor(half_life=timedelta(0))
    with pytest.raises(InvalidInput):
        TemporalDecayPostprocessor(missing="sometimes")
    with pytest.raises(InvalidInput, match="depth"):
        GraphExpansionPostprocessor(graph_store, depth=4)
    with pytest.raises(InvalidInput, match="graph_store"):
        PageRankPostprocessor(object())


async def test_score_above_one_is_refused_with_a_hint() -> None:
    nodes = [NodeWithScore(node=TextNode(id_="n", text="x"), score=7.5)]
    with pytest.raises(InvalidInput, match="take no score signal"):
        await AccessPostprocessor().apostprocess_nodes(nodes)
    out = await AccessPostprocessor(score_signal=None).apostprocess_nodes(nodes)
    assert "semantic" not in signals(out)["n"]


async def test_pagerank_and_access(graph_store: object) -> None:
    unknown = NodeWithScore(node=TextNode(id_="zz", text="not in the graph"), score=0.5)
    out = await PageRankPostprocessor(graph_store).apostprocess_nodes([*make_nodes(("a", "b"), (0.5, 0.5)), unknown])
    s = signals(out)
    assert s["b"]["pagerank"] > s["a"]["pagerank"]
    assert s["zz"]["pagerank"] == 0.5  # no score in the store: the default
    out = await AccessPostprocessor().apostprocess_nodes(make_nodes(("a", "b", "c", "d"), (0.5,) * 4))
    s = signals(out)
    assert (s["a"]["access"], s["b"]["access"], s["c"]["access"], s["d"]["access"]) == (0.1, 1.0, 0.0, 0.5)
    with pytest.raises(InvalidInput, match="'d'"):
        await AccessPostprocessor(missing="error").apostprocess_nodes(make_nodes(("d",), (0.5,)))


async def test_weighted_fusion_orders_by_the_weighted_signals() -> None:
    nodes = await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(make_nodes())
    fused = await WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.5}).apostprocess_nodes(nodes)
    s = signals(fused)
    expected = {i: 0.5 * s[i]["semantic"] + 0.5 * s[i]["temporal"] for i in s}
    assert [n.node.node_id for n in fused] == sorted(expected, key=lambda i: -expected[i])
    for n in fused:
        assert n.score == pytest.approx(expected[n.node.node_id])
    # Fusing again does not re-read the fused score as the semantic signal.
    again = await WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.5}).apostprocess_nodes(fused)
    assert [n.score for n in again] == [n.score for n in fused]


async def test_rrf_fusion_honours_weights() -> None:
    nodes = await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(make_nodes(scores=(0.9, 0.0, 0.5)))
    by_semantic = await WeightedFusionPostprocessor(
        mode="rrf", weights={"semantic": 1.0, "temporal": 0.1}
    ).apostprocess_nodes(nodes)
    by_temporal = await WeightedFusionPostprocessor(
        mode="rrf", weights={"semantic": 0.1, "temporal": 1.0}
    ).apostprocess_nodes(nodes)
    assert [n.node.node_id for n in by_semantic] == ["a", "c", "b"]
    assert [n.node.node_id for n in by_temporal] == ["a", "b", "c"]
    top = await WeightedFusionPostprocessor(mode="rrf", top_n=1).apostprocess_nodes(nodes)
    assert len(top) == 1


async def test_empty_node_list() -> None:
    assert await TemporalDecayPostprocessor().apostprocess_nodes([]) == []
    assert TemporalDecayPostprocessor().postprocess_nodes([]) == []
    with pytest.raises(NoCandidates):
        await WeightedFusionPostprocessor(require_nodes=True).apostprocess_nodes([])


class KeywordReranker:
    """Scores 1.0 for documents containing the word, else 0.0; records the calling thread."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.threads.append(threading.current_thread().name)
        word = query.split()[-1].lower()
        return [1.0 if word in d.lower() else 0.0 for d in documents]


class Recorder(BaseEventHandler):
    events: list[str]

    @classmethod
    def class_name(cls) -> str:
        return "Recorder"

    def handle(self, event: BaseEvent, **kwargs: object) -> None:
        self.events.append(event.class_name())


async def test_rerank_moves_matches_first_keeps_signals_and_emits_events() -> None:
    recorder = Recorder(events=[])
    root = get_dispatcher()
    root.add_event_handler(recorder)
    try:
        reranker = KeywordReranker()
        post = RerankPostprocessor(reranker, top_n=2)
        nodes = await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(make_nodes())
        out = await post.apostprocess_nodes(nodes, query_str="what about the flood")
    finally:
        root.event_handlers.remove(recorder)
    # Only a and b are reranked (top_n=2); neither mentions a flood, so they keep their order; c follows.
    assert [n.node.node_id for n in out] == ["a", "b", "c"]
    s = signals(out)
    assert s["a"]["rerank"] == 0.0
    assert "rerank" not in s["c"]
    assert s["a"]["temporal"] > 0  # rerank never erases the other signals
    assert "ReRankStartEvent" in recorder.events
    assert "ReRankEndEvent" in recorder.events
    out = await RerankPostprocessor(reranker, top_n=3).apostprocess_nodes(nodes, query_str="the flood")
    assert out[0].node.node_id == "c"


async def test_stage_needing_the_query_refuses_a_call_without_one() -> None:
    post = RerankPostprocessor(KeywordReranker())
    with pytest.raises(InvalidInput, match="needs the query"):
        await post.apostprocess_nodes(make_nodes())
    with pytest.raises(InvalidInput, match="needs the query"):
        post.postprocess_nodes(make_nodes(), query_bundle=QueryBundle(query_str=""))


async def test_graph_expansion_postprocessor_filter_and_unknown(graph_store: object) -> None:
    nodes = [*make_nodes(("a",), (0.8,)), NodeWithScore(node=TextNode(id_="zz", text="not in graph"), score=0.7)]
    out = await GraphExpansionPostprocessor(graph_store, depth=2, filter={"tenant": "acme"}).apostprocess_nodes(nodes)
    ids = [n.node.node_id for n in out]
    assert ids == ["a", "zz", "b", "c"]  # x belongs to another tenant: never reached across the hop
    by_id = {n.node.node_id: n for n in out}
    assert by_id["b"].score == pytest.approx(0.4)
    assert by_id["c"].score == pytest.approx(0.2)
    # The core stage: graph = seed strength (its score as the semantic signal) * decay ** distance.
    assert signals(out)["c"]["graph"] == pytest.approx(0.2)
    assert signals(out)["zz"]["graph"] == 0.7  # a seed the store does not hold keeps its strength
    with pytest.raises(NotFound, match="zz"):
        await GraphExpansionPostprocessor(graph_store, unknown="error").apostprocess_nodes(nodes)


async def test_stage_postprocessor_by_registered_name(graph_store: object) -> None:
    post = StagePostprocessor("temporal", half_life=timedelta(days=90), clock=clock)
    out = post.postprocess_nodes(make_nodes())
    assert signals(out)["b"]["temporal"] == pytest.approx(0.5)
    post = StagePostprocessor("pagerank", Components(graph_store=graph_store), default=0.25)
    unknown = NodeWithScore(node=TextNode(id_="zz", text="not in the graph"), score=0.1)
    assert signals(await post.apostprocess_nodes([unknown]))["zz"]["pagerank"] == 0.25
    with pytest.raises(InvalidInput, match="graph_store"):
        StagePostprocessor("pagerank")


class FreshnessBoost:
    """A third-party stage: a plugin signal, needs the query."""

    name = "boost"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return [c.with_signal("boost", 1.0 if query.text in (c.document.content or "") else 0.0) for c in candidates]


class BrokenStage:
    name = "broken"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        raise RuntimeError("disk on fire")


async def test_stage_postprocessor_with_a_stage_object() -> None:
    post = StagePostprocessor(FreshnessBoost())
    out = await post.apostprocess_nodes(make_nodes(), query_str="flood")
    assert signals(out)["c"]["boost"] == 1.0
    assert signals(out)["a"]["boost"] == 0.0
    with pytest.raises(InvalidInput, match="needs the query"):
        await post.apostprocess_nodes(make_nodes())
    with pytest.raises(StageFailed, match="broken"):
        await StagePostprocessor(BrokenStage()).apostprocess_nodes(make_nodes(), query_str="q")
    with pytest.raises(InvalidInput, match="only when the stage is given by name"):
        StagePostprocessor(FreshnessBoost(), depth=2)


async def test_async_path_never_calls_the_sync_path(graph_store: object, monkeypatch: pytest.MonkeyPatch) -> None:
    chain = [
        TemporalDecayPostprocessor(clock=clock),
        PageRankPostprocessor(graph_store),
        AccessPostprocessor(),
        GraphExpansionPostprocessor(graph_store),
        RerankPostprocessor(KeywordReranker()),
        WeightedFusionPostprocessor(),
    ]
    for post in chain:

        def boom(*args: object, **kwargs: object) -> list[NodeWithScore]:
            raise AssertionError("sync path called from the event loop")

        monkeypatch.setattr(type(post), "_postprocess_nodes", boom)
    nodes = make_nodes()
    for post in chain:
        nodes = await post.apostprocess_nodes(nodes, query_str="flood")
    assert nodes
    assert all(n.score is not None for n in nodes)


def test_sync_path_gives_the_same_result(graph_store: object) -> None:
    chain = [TemporalDecayPostprocessor(clock=clock), PageRankPostprocessor(graph_store), WeightedFusionPostprocessor()]
    nodes = make_nodes()
    for post in chain:
        nodes = post.postprocess_nodes(nodes)
    assert next(n.node.node_id for n in nodes) == "a"
    assert set(signals(nodes)["a"]) == {"semantic", "temporal", "pagerank"}


def test_postprocessors_serialise_to_json_and_back() -> None:
    temporal = TemporalDecayPostprocessor(half_life=timedelta(days=3), missing="zero")
    again = TemporalDecayPostprocessor.from_json(temporal.to_json())
    assert again.half_life == timedelta(days=3)
    assert again.missing == "zero"
    fusion = WeightedFusionPostprocessor(weights={"semantic": 1.0}, mode="rrf", k=10)
    assert WeightedFusionPostprocessor.from_json(fusion.to_json()).k == 10
    assert '"half_life": 172800.0' in StagePostprocessor("temporal", half_life=timedelta(days=2)).to_json()


async def test_stage_postprocessor_filter_reaches_the_stage(graph_store: object) -> None:
    nodes = make_nodes(("a", "b"), (0.5, 0.5))
    nodes[1].node.metadata["tenant"] = "other"
    post = StagePostprocessor("hydrate", Components(graph_store=graph_store), filter={"tenant": "acme"})
    assert [n.node.node_id for n in await post.apostprocess_nodes(nodes)] == ["a"]


async def test_graph_expansion_min_seed_score_keeps_weak_hits_from_spreading(graph_store: object) -> None:
    # "a" is a strong hit, "b" a weak one (cosine 0.05): only "a" is a seed.
    nodes = make_nodes(("a", "b"), (0.8, 0.05))
    out = await GraphExpansionPostprocessor(graph_store, depth=1, min_seed_score=0.3).apostprocess_nodes(nodes)
    got = signals(out)
    assert got["a"]["graph"] == 0.8  # a seed's graph signal is its strength
    assert got["b"]["graph"] == 0.0  # a weak hit gets no graph boost and is not expanded from
    everything = await GraphExpansionPostprocessor(graph_store, depth=1).apostprocess_nodes(nodes)
    assert signals(everything)["b"]["graph"] == 0.05  # without the threshold every node is a seed
    unscored = [NodeWithScore(node=n.node, score=None) for n in nodes]
    out = await GraphExpansionPostprocessor(graph_store, depth=1, min_seed_score=0.3).apostprocess_nodes(unscored)
    assert signals(out)["a"]["graph"] == 1.0  # no score, no semantic signal: a seed of strength 1.0
    for bad in (float("nan"), float("inf"), "high"):
        with pytest.raises(InvalidInput, match="min_seed_score"):
            GraphExpansionPostprocessor(graph_store, min_seed_score=bad)
