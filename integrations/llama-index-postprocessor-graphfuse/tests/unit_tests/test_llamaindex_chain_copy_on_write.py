"""A chain of postprocessors never mutates nodes from elsewhere; the nodes a GraphFuse step returned are
GraphFuse's own, and the next GraphFuse step updates them in place (same results as copying them)."""

from __future__ import annotations

import copy
from datetime import timedelta, timezone

import pytest
from _llamaindex_post_corpus import NOW, clock
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    PageRankPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import SIGNALS_KEY

from graphfuse import GraphStore
from graphfuse.stores import InMemoryGraphStore


def nodes() -> list[NodeWithScore]:
    stamps = {
        "a": (NOW - timedelta(days=90)).isoformat(),
        "b": (NOW - timedelta(days=90)).astimezone(timezone(timedelta(hours=5))).isoformat(),  # same instant
        "c": (NOW - timedelta(days=90)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return [
        NodeWithScore(
            node=TextNode(id_=i, text=f"text {i}", metadata={"created_at": s, "access_count": n}),
            score=score,
        )
        for (i, s), n, score in zip(stamps.items(), (10, 0, 5), (0.9, 0.0, 0.4), strict=True)
    ]


def _shown(nodes: list[NodeWithScore]) -> list[tuple[object, ...]]:
    return [
        (
            n.node.node_id,
            n.score,
            n.node.metadata,
            n.node.excluded_embed_metadata_keys,
            n.node.excluded_llm_metadata_keys,
        )
        for n in nodes
    ]


@pytest.mark.parametrize("sync", [True, False])
async def test_the_input_is_untouched_and_later_steps_update_graphfuses_own_nodes(
    graph_store: GraphStore, sync: bool
) -> None:
    chain = [
        TemporalDecayPostprocessor(clock=clock),
        PageRankPostprocessor(graph_store),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.5}),
    ]
    first = nodes()
    untouched = copy.deepcopy(first)
    current = first
    for k, post in enumerate(chain):
        # The reference: the same step on a deep copy (a plain list of nodes from elsewhere: copied).
        reference = copy.deepcopy(current)
        expected = post.postprocess_nodes(reference) if sync else await post.apostprocess_nodes(reference)
        out = post.postprocess_nodes(current) if sync else await post.apostprocess_nodes(current)
        assert _shown(out) == _shown(expected)
        if k == 0:  # nodes from elsewhere: copied, never mutated
            assert not {id(n) for n in out} & {id(n) for n in current}
            assert not {id(n.node) for n in out} & {id(n.node) for n in current}
        else:  # GraphFuse's own nodes: updated in place, the same objects come back
            assert {id(n) for n in out} == {id(n) for n in current}
        current = out
    assert _shown(first) == _shown(untouched)
    by_id = {n.node.node_id: n for n in current}
    signals = {i: n.node.metadata[SIGNALS_KEY] for i, n in by_id.items()}
    # One half-life old, whatever the offset the timestamp was written with.
    assert [signals[i]["temporal"] for i in "abc"] == pytest.approx([0.5, 0.5, 0.5])
    assert signals["b"]["semantic"] == 0.0
    assert signals["b"]["access"] == 0.0
    assert [n.node.node_id for n in current] == ["a", "c", "b"]
    for n in current:
        assert SIGNALS_KEY not in n.node.get_content(metadata_mode=MetadataMode.EMBED)
        assert SIGNALS_KEY not in n.node.get_content(metadata_mode=MetadataMode.LLM)


async def test_mutating_a_returned_node_does_not_reach_the_input() -> None:
    first = nodes()
    out = await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(first)
    again = await AccessPostprocessor().apostprocess_nodes(out)
    assert again[0] is out[0]  # GraphFuse's own node, updated in place: the earlier list sees the update
    assert "access" in out[0].node.metadata[SIGNALS_KEY]
    again[0].node.metadata[SIGNALS_KEY]["temporal"] = 0.0
    again[0].score = 0.0
    assert SIGNALS_KEY not in first[0].node.metadata
    assert first[0].score == 0.9


async def test_a_list_passed_to_two_steps_is_updated_by_both() -> None:
    # The documented consequence of ownership: a returned list passed to two GraphFuse steps.
    out = TemporalDecayPostprocessor(clock=clock).postprocess_nodes(nodes())
    AccessPostprocessor().postprocess_nodes(out)
    assert all("access" in n.node.metadata[SIGNALS_KEY] for n in out)
    # A copy of the list (copy.copy, slicing, list(...)) is a plain list: its nodes are copied, not updated.
    before = copy.deepcopy(out)
    second = PageRankPostprocessor(InMemoryGraphStore()).postprocess_nodes(list(out))
    assert _shown(out) == _shown(before)
    assert all("pagerank" in n.node.metadata[SIGNALS_KEY] for n in second)
