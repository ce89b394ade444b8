"""The stage runnables and WeightedFusion over LangChain documents."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnableParallel
from langchain_graphfuse import (
    AccessPopularityRunnable,
    GraphExpansionRunnable,
    GraphFuseRetriever,
    PageRankRunnable,
    RerankRunnable,
    StageRunnable,
    TemporalDecayRunnable,
    WeightedFusion,
    with_query,
)

from graphfuse import InvalidInput, NotFound, StageFailed
from graphfuse.plugins import Components
from graphfuse.stages import TemporalDecay as CoreTemporalDecay


def doc(doc_id: str | None, **metadata: Any) -> Document:
    return Document(id=doc_id, page_content=f"text of {doc_id}", metadata=metadata)


def signals(docs: Sequence[Document], name: str) -> list[float]:
    return [d.metadata["graphfuse"]["signals"][name] for d in docs]


class _LengthReranker:
    """Scores by content length; records the query it saw."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.queries.append(query)
        return [min(1.0, len(d) / 100) for d in documents]


def test_temporal_decay_half_life_and_missing(clock: Any, now: datetime) -> None:
    docs = [
        doc("new", created_at=now.isoformat()),
        doc("half", created_at=(now - timedelta(days=90)).isoformat().replace("+00:00", "Z")),
        doc("epoch", created_at=(now - timedelta(days=180)).timestamp()),
        doc("none"),
    ]
    out = TemporalDecayRunnable(clock=clock).invoke(docs)
    assert [d.id for d in out] == ["new", "half", "epoch", "none"]
    assert signals(out, "temporal") == pytest.approx([1.0, 0.5, 0.25, 0.5])
    assert out[0].metadata["created_at"] == now.isoformat()  # the input metadata is kept
    assert "graphfuse" not in docs[0].metadata  # inputs are not mutated
    assert signals(TemporalDecayRunnable(clock=clock, missing="zero").invoke(docs), "temporal")[3] == 0.0
    with pytest.raises(StageFailed, match="has no created_at") as err:
        TemporalDecayRunnable(clock=clock, missing="error").invoke(docs)
    assert err.value.stage == "temporal"
    assert isinstance(err.value.cause, InvalidInput)


def test_temporal_decay_timestamp_key_and_bad_values(clock: Any, now: datetime) -> None:
    docs = [doc("a", published=(now - timedelta(days=30)).isoformat())]
    out = TemporalDecayRunnable(clock=clock, timestamp_key="published", half_life=timedelta(days=30)).invoke(docs)
    assert signals(out, "temporal") == pytest.approx([0.5])
    with pytest.raises(InvalidInput, match="ISO 8601"):
        TemporalDecayRunnable(clock=clock).invoke([doc("a", created_at="last tuesday")])
    with pytest.raises(InvalidInput, match="must be a datetime"):
        TemporalDecayRunnable(clock=clock).invoke([doc("a", created_at=[2020])])
    with pytest.raises(InvalidInput, match="half_life"):
        TemporalDecayRunnable(half_life=timedelta(0))


def test_a_zero_signal_stays_zero(clock: Any, now: datetime) -> None:
    zero = doc("z", created_at=now.isoformat(), graphfuse={"signals": {"semantic": 0.0}})
    out = (TemporalDecayRunnable(clock=clock, min_score=0.2) | AccessPopularityRunnable(missing="zero")).invoke([zero])
    assert out[0].metadata["graphfuse"]["signals"] == {"semantic": 0.0, "temporal": 1.0, "access": 0.0}


def test_access_popularity(backend: Any) -> None:
    docs = [doc("a", access_count=500), doc("b", access_count="250"), doc("c"), doc("d", access_count=5000)]
    out = AccessPopularityRunnable().invoke(docs)
    assert signals(out, "access") == pytest.approx([0.5, 0.25, 0.5, 1.0])
    with pytest.raises(StageFailed, match="non-negative number"):
        AccessPopularityRunnable().invoke([doc("a", access_count=-1)])
    with pytest.raises(StageFailed, match="has no 'access_count'"):
        AccessPopularityRunnable(missing="error").invoke([doc("c")])


def test_pagerank_keep_or_error_for_unknown_ids(backend: Any) -> None:
    docs = [doc("engine"), doc("ghost")]
    out = PageRankRunnable(backend.graph_store, default=0.3).invoke(docs)
    ranks = signals(out, "pagerank")
    assert 0.0 < ranks[0] <= 1.0
    assert ranks[1] == 0.3
    with pytest.raises(NotFound, match="'ghost'"):
        PageRankRunnable(backend.graph_store, unknown="error").invoke(docs)
    with pytest.raises(InvalidInput, match="unknown must be"):
        PageRankRunnable(backend.graph_store, unknown="drop")  # type: ignore[arg-type]


def test_graph_expansion_runnable_and_filter(backend: Any) -> None:
    out = GraphExpansionRunnable(backend.graph_store, depth=1).invoke([doc("engine", tenant="acme")])
    assert [d.id for d in out] == ["engine", "babbage", "jacquard"]
    assert out[1].metadata["tenant"] == "acme"
    assert out[1].metadata["created_at"].startswith("2025-12-02")
    scoped = GraphExpansionRunnable(backend.graph_store, depth=1, filter={"tenant": "globex"})
    assert [d.id for d in scoped.invoke([doc("engine")])] == ["engine"]
    carried = {"query": "q", "documents": [doc("engine")], "filter": {"tenant": "globex"}}
    assert [d.id for d in GraphExpansionRunnable(backend.graph_store, depth=1).invoke(carried)] == ["engine"]


def test_inputs_and_query_travel(clock: Any) -> None:
    temporal = TemporalDecayRunnable(clock=clock)
    assert temporal.invoke([]) == []
    assert temporal.invoke({"query": "q", "documents": []}) == []
    out = temporal.invoke({"query": "what?", "documents": [doc("a")]})
    assert out[0].metadata["graphfuse"]["query"] == "what?"
    assert AccessPopularityRunnable().invoke(out)[0].metadata["graphfuse"]["query"] == "what?"
    with pytest.raises(InvalidInput, match="list of Documents"):
        temporal.invoke("just a string")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="found a dict"):
        temporal.invoke([{"page_content": "x"}])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="mapping with 'documents'"):
        temporal.invoke({"docs": []})
    mixed = [doc("a", graphfuse={"query": "one"}), doc("b", graphfuse={"query": "two"})]
    with pytest.raises(InvalidInput, match="different queries"):
        temporal.invoke(mixed)
    with pytest.raises(InvalidInput, match="must be a mapping"):
        temporal.invoke([doc("a", graphfuse=3)])
    with pytest.raises(InvalidInput, match="must be in"):
        temporal.invoke([doc("a", graphfuse={"signals": {"semantic": 1.5}})])


def test_duplicates_and_anonymous_documents(clock: Any) -> None:
    docs = [doc("a"), doc("a"), Document(page_content="same"), Document(page_content="same"), doc("b")]
    out = TemporalDecayRunnable(clock=clock).invoke(docs)
    assert [d.id for d in out] == ["a", None, "b"]
    assert signals(out, "retrieval") == pytest.approx([1.0, 2 / 3, 1 / 3])


def test_rerank_needs_the_query() -> None:
    reranker = _LengthReranker()
    docs = [doc("a"), Document(id="b", page_content="a much longer text " * 3)]
    with pytest.raises(InvalidInput, match="needs the query"):
        RerankRunnable(reranker).invoke(docs)
    out = RerankRunnable(reranker).invoke({"query": "long?", "documents": docs})
    assert [d.id for d in out] == ["b", "a"]
    assert reranker.queries == ["long?"]
    chain = with_query(RunnableLambda(lambda q: docs)) | RerankRunnable(reranker)
    assert [d.id for d in chain.invoke("longest?")] == ["b", "a"]
    assert reranker.queries[-1] == "longest?"


def test_stage_runnable_by_registered_name_and_instance(backend: Any, clock: Any, now: datetime) -> None:
    by_name = StageRunnable("pagerank", components=Components(graph_store=backend.graph_store), default=0.1)
    assert signals(by_name.invoke([doc("ghost")]), "pagerank") == [0.1]
    assert by_name.name == "graphfuse.pagerank"
    instance = StageRunnable(CoreTemporalDecay(clock=clock))
    assert signals(instance.invoke([doc("a", created_at=now.isoformat())]), "temporal") == [1.0]
    strict = StageRunnable(CoreTemporalDecay(clock=clock), requires_query=True)
    with pytest.raises(InvalidInput, match="needs the query"):
        strict.invoke([doc("a")])
    with pytest.raises(InvalidInput, match="only for a stage given by name"):
        StageRunnable(CoreTemporalDecay(), depth=2)
    with pytest.raises(InvalidInput, match="needs a graph_store"):
        StageRunnable("pagerank")


async def test_ainvoke_runs_natively(backend: Any, clock: Any, now: datetime) -> None:
    chain = (
        TemporalDecayRunnable(clock=clock) | PageRankRunnable(backend.graph_store) | WeightedFusion({"temporal": 1.0})
    )
    out = await chain.ainvoke([doc("ada", created_at=now.isoformat()), doc("loom")])
    assert [d.id for d in out] == ["ada", "loom"]
    batched = await chain.abatch([[doc("loom")]] * 5, config={"max_concurrency": 2})
    assert [len(b) for b in batched] == [1] * 5


def test_weighted_fusion_weighted_and_rrf() -> None:
    docs = [
        doc("a", graphfuse={"signals": {"semantic": 0.9, "temporal": 0.1}}),
        doc("b", graphfuse={"signals": {"semantic": 0.5, "temporal": 1.0}}),
    ]
    out = WeightedFusion({"semantic": 0.5, "temporal": 0.5}).invoke(docs)
    assert [d.id for d in out] == ["b", "a"]
    assert out[0].metadata["graphfuse"]["score"] == pytest.approx(0.75)
    assert out[0].metadata["graphfuse"]["contributions"] == pytest.approx({"semantic": 0.25, "temporal": 0.5})
    # Under RRF the weights still decide: semantic-heavy puts a first, temporal-heavy b.
    assert [d.id for d in WeightedFusion({"semantic": 0.9, "temporal": 0.1}, mode="rrf").invoke(docs)] == ["a", "b"]
    assert [d.id for d in WeightedFusion({"semantic": 0.1, "temporal": 0.9}, mode="rrf").invoke(docs)] == ["b", "a"]
    assert len(WeightedFusion(top_n=1).invoke(docs)) == 1
    assert WeightedFusion().invoke([]) == []
    with pytest.raises(InvalidInput, match="mode"):
        WeightedFusion(mode="max")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="negative"):
        WeightedFusion({"semantic": -1.0})
    with pytest.raises(InvalidInput, match="top_n"):
        WeightedFusion(top_n=0)


def test_fusion_of_sources_counts_a_duplicate_once_per_source() -> None:
    # Source "x" lists d1 twice; it must not outrank d2, which both sources list once (langchain #37046).
    x = [doc("d1"), doc("d1"), doc("d2")]
    y = [doc("d2"), doc("d3")]
    fused = WeightedFusion(mode="rrf").invoke({"x": x, "y": y})
    assert [d.id for d in fused] == ["d2", "d1", "d3"]
    parts = fused[1].metadata["graphfuse"]["contributions"]
    assert parts == pytest.approx({"x": 1 / 61})
    # Weights name the sources and are honoured.
    weighted = WeightedFusion({"x": 1.0, "y": 0.01}, mode="rrf").invoke({"x": x, "y": y})
    assert [d.id for d in weighted] == ["d1", "d2", "d3"]


def test_fusion_of_parallel_retrievers(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(expand=False), k=3)
    other: RunnableLambda[str, list[Document]] = RunnableLambda(lambda q: [doc("turing"), doc("loom")])
    chain = RunnableParallel(graph=retriever, other=other) | WeightedFusion({"graph": 1.0, "other": 1.0}, mode="rrf")
    out = chain.invoke("Alan Turing universal machine")
    assert out[0].id == "turing"
    assert out[0].page_content.startswith("Alan Turing")  # the first source's document is kept
    assert set(out[0].metadata["graphfuse"]["contributions"]) == {"graph", "other"}
    assert out[0].metadata["graphfuse"]["query"] == "Alan Turing universal machine"


def test_pagerank_sync_path_runs_on_graphfuses_loop(tmp_path: Any) -> None:
    from graphfuse import run_sync
    from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore

    threads: list[str] = []

    class Memory(InMemoryGraphStore):
        async def pagerank(self, ids: Any) -> Any:
            threads.append(threading.current_thread().name)
            return await super().pagerank(ids)

    class SQLite(SQLiteGraphStore):
        async def pagerank(self, ids: Any) -> Any:
            threads.append(threading.current_thread().name)
            return await super().pagerank(ids)

    out = PageRankRunnable(Memory()).invoke([doc("engine"), doc("ghost")])
    assert signals(out, "pagerank")[1] == 0.5
    assert threads == ["graphfuse-sync"]  # the sync path runs the coroutine on GraphFuse's loop
    sqlite = SQLite(str(tmp_path / "g.db"))
    try:
        assert signals(PageRankRunnable(sqlite).invoke([doc("engine")]), "pagerank") == [0.5]
        assert threads[1] == "graphfuse-sync"
    finally:
        run_sync(sqlite.close())
