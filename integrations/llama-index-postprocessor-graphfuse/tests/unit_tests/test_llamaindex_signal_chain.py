"""SignalChainPostprocessor: the signal postprocessors and a fusion in one step, as they run one after the other."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    GraphExpansionPostprocessor,
    PageRankPostprocessor,
    SignalChainPostprocessor,
    StagePostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)

from graphfuse import GraphStore, InvalidInput
from graphfuse.stages import Rerank

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def nodes() -> list[NodeWithScore]:
    out = []
    for i, doc_id in enumerate(["doc1", "doc2", "doc3", "doc1", "nowhere"]):
        meta: dict[str, Any] = {"created_at": (NOW - timedelta(days=30 * i)).isoformat(), "access_count": 10 * i}
        if i == 2:
            meta = {"access_count": 5}  # no timestamp: neutral
        out.append(NodeWithScore(node=TextNode(id_=doc_id, text=f"text {i}", metadata=meta), score=0.9 - 0.2 * i))
    return out


def steps(graph_store: GraphStore, **options: Any) -> list[Any]:
    return [
        TemporalDecayPostprocessor(clock=lambda: NOW, half_life_days=60, **options),
        PageRankPostprocessor(graph_store, **options),
        AccessPostprocessor(**options),
    ]


def view(out: list[NodeWithScore]) -> list[tuple[Any, ...]]:
    return [
        (
            n.node.node_id,
            n.score,
            n.node.metadata,
            n.node.excluded_llm_metadata_keys,
            n.node.excluded_embed_metadata_keys,
        )
        for n in out
    ]


@pytest.mark.parametrize("top_n", [None, 2])
async def test_the_chain_returns_what_the_postprocessors_return_one_after_the_other(
    graph_store: GraphStore, top_n: int | None
) -> None:
    weights = {"semantic": 0.4, "temporal": 0.2, "pagerank": 0.2, "access": 0.2}
    given = nodes()
    before = view(given)
    one_by_one = given
    for post in [*steps(graph_store), WeightedFusionPostprocessor(weights=weights, top_n=top_n)]:
        one_by_one = await post.apostprocess_nodes(one_by_one)
    chain = SignalChainPostprocessor(
        steps(graph_store), fusion=WeightedFusionPostprocessor(weights=weights, top_n=top_n)
    )
    assert view(await chain.apostprocess_nodes(given)) == view(one_by_one)
    assert view(chain.postprocess_nodes(given)) == view(one_by_one)
    assert view(given) == before  # the caller's nodes are left as they were


async def test_without_a_fusion_the_scores_and_order_are_kept_and_a_query_reaching_step_is_honoured(
    graph_store: GraphStore,
) -> None:
    given = nodes()
    one_by_one = given
    for post in steps(graph_store, id_key=None):
        one_by_one = post.postprocess_nodes(one_by_one)
    chain = SignalChainPostprocessor(steps(graph_store))
    assert view(chain.postprocess_nodes(given)) == view(one_by_one)
    assert [n.score for n in one_by_one] == [0.9, 0.9 - 0.2 * 3, 0.9 - 0.2, 0.9 - 0.4, 0.9 - 0.2 * 4]
    bundle = QueryBundle("which doc")
    assert view(chain.postprocess_nodes(given, query_bundle=bundle)) == view(one_by_one)


def test_errors_are_the_postprocessors_own(graph_store: GraphStore) -> None:
    bad = [NodeWithScore(node=TextNode(id_="doc1", text="x", metadata={"created_at": "yesterday"}), score=0.5)]
    with pytest.raises(InvalidInput, match="not an ISO 8601 timestamp") as alone:
        TemporalDecayPostprocessor().postprocess_nodes(bad)
    with pytest.raises(InvalidInput, match="not an ISO 8601 timestamp") as chained:
        SignalChainPostprocessor(steps(graph_store)).postprocess_nodes(bad)
    assert str(chained.value) == str(alone.value)
    assert SignalChainPostprocessor(steps(graph_store)).postprocess_nodes([]) == []


def test_only_signal_steps_with_one_node_mapping(graph_store: GraphStore) -> None:
    with pytest.raises(InvalidInput, match="GraphExpansionPostprocessor: run it as a postprocessor of its own"):
        SignalChainPostprocessor([GraphExpansionPostprocessor(graph_store)])
    with pytest.raises(InvalidInput, match="does more than set a signal"):
        SignalChainPostprocessor([StagePostprocessor(Rerank(_Reranker()))])
    with pytest.raises(InvalidInput, match="maps nodes differently"):
        SignalChainPostprocessor([AccessPostprocessor(), AccessPostprocessor(signals_key="other")])
    with pytest.raises(InvalidInput, match="id_key from its steps"):
        SignalChainPostprocessor([AccessPostprocessor()], id_key="doc")
    with pytest.raises(InvalidInput, match="at least one step"):
        SignalChainPostprocessor([])
    with pytest.raises(InvalidInput, match="fusion must be"):
        SignalChainPostprocessor([AccessPostprocessor()], fusion=AccessPostprocessor())  # type: ignore[arg-type]
    chain = SignalChainPostprocessor(
        [AccessPostprocessor(id_key="doc")], fusion=WeightedFusionPostprocessor(id_key="doc")
    )
    assert chain.id_key == "doc"
    assert [type(s).__name__ for s in chain.steps] == ["AccessPostprocessor"]
    chain.steps[0].signals_key = "other"  # a step changed after the chain was built
    with pytest.raises(InvalidInput, match="maps nodes differently"):
        chain.postprocess_nodes(nodes())


class _Reranker:
    async def rerank(self, query: str, documents: list[Any]) -> list[float]:
        return [0.5 for _ in documents]
