"""GraphFuseContextFormatter: retrieved documents packed into a token budget, in place of ``format_docs``."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_graphfuse import (
    GraphFuseContextFormatter,
    GraphFuseContextWithSources,
    GraphFuseRetriever,
    WeightedFusion,
    with_query,
)

from graphfuse import InvalidInput, NotFound
from graphfuse.context import Context, TokenBudget, get_token_counter, retrieve_context

QUESTION = "Who designed the Analytical Engine that Ada Lovelace programmed?"
EMPTY = "No retrieved context for this query."


def film_docs() -> list[Document]:
    return [
        Document(
            id="film",
            page_content="The Quiet Harbour is a 1961 drama film directed by Anna Berg. "
            "It premiered at a small festival.",
            metadata={"title": "The Quiet Harbour"},
        ),
        Document(
            id="berg",
            page_content="Anna Berg was a Norwegian film director. She was born in Oslo. "
            "Her mother was the painter Liv Dahl.",
            metadata={"title": "Anna Berg"},
        ),
    ]


FILM_QUESTION = "Who was the mother of the director of The Quiet Harbour?"


class _Runs(BaseCallbackHandler):
    """Records each run's name and parent."""

    def __init__(self) -> None:
        self.parents: dict[str, UUID | None] = {}
        self.ids: dict[str, UUID] = {}

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        self._start(kw.get("name"), run_id, parent_run_id)

    def on_retriever_start(
        self, serialized: Any, query: str, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        self._start(kw.get("name"), run_id, parent_run_id)

    def _start(self, name: str | None, run_id: UUID, parent: UUID | None) -> None:
        if name:
            self.parents[name] = parent
            self.ids[name] = run_id


def test_evidence_from_graphfuse_retriever_documents_within_budget(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=5)
    text = (retriever | GraphFuseContextFormatter(budget=80, format="evidence")).invoke(QUESTION)
    assert get_token_counter().count(text) <= 80
    assert text.startswith("[1] ")
    assert "Babbage" in text  # the query travelled with the documents: evidence selected by it
    # The whole passages do not fit in 80 tokens: evidence dropped words, not the bridge fact.
    passages = (retriever | GraphFuseContextFormatter(budget=2000)).invoke(QUESTION)
    assert get_token_counter().count(passages) > 80


async def test_documents_to_str_sync_async_and_batch() -> None:
    formatter = GraphFuseContextFormatter(budget=60, format="evidence")
    value = {"question": FILM_QUESTION, "documents": film_docs()}
    text = formatter.invoke(value)
    assert "Liv Dahl" in text
    assert "premiered" not in text
    assert "Oslo" not in text
    assert await formatter.ainvoke(value) == text
    assert formatter.batch([value, {"query": FILM_QUESTION, "documents": film_docs()[:1]}])[0] == text
    both = await formatter.abatch([value, value])
    assert both == [text, text]


def test_passages_need_no_query_and_keep_document_order() -> None:
    text = GraphFuseContextFormatter(budget=200).invoke(film_docs())
    assert text.index("[1] The Quiet Harbour") < text.index("[2] Anna Berg")
    assert "It premiered at a small festival." in text


def test_graphfuse_scores_are_used_when_every_document_has_one() -> None:
    docs = film_docs()
    docs[0].metadata["graphfuse"] = {"score": 0.2}
    docs[1].metadata["graphfuse"] = {"score": 0.9}
    ctx = GraphFuseContextFormatter(budget=200).with_sources().invoke(docs)
    assert [(s.id, s.score) for s in ctx.sources] == [("film", 0.2), ("berg", 0.9)]
    del docs[0].metadata["graphfuse"]
    ranked = GraphFuseContextFormatter(budget=200).with_sources().invoke(docs)
    assert [(s.id, s.score) for s in ranked.sources] == [("film", 1.0), ("berg", 0.5)]


def test_with_sources_returns_the_context_for_citation() -> None:
    formatter = GraphFuseContextFormatter(budget=60, format="evidence")
    sourced = formatter.with_sources()
    assert isinstance(sourced, GraphFuseContextWithSources)
    assert sourced.OutputType is Context
    assert formatter.OutputType is str
    ctx = sourced.invoke({"question": FILM_QUESTION, "documents": film_docs()})
    assert isinstance(ctx, Context)
    assert ctx.text == formatter.invoke({"question": FILM_QUESTION, "documents": film_docs()})
    assert ctx.tokens <= 60
    assert ctx.counter == formatter.counter.name
    assert ctx.format == "evidence"
    assert [(s.id, s.title) for s in ctx.sources] == [("film", "The Quiet Harbour"), ("berg", "Anna Berg")]
    for n, source in enumerate(ctx.sources, start=1):
        assert f"[{n}] {source.title}" in ctx.text


def test_budget_is_never_exceeded_and_what_does_not_fit_is_dropped() -> None:
    docs = [Document(id=f"d{i}", page_content=f"Paragraph {i}. " + "word " * 40) for i in range(6)]
    ctx = GraphFuseContextFormatter(budget=70).with_sources().invoke(docs)
    assert ctx.tokens <= 70 == ctx.budget
    assert ctx.dropped
    assert {d.reason for d in ctx.dropped} == {"budget"}
    assert len(ctx.sources) + len(ctx.dropped) == 6
    window = GraphFuseContextFormatter(budget=TokenBudget(600, system=100, response=200, query=50))
    question_tokens = window.counter.count("paragraph three")
    sized = window.with_sources().invoke({"question": "paragraph three", "documents": docs})
    assert sized.budget == 600 - 100 - 200 - question_tokens
    assert sized.tokens <= sized.budget


def test_title_key_id_key_and_k() -> None:
    docs = [
        Document(page_content="Loaders put the file name in source.", metadata={"source": "notes/a.md", "node": "a"}),
        Document(page_content="A second loaded file.", metadata={"source": "notes/b.md", "node": "b"}),
    ]
    ctx = GraphFuseContextFormatter(budget=100, title_key="source", id_key="node", k=1).with_sources().invoke(docs)
    assert [(s.id, s.title) for s in ctx.sources] == [("a", "notes/a.md")]
    assert ctx.text.startswith("[1] notes/a.md\n")


def test_filter_drops_documents_outside_it() -> None:
    docs = [
        Document(id="mine", page_content="Acme notes.", metadata={"tenant": "acme"}),
        Document(id="theirs", page_content="Globex notes.", metadata={"tenant": "globex"}),
    ]
    ctx = GraphFuseContextFormatter(budget=100, filter={"tenant": "acme"}).with_sources().invoke(docs)
    assert [s.id for s in ctx.sources] == ["mine"]
    assert "Globex" not in ctx.text
    assert [(d.id, d.reason) for d in ctx.dropped] == [("theirs", "filter")]
    per_call = (
        GraphFuseContextFormatter(budget=100).with_sources().invoke({"documents": docs, "filter": {"tenant": "globex"}})
    )
    assert [s.id for s in per_call.sources] == ["theirs"]


async def test_graph_format_reads_relations_within_the_filter(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=3, filter={"tenant": "acme"})
    formatter = GraphFuseContextFormatter(budget=400, format="graph", graph_store=backend.graph_store)
    text = (retriever | formatter).invoke(QUESTION)
    assert text.startswith("## ENTITIES")
    assert "## RELATIONSHIPS" in text
    assert "-[LINKS]->" in text
    assert "Confidential" not in text  # the globex document stays out (the tenant filter travels with the documents)
    assert await (retriever | formatter).ainvoke(QUESTION) == text


async def test_query_to_str_through_a_retriever_runs_it_as_a_child_run(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=4)
    formatter = GraphFuseContextFormatter(budget=120, format="evidence", retriever=retriever, name="ctx")
    expected = (retriever | GraphFuseContextFormatter(budget=120, format="evidence")).invoke(QUESTION)
    for call in ("sync", "async"):
        runs = _Runs()
        config: Any = {"callbacks": [runs]}
        text = (
            formatter.invoke(QUESTION, config=config)
            if call == "sync"
            else await formatter.ainvoke(QUESTION, config=config)
        )
        assert text == expected
        assert runs.parents["ctx"] is None
        assert runs.parents["GraphFuseRetriever"] == runs.ids["ctx"]


async def test_query_to_str_through_a_pipeline(backend: Any) -> None:
    pipeline = backend.pipeline()
    formatter = GraphFuseContextFormatter(budget=150, format="graph", pipeline=pipeline, k=3)
    expected = retrieve_context(pipeline, QUESTION, budget=150, format="graph", top_k=3)
    assert formatter.invoke(QUESTION) == expected.text
    ctx = await formatter.with_sources().ainvoke(QUESTION)
    assert ctx.text == expected.text
    assert [s.id for s in ctx.sources] == [s.id for s in expected.sources]


async def test_in_an_lcel_chain_with_astream_events() -> None:
    docs = film_docs()
    retriever = RunnableLambda(lambda q: docs, name="films")
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    seen: list[str] = []

    def model_input(value: Any) -> Any:
        seen.append(value.to_string())
        return value

    chain = (
        {
            "context": with_query(retriever) | GraphFuseContextFormatter(budget=60, format="evidence"),
            "question": RunnablePassthrough(),
        }
        | prompt
        | RunnableLambda(model_input)
        | FakeListChatModel(responses=["Liv Dahl."])
        | StrOutputParser()
    )
    events = [e async for e in chain.astream_events(FILM_QUESTION, version="v2")]
    assert events[-1]["event"] == "on_chain_end"
    assert events[-1]["data"]["output"] == "Liv Dahl."
    ends = [e for e in events if e["event"] == "on_chain_end" and e["name"] == "graphfuse.context"]
    assert len(ends) == 1
    assert "Liv Dahl" in ends[0]["data"]["output"]
    assert "[2] Anna Berg was a Norwegian film director." in seen[0]
    assert "premiered" not in seen[0]


def test_sync_graph_context_inside_a_running_loop(backend: Any) -> None:
    import asyncio

    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=3)
    formatter = GraphFuseContextFormatter(budget=300, format="graph", graph_store=backend.graph_store)
    expected = (retriever | formatter).invoke(QUESTION)

    async def jupyter_cell() -> str:
        return (retriever | formatter).invoke(QUESTION)

    assert asyncio.run(jupyter_cell()) == expected


def test_fusion_output_feeds_the_formatter(backend: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=4)
    ctx = (retriever | WeightedFusion(top_n=2) | GraphFuseContextFormatter(budget=500).with_sources()).invoke(QUESTION)
    assert len(ctx.sources) == 2
    assert all(0 < s.score <= 1 for s in ctx.sources)


# --- bad input: each names what was wrong --------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 0}, r"budget must be a positive number of tokens, got 0"),
        ({"budget": -5}, r"budget must be a positive number of tokens, got -5"),
        ({"budget": True}, r"budget must be a positive int"),
        ({"budget": "600"}, r"budget must be a positive int \(context tokens\) or a TokenBudget, got '600'"),
        (
            {"budget": 100, "format": "markdown"},
            r"unknown context format 'markdown'; formats are: passages, evidence, graph",
        ),
        ({"budget": 100, "format": "graph"}, r"'graph' context format needs a graph store"),
        ({"budget": 100, "counter": object()}, r"counter must be a token counter name or a TokenCounter"),
        ({"budget": 100, "k": 0}, r"k must be a positive integer, got 0"),
        ({"budget": 100, "title_key": ""}, r"title_key must be a non-empty metadata key"),
        ({"budget": 100, "retriever": "bm25"}, r"retriever must be a LangChain Runnable"),
        ({"budget": 100, "pipeline": object()}, r"pipeline must be a graphfuse.Pipeline, got object"),
        ({"budget": 100, "caps": {"max_entities": 3}}, r"caps must be a graphfuse.context.GraphCaps, got dict"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        GraphFuseContextFormatter(**kwargs)


def test_unknown_counter_name_is_not_found() -> None:
    with pytest.raises(NotFound):
        GraphFuseContextFormatter(budget=100, counter="no-such-tokenizer")


def test_retriever_and_pipeline_together_are_refused(backend: Any) -> None:
    with pytest.raises(InvalidInput, match="not both"):
        GraphFuseContextFormatter(budget=100, retriever=RunnableLambda(lambda q: []), pipeline=backend.pipeline())


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (42, r"takes a list of Documents, got int"),
        ({"question": "q"}, r"got a mapping with keys \['question'\]"),
        ({"documents": [], "question": "q", "query": "q"}, r"'query' \(or 'question'\)"),
        ({"documents": [], "k": 3}, r"got a mapping with keys \['documents', 'k'\]"),
        (["just text"], r"found a str"),
        ({"documents": [], "question": ""}, r"'query' must be a non-empty string"),
    ],
)
async def test_input_of_the_wrong_shape_is_refused(value: Any, message: str) -> None:
    formatter = GraphFuseContextFormatter(budget=100)
    with pytest.raises(InvalidInput, match=message):
        formatter.invoke(value)
    with pytest.raises(InvalidInput, match=message):
        await formatter.ainvoke(value)


def test_a_query_without_a_retriever_is_refused() -> None:
    with pytest.raises(InvalidInput, match="got a query string but has nothing to retrieve with"):
        GraphFuseContextFormatter(budget=100).invoke("what happened?")
    with pytest.raises(InvalidInput, match="the query must be a non-empty string"):
        GraphFuseContextFormatter(budget=100, retriever=RunnableLambda(lambda q: [])).invoke("  ")


@pytest.mark.parametrize("fmt", ["evidence", "graph"])
def test_evidence_and_graph_need_the_query(backend: Any, fmt: str) -> None:
    formatter = GraphFuseContextFormatter(budget=100, format=fmt, graph_store=backend.graph_store)
    with pytest.raises(
        InvalidInput, match=f"the '{fmt}' format selects by the query, and none came with the documents"
    ):
        formatter.invoke(film_docs())


async def test_no_documents_give_an_empty_context_that_says_so(backend: Any) -> None:
    for fmt in ("passages", "evidence", "graph"):
        formatter = GraphFuseContextFormatter(budget=100, format=fmt, graph_store=backend.graph_store)
        assert formatter.invoke([]) == EMPTY
        assert await formatter.ainvoke({"question": "anything?", "documents": []}) == EMPTY
        ctx = formatter.with_sources().invoke([])
        assert ctx.is_empty
        assert ctx.sources == ()
        assert ctx.text == EMPTY
    nothing = GraphFuseContextFormatter(budget=100, retriever=RunnableLambda(lambda q: []))
    assert nothing.invoke("anything?") == EMPTY
