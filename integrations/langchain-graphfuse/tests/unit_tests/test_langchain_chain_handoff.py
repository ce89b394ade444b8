"""A chain of runnables: a change between runnables is always seen, the documents passed in are never
changed, runs nest under the chain, in-memory graph stages run on the caller's thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_graphfuse import (
    AccessPopularityRunnable,
    PageRankRunnable,
    TemporalDecayRunnable,
    WeightedFusion,
)

from graphfuse import Document as GDocument
from graphfuse import Relation, StageFailed, run_sync
from graphfuse.stores import InMemoryGraphStore


def documents(now: datetime) -> list[Document]:
    return [
        Document(
            id=f"d{i}",
            page_content=f"text {i}",
            metadata={"created_at": (now - timedelta(days=90 * i)).isoformat(), "access_count": 10 * (i + 1)},
        )
        for i in range(3)
    ]


@pytest.mark.parametrize(
    "change",
    [
        "metadata value",
        "metadata key added",
        "signal",
        "content",
        "id",
        "order",
        "replaced by an equal copy",
    ],
)
def test_a_change_between_runnables_is_seen(clock: Any, now: datetime, change: str) -> None:
    first = TemporalDecayRunnable(clock=clock).invoke(documents(now))
    if change == "metadata value":
        first[0].metadata["access_count"] = 1000
    elif change == "metadata key added":
        first[0].metadata["extra"] = 1
    elif change == "signal":
        first[0].metadata["graphfuse"]["signals"]["temporal"] = 0.0
    elif change == "content":
        first[0].page_content = "changed"
    elif change == "id":
        first[0].id = "other"
    elif change == "order":
        first[1], first[2] = first[2], first[1]  # the first stays: the same list, in another order
    else:
        first[1] = first[1].model_copy(update={"metadata": dict(first[1].metadata)})
    out = AccessPopularityRunnable().invoke(first)
    by_id = {d.id: d for d in out}
    if change == "order":
        assert [d.id for d in out] == ["d0", "d2", "d1"]
    if change == "metadata value":
        assert by_id["d0"].metadata["graphfuse"]["signals"]["access"] == 1.0
        assert by_id["d2"].metadata["graphfuse"]["signals"]["access"] == pytest.approx(0.03)
    if change == "signal":
        assert by_id["d0"].metadata["graphfuse"]["signals"]["temporal"] == 0.0
    if change == "content":
        assert by_id["d0"].page_content == "changed"
    if change == "id":
        assert "other" in by_id


def test_a_document_changed_inside_the_chain_is_seen(clock: Any, now: datetime) -> None:
    def zero_access(docs: list[Document]) -> list[Document]:
        for doc in docs:
            doc.metadata["access_count"] = 0  # in place, on the list the previous runnable returned
        return docs

    chain = TemporalDecayRunnable(clock=clock) | RunnableLambda(zero_access) | AccessPopularityRunnable()
    assert {d.metadata["graphfuse"]["signals"]["access"] for d in chain.invoke(documents(now))} == {0.0}


async def test_handoff_holds_for_async_and_batch(clock: Any, now: datetime) -> None:
    chain = TemporalDecayRunnable(clock=clock) | AccessPopularityRunnable() | WeightedFusion(top_n=2)
    sync = chain.invoke(documents(now))
    assert [d.id for d in await chain.ainvoke(documents(now))] == [d.id for d in sync]
    batched = chain.batch([documents(now) for _ in range(12)])
    assert all([d.id for d in out] == [d.id for d in sync] for out in batched)


def test_the_documents_passed_in_are_never_changed(clock: Any, now: datetime) -> None:
    given = documents(now)
    before = [d.model_dump() for d in given]
    first = TemporalDecayRunnable(clock=clock).invoke(given)
    first_before = [d.model_dump() for d in first]
    fused = (AccessPopularityRunnable() | WeightedFusion()).invoke(first)
    assert [d.model_dump() for d in given] == before
    assert [d.model_dump() for d in first] == first_before  # a runnable's output, passed on, is not changed
    assert all(set(d.metadata) == {"created_at", "access_count", "graphfuse"} for d in fused)
    assert all(
        d.metadata["access_count"] == g.metadata["access_count"]
        for d, g in zip(sorted(fused, key=lambda d: d.id or ""), given, strict=True)
    )


class _ThreadRecordingStore(InMemoryGraphStore):
    """An in-memory store noting the thread each PageRank read runs on; ``suspend`` makes it await once."""

    def __init__(self, *, suspend: bool = False) -> None:
        super().__init__()
        self.threads: list[int] = []
        self._suspend = suspend

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]:
        self.threads.append(threading.get_ident())
        if self._suspend:
            await asyncio.sleep(0)
        return await super().pagerank(ids)


@pytest.mark.parametrize("suspend", [False, True])
def test_in_memory_graph_store_stage_runs_once_on_graphfuses_loop(suspend: bool) -> None:
    store = _ThreadRecordingStore(suspend=suspend)
    run_sync(store.store_documents([GDocument("a", "x", {}), GDocument("b", "y", {})]))
    run_sync(store.create_relations([Relation("a", "b")]))
    out = PageRankRunnable(store).invoke([Document(id="a", page_content="x"), Document(id="b", page_content="y")])
    assert [d.id for d in out] == ["a", "b"]
    assert all(0.0 <= d.metadata["graphfuse"]["signals"]["pagerank"] <= 1.0 for d in out)
    assert len(store.threads) == 1
    assert store.threads[0] != threading.get_ident()


class _Runs(BaseCallbackHandler):
    """Records chain runs: name -> (run id, parent id), and errors by name."""

    def __init__(self) -> None:
        self.runs: dict[str, tuple[UUID, UUID | None]] = {}
        self.ended: list[str] = []
        self.errors: dict[str, BaseException] = {}
        self._names: dict[UUID, str] = {}

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        name = kw.get("name") or "?"
        self.runs[name] = (run_id, parent_run_id)
        self._names[run_id] = name

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self.ended.append(self._names[run_id])

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.errors[self._names[run_id]] = error


@pytest.mark.parametrize("call", ["sync", "async"])
async def test_runnables_report_their_runs_under_the_chain(clock: Any, now: datetime, call: str) -> None:
    chain = (TemporalDecayRunnable(clock=clock) | AccessPopularityRunnable() | WeightedFusion(top_n=2)).with_config(
        run_name="outer"
    )
    runs = _Runs()
    config: Any = {"callbacks": [runs], "run_name": "outer"}
    out = (
        chain.invoke(documents(now), config=config)
        if call == "sync"
        else await chain.ainvoke(documents(now), config=config)
    )
    assert len(out) == 2
    outer = runs.runs["outer"][0]
    for name in ("graphfuse.temporal", "graphfuse.access", "graphfuse.fusion"):
        assert runs.runs[name][1] == outer
        assert name in runs.ended
    strict = TemporalDecayRunnable(clock=clock, missing="error")
    failing = [Document(id="x", page_content="no timestamp")]
    with pytest.raises(StageFailed):
        strict.invoke(failing, config={"callbacks": [runs]}) if call == "sync" else await strict.ainvoke(
            failing, config={"callbacks": [runs]}
        )
    assert isinstance(runs.errors["graphfuse.temporal"], StageFailed)


async def test_astream_events_sees_every_runnable(clock: Any, now: datetime) -> None:
    chain = TemporalDecayRunnable(clock=clock) | AccessPopularityRunnable() | WeightedFusion()
    events = [e async for e in chain.astream_events(documents(now), version="v2")]
    ends = {e["name"]: e["data"].get("output") for e in events if e["event"] == "on_chain_end"}
    for name in ("graphfuse.temporal", "graphfuse.access", "graphfuse.fusion"):
        assert len(ends[name]) == 3
    assert [d.id for d in ends["graphfuse.fusion"]] == [d.id for d in events[-1]["data"]["output"]]


@pytest.mark.parametrize("edit", ["none", "new time", "equal string", "removed", "datetime"])
def test_a_timestamp_changed_between_runnables_is_read_again(clock: Any, now: datetime, edit: str) -> None:
    first = AccessPopularityRunnable().invoke(documents(now))  # GraphFuse's own documents, timestamps read
    before = first[1].metadata["created_at"]
    if edit == "new time":
        first[1].metadata["created_at"] = now.isoformat()
    elif edit == "equal string":
        first[1].metadata["created_at"] = "".join(before)  # the same time, another str object
    elif edit == "removed":
        del first[1].metadata["created_at"]
    elif edit == "datetime":
        first[1].metadata["created_at"] = now - timedelta(days=90)  # a datetime now, the same instant
    out = TemporalDecayRunnable(clock=clock).invoke(first)
    temporal = [d.metadata["graphfuse"]["signals"]["temporal"] for d in out]
    expected = {"none": 0.5, "new time": 1.0, "equal string": 0.5, "removed": 0.5, "datetime": 0.5}[edit]
    assert temporal[1] == pytest.approx(expected)
    assert temporal[0] == 1.0
    assert temporal[2] == pytest.approx(0.25)
