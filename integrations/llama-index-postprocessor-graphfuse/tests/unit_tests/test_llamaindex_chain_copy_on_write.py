"""A chain of postprocessors is copy-on-write: no step mutates what the previous one returned."""

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


@pytest.mark.parametrize("sync", [True, False])
async def test_every_step_leaves_its_input_untouched(graph_store: GraphStore, sync: bool) -> None:
    chain = [
        TemporalDecayPostprocessor(clock=clock),
        PageRankPostprocessor(graph_store),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.5}),
    ]
    current = nodes()
    for post in chain:
        before = copy.deepcopy(current)
        out = post.postprocess_nodes(current) if sync else await post.apostprocess_nodes(current)
        for was, now in zip(before, current, strict=True):
            assert now.score == was.score
            assert now.node.metadata == was.node.metadata
            assert now.node.excluded_embed_metadata_keys == was.node.excluded_embed_metadata_keys
            assert now.node.excluded_llm_metadata_keys == was.node.excluded_llm_metadata_keys
        assert not {id(n) for n in out} & {id(n) for n in current}
        current = out
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
    again[0].node.metadata[SIGNALS_KEY]["temporal"] = 0.0
    again[0].score = 0.0
    assert out[0].node.metadata[SIGNALS_KEY]["temporal"] == pytest.approx(0.5)
    assert out[0].score == 0.9
    assert SIGNALS_KEY not in first[0].node.metadata
