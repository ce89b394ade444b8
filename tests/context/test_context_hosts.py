"""Context assembly over a host's own objects: ContextAssembler, citations and context_parts."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from graphfuse import Document, GraphFuseError, InvalidInput, NotFound, Relation
from graphfuse.context import (
    Context,
    ContextAssembler,
    ContextSource,
    GraphCaps,
    RegexTokenCounter,
    TokenBudget,
    check_budget,
    citations,
    context_parts,
    resolve_counter,
)
from graphfuse.stores import InMemoryGraphStore


@dataclass
class Hit:
    """A stand-in host object: an id, text, metadata and a score of the host's own."""

    key: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)
    score: object = None
    doc: str | None = None


def read(assembler: ContextAssembler, hits: list[Hit], **options: Any) -> list[Any]:
    return assembler.results(
        hits,
        id=lambda h: h.key,
        content=lambda h: h.text,
        metadata=lambda h: h.meta,
        score=lambda h: h.score,
        parent=lambda h: h.doc,
        **options,
    )


HITS = [
    Hit(
        "film#0",
        "The Quiet Harbour is a 1961 drama directed by Anna Berg.",
        {"title": "The Quiet Harbour"},
        0.9,
        "film",
    ),
    Hit(
        "berg",
        "Anna Berg was a Norwegian film director. Her mother was the painter Liv Dahl.",
        {"title": "Anna Berg"},
        0.7,
    ),
    Hit("film#1", "The film was shot in Bergen.", {"title": "The Quiet Harbour", "chunk_index": 1}, 0.4, "film"),
]
QUESTION = "Who was the mother of the director of The Quiet Harbour?"


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (0, "positive number of tokens, got 0"),
        (-3, "positive number of tokens, got -3"),
        (True, r"positive int \(context tokens\) or a TokenBudget, got True"),
        (2.5, "got 2.5"),
        ("600", "got '600'"),
        (None, "got None"),
    ],
)
def test_bad_budgets_are_invalid_input(budget: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        check_budget(budget)
    with pytest.raises(InvalidInput, match=message):
        ContextAssembler(budget=budget)


def test_budgets_and_counters_that_are_accepted() -> None:
    window = TokenBudget(window=4096)
    assert check_budget(window) is window
    assert check_budget(300) == 300
    counter = RegexTokenCounter()
    assert resolve_counter(counter) is counter
    assert resolve_counter("regex").name == "regex"
    assert resolve_counter(None).name in ("cl100k_base", "regex")


@pytest.mark.parametrize("counter", [object(), "x", 5])
def test_bad_counters(counter: object) -> None:
    with pytest.raises((InvalidInput, NotFound)):
        resolve_counter(counter)


def test_a_counter_without_count_is_invalid_input() -> None:
    class NoCount:
        name = "mine"

    with pytest.raises(InvalidInput, match="counter must be a token counter name or a TokenCounter"):
        ContextAssembler(budget=100, counter=NoCount())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "markdown"}, "unknown context format 'markdown'"),
        ({"format": "graph"}, "'graph' context format needs a graph store"),
        ({"graph_store": object()}, "graph_store must be a GraphStore"),
        ({"caps": {"max_entities": 3}}, "caps must be a graphfuse.context.GraphCaps, got dict"),
        ({"filter": {"tenant": {"$bogus": 1}}}, "bogus"),
    ],
)
def test_bad_settings(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        ContextAssembler(budget=100, **options)


def test_graph_format_without_store_when_the_host_hands_one_to_a_pipeline() -> None:
    assembler = ContextAssembler(budget=100, format="graph", graph_store_optional=True, caps=GraphCaps())
    assert assembler.options()["graph_store"] is None
    assert set(assembler.options()) == {"budget", "format", "filter", "counter", "graph_store", "caps"}


def test_results_keep_order_scores_parents_and_titles() -> None:
    assembler = ContextAssembler(budget=200, counter="regex")
    results = read(assembler, HITS)
    assert [r.id for r in results] == ["film#0", "berg", "film#1"]
    assert [r.score for r in results] == [0.9, 0.7, 0.4]
    assert results[0].document.metadata["parent_id"] == "film"
    assert "parent_id" not in results[1].document.metadata
    assert HITS[0].meta == {"title": "The Quiet Harbour"}  # the host's metadata is copied, not changed
    renamed = read(assembler, [Hit("a", "text", {"source": "guide.md"}, 0.5)], title_key="source")
    assert renamed[0].document.metadata["title"] == "guide.md"
    with pytest.raises(InvalidInput, match="title_key"):
        read(assembler, HITS, title_key="")


def test_unscored_objects_get_their_rank_or_zero() -> None:
    assembler = ContextAssembler(budget=200, counter="regex")
    hits = [Hit("a", "one", score=0.8), Hit("b", "two", score=None), Hit("c", "three", score=float("nan"))]
    assert [r.score for r in read(assembler, hits)] == [1.0, 2 / 3, 1 / 3]
    assert [r.score for r in read(assembler, hits, unscored="zero")] == [0.8, 0.0, 0.0]
    assert [r.score for r in read(assembler, [Hit("a", "x", score=True)])] == [1.0]  # a bool is no score


def test_empty_batch_gives_an_empty_context() -> None:
    assembler = ContextAssembler(budget=100, format="evidence", counter="regex")
    assert read(assembler, []) == []
    ctx = assembler.build(None, [])
    assert ctx.is_empty
    assert citations(ctx, []) == []
    assert context_parts(ctx) == []


def test_build_and_abuild_agree_and_chunks_merge_into_one_source() -> None:
    assembler = ContextAssembler(budget=200, counter="regex")
    results = read(assembler, HITS)
    ctx = assembler.build(QUESTION, results)
    assert ctx == asyncio.run(assembler.abuild(QUESTION, results))
    assert [s.id for s in ctx.sources] == ["film", "berg"]
    cited = citations(ctx, results)
    assert [(c.marker, c.source.id, c.indices) for c in cited] == [(1, "film", (0, 2)), (2, "berg", (1,))]
    parts = context_parts(ctx)
    assert "\n\n".join(parts) == ctx.text
    assert parts[0].startswith("[1] The Quiet Harbour")
    assert parts[1].startswith("[2] Anna Berg")


def test_filters_are_anded_and_no_query_needs_passages() -> None:
    assembler = ContextAssembler(budget=200, counter="regex", filter={"title": "Anna Berg"})
    results = read(assembler, HITS)
    assert [s.id for s in assembler.build(None, results).sources] == ["berg"]
    assert assembler.build(None, results, filter={"title": "The Quiet Harbour"}).is_empty
    with pytest.raises(InvalidInput, match="the 'evidence' format selects by the query"):
        ContextAssembler(budget=200, format="evidence", counter="regex").build(None, results)


def test_graph_format_reads_the_store() -> None:
    store = InMemoryGraphStore()

    async def load() -> None:
        await store.store_documents(
            [
                Document("berg", HITS[1].text, {"title": "Anna Berg"}),
                Document("dahl", "Liv Dahl was a Norwegian painter.", {"title": "Liv Dahl"}),
            ]
        )
        await store.create_relations([Relation("berg", "dahl", "MENTIONS", 1.0)])

    asyncio.run(load())
    assembler = ContextAssembler(budget=300, format="graph", counter="regex", graph_store=store)
    ctx = assembler.build(QUESTION, read(assembler, HITS[1:2]))
    assert "Liv Dahl" in ctx.text
    with pytest.raises(InvalidInput, match="one text"):
        context_parts(ctx)


def test_context_parts_refuses_text_without_its_markers() -> None:
    source = ContextSource("a", "A", 1.0)
    with pytest.raises(GraphFuseError, match=r"marker \[1\]"):
        context_parts(Context("no markers", 2, "regex", "passages", (source,)))
    with pytest.raises(GraphFuseError, match=r"no marker \[2\]"):
        context_parts(Context("[1] A\ntext", 3, "regex", "passages", (source, source)))
