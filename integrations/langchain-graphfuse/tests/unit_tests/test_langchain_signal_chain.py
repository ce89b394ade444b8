"""SignalChainRunnable: signal runnables and a fusion as one runnable, as the runnables one after the other."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_graphfuse import (
    AccessPopularityRunnable,
    GraphExpansionRunnable,
    GraphFuseRetriever,
    PageRankRunnable,
    RerankRunnable,
    SignalChainRunnable,
    StageRunnable,
    TemporalDecayRunnable,
    WeightedFusion,
)

from graphfuse import InvalidInput, NotFound
from graphfuse.stages import AccessPopularity

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)  # the conftest clock's time


def documents() -> list[Document]:
    out = []
    for i, doc_id in enumerate(["ada", "babbage", "engine", "ada", "nowhere"]):
        meta: dict[str, Any] = {"created_at": (NOW - timedelta(days=30 * i)).isoformat(), "access_count": 10 * i}
        if i == 2:
            meta = {"access_count": 5, "graphfuse": {"signals": {"semantic": 0.4}}}  # no timestamp: neutral
        out.append(Document(id=doc_id, page_content=f"text {i}", metadata=meta))
    return out


def steps(backend: Any, clock: Any) -> list[Any]:
    return [
        TemporalDecayRunnable(clock=clock, half_life_days=60),
        PageRankRunnable(backend.graph_store),
        AccessPopularityRunnable(),
    ]


def view(out: list[Document]) -> list[tuple[Any, ...]]:
    return [(d.id, d.page_content, d.metadata) for d in out]


@pytest.mark.parametrize("top_n", [None, 2])
@pytest.mark.parametrize("as_mapping", [False, True])
async def test_the_chain_returns_what_the_runnables_return_one_after_the_other(
    backend: Any, clock: Any, top_n: int | None, as_mapping: bool
) -> None:
    weights = {"retrieval": 0.4, "semantic": 0.1, "temporal": 0.2, "pagerank": 0.2, "access": 0.1}
    given = documents()
    before = view(given)
    value: Any = {"query": "engine", "documents": given, "filter": {"tenant": "acme"}} if as_mapping else given
    one_by_one: Any = value
    for runnable in [*steps(backend, clock), WeightedFusion(weights, top_n=top_n)]:
        one_by_one = runnable.invoke(one_by_one)
    chain = SignalChainRunnable(steps(backend, clock), fusion=WeightedFusion(weights, top_n=top_n))
    assert view(chain.invoke(value)) == view(one_by_one)
    assert view(await chain.ainvoke(value)) == view(one_by_one)
    assert view(given) == before  # the caller's documents are left as they were
    without = SignalChainRunnable(steps(backend, clock))
    expected: Any = value
    for runnable in steps(backend, clock):
        expected = runnable.invoke(expected)
    assert view(without.invoke(value)) == view(expected)


def test_graphfuse_retriever_output_and_empty_input(backend: Any, clock: Any) -> None:
    docs = GraphFuseRetriever(pipeline=backend.pipeline(), k=5).invoke("analytical engine")
    chain = SignalChainRunnable(steps(backend, clock), fusion=WeightedFusion())
    expected: Any = docs
    for runnable in [*steps(backend, clock), WeightedFusion()]:
        expected = runnable.invoke(expected)
    assert view(chain.invoke(docs)) == view(expected)
    assert chain.invoke([]) == []


def test_errors_are_the_runnables_own(backend: Any, clock: Any) -> None:
    bad = [Document(id="ada", page_content="x", metadata={"created_at": "yesterday"})]
    with pytest.raises(InvalidInput, match="not an ISO 8601 timestamp") as alone:
        TemporalDecayRunnable().invoke(bad)
    with pytest.raises(InvalidInput, match="not an ISO 8601 timestamp") as chained:
        SignalChainRunnable(steps(backend, clock)).invoke(bad)
    assert str(chained.value) == str(alone.value)
    unknown = [Document(id="nowhere", page_content="x")]
    strict = [AccessPopularityRunnable(), PageRankRunnable(backend.graph_store, unknown="error")]
    with pytest.raises(NotFound, match="'nowhere'"):
        SignalChainRunnable(strict).invoke(unknown)
    needs_query = StageRunnable(AccessPopularity(), requires_query=True)
    with pytest.raises(InvalidInput, match="needs the query") as alone_q:
        needs_query.invoke(unknown)
    with pytest.raises(InvalidInput, match="needs the query") as chained_q:
        SignalChainRunnable([AccessPopularityRunnable(), needs_query]).invoke(unknown)
    assert str(chained_q.value) == str(alone_q.value)


def test_only_signal_steps_that_read_documents_alike(backend: Any) -> None:
    with pytest.raises(InvalidInput, match=r"GraphExpansionRunnable runs stage .graph., which does more"):
        SignalChainRunnable([GraphExpansionRunnable(backend.graph_store)])
    with pytest.raises(InvalidInput, match="does more than set a signal"):
        SignalChainRunnable([RerankRunnable(_SameScore())])
    with pytest.raises(InvalidInput, match="read documents differently"):
        SignalChainRunnable([AccessPopularityRunnable(), TemporalDecayRunnable(timestamp_key="published")])
    with pytest.raises(InvalidInput, match="read documents differently"):
        SignalChainRunnable([AccessPopularityRunnable()], fusion=WeightedFusion(id_key="doc"))
    with pytest.raises(InvalidInput, match="at least one step"):
        SignalChainRunnable([])
    with pytest.raises(InvalidInput, match="fusion must be"):
        SignalChainRunnable([AccessPopularityRunnable()], fusion=AccessPopularityRunnable())  # type: ignore[arg-type]
    chain = SignalChainRunnable([TemporalDecayRunnable(timestamp_key="published")], fusion=WeightedFusion())
    assert [type(s).__name__ for s in chain.steps] == ["TemporalDecayRunnable"]
    assert chain.fusion is not None


class _SameScore:
    async def rerank(self, query: str, documents: list[Any]) -> list[float]:
        return [0.5 for _ in documents]
