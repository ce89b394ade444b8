"""A chain reuses what the previous GraphFuse step converted, and never a stale conversion."""

from __future__ import annotations

from datetime import timedelta

import pytest
from _llamaindex_post_corpus import NOW, clock
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    PageRankPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import SIGNALS_KEY
from llama_index.retrievers.graphfuse.nodes import NodeMapping, node_with_signals, scored, to_candidates

from graphfuse import Document, stage_traits
from graphfuse.stages import PageRank
from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore


def fresh(days: int = 90, count: int = 10) -> list[NodeWithScore]:
    meta = {"created_at": (NOW - timedelta(days=days)).isoformat(), "access_count": count}
    return [NodeWithScore(node=TextNode(id_="a", text="alpha", metadata=meta), score=0.8)]


def temporal(nodes: list[NodeWithScore]) -> float:
    return float(nodes[0].node.metadata[SIGNALS_KEY]["temporal"])


def test_a_returned_node_converts_like_a_fresh_one() -> None:
    mapping = NodeMapping()
    out = TemporalDecayPostprocessor(clock=clock).postprocess_nodes(fresh())
    reused = to_candidates(out, mapping).candidates[0]
    rebuilt = to_candidates([NodeWithScore(node=out[0].node.model_copy(deep=True), score=0.8)], mapping).candidates[0]
    assert reused.document == rebuilt.document
    assert dict(reused.signals) == dict(rebuilt.signals) == {"semantic": 0.8, "temporal": pytest.approx(0.5)}


@pytest.mark.parametrize(
    "edit",
    ["replace metadata value", "replace metadata dict", "edit signals in place", "replace text", "new source"],
)
def test_editing_a_returned_node_is_seen_by_the_next_step(edit: str) -> None:
    decay = TemporalDecayPostprocessor(clock=clock)
    out = decay.postprocess_nodes(fresh(days=90))
    node = out[0].node
    assert isinstance(node, TextNode)
    older = (NOW - timedelta(days=180)).isoformat()
    if edit == "replace metadata value":
        node.metadata["created_at"] = older
    elif edit == "replace metadata dict":
        node.metadata = {**node.metadata, "created_at": older}
    elif edit == "edit signals in place":
        node.metadata[SIGNALS_KEY]["semantic"] = 0.1
    elif edit == "replace text":
        node.text = "beta"
    else:
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="parent")
    candidate = to_candidates(out, NodeMapping()).candidates[0]
    again = decay.postprocess_nodes(out)
    if edit.startswith("replace metadata"):
        assert temporal(again) == pytest.approx(0.25)
    elif edit == "edit signals in place":
        assert candidate.signals["semantic"] == 0.1
    elif edit == "replace text":
        assert candidate.document.content == "beta"
    else:
        assert candidate.id == "parent"


async def test_a_chain_gives_the_same_signals_on_fresh_and_on_reused_nodes() -> None:
    store = InMemoryGraphStore()
    await store.store_documents([Document("a", "alpha")])
    chain = [
        TemporalDecayPostprocessor(clock=clock),
        PageRankPostprocessor(store),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.5}),
    ]
    out = fresh()
    for post in chain:
        out = post.postprocess_nodes(out)
    # The same steps, each on a deep copy (nothing reused).
    cold = fresh()
    for post in chain:
        cold = post.postprocess_nodes([NodeWithScore(node=n.node.model_copy(deep=True), score=n.score) for n in cold])
    assert out[0].node.metadata == cold[0].node.metadata
    assert out[0].score == cold[0].score


def test_reassigning_a_field_rebuilds_the_stage() -> None:
    decay = TemporalDecayPostprocessor(clock=clock)
    assert temporal(decay.postprocess_nodes(fresh(days=90))) == pytest.approx(0.5)
    decay.half_life = timedelta(days=45)
    assert temporal(decay.postprocess_nodes(fresh(days=90))) == pytest.approx(0.25)
    decay.signals_key = "other_signals"
    assert "other_signals" in decay.postprocess_nodes(fresh())[0].node.metadata


def test_fast_copies_equal_pydantics() -> None:
    node = fresh()[0].node
    copy = node_with_signals(node, {"temporal": 0.5}, SIGNALS_KEY)
    expected = node.model_copy(
        update={
            "metadata": {**node.metadata, SIGNALS_KEY: {"temporal": 0.5}},
            "excluded_embed_metadata_keys": [SIGNALS_KEY],
            "excluded_llm_metadata_keys": [SIGNALS_KEY],
        }
    )
    assert copy == expected
    assert copy.model_fields_set == expected.model_fields_set
    copy.metadata["x"] = 1
    assert "x" not in node.metadata
    assert SIGNALS_KEY not in node.metadata
    assert scored(node, 0.25) == NodeWithScore(node=node, score=0.25)
    assert scored(node, None).model_dump() == NodeWithScore(node=node, score=None).model_dump()


async def test_pagerank_runs_inline_only_over_a_store_that_never_suspends(tmp_path: object) -> None:
    assert stage_traits(PageRank(InMemoryGraphStore())).in_memory_only
    store = SQLiteGraphStore(str(tmp_path) + "/g.db")
    try:
        assert not stage_traits(PageRank(store)).in_memory_only
    finally:
        await store.close()


def test_a_step_reading_another_timestamp_key_converts_afresh() -> None:
    meta = {"created_at": (NOW - timedelta(days=90)).isoformat(), "published": (NOW - timedelta(days=180)).isoformat()}
    nodes = [NodeWithScore(node=TextNode(id_="a", text="alpha", metadata=meta), score=0.8)]
    out = TemporalDecayPostprocessor(clock=clock).postprocess_nodes(nodes)
    assert temporal(out) == pytest.approx(0.5)
    again = TemporalDecayPostprocessor(clock=clock, created_at_key="published").postprocess_nodes(out)
    assert temporal(again) == pytest.approx(0.25)
