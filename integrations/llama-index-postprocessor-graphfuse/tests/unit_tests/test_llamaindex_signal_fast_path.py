"""Signal stages and fusion on nodes without candidates give what the candidate path gives.

The reference is the generic path every stage takes: ``to_candidates`` -> ``run_stage`` ->
``from_candidates`` (and, for fusion, the scorer over candidates). Random nodes: shared graph
ids, scores of every kind, signals already carried, timestamps in every form (or bad), access
counts (or bad), other node relationships.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _llamaindex_post_corpus import NOW, clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    StagePostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse.nodes import (
    NodeMapping,
    apply_signal_stage,
    from_candidates,
    fuse_nodes,
    node_with_signals,
    to_candidates,
)

from graphfuse import Document, Query, Relation, SignalScorer, Stage, as_signal_stage, run_stage
from graphfuse.scoring import ReciprocalRankFusion, WeightedScorer
from graphfuse.stages import AccessPopularity, PageRank, TemporalDecay
from graphfuse.stores import InMemoryGraphStore

IDS = ["a", "b", "c", "d", "e"]


def _stamp(draw: st.DrawFn) -> object:
    kind = draw(st.sampled_from(["iso", "iso-z", "datetime", "naive", "posix", "bad", "none"]))
    when = NOW - timedelta(hours=draw(st.integers(-48, 24 * 400)))
    if kind == "iso":
        return when.isoformat()
    if kind == "iso-z":
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "datetime":
        return when
    if kind == "naive":
        return when.replace(tzinfo=None)
    if kind == "posix":
        return when.timestamp()
    return "not a time" if kind == "bad" else None


@st.composite
def node_lists(draw: st.DrawFn, allow_bad: bool = True) -> list[NodeWithScore]:
    out = []
    for i in range(draw(st.integers(0, 8))):
        metadata: dict[str, Any] = {}
        for key in ("created_at", "updated_at"):
            if draw(st.booleans()):
                value = _stamp(draw)
                if value != "not a time" or allow_bad:
                    metadata[key] = value
        if draw(st.booleans()):
            metadata["access_count"] = draw(
                st.one_of(
                    st.integers(0, 3000),
                    st.floats(0, 3000),
                    st.sampled_from(["42", " 7 "] + (["many", -1] if allow_bad else [])),
                )
            )
        if draw(st.booleans()):
            metadata["graphfuse_signals"] = draw(
                st.dictionaries(
                    st.sampled_from(["semantic", "temporal", "graph", "access"]),
                    st.floats(0, 1) if not allow_bad else st.one_of(st.floats(0, 1), st.just(1.5)),
                    max_size=3,
                )
            )
        node = TextNode(id_=f"n{i}", text=draw(st.sampled_from(["x", "y"])), metadata=metadata)
        if draw(st.booleans()):  # a chunk: its graph id is its source document's
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=draw(st.sampled_from(IDS)))
        score = draw(
            st.one_of(
                st.none(),
                st.floats(0, 1),
                st.sampled_from([0.0, -0.0, -0.3, 1, 0] + ([2.0] if allow_bad else [])),
            )
        )
        out.append(NodeWithScore(node=node, score=score))
    return out


def _graph() -> InMemoryGraphStore:
    store = InMemoryGraphStore()

    async def load() -> None:
        await store.store_documents([Document(i, i) for i in IDS])
        await store.create_relations([Relation("a", "b"), Relation("b", "c"), Relation("c", "a"), Relation("d", "a")])
        await store.pagerank()

    asyncio.run(load())
    return store


GRAPH = _graph()


def _stages() -> list[Stage]:
    return [
        TemporalDecay(clock=clock),
        TemporalDecay(clock=clock, timestamp="updated_at", missing="zero", min_score=0.2),
        TemporalDecay(clock=clock, missing="error", half_life=timedelta(days=3)),
        AccessPopularity(),
        AccessPopularity(missing="zero", max_access_count=50),
        AccessPopularity(missing="error"),
        PageRank(GRAPH, default=0.3),
    ]


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except Exception as exc:  # compared by type and message
        return type(exc).__name__, str(exc)


def _shown(nodes: Sequence[NodeWithScore]) -> list[tuple[Any, ...]]:
    return [
        (
            n.node.node_id,
            n.score,
            type(n.score),
            n.node.metadata,
            n.node.excluded_embed_metadata_keys,
            n.node.excluded_llm_metadata_keys,
            n.node.model_fields_set,
        )
        for n in nodes
    ]


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def generic_stage(stage: Stage, nodes: list[NodeWithScore], mapping: NodeMapping) -> list[NodeWithScore]:
    async def run() -> list[NodeWithScore]:
        converted = to_candidates(nodes, mapping)
        out = await run_stage(stage, Query("(no query)"), converted.candidates)
        return from_candidates(out, nodes, converted, mapping)

    return _run(run())


def generic_fusion(
    nodes: list[NodeWithScore], scorer: SignalScorer, mapping: NodeMapping, top_n: int | None
) -> list[NodeWithScore]:
    # WeightedFusionPostprocessor's candidate path, as it was.
    converted = to_candidates(nodes, mapping)
    candidates = converted.candidates
    scores = scorer.score(candidates)  # type: ignore[attr-defined]
    fused: list[tuple[float, str, int]] = []
    for c, score in zip(candidates, scores, strict=True):
        fused.extend((score, c.id, i) for i in converted.groups[c.id])
    fused.sort(key=lambda t: (-t[0], t[1], t[2]))
    fused = fused[:top_n] if top_n is not None else fused
    signals = {c.id: c.signals for c in candidates}
    out = []
    for score, doc_id, i in fused:
        node = nodes[i].node
        if not (
            node.metadata.get(mapping.signals_key) == signals[doc_id]
            and mapping.signals_key in node.excluded_embed_metadata_keys
            and mapping.signals_key in node.excluded_llm_metadata_keys
        ):
            node = node_with_signals(node, signals[doc_id], mapping.signals_key)
        out.append(NodeWithScore(node=node, score=score))
    return out


MAPPINGS = [NodeMapping(), NodeMapping(score_signal=None), NodeMapping(created_at_key="updated_at")]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=node_lists(), which=st.integers(0, len(_stages()) - 1), m=st.integers(0, len(MAPPINGS) - 1))
def test_a_signal_stage_on_nodes_equals_the_candidate_path(nodes: list[NodeWithScore], which: int, m: int) -> None:
    stage = _stages()[which]
    signal_stage = as_signal_stage(stage)
    assert signal_stage is not None
    mapping = MAPPINGS[m]
    before = copy.deepcopy(nodes)
    expected = _outcome(lambda: _shown(generic_stage(stage, copy.deepcopy(nodes), mapping)))
    got = _outcome(lambda: _shown(_run(apply_signal_stage(signal_stage, Query("(no query)"), nodes, mapping))))
    assert got == expected
    assert _shown(nodes) == _shown(before)  # copy-on-write: the input is untouched


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=node_lists(),
    rrf=st.booleans(),
    top_n=st.one_of(st.none(), st.integers(1, 5)),
    m=st.integers(0, len(MAPPINGS) - 1),
)
def test_fusion_on_nodes_equals_the_candidate_path(
    nodes: list[NodeWithScore], rrf: bool, top_n: int | None, m: int
) -> None:
    scorer: SignalScorer = ReciprocalRankFusion(k=5) if rrf else WeightedScorer({"semantic": 0.5, "temporal": 0.5})
    mapping = MAPPINGS[m]
    before = copy.deepcopy(nodes)
    expected = _outcome(lambda: _shown(generic_fusion(copy.deepcopy(nodes), scorer, mapping, top_n)))
    got = _outcome(lambda: _shown(fuse_nodes(nodes, scorer, mapping, top_n)))
    assert got == expected
    assert _shown(nodes) == _shown(before)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=node_lists(allow_bad=False))
def test_a_chain_of_postprocessors_equals_the_candidate_path(nodes: list[NodeWithScore]) -> None:
    # The same chain through StagePostprocessor over stages that hide their signal_values (generic path).
    class Opaque:
        def __init__(self, stage: Stage) -> None:
            self.name = stage.name
            self._stage = stage
            self.traits = stage.traits  # type: ignore[attr-defined]

        async def run(self, query: Query, candidates: Any, context: Any) -> Any:
            return await self._stage.run(query, candidates, context)

    fast = [
        TemporalDecayPostprocessor(clock=clock),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.4, "temporal": 0.3, "access": 0.3}, top_n=4),
    ]
    slow = [StagePostprocessor(Opaque(TemporalDecay(clock=clock))), StagePostprocessor(Opaque(AccessPopularity()))]
    assert all(as_signal_stage(p._current_stage()) is None for p in slow)
    out_fast = nodes
    for post in fast:
        out_fast = post.postprocess_nodes(out_fast)
    out_slow = copy.deepcopy(nodes)
    for post in slow:
        out_slow = post.postprocess_nodes(out_slow)
    out_slow = generic_fusion(out_slow, fast[-1]._current_scorer(), NodeMapping(), 4)
    assert _shown(out_fast) == _shown(out_slow)


def test_a_subclass_overriding_run_is_run_as_a_stage() -> None:
    class Constant(TemporalDecay):
        async def run(self, query: Query, candidates: Any, context: Any) -> Any:
            return [c.with_signal("temporal", 0.125) for c in candidates]

    assert as_signal_stage(Constant()) is None
    node = NodeWithScore(node=TextNode(id_="a", text="x", metadata={"created_at": NOW.isoformat()}), score=0.5)
    out = StagePostprocessor(Constant()).postprocess_nodes([node])
    assert out[0].node.metadata["graphfuse_signals"]["temporal"] == 0.125


@pytest.mark.parametrize("when", [NOW - timedelta(days=90), (NOW - timedelta(days=90)).replace(tzinfo=None)])
def test_the_fast_path_reads_the_configured_timestamp_key(when: datetime) -> None:
    node = NodeWithScore(node=TextNode(id_="a", text="x", metadata={"published": when}), score=0.5)
    out = TemporalDecayPostprocessor(clock=clock, created_at_key="published").postprocess_nodes([node])
    assert out[0].node.metadata["graphfuse_signals"]["temporal"] == pytest.approx(0.5)
    assert when.tzinfo is None or when.tzinfo == timezone.utc


class _Subclass(TextNode):
    """A user's own node type (its content may come from more than its text)."""


def _odd_nodes() -> list[NodeWithScore]:
    from llama_index.core.schema import ImageNode, IndexNode
    from llama_index.retrievers.graphfuse import GraphFuseNode

    stamp = (NOW - timedelta(days=30)).isoformat()
    chunk = TextNode(id_="c1", text="chunk", metadata={"created_at": stamp, "access_count": 3, "doc": "a"})
    chunk.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="a")
    return [
        NodeWithScore(node=ImageNode(id_="img", text="caption", metadata={"created_at": stamp, "doc": "b"}), score=0.4),
        NodeWithScore(node=IndexNode(id_="idx", text="index", index_id="i", metadata={"doc": "c"}), score=0.2),
        NodeWithScore(node=_Subclass(id_="sub", text="own", metadata={"access_count": 9, "doc": "d"}), score=None),
        NodeWithScore(node=GraphFuseNode(id_="a", text="doc a", metadata={"doc": "a"}), score=0.9),
        NodeWithScore(node=chunk, score=0.7),  # shares graph id "a" with the GraphFuseNode (by source)
    ]


@pytest.mark.parametrize("which", range(len(_stages())))
@pytest.mark.parametrize("id_key", [None, "doc"])
def test_other_node_types_and_id_keys_match_the_candidate_path(which: int, id_key: str | None) -> None:
    stage = _stages()[which]
    signal_stage = as_signal_stage(stage)
    assert signal_stage is not None
    mapping = NodeMapping(id_key=id_key)
    nodes = _odd_nodes()
    expected = _outcome(lambda: _shown(generic_stage(stage, copy.deepcopy(nodes), mapping)))
    got = _outcome(lambda: _shown(_run(apply_signal_stage(signal_stage, Query("(no query)"), nodes, mapping))))
    assert got == expected
    scorer = WeightedScorer({"semantic": 0.5, "access": 0.5})
    assert _outcome(lambda: _shown(fuse_nodes(nodes, scorer, mapping, 3))) == _outcome(
        lambda: _shown(generic_fusion(copy.deepcopy(nodes), scorer, mapping, 3))
    )


def test_a_node_missing_the_id_key_is_refused_like_before() -> None:
    nodes = [NodeWithScore(node=TextNode(id_="n", text="x"), score=0.5)]
    mapping = NodeMapping(id_key="doc")
    stage = AccessPopularity()
    expected = _outcome(lambda: _shown(generic_stage(stage, copy.deepcopy(nodes), mapping)))
    got = _outcome(lambda: _shown(_run(apply_signal_stage(stage, Query("(no query)"), nodes, mapping))))
    assert got == expected
    assert got[0] == "InvalidInput"


# Ownership: a list a GraphFuse step returned, passed on to the next GraphFuse step, has its nodes updated in
# place; the reference is the same chain with every step given a deep copy (nodes from elsewhere: copied).

EDITS = [
    "none",
    "signals in place",
    "signals replaced",
    "timestamp",
    "text",
    "swap node",
    "append",
    "reverse",
    "excluded keys",
    "id",
    "drop",
]


def _edit(nodes: list[NodeWithScore], edit: str) -> None:
    if not nodes:
        return
    node = nodes[0].node
    if edit == "signals in place" and isinstance(node.metadata.get("graphfuse_signals"), dict):
        node.metadata["graphfuse_signals"]["semantic"] = 0.25
    elif edit == "signals replaced":
        node.metadata["graphfuse_signals"] = {"graph": 0.75}
    elif edit == "timestamp":
        node.metadata["created_at"] = (NOW - timedelta(days=3)).isoformat()
    elif edit == "text":
        node.text = "z"  # type: ignore[attr-defined]
    elif edit == "swap node":
        nodes[0].node = TextNode(id_="n0", text="x", metadata={"access_count": 5})
    elif edit == "append":
        nodes.append(NodeWithScore(node=TextNode(id_="extra", text="x"), score=0.5))
    elif edit == "reverse":
        nodes.reverse()
    elif edit == "excluded keys":
        node.excluded_llm_metadata_keys = []
    elif edit == "id":
        node.id_ = "renamed"
    elif edit == "drop":
        del nodes[0]


async def _step(post: Any, nodes: list[NodeWithScore], sync: bool) -> list[NodeWithScore]:
    return post.postprocess_nodes(nodes) if sync else await post.apostprocess_nodes(nodes)  # type: ignore[no-any-return]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=node_lists(allow_bad=False),
    edits=st.lists(st.sampled_from(EDITS), min_size=3, max_size=3),
    sync=st.booleans(),
    top_n=st.one_of(st.none(), st.integers(1, 5)),
)
def test_a_chain_updating_its_own_nodes_equals_copy_on_write(
    nodes: list[NodeWithScore], edits: list[str], sync: bool, top_n: int | None
) -> None:
    chain = [
        TemporalDecayPostprocessor(clock=clock),
        AccessPostprocessor(),
        StagePostprocessor(PageRank(GRAPH, default=0.3)),
        WeightedFusionPostprocessor(
            weights={"semantic": 0.4, "temporal": 0.3, "access": 0.2, "graph": 0.1}, top_n=top_n
        ),
        AccessPostprocessor(missing="zero"),  # after fusion too
    ]
    untouched = copy.deepcopy(nodes)

    async def run() -> None:
        owned: list[NodeWithScore] = nodes
        reference: list[NodeWithScore] = copy.deepcopy(nodes)
        for k, post in enumerate(chain):
            expected_nodes = await _step(post, copy.deepcopy(reference), sync)
            owned = await _step(post, owned, sync)
            assert _shown(owned) == _shown(expected_nodes)
            reference = expected_nodes
            if k < len(edits):
                _edit(owned, edits[k])
                _edit(reference, edits[k])
        assert _shown(nodes) == _shown(untouched)  # nodes from elsewhere are never mutated

    asyncio.run(run())


def test_a_stale_signal_is_never_taken_from_a_returned_list() -> None:
    node = NodeWithScore(node=TextNode(id_="a", text="x", metadata={"created_at": NOW.isoformat()}), score=0.5)
    out = TemporalDecayPostprocessor(clock=clock).postprocess_nodes([node])
    out[0].node.metadata["graphfuse_signals"]["semantic"] = 1.5  # an edit in place, now invalid
    with pytest.raises(Exception, match="semantic"):
        AccessPostprocessor().postprocess_nodes(out)
    out[0].node.metadata["graphfuse_signals"]["semantic"] = 0.125
    fused = WeightedFusionPostprocessor(weights={"semantic": 1.0}).postprocess_nodes(out)
    assert fused[0].score == 0.125


@pytest.mark.parametrize("edit", ["id", "source", "timestamp"])
def test_an_edit_between_two_steps_is_read_afresh(edit: str) -> None:
    stamp = (NOW - timedelta(days=90)).isoformat()
    nodes = [
        NodeWithScore(node=TextNode(id_=f"x{i}", text="x", metadata={"created_at": stamp}), score=0.5) for i in range(3)
    ]
    out = TemporalDecayPostprocessor(clock=clock).postprocess_nodes(nodes)
    node = out[1].node
    if edit == "id":
        node.id_ = "a"  # a document the graph knows
    elif edit == "source":
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="a")
    else:
        node.metadata["created_at"] = (NOW - timedelta(days=180)).isoformat()
    reference = copy.deepcopy(out)
    if edit == "timestamp":
        post: Any = TemporalDecayPostprocessor(clock=clock)
        got = post.postprocess_nodes(out)
        assert got[1].node.metadata["graphfuse_signals"]["temporal"] == pytest.approx(0.25)
    else:
        post = StagePostprocessor(PageRank(GRAPH, default=0.0))
        got_outcome = _outcome(lambda: _shown(post.postprocess_nodes(out)))
        assert got_outcome == _outcome(lambda: _shown(post.postprocess_nodes(reference)))
        assert out[1].node.metadata["graphfuse_signals"]["pagerank"] > 0.0


def test_an_unhashable_timestamp_set_between_two_steps_is_refused_like_before() -> None:
    stamp = NOW.isoformat()
    nodes = [
        NodeWithScore(node=TextNode(id_=f"x{i}", text="x", metadata={"created_at": stamp}), score=0.5) for i in range(2)
    ]
    out = TemporalDecayPostprocessor(clock=clock).postprocess_nodes(nodes)
    out[0].node.metadata["created_at"] = ["not", "a", "time"]
    reference = copy.deepcopy(out)
    post = TemporalDecayPostprocessor(clock=clock)
    got = _outcome(lambda: _shown(post.postprocess_nodes(out)))
    assert got == _outcome(lambda: _shown(post.postprocess_nodes(reference)))
    assert got[0] == "InvalidInput"
