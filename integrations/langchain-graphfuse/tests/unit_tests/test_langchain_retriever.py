"""GraphFuseRetriever and GraphExpansionRetriever."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_graphfuse import GraphExpansionRetriever, GraphFuseRetriever

from graphfuse import InvalidInput, NotFound, Pipeline


class _SyncForbidden(Pipeline):
    __slots__ = ()

    def retrieve(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the sync path was called from ainvoke")


class _Listing(BaseRetriever):
    """A plain LangChain retriever returning fixed documents."""

    docs: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return list(self.docs)


class _Parents(BaseCallbackHandler):
    def __init__(self) -> None:
        self.starts: dict[str, UUID | None] = {}
        self.ids: dict[str, UUID] = {}

    def on_retriever_start(
        self, serialized: Any, query: str, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        name = kw.get("name") or "?"
        self.starts[name] = parent_run_id
        self.ids[name] = run_id


def test_documents_carry_id_content_signals_and_query(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=3)
    docs = retriever.invoke("Analytical Engine punched cards")
    assert len(docs) == 3
    top = docs[0]
    assert top.id in {"engine", "babbage", "jacquard", "ada"}
    ns = top.metadata["graphfuse"]
    assert ns["query"] == "Analytical Engine punched cards"
    assert set(ns["signals"]) >= {"semantic"} or set(ns["signals"]) >= {"graph"}
    assert ns["score"] == pytest.approx(sum(ns["contributions"].values()))
    assert top.page_content
    assert "tenant" in top.metadata
    scores = [d.metadata["graphfuse"]["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def test_created_at_is_written_as_iso_metadata(backend: Any) -> None:
    docs = GraphFuseRetriever(pipeline=backend.pipeline(expand=False), k=8).invoke("Grace Hopper compiler")
    by_id = {d.id: d for d in docs}
    assert by_id["babbage"].metadata["created_at"].startswith("2025-12-02")
    assert "created_at" not in by_id["hopper"].metadata


def test_per_call_k_and_filter_apply(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=5)
    assert len(retriever.invoke("Analytical Engine", k=1)) == 1
    assert len(retriever.invoke("Analytical Engine")) == 5
    hits = retriever.invoke("Analytical Engine restoration budget", k=8, filter={"tenant": "globex"})
    assert [d.id for d in hits] == ["secret"]
    assert hits[0].metadata["graphfuse"]["filter"] == {"tenant": {"$eq": "globex"}}


def test_field_filter_cannot_be_widened_per_call(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=8, filter={"tenant": "acme"})
    assert "secret" not in {d.id for d in retriever.invoke("Analytical Engine restoration budget")}
    assert retriever.invoke("Analytical Engine restoration budget", filter={"tenant": "globex"}) == []


def test_bad_arguments_are_refused(backend: Any) -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        GraphFuseRetriever(pipeline=backend.pipeline(), k=0)
    with pytest.raises(ValueError, match="operator"):
        GraphFuseRetriever(pipeline=backend.pipeline(), filter={"tenant": {"$like": "a"}})
    retriever = GraphFuseRetriever(pipeline=backend.pipeline())
    with pytest.raises(InvalidInput, match="unknown keyword"):
        retriever.invoke("x", top_k=3)
    with pytest.raises(InvalidInput, match="k must be a positive integer"):
        retriever.invoke("x", k=-1)
    with pytest.raises(InvalidInput, match="not in this pipeline"):
        retriever.invoke("x", options={"nope": {}})


async def test_ainvoke_is_native(backend: Any) -> None:
    stages = backend.pipeline().stages
    retriever = GraphFuseRetriever(pipeline=_SyncForbidden(stages), k=2)
    docs = await retriever.ainvoke("Alan Turing universal machine")
    assert docs[0].id == "turing"
    assert len(await retriever.ainvoke("Alan Turing", k=1)) == 1


async def test_abatch_with_max_concurrency(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=2)
    queries = [f"Analytical Engine question {i}" for i in range(20)]
    out = await retriever.abatch(queries, config={"max_concurrency": 4})
    assert len(out) == 20
    assert all(len(docs) == 2 for docs in out)
    assert [d[0].metadata["graphfuse"]["query"] for d in out] == queries


def test_expansion_adds_graph_neighbours_to_any_retriever(backend: Any) -> None:
    child = _Listing(docs=[Document(id="ada", page_content="Ada", metadata={"tenant": "acme"})])
    retriever = GraphExpansionRetriever(retriever=child, graph_store=backend.graph_store, depth=2)
    docs = retriever.invoke("anything")
    assert [d.id for d in docs] == ["ada", "babbage", "engine"]
    assert [d.metadata["graphfuse"]["signals"]["graph"] for d in docs] == [1.0, 0.5, 0.25]
    assert docs[0].page_content == "Ada"  # the seed is the child's own document
    assert docs[1].page_content.startswith("Charles Babbage")
    assert [d.id for d in retriever.invoke("anything", depth=1)] == ["ada", "babbage"]
    assert [d.id for d in retriever.invoke("anything", k=2)] == ["ada", "babbage"]


def test_expansion_honours_filter_on_seeds_and_hops(backend: Any) -> None:
    child = _Listing(
        docs=[
            Document(id="secret", page_content="s", metadata={"tenant": "globex"}),
            Document(id="babbage", page_content="b", metadata={"tenant": "acme"}),
        ]
    )
    retriever = GraphExpansionRetriever(retriever=child, graph_store=backend.graph_store, depth=1)
    ids = [d.id for d in retriever.invoke("q", filter={"tenant": "acme"})]
    assert ids == ["babbage", "ada", "engine"]


def test_expansion_unknown_ids(backend: Any) -> None:
    child = _Listing(docs=[Document(id="nowhere", page_content="n"), Document(page_content="no id at all")])
    keep = GraphExpansionRetriever(retriever=child, graph_store=backend.graph_store)
    assert [d.page_content for d in keep.invoke("q")] == ["n", "no id at all"]
    strict = GraphExpansionRetriever(retriever=child, graph_store=backend.graph_store, unknown="error")
    with pytest.raises(NotFound, match="not in the graph store"):
        strict.invoke("q")


def test_expansion_id_key(backend: Any) -> None:
    child = _Listing(docs=[Document(page_content="t", metadata={"node": "turing"})])
    retriever = GraphExpansionRetriever(retriever=child, graph_store=backend.graph_store, id_key="node")
    docs = retriever.invoke("q")
    assert [d.metadata["node"] for d in docs] == ["turing", "hopper"]


def test_expansion_empty_child_gives_empty_list(backend: Any) -> None:
    retriever = GraphExpansionRetriever(retriever=_Listing(docs=[]), graph_store=backend.graph_store)
    assert retriever.invoke("q") == []


async def test_callbacks_nest_under_the_expansion_run(backend: Any) -> None:
    child = _Listing(docs=[Document(id="ada", page_content="Ada")], name="child")
    retriever = GraphExpansionRetriever(retriever=child, graph_store=backend.graph_store, name="outer")
    for call in ("sync", "async"):
        handler = _Parents()
        config: Any = {"callbacks": [handler]}
        if call == "sync":
            retriever.invoke("q", config=config)
        else:
            await retriever.ainvoke("q", config=config)
        assert handler.starts["outer"] is None
        assert handler.starts["child"] == handler.ids["outer"]


def test_expansion_bad_per_call_option(backend: Any) -> None:
    retriever = GraphExpansionRetriever(retriever=_Listing(docs=[]), graph_store=backend.graph_store)
    with pytest.raises(InvalidInput, match="depth"):
        retriever.invoke("q", depth=7)
    with pytest.raises(InvalidInput, match="unknown keyword"):
        retriever.invoke("q", hops=1)


def test_per_call_min_score_and_options(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=8)
    everything = retriever.invoke("Alan Turing universal machine")
    floor = everything[1].metadata["graphfuse"]["score"]
    kept = retriever.invoke("Alan Turing universal machine", min_score=floor)
    assert [d.id for d in kept] == [d.id for d in everything[:2]]
    no_hops = retriever.invoke(
        "Alan Turing universal machine", options={"graph": {"depth": 1}, "semantic": {"limit": 1}}
    )
    assert [d.id for d in no_hops] == ["turing", "hopper"]


async def test_sync_invoke_inside_a_running_loop(backend: Any) -> None:
    # Jupyter-style: a sync call while an event loop runs in this thread.
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=1)
    assert retriever.invoke("Alan Turing universal machine")[0].id == "turing"
