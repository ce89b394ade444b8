"""Signal runnables and fusion on documents without candidates give what the candidate path gives.

The reference is the generic path: ``to_candidates`` -> the stage through a pipeline's runner ->
``to_documents`` (and, for fusion, the scorer over candidates). Random documents: shared and
missing ids, carried signals and queries, timestamps in every form (or bad), access counts.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_graphfuse import AccessPopularityRunnable, StageRunnable, TemporalDecayRunnable, WeightedFusion
from langchain_graphfuse._documents import mapping_for, to_documents
from langchain_graphfuse._execution import run_signal_stage_on_documents, run_stages_on_documents
from langchain_graphfuse._fusion import rank

from graphfuse import Document as GDocument
from graphfuse import Pipeline, Relation, Stage, as_signal_stage
from graphfuse.stages import AccessPopularity, PageRank, TemporalDecay
from graphfuse.stores import InMemoryGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
IDS = ["a", "b", "c", "d"]


def clock() -> datetime:
    return NOW


def _stamp(draw: st.DrawFn) -> object:
    kind = draw(st.sampled_from(["iso", "iso-z", "datetime", "naive", "posix", "bad"]))
    when = NOW - timedelta(hours=draw(st.integers(-48, 24 * 400)))
    if kind == "iso":
        return when.isoformat()
    if kind == "iso-z":
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "datetime":
        return when
    if kind == "naive":
        return when.replace(tzinfo=None)
    return when.timestamp() if kind == "posix" else "not a time"


@st.composite
def document_lists(draw: st.DrawFn) -> list[Document]:
    out = []
    for _ in range(draw(st.integers(0, 8))):
        metadata: dict[str, Any] = {}
        for key in ("created_at", "updated_at"):
            if draw(st.booleans()):
                metadata[key] = _stamp(draw)
        if draw(st.booleans()):
            metadata["access_count"] = draw(st.one_of(st.integers(0, 3000), st.floats(0, 3000), st.just("many")))
        if draw(st.booleans()):
            ns: dict[str, Any] = {
                "signals": draw(
                    st.dictionaries(
                        st.sampled_from(["retrieval", "temporal", "graph"]),
                        st.one_of(st.floats(0, 1), st.just(1.5), st.just(1)),
                        max_size=3,
                    )
                )
            }
            if draw(st.booleans()):
                ns["query"] = "q"
            metadata["graphfuse"] = ns
        doc_id = draw(st.one_of(st.none(), st.sampled_from(IDS)))
        out.append(Document(id=doc_id, page_content=draw(st.sampled_from(["x", "y"])), metadata=metadata))
    return out


def _graph() -> InMemoryGraphStore:
    store = InMemoryGraphStore()

    async def load() -> None:
        await store.store_documents([GDocument(i, i) for i in IDS])
        await store.create_relations([Relation("a", "b"), Relation("b", "c"), Relation("c", "a")])
        await store.pagerank()

    asyncio.run(load())
    return store


GRAPH = _graph()
STAGES: list[Stage] = [
    TemporalDecay(clock=clock),
    TemporalDecay(clock=clock, timestamp="updated_at", missing="zero"),
    TemporalDecay(clock=clock, missing="error"),
    AccessPopularity(),
    AccessPopularity(missing="error", max_access_count=10),
    PageRank(GRAPH),
]


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except Exception as exc:  # compared by type and message
        return type(exc).__name__, str(exc)


def _shown(docs: Sequence[Document]) -> list[tuple[Any, ...]]:
    return [(d.id, d.page_content, d.metadata, d.__pydantic_fields_set__) for d in docs]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=document_lists(), which=st.integers(0, len(STAGES) - 1), query=st.sampled_from([None, "q"]))
def test_a_signal_stage_on_documents_equals_the_candidate_path(
    docs: list[Document], which: int, query: str | None
) -> None:
    stage = STAGES[which]
    signal_stage = as_signal_stage(stage)
    assert signal_stage is not None
    mapping = mapping_for(None)
    before = copy.deepcopy(docs)
    kwargs: dict[str, Any] = {"query": query, "needs_query": False, "filter": None, "mapping": mapping, "what": "x"}
    expected = _outcome(
        lambda: _shown(asyncio.run(run_stages_on_documents(Pipeline([stage]), copy.deepcopy(docs), **kwargs)))
    )
    got = _outcome(lambda: _shown(asyncio.run(run_signal_stage_on_documents(signal_stage, docs, **kwargs))))
    assert got == expected
    assert _shown(docs) == _shown(before)  # copy-on-write


def _generic_fusion(fusion: WeightedFusion, value: Any) -> list[Document]:
    """WeightedFusion's candidate path, as it was."""
    query, filter, candidates, originals, scorer = fusion._candidates(value)
    if not candidates:
        return []
    ranked, scores, shares = rank(candidates, scorer, fusion._top_n)
    return to_documents(
        ranked,
        originals,
        query=query,
        filter=filter,
        mapping=fusion._mapping,
        scores=scores,
        contributions=shares,
        inputs=candidates,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=document_lists(), rrf=st.booleans(), top_n=st.one_of(st.none(), st.integers(1, 4)))
def test_fusion_on_documents_equals_the_candidate_path(docs: list[Document], rrf: bool, top_n: int | None) -> None:
    fusion = WeightedFusion(mode="rrf", k=3, top_n=top_n) if rrf else WeightedFusion(top_n=top_n)

    before = copy.deepcopy(docs)
    assert _outcome(lambda: _shown(fusion.invoke(docs))) == _outcome(
        lambda: _shown(_generic_fusion(fusion, copy.deepcopy(docs)))
    )
    assert _shown(docs) == _shown(before)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=document_lists())
def test_a_chain_equals_the_candidate_chain(docs: list[Document]) -> None:
    class Opaque:
        def __init__(self, stage: Stage) -> None:
            self.name = stage.name
            self._stage = stage
            self.traits = stage.traits  # type: ignore[attr-defined]

        async def run(self, query: Any, candidates: Any, context: Any) -> Any:
            return await self._stage.run(query, candidates, context)

    fast = TemporalDecayRunnable(clock=clock) | AccessPopularityRunnable() | WeightedFusion(top_n=5)
    slow = (
        StageRunnable(Opaque(TemporalDecay(clock=clock)))
        | StageRunnable(Opaque(AccessPopularity()))
        | WeightedFusion(top_n=5)
    )
    assert _outcome(lambda: _shown(fast.invoke(docs))) == _outcome(lambda: _shown(slow.invoke(copy.deepcopy(docs))))


class _MyDocument(Document):
    """A user's own document type."""


class _Opaque:
    def __init__(self, stage: Stage) -> None:
        self.name = stage.name
        self._stage = stage
        self.traits = stage.traits  # type: ignore[attr-defined]

    async def run(self, query: Any, candidates: Any, context: Any) -> Any:
        return await self._stage.run(query, candidates, context)


def _odd_documents() -> list[Document]:
    stamp = (NOW - timedelta(days=30)).isoformat()
    return [
        _MyDocument(id="a", page_content="mine", metadata={"created_at": stamp, "access_count": 4, "key": "k1"}),
        Document(page_content="anonymous", metadata={"access_count": 8, "key": "k2"}),
        Document(page_content="anonymous", metadata={"access_count": 1}),  # the same content: one document
        Document(id="b", page_content="b", metadata={"graphfuse": {"signals": {"graph": 0.5}, "query": "q"}}),
    ]


@pytest.mark.parametrize("which", range(len(STAGES)))
@pytest.mark.parametrize("id_key", [None, "key"])
@pytest.mark.parametrize("wrapped", [False, True])
def test_other_document_types_id_keys_and_filters_match_the_candidate_path(
    which: int, id_key: str | None, wrapped: bool
) -> None:
    stage = STAGES[which]
    fast = StageRunnable(stage, id_key=id_key, filter={"tenant": "acme"})
    slow = StageRunnable(_Opaque(stage), id_key=id_key, filter={"tenant": "acme"})
    assert as_signal_stage(fast.stage) is not None
    assert as_signal_stage(slow.stage) is None
    docs = _odd_documents()

    def value(d: list[Document]) -> Any:
        return {"query": "q2", "documents": d, "filter": {"lang": "en"}} if wrapped else d

    expected = _outcome(lambda: _shown(slow.invoke(value(copy.deepcopy(docs)))))
    got = _outcome(lambda: _shown(fast.invoke(value(docs))))
    assert got == expected
    fusion = WeightedFusion(top_n=3, id_key=id_key)
    if got[0] == "ok":
        out = fast.invoke(value(docs))
        assert _shown(fusion.invoke(out)) == _shown(_generic_fusion(fusion, copy.deepcopy(out)))


# Ownership: the list a GraphFuse runnable returned, passed on to the next GraphFuse runnable, has its documents
# updated in place; the reference is the same chain with every step given a deep copy (copied, as before).

EDITS = ["none", "signals in place", "signals replaced", "namespace", "timestamp", "id", "content", "append", "reverse"]


def _edit(docs: list[Document], edit: str) -> None:
    if not docs:
        return
    doc = docs[0]
    ns = doc.metadata.get("graphfuse")
    if edit == "signals in place" and isinstance(ns, dict) and isinstance(ns.get("signals"), dict):
        ns["signals"]["retrieval"] = 0.25
    elif edit == "signals replaced" and isinstance(ns, dict):
        ns["signals"] = {"graph": 0.75}
    elif edit == "namespace":
        doc.metadata["graphfuse"] = {"signals": {"temporal": 0.5}}
    elif edit == "timestamp":
        doc.metadata["created_at"] = (NOW - timedelta(days=3)).isoformat()
    elif edit == "id":
        doc.id = "b"
    elif edit == "content":
        doc.page_content = "z"
    elif edit == "append":
        docs.append(Document(id="extra", page_content="x"))
    elif edit == "reverse":
        docs.reverse()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=document_lists(),
    edits=st.lists(st.sampled_from(EDITS), min_size=3, max_size=3),
    sync=st.booleans(),
    query=st.sampled_from([None, "q"]),
    top_n=st.one_of(st.none(), st.integers(1, 5)),
)
def test_a_chain_updating_its_own_documents_equals_copy_on_write(
    docs: list[Document], edits: list[str], sync: bool, query: str | None, top_n: int | None
) -> None:
    chain: list[Any] = [
        TemporalDecayRunnable(clock=clock),
        AccessPopularityRunnable(missing="zero"),
        StageRunnable(PageRank(GRAPH, default=0.3)),
        WeightedFusion({"retrieval": 0.4, "temporal": 0.3, "access": 0.2, "pagerank": 0.1}, top_n=top_n),
        TemporalDecayRunnable(clock=clock, missing="zero", name="late"),  # after fusion too
    ]
    untouched = copy.deepcopy(docs)

    async def step(runnable: Any, value: Any) -> Any:
        return runnable.invoke(value) if sync else await runnable.ainvoke(value)

    async def run() -> None:
        owned: Any = docs if query is None else {"query": query, "documents": docs}
        reference: Any = copy.deepcopy(owned)
        for k, runnable in enumerate(chain):
            expected: tuple[str, Any]
            try:
                expected = ("ok", _shown(await step(runnable, copy.deepcopy(reference))))
            except Exception as exc:
                expected = (type(exc).__name__, str(exc))
            try:
                out = await step(runnable, owned)
                got = ("ok", _shown(out))
            except Exception as exc:
                got = (type(exc).__name__, str(exc))
            assert got == expected
            if got[0] != "ok":
                return
            reference = copy.deepcopy(out)
            owned = out
            if k < len(edits):
                _edit(owned, edits[k])
                _edit(reference, edits[k])
        assert _shown(docs) == _shown(untouched)  # documents from elsewhere are never mutated

    asyncio.run(run())
