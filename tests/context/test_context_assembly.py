"""Context assembly: passages, evidence and graph formats, budgets that hold, and bad input."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphfuse import Document, InvalidInput, PluginError, Relation, Result
from graphfuse.context import (
    FORMATS,
    GraphCaps,
    RegexTokenCounter,
    TokenBudget,
    abuild_context,
    build_context,
    get_token_counter,
)
from graphfuse.stores import InMemoryGraphStore

CL100K = get_token_counter("cl100k_base")

# A small two-hop world: the question names a film; its director's page holds the answer.
DOCS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "film": (
        "The Quiet Harbour",
        "The Quiet Harbour is a 1961 drama film directed by Anna Berg. The film was shot in Bergen. "
        "It premiered at a small festival. Critics praised its music.",
        {"tenant": "acme", "type": "film"},
    ),
    "berg": (
        "Anna Berg",
        "Anna Berg (12 March 1920 - 3 May 1988) was a Norwegian film director. She was born in Oslo. "
        "Her mother was the painter Liv Dahl. She directed eleven feature films.",
        {"tenant": "acme", "type": "person"},
    ),
    "dahl": (
        "Liv Dahl",
        "Liv Dahl was a Norwegian painter known for coastal landscapes. She taught in Oslo.",
        {"tenant": "acme"},
    ),
    "bergen": ("Bergen", "Bergen is a city on the west coast of Norway.", {"tenant": "acme"}),
    "secret": ("Globex Plans", "Anna Berg appears in a confidential Globex memo.", {"tenant": "globex"}),
}
RELATIONS = [
    Relation("film", "berg", "MENTIONS", 1.0),
    Relation("film", "bergen", "MENTIONS", 0.5),
    Relation("berg", "dahl", "MENTIONS", 0.5),
    Relation("secret", "berg", "MENTIONS", 1.0),
]
QUESTION = "Who was the mother of the director of The Quiet Harbour?"


def doc(doc_id: str) -> Document:
    title, text, meta = DOCS[doc_id]
    return Document(doc_id, text, {"title": title, **meta})


def result(doc_id: str, score: float) -> Result:
    return Result(doc(doc_id), score, {})


RESULTS = [result("film", 0.9), result("berg", 0.8), result("bergen", 0.3)]


@pytest.fixture
async def store() -> AsyncIterator[InMemoryGraphStore]:
    s = InMemoryGraphStore()
    await s.store_documents([doc(i) for i in DOCS])
    await s.create_relations(RELATIONS)
    yield s
    await s.close()


def test_passages_with_markers_and_sources() -> None:
    ctx = build_context(QUESTION, RESULTS, budget=1000, format="passages")
    assert ctx.text.startswith("[1] The Quiet Harbour\nThe Quiet Harbour is a 1961")
    assert "\n\n[2] Anna Berg\n" in ctx.text
    assert "[3] Bergen" in ctx.text
    assert [(s.id, s.title, s.score) for s in ctx.sources] == [
        ("film", "The Quiet Harbour", 0.9),
        ("berg", "Anna Berg", 0.8),
        ("bergen", "Bergen", 0.3),
    ]
    assert ctx.counter == "cl100k_base"
    assert ctx.format == "passages"
    assert ctx.tokens == CL100K.count(ctx.text) <= 1000
    assert ctx.dropped == ()
    data = ctx.to_dict()
    assert {"text", "tokens", "counter", "sources", "dropped"} <= set(data)
    assert data["sources"][0] == {"id": "film", "title": "The Quiet Harbour", "score": 0.9, "shortened": False}


def test_passage_that_does_not_fit_is_shortened_to_relevant_sentences_or_dropped() -> None:
    first = build_context(QUESTION, RESULTS[:1], budget=1000)
    budget = first.tokens + 42  # room for part of the second passage only
    ctx = build_context(QUESTION, RESULTS, budget=budget)
    assert ctx.tokens <= budget
    assert [(s.id, s.shortened) for s in ctx.sources] == [("film", False), ("berg", True)]
    assert "Her mother was the painter Liv Dahl." in ctx.text
    assert "She was born in Oslo." not in ctx.text  # nothing of the question in it
    assert [(d.id, d.reason) for d in ctx.dropped] == [("bergen", "budget")]
    tight = build_context(QUESTION, RESULTS, budget=40)
    assert tight.tokens <= 40
    assert [d.id for d in tight.dropped]
    assert all(d.reason == "budget" for d in tight.dropped)
    assert {s.id for s in tight.sources}.isdisjoint(d.id for d in tight.dropped)


def test_chunks_of_one_document_are_merged() -> None:
    meta = {"title": "Long Doc", "parent_id": "long"}
    c0 = Document("long#0", "Alpha beta gamma delta epsilon zeta eta theta iota kappa.", {**meta, "chunk_index": 0})
    c1 = Document("long#1", "eta theta iota kappa. Lambda mu nu xi omicron.", {**meta, "chunk_index": 1})
    ctx = build_context("lambda", [Result(c1, 0.9, {}), result("bergen", 0.5), Result(c0, 0.4, {})], budget=500)
    assert [s.id for s in ctx.sources] == ["long", "bergen"]
    assert ctx.sources[0].score == 0.9
    assert ctx.text.count("[1] Long Doc") == 1
    assert ctx.text.count("iota kappa") == 1  # the 22-character overlap is written once
    assert "Lambda mu nu xi omicron." in ctx.text


def test_evidence_keeps_entity_sentences_and_drops_the_rest() -> None:
    ctx = build_context(QUESTION, RESULTS, budget=110, format="evidence")
    assert ctx.tokens <= 110
    assert "directed by Anna Berg" in ctx.text  # query entity + bridge entity
    assert "Her mother was the painter Liv Dahl." in ctx.text  # the fact asked for
    assert "Critics praised its music." not in ctx.text
    # The kept sentences state "The Quiet Harbour" and "Anna Berg": their heads leave the titles out.
    assert ctx.text.startswith("[1] The Quiet Harbour is a 1961 drama film directed by Anna Berg.")
    assert "[2] Anna Berg (12 March 1920" in ctx.text
    assert "Harbour: " not in ctx.text
    assert "Anna Berg: " not in ctx.text
    # Smaller than the passages it comes from.
    assert ctx.tokens < build_context(QUESTION, RESULTS, budget=1000).tokens


def test_evidence_heads_keep_a_title_their_sentences_do_not_state() -> None:
    film = Document("f", "It was shot in Bergen in 1961. Critics praised its music.", {"title": "The Quiet Harbour"})
    ctx = build_context("Where was The Quiet Harbour shot?", [Result(film, 0.9, {})], budget=60, format="evidence")
    assert ctx.text.startswith("[1] The Quiet Harbour: It was shot in Bergen in 1961.")
    # Case and spacing aside, a sentence that states the title makes the head bare.
    named = Document("g", "the quiet  harbour was shot in Bergen.", {"title": "The Quiet Harbour"})
    ctx = build_context("Where was The Quiet Harbour shot?", [Result(named, 0.9, {})], budget=60, format="evidence")
    assert ctx.text == "[1] the quiet  harbour was shot in Bergen."


async def test_graph_format_in_document_003_shape(store: InMemoryGraphStore) -> None:
    ctx = await abuild_context(QUESTION, RESULTS[:2], budget=400, format="graph", graph_store=store)
    text = ctx.text
    assert text.startswith("## ENTITIES\n- [1] The Quiet Harbour [FILM]: The Quiet Harbour is a 1961 drama film")
    assert "- [2] Anna Berg [PERSON]: Anna Berg (12 March 1920 - 3 May 1988)" in text
    assert "## RELATIONSHIPS\n- The Quiet Harbour -[MENTIONS]-> Anna Berg (1.00)" in text
    assert "Anna Berg -[MENTIONS]-> Liv Dahl (0.50) | Her mother was the painter Liv Dahl." in text
    # Supporting text: query-relevant sentences not stated above (the film's others are not relevant).
    assert text.endswith("## SUPPORTING TEXT\n[2] Anna Berg: She directed eleven feature films.")
    # Neighbours reached through relations are entities (and sources) too.
    assert {"film", "berg", "dahl", "bergen"} <= {s.id for s in ctx.sources}
    # No sentence stated twice.
    sentences = [s.strip() for line in text.splitlines() for s in re.split(r"(?<=\.) ", line.split(": ", 1)[-1])]
    long_ones = [s for s in sentences if len(s) > 30]
    assert len(long_ones) == len(set(long_ones))
    assert set(ctx.sections) == {"entities", "relationships", "supporting_text"}
    again = await abuild_context(QUESTION, RESULTS[:2], budget=400, format="graph", graph_store=store)
    assert again.text == text  # deterministic


async def test_graph_never_shows_documents_outside_the_filter(store: InMemoryGraphStore) -> None:
    ctx = await abuild_context(
        QUESTION, RESULTS[:2], budget=400, format="graph", graph_store=store, filter={"tenant": "acme"}
    )
    assert "Globex" not in ctx.text
    assert "secret" not in {s.id for s in ctx.sources}
    unfiltered = await abuild_context(QUESTION, RESULTS[:2], budget=400, format="graph", graph_store=store)
    assert "Globex Plans" in unfiltered.text  # the neighbour is there without the filter


async def test_graph_with_a_filter_that_excludes_every_neighbour(store: InMemoryGraphStore) -> None:
    ctx = await abuild_context(
        QUESTION,
        RESULTS[:2],
        budget=400,
        format="graph",
        graph_store=store,
        filter={"type": {"$in": ["film", "person"]}},
    )
    assert [s.id for s in ctx.sources] == ["film", "berg"]
    assert "Liv Dahl -" not in ctx.text
    assert "Bergen [" not in ctx.text
    assert "Globex" not in ctx.text
    assert "The Quiet Harbour -[MENTIONS]-> Anna Berg" in ctx.text


async def test_graph_caps(store: InMemoryGraphStore) -> None:
    caps = GraphCaps(max_entities=2, max_relations=1, max_documents=1, description_chars=30, supporting_chars=40)
    ctx = await abuild_context(QUESTION, RESULTS, budget=400, format="graph", graph_store=store, caps=caps)
    assert len([ln for ln in ctx.text.splitlines() if ln.startswith("- [")]) == 2
    assert len([ln for ln in ctx.text.splitlines() if "-[" in ln and "]->" in ln]) == 1
    assert [d.id for d in ctx.dropped if d.reason == "cap"] == ["bergen"]
    for line in ctx.text.splitlines():
        if line.startswith("- ["):
            assert len(line.split(": ", 1)[1]) <= 31


def test_graph_needs_a_store() -> None:
    with pytest.raises(InvalidInput, match="needs a graph store"):
        build_context(QUESTION, RESULTS, budget=300, format="graph")


@pytest.mark.parametrize("budget", [0, -1, True, 2.5, "600"])
def test_bad_budget(budget: Any) -> None:
    with pytest.raises(InvalidInput, match="budget"):
        build_context(QUESTION, RESULTS, budget=budget)


def test_budget_smaller_than_the_reserves() -> None:
    with pytest.raises(InvalidInput, match="no room for context"):
        build_context(QUESTION, RESULTS, budget=TokenBudget(4096, response=4000))


def test_token_budget_counts_the_query() -> None:
    ctx = build_context(QUESTION, RESULTS, budget=TokenBudget(1600, system=100, response=1000))
    assert ctx.allocation is not None
    assert ctx.allocation.query == CL100K.count(QUESTION)
    assert ctx.budget == 1600 - 100 - 1000 - CL100K.count(QUESTION)
    assert ctx.tokens <= ctx.budget
    assert ctx.to_dict()["allocation"]["context"] == ctx.budget


@pytest.mark.parametrize("fmt", ["summary", "", None, "GRAPH"])
def test_unknown_format(fmt: Any) -> None:
    with pytest.raises(InvalidInput, match=r"unknown context format .* formats are: passages, evidence, graph"):
        build_context(QUESTION, RESULTS, budget=300, format=fmt)


class Exploding:
    name = "exploding"

    def count(self, text: str) -> int:
        raise RuntimeError("tokenizer crashed")


class Negative:
    name = "negative"

    def count(self, text: str) -> int:
        return -1


@pytest.mark.parametrize(("counter", "message"), [(Exploding(), "tokenizer crashed"), (Negative(), "returned -1")])
def test_counter_that_fails_is_a_plugin_error(counter: Any, message: str) -> None:
    with pytest.raises(PluginError, match=f"token counter '{counter.name}'.*{message}"):
        build_context(QUESTION, RESULTS, budget=300, counter=counter)


def test_not_a_counter() -> None:
    with pytest.raises(InvalidInput, match="not a TokenCounter"):
        build_context(QUESTION, RESULTS, budget=300, counter=len)  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["passages", "evidence"])
@pytest.mark.parametrize("counter", [CL100K, RegexTokenCounter()])
def test_long_paragraph_without_sentence_boundaries_is_cut_not_dropped(fmt: str, counter: Any) -> None:
    words = " ".join(f"word{i % 97} harbour" for i in range(4000))  # about 10k tokens, no full stop
    assert CL100K.count(words) > 9000
    long = Result(Document("long", words, {"title": "Harbour log"}), 0.9, {})
    ctx = build_context("harbour", [long], budget=300, format=fmt, counter=counter)
    assert 200 < ctx.tokens <= 300
    assert [s.id for s in ctx.sources] == ["long"]
    assert ctx.sources[0].shortened
    assert ctx.text.endswith("\u2026")


@pytest.mark.parametrize("fmt", ["passages", "evidence"])
def test_non_latin_text(fmt: str) -> None:
    zh = Document("zh", "东京是日本的首都。东京有很多博物馆。大阪是另一个大城市。", {"title": "东京"})
    ru = Document("ru", "Москва — столица России. Там много музеев. Река течёт через город.", {"title": "Москва"})
    results = [Result(zh, 0.9, {}), Result(ru, 0.8, {})]
    for counter in (CL100K, RegexTokenCounter()):
        ctx = build_context("东京的博物馆", results, budget=40, format=fmt, counter=counter)
        assert ctx.tokens == counter.count(ctx.text) <= 40
        assert "东京" in ctx.text


@pytest.mark.parametrize("fmt", FORMATS)
async def test_no_results_gives_an_empty_context_that_says_so(fmt: str, store: InMemoryGraphStore) -> None:
    ctx = await abuild_context(QUESTION, [], budget=50, format=fmt, graph_store=store)
    assert ctx.text == "No retrieved context for this query."
    assert ctx.sources == ()
    assert ctx.is_empty
    assert ctx.tokens <= 50
    tiny = await abuild_context(QUESTION, [], budget=1, format=fmt, graph_store=store)
    assert tiny.text == ""
    assert tiny.tokens == 0


def test_results_without_content_are_listed_as_dropped() -> None:
    bare = Result(Document("bare"), 0.95, {})
    ctx = build_context(QUESTION, [bare, *RESULTS], budget=500)
    assert ("bare", "no content") in {(d.id, d.reason) for d in ctx.dropped}
    assert ctx.sources[0].id == "film"


def test_results_outside_the_filter_are_left_out() -> None:
    ctx = build_context(QUESTION, [result("secret", 0.99), *RESULTS], budget=500, filter={"tenant": "acme"})
    assert "Globex" not in ctx.text
    assert ("secret", "filter") in {(d.id, d.reason) for d in ctx.dropped}


# -- the budget holds for any text, budget and counter ------------------------------------------


class CharCounter:
    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


class WordCounter:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


class LumpyCounter:
    """Not additive, not monotone in prefixes: punctuation is expensive, some letters free."""

    name = "lumpy"

    def count(self, text: str) -> int:
        return len(text) // 3 + 2 * sum(not c.isalnum() and not c.isspace() for c in text) - text.count("e") // 4


COUNTERS = [CL100K, RegexTokenCounter(), CharCounter(), WordCounter(), LumpyCounter()]
_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=0, max_size=400
)
_sentence_text = st.lists(
    st.sampled_from(
        [
            "Anna Berg",
            "directed",
            "the film",
            "Oslo.",
            "1961",
            "!",
            "?",
            "\n",
            "東京。",
            "Dr. X",
            " ",
            "\nAnna:",
            "\nBo Li:",
        ]
    ),
    max_size=60,
).map(" ".join)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.one_of(_text, _sentence_text), min_size=0, max_size=8),
    titles=st.lists(st.one_of(st.none(), st.text(max_size=20)), min_size=8, max_size=8),
    query=st.one_of(_sentence_text, st.text(min_size=1, max_size=40)).filter(lambda q: q.strip() != ""),
    budget=st.integers(min_value=1, max_value=400),
    counter=st.sampled_from(COUNTERS),
    fmt=st.sampled_from(FORMATS),
)
def test_context_never_exceeds_the_budget(
    texts: list[str], titles: list[str | None], query: str, budget: int, counter: Any, fmt: str
) -> None:
    results = []
    for i, text in enumerate(texts):
        meta = {} if titles[i] is None else {"title": titles[i]}
        results.append(Result(Document(f"d{i}", text, meta), 1.0 - i / 10, {}))
    store = InMemoryGraphStore()
    docs = [r.document for r in results]

    async def run() -> Any:
        await store.store_documents(docs)
        if len(docs) > 2:
            await store.create_relations([Relation("d0", "d1", "MENTIONS"), Relation("d2", "d0", "LINKS_TO", 0.3)])
        return await abuild_context(query, results, budget=budget, format=fmt, counter=counter, graph_store=store)

    from graphfuse import run_sync

    ctx = run_sync(run())
    assert ctx.tokens == counter.count(ctx.text)
    assert ctx.tokens <= budget
    cited = {s.id for s in ctx.sources}
    assert cited.isdisjoint(d.id for d in ctx.dropped if d.id.startswith("d") and d.reason != "cap")
    for n in range(1, len(ctx.sources) + 1):
        assert f"[{n}]" in ctx.text


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_heading_that_repeats_the_title_is_not_repeated(fmt: str) -> None:
    note = Document(
        "kickoff.md",
        "# Kickoff with  Acme\n\nBob said the Postgres cluster is in Frankfurt.",
        {"title": "Kickoff with Acme"},
    )
    other = Document("ops.md", "# Runbook\nRestart the cluster.", {"title": "ops"})
    ctx = await abuild_context(
        "Where is the Postgres cluster?",
        [Result(note, 0.9, {}), Result(other, 0.5, {})],
        budget=200,
        format=fmt,
        graph_store=InMemoryGraphStore(),
    )
    assert "Kickoff with Acme" in ctx.text
    assert "# Kickoff" not in ctx.text
    assert "Frankfurt" in ctx.text
    assert "Runbook" in ctx.text or fmt != "passages"  # a heading other than the title stays


async def test_entity_nodes_are_named_in_the_graph_format() -> None:
    graph = InMemoryGraphStore()
    notes = [
        Document("ops.md", "Carla Diaz runs the database team.", {"title": "ops"}),
        Document("graphfuse:entity:carla diaz", "carla diaz", {"graphfuse_kind": "entity", "name": "carla diaz"}),
    ]
    await graph.store_documents(notes)
    await graph.create_relations([Relation("graphfuse:entity:carla diaz", "ops.md", "MENTIONED_IN", 1.0)])
    ctx = await abuild_context(
        "Who runs the database team?", [Result(notes[0], 0.9, {})], budget=200, format="graph", graph_store=graph
    )
    assert "carla diaz -[MENTIONED_IN]-> ops" in ctx.text
    assert "graphfuse:entity:" not in ctx.text
    assert "carla diaz: carla diaz" not in ctx.text


async def test_graph_entities_of_markdown_notes_are_described_by_the_sentence_after_their_headings() -> None:
    notes = InMemoryGraphStore()
    text = "# Atlas\n## Overview\nAtlas Maps is the tiles service. Jonas carries its pager."
    atlas = Document("atlas.md", text, {"title": "Atlas Maps"})
    await notes.store_documents([atlas])
    ctx = await abuild_context(
        "Who carries the Atlas pager?", [Result(atlas, 0.9, {})], budget=200, format="graph", graph_store=notes
    )
    assert ctx.text.startswith("## ENTITIES\n- [1] Atlas Maps: Atlas Maps is the tiles service.")
    await notes.close()
