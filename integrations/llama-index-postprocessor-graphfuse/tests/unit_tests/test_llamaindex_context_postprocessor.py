"""ContextPostprocessor: nodes packed into a token budget, inside a real RetrieverQueryEngine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from llama_index.core import MockEmbedding, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode
from llama_index.postprocessor.graphfuse import (
    CONTEXT_KEY,
    ContextPostprocessor,
    ContextSourceNode,
    TemporalDecayPostprocessor,
)

from graphfuse import Document, InvalidInput, NotFound, Relation
from graphfuse.context import RegexTokenCounter, get_token_counter
from graphfuse.stores import InMemoryGraphStore

QUESTION = "Who was the mother of the director of The Quiet Harbour?"
FILM = "The Quiet Harbour is a 1961 drama film directed by Anna Berg. It premiered at a small festival."
BERG = "Anna Berg was a Norwegian film director. She was born in Oslo. Her mother was the painter Liv Dahl."
GARDEN = "Unrelated notes about gardening tomatoes in raised beds. " * 30


def make_nodes() -> list[NodeWithScore]:
    return [
        NodeWithScore(node=TextNode(id_="film", text=FILM, metadata={"title": "The Quiet Harbour"}), score=0.9),
        NodeWithScore(node=TextNode(id_="berg", text=BERG, metadata={"title": "Anna Berg"}), score=0.7),
        NodeWithScore(node=TextNode(id_="garden", text=GARDEN, metadata={"title": "Garden"}), score=0.2),
    ]


@pytest.fixture
async def graph_store() -> AsyncIterator[InMemoryGraphStore]:
    store = InMemoryGraphStore()
    await store.store_documents(
        [
            Document("film", FILM, {"title": "The Quiet Harbour", "type": "film"}),
            Document("berg", BERG, {"title": "Anna Berg", "type": "person"}),
            Document("dahl", "Liv Dahl was a Norwegian painter known for coastal landscapes.", {"title": "Liv Dahl"}),
            Document("garden", GARDEN, {"title": "Garden"}),
        ]
    )
    await store.create_relations([Relation("film", "berg", "MENTIONS"), Relation("berg", "dahl", "MENTIONS", 0.5)])
    yield store
    await store.close()


# Budgets that hold the film and the director but not the garden (evidence heads leave out a title
# that their sentences state, so evidence needs less room for the same two sources).
BUDGET = {"passages": 60, "evidence": 45}


@pytest.mark.parametrize("fmt", ["passages", "evidence"])
async def test_nodes_output_is_the_context_split_per_source(fmt: str) -> None:
    nodes = make_nodes()
    post = ContextPostprocessor(budget=BUDGET[fmt], format=fmt)
    out = await post.apostprocess_nodes(nodes, query_str=QUESTION)
    ctx = post.context(nodes, QUESTION)
    assert [n.node.node_id for n in out] == ["film", "berg"]  # context order; the garden did not fit
    assert [s.id for s in ctx.sources] == ["film", "berg"]
    assert [d.id for d in ctx.dropped] == ["garden"]
    assert ctx.tokens <= BUDGET[fmt]
    # What the LLM reads is the context, exactly: texts joined, metadata hidden from the LLM.
    assert "\n\n".join(n.node.get_content(metadata_mode=MetadataMode.LLM) for n in out) == ctx.text
    assert [n.score for n in out] == [0.9, 0.7]
    assert out[1].node.metadata["title"] == "Anna Berg"
    assert out[1].node.metadata[CONTEXT_KEY]["marker"] == 2
    assert CONTEXT_KEY in out[1].node.excluded_embed_metadata_keys
    assert "Liv Dahl" in out[1].node.get_content()
    assert nodes[1].node.text == BERG
    assert CONTEXT_KEY not in nodes[1].node.metadata
    assert out == post.postprocess_nodes(nodes, query_str=QUESTION)  # the sync path agrees


async def test_evidence_keeps_the_facts_in_fewer_tokens() -> None:
    nodes = make_nodes()[:2]
    passages = ContextPostprocessor(budget=500).context(nodes, QUESTION)
    evidence = ContextPostprocessor(budget=500, format="evidence").context(nodes, QUESTION)
    assert evidence.tokens < passages.tokens
    assert "Liv Dahl" in evidence.text
    assert "premiered at a small festival" not in evidence.text


async def test_chunks_of_one_document_are_one_source() -> None:
    doc = RelatedNodeInfo(node_id="report")
    chunks = [
        NodeWithScore(node=TextNode(id_=f"c{i}", text=text, relationships={NodeRelationship.SOURCE: doc}), score=score)
        for i, (text, score) in enumerate([("Anna Berg directed films.", 0.4), ("Her mother was Liv Dahl.", 0.8)])
    ]
    out = await ContextPostprocessor(budget=100).apostprocess_nodes(chunks, query_str=QUESTION)
    assert len(out) == 1
    assert out[0].node.node_id == "c1"  # the best-scored chunk stands for the document
    assert out[0].node.metadata[CONTEXT_KEY]["node_ids"] == ["c0", "c1"]
    assert "Anna Berg directed films." in out[0].node.text
    assert "Liv Dahl" in out[0].node.text


async def test_context_output_cites_the_sources_without_repeating_them() -> None:
    nodes = make_nodes()
    out = await ContextPostprocessor(budget=45, format="evidence", output="context").apostprocess_nodes(
        nodes, query_str=QUESTION
    )
    head, *cited = out
    info = head.node.metadata[CONTEXT_KEY]
    assert head.node.get_content(metadata_mode=MetadataMode.LLM) == head.node.text
    assert info["tokens"] <= 45
    assert info["format"] == "evidence"
    assert info["budget"] == 45
    assert [s["id"] for s in info["sources"]] == ["film", "berg"]
    assert [d["id"] for d in info["dropped"]] == ["garden"]
    assert [n.node.node_id for n in cited] == ["film", "berg"]
    assert all(isinstance(n.node, ContextSourceNode) for n in cited)
    assert [n.score for n in cited] == [0.9, 0.7]
    assert head.score == 0.9
    assert cited[1].node.get_content(metadata_mode=MetadataMode.LLM) == ""
    assert cited[1].node.get_content() == BERG  # the whole source, for citation
    assert cited[1].node.metadata[CONTEXT_KEY]["marker"] == 2


async def test_graph_context_with_a_graph_store(graph_store: InMemoryGraphStore) -> None:
    post = ContextPostprocessor(budget=200, format="graph", output="context", graph_store=graph_store)
    head, *cited = await post.apostprocess_nodes(make_nodes()[:2], query_str=QUESTION)
    assert "ENTITIES" in head.node.text
    assert "-[MENTIONS]->" in head.node.text
    sources = [s["id"] for s in head.node.metadata[CONTEXT_KEY]["sources"]]
    assert sources[:2] == ["film", "berg"]
    assert "dahl" in sources
    assert [n.node.node_id for n in cited] == ["film", "berg"]  # only nodes the engine holds are cited
    acme = {"title": {"$in": ["The Quiet Harbour", "Anna Berg"]}}
    within = ContextPostprocessor(budget=200, format="graph", output="context", graph_store=graph_store, filter=acme)
    head, *cited = within.postprocess_nodes(make_nodes()[:1], query_str=QUESTION)
    assert "Anna Berg" in head.node.text
    assert "Liv Dahl" not in head.node.text
    assert [n.node.node_id for n in cited] == ["film"]


class RecordingLLM(CustomLLM):
    """Answers with a fixed text and records every prompt it was sent."""

    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=4096, num_output=64, model_name="recording-llm")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text="Liv Dahl [2]")

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError


@pytest.mark.parametrize("output", ["nodes", "context"])
async def test_in_a_retriever_query_engine_the_llm_reads_the_context_once(output: str) -> None:
    index = VectorStoreIndex([n.node for n in make_nodes()], embed_model=MockEmbedding(embed_dim=8))
    llm = RecordingLLM()
    post = ContextPostprocessor(budget=45, format="evidence", output=output)
    engine = RetrieverQueryEngine.from_args(
        index.as_retriever(similarity_top_k=3),
        llm=llm,
        node_postprocessors=[TemporalDecayPostprocessor(score_signal=None), post],
    )
    response = await engine.aquery(QUESTION)
    assert str(response) == "Liv Dahl [2]"
    (prompt,) = llm.prompts
    retrieved = await index.as_retriever(similarity_top_k=3).aretrieve(QUESTION)
    ctx = post.context(retrieved, QUESTION)
    assert prompt.count(ctx.text) == 1  # the context, whole, once
    assert "gardening" not in prompt
    assert "title:" not in prompt
    assert "premiered at a small festival" not in prompt  # evidence left it out, and no cited node repeats it
    ids = [n.node.node_id for n in response.source_nodes if not n.node.node_id.startswith("graphfuse-context-")]
    assert ids == [s.id for s in ctx.sources]  # sources kept for citation, marker order
    sync = engine.query(QUESTION)
    assert [n.node.node_id for n in sync.source_nodes] == [n.node.node_id for n in response.source_nodes]


async def test_mock_llm_query_engine_sees_the_cited_nodes() -> None:
    index = VectorStoreIndex([n.node for n in make_nodes()], embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_query_engine(
        llm=MockLLM(),
        similarity_top_k=3,
        node_postprocessors=[ContextPostprocessor(budget=80, output="context")],
    )
    response = engine.query(QUESTION)
    assert isinstance(response.source_nodes[1].node, ContextSourceNode)
    assert "[1] " in str(response)  # MockLLM echoes its prompt: the numbered context reached it


def test_counters_by_object_or_name() -> None:
    nodes = make_nodes()
    assert ContextPostprocessor(budget=60, counter=RegexTokenCounter()).context(nodes, QUESTION).counter == "regex"
    assert ContextPostprocessor(budget=60, counter="regex").context(nodes, QUESTION).counter == "regex"
    assert ContextPostprocessor(budget=60).context(nodes, QUESTION).counter == get_token_counter().name
    with pytest.raises(NotFound):
        ContextPostprocessor(budget=60, counter="no-such-counter")


async def test_no_nodes_and_nothing_that_fits() -> None:
    post = ContextPostprocessor(budget=60, output="context")
    assert await post.apostprocess_nodes([], query_str=QUESTION) == []
    tiny = [NodeWithScore(node=TextNode(id_="big", text="word " * 500), score=0.5)] * 2
    assert ContextPostprocessor(budget=1).postprocess_nodes(tiny[:1], query_str=QUESTION) == []
    assert ContextPostprocessor(budget=1, output="context").postprocess_nodes(tiny, query_str=QUESTION) == []


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ContextPostprocessor(budget=0), "budget must be a positive number of tokens"),
        (lambda: ContextPostprocessor(budget=-5), "budget must be a positive number of tokens"),
        (lambda: ContextPostprocessor(budget=True), "budget must be a positive number of tokens"),
        (lambda: ContextPostprocessor(budget=1.5), "budget must be a positive number of tokens"),
        (lambda: ContextPostprocessor(), "needs budget="),
        (lambda: ContextPostprocessor(budget=60, format="bullets"), "unknown context format 'bullets'"),
        (lambda: ContextPostprocessor(budget=60, output="text"), "output must be one of"),
        (lambda: ContextPostprocessor(budget=60, format="graph", output="context"), "needs a graph store"),
        (lambda: ContextPostprocessor(budget=60, graph_store=object()), "graph_store must be a GraphStore"),
        (
            lambda: ContextPostprocessor(budget=60, counter=object()),
            "counter must be a token counter name or a TokenCounter",
        ),
        (lambda: ContextPostprocessor(budget=60, budjet=5), "did you mean 'budget'"),
    ],
)
def test_bad_settings_are_invalid_input(make: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        make()


def test_graph_format_needs_the_context_output(graph_store: InMemoryGraphStore) -> None:
    with pytest.raises(InvalidInput, match="use output='context'"):
        ContextPostprocessor(budget=60, format="graph", graph_store=graph_store)


async def test_the_query_is_needed() -> None:
    post = ContextPostprocessor(budget=60)
    with pytest.raises(InvalidInput, match="needs the query text"):
        await post.apostprocess_nodes(make_nodes())
    with pytest.raises(InvalidInput, match="needs the query text"):
        post.context(make_nodes(), "  ")
    with pytest.raises(InvalidInput, match="expected NodeWithScore"):
        post.context([TextNode(text="x")], QUESTION)  # type: ignore[list-item]


def test_settings_round_trip_through_json() -> None:
    post = ContextPostprocessor(budget=60, format="evidence", output="context", filter={"title": "Anna Berg"})
    again = ContextPostprocessor.from_json(post.to_json())
    settings = (again.budget, again.format, again.output, again.filter)
    assert settings == (60, "evidence", "context", {"title": "Anna Berg"})
    nodes = make_nodes()
    assert [s.id for s in again.context(nodes, QUESTION).sources] == ["berg"]  # the filter kept only Anna Berg
