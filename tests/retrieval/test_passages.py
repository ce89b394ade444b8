"""Passage results: every preset returns passages of at most the chunk size, naming their page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphfuse import InvalidInput, Passages, Pipeline, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, RegexTokenizer, SourceRecord, TitleLinker, TokenChunker
from graphfuse.multihop import acorpus_indexes
from graphfuse.stages import SemanticSearch
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

CHUNK = 40
FILLER = " ".join(f"Filler sentence number {i} talks about nothing in particular." for i in range(30))
# A long page whose answer sits in one chunk near its end, and a hub-like page that repeats
# the question's words in every chunk.
GUIDE = f"{FILLER} The frozen option makes instances immutable: assigning raises a ValidationError. " + " ".join(
    f"More filler {i} here." for i in range(10)
)
HUB = " ".join(f"Release {i}: frozen models and immutable instances were improved again." for i in range(40))
RECORDS = [
    SourceRecord("guide", GUIDE, title="Models guide"),
    SourceRecord("hub", HUB, title="Release notes"),
    SourceRecord("short", "Install with pip install pydantic.", title="Install"),
]
QUESTION = "How do I make instances immutable with the frozen option?"


@dataclass
class Indexed:
    graph: InMemoryGraphStore
    vectors: LocalVectorStore
    embedder: HashingEmbedder


@pytest.fixture
async def indexed() -> AsyncIterator[Indexed]:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(None), HashingEmbedder(64)
    indexer = Indexer(graph, vectors, embedder, chunker=TokenChunker(CHUNK, 8), extractors=[TitleLinker()])
    await indexer.aindex(RECORDS)
    yield Indexed(graph, vectors, embedder)
    await graph.close()
    await vectors.close()


async def _pipeline(name: str, w: Indexed) -> Pipeline:
    return await presets.abuild(name, graph_store=w.graph, vector_store=w.vectors, embedder=w.embedder)


def _tokens(text: str | None) -> int:
    return len(RegexTokenizer().spans(text or ""))


@pytest.mark.parametrize("name", ["bm25", "minimal", "hybrid", "multihop", "no_rerank"])
async def test_every_preset_returns_passages_naming_their_page(indexed: Indexed, name: str) -> None:
    results = await (await _pipeline(name, indexed)).aretrieve(QUESTION, top_k=5)
    assert results
    for r in results:
        assert _tokens(r.document.content) <= CHUNK, (name, r.id)
        assert r.document_id in {"guide", "hub", "short"}
        assert r.document_title in {"Models guide", "Release notes", "Install"}
    # At most one passage of a page by default, so the hub cannot fill the list.
    pages = [r.document_id for r in results]
    assert len(pages) == len(set(pages)), pages


async def test_a_ranked_page_is_replaced_by_its_passage_that_answers(indexed: Indexed) -> None:
    bm25, _ = await acorpus_indexes(indexed.graph)
    pipeline = presets.build("bm25", bm25=bm25, graph_store=indexed.graph)
    results = await pipeline.aretrieve("frozen option ValidationError assigning", top_k=3)
    guide = next(r for r in results if r.document_id == "guide")
    assert guide.id.startswith("guide#")
    assert "ValidationError" in (guide.document.content or "")
    # Without a graph store the bm25 preset cannot read chunks: whole pages, as before.
    whole = await presets.build("bm25", bm25=bm25).aretrieve("frozen option ValidationError", top_k=3)
    assert {r.id for r in whole} <= {"guide", "hub", "short"}


async def test_max_per_document_lets_more_passages_of_a_page_in(indexed: Indexed) -> None:
    pipeline = await _pipeline("minimal", indexed)
    many = await pipeline.aretrieve("Release frozen models immutable instances improved", top_k=6, max_per_document=4)
    hub = [r for r in many if r.document_id == "hub"]
    assert 1 < len(hub) <= 4
    one = await pipeline.aretrieve("Release frozen models immutable instances improved", top_k=6)
    assert [r.document_id for r in one].count("hub") == 1


async def test_document_granularity_returns_pages_cut_to_a_visible_size(indexed: Indexed) -> None:
    pipeline = await _pipeline("multihop", indexed)
    docs = await pipeline.aretrieve(QUESTION, top_k=3, granularity="document", max_document_tokens=50)
    assert {r.id for r in docs} <= {"guide", "hub", "short"}
    assert len({r.id for r in docs}) == len(docs)
    cut = [r for r in docs if r.id in ("guide", "hub")]
    assert cut
    for r in cut:
        assert _tokens(r.document.content) == 50
        assert (
            r.document.metadata["graphfuse_truncated_tokens"]
            == _tokens(next(x.text for x in RECORDS if x.id == r.id)) - 50
        )
    short = [r for r in docs if r.id == "short"]
    assert all("graphfuse_truncated_tokens" not in r.document.metadata for r in short)


async def test_passages_can_be_made_documents_by_default(indexed: Indexed) -> None:
    pipeline = (await _pipeline("minimal", indexed)).with_passages(
        Passages(indexed.graph, indexed.vectors, indexed.embedder, granularity="document")
    )
    results = await pipeline.aretrieve(QUESTION, top_k=3)
    assert {r.id for r in results} <= {"guide", "hub", "short"}


async def test_a_pipeline_built_by_hand_keeps_its_results_but_honours_a_cap(indexed: Indexed) -> None:
    pipeline = Pipeline([SemanticSearch(indexed.vectors, indexed.embedder)])
    assert pipeline.passages is None
    hits = await pipeline.aretrieve("Release frozen models immutable", top_k=10)
    assert len(hits) > 3  # chunks and documents' ids, as the stage ranked them
    with pytest.raises(InvalidInput, match="granularity needs a pipeline with a passage selection"):
        await pipeline.aretrieve(QUESTION, granularity="document")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"granularity": "page"}, "granularity must be one of"),
        ({"max_per_document": 0}, "max_per_document must be a positive integer"),
        ({"max_per_document": True}, "max_per_document must be a positive integer"),
        ({"max_document_tokens": -3}, "max_document_tokens must be a positive integer"),
    ],
)
async def test_bad_shape_options_are_named(indexed: Indexed, kwargs: dict[str, object], message: str) -> None:
    pipeline = await _pipeline("minimal", indexed)
    with pytest.raises(InvalidInput, match=message):
        await pipeline.aretrieve(QUESTION, **kwargs)  # type: ignore[arg-type]


def test_passages_arguments_are_checked(indexed: Indexed) -> None:
    with pytest.raises(InvalidInput, match="together, or neither"):
        Passages(indexed.graph, indexed.vectors)
    with pytest.raises(InvalidInput, match="lexical must be a number"):
        Passages(indexed.graph, lexical=2.0)
    with pytest.raises(InvalidInput, match="has no 'get_documents'"):
        Passages(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"passages must be a graphfuse\.Passages"):
        Pipeline([SemanticSearch(indexed.vectors, indexed.embedder)], passages="yes")  # type: ignore[arg-type]


async def test_eval_scores_each_passage_slot_by_its_page_and_says_so() -> None:
    from graphfuse.evaluation import EvalQuery, aevaluate

    query = EvalQuery("q1", "Release frozen models immutable instances improved", ("hub", "guide"))
    shapes = {"default": None, "three": 3}
    recall: dict[str, float] = {}
    for label, cap in shapes.items():
        graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(None), HashingEmbedder(64)
        report = await aevaluate(
            RECORDS,
            [query],
            ["minimal"],
            graph_store=graph,
            vector_store=vectors,
            embedder=embedder,
            max_tokens=80,
            max_per_document=cap,
        )
        recall[label] = report.pipelines["minimal"].recall_at_2
        scoring = report.as_json()["scoring"]
        assert "each result slot scored by its document" in scoring
        assert f"at most {cap or 1} passages per document" in scoring
    # Two passages of the hub take both top-2 slots when three are allowed: the other gold page
    # is pushed out, which a per-page dedup would have hidden.
    assert recall["default"] == 1.0
    assert recall["three"] == 0.5


async def test_presets_multihop_is_one_call_over_components_and_names_what_is_missing(indexed: Indexed) -> None:
    pipeline = await presets.amultihop(indexed.graph, indexed.vectors, indexed.embedder)
    assert pipeline.passages is not None
    assert "ppr" in [s.name for s in pipeline.stages]
    with pytest.raises(InvalidInput, match="without vector_store and embedder"):
        await presets.amultihop(indexed.graph)
    with pytest.raises(InvalidInput, match="without embedder"):
        await presets.amultihop(indexed.graph, indexed.vectors)


def test_cli_query_returns_passages_naming_their_page_and_pages_on_request(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from graphfuse.cli import app

    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": r.id, "title": r.title, "text": r.text * 4}) + "\n" for r in RECORDS),
        encoding="utf-8",
    )
    store = tmp_path / "store"
    runner = CliRunner()
    indexed = runner.invoke(app, ["index", str(corpus), "--store", str(store), "--embedder", "hashing"])
    assert indexed.exit_code == 0, indexed.output
    base = ["query", QUESTION, "--store", str(store), "--json", "--top-k", "3"]
    rows = json.loads(runner.invoke(app, base).stdout)
    assert any(row["id"].startswith("guide#") and row["document_id"] == "guide" for row in rows)
    pages = json.loads(runner.invoke(app, [*base, "--granularity", "document"]).stdout)
    assert {row["id"] for row in pages} == {row["document_id"] for row in pages}
    bad = runner.invoke(app, [*base, "--granularity", "page"])
    assert bad.exit_code == 1
    assert "granularity must be one of" in bad.output


async def test_a_hub_page_holding_most_chunks_gives_way_to_a_page_that_answers() -> None:
    # One page is most of the corpus (release notes); it repeats the question's words everywhere.
    # Without the hub rule its passage ranks first for a question the guide answers.
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(None), HashingEmbedder(64)
    answer = "Frozen models: set frozen to make instances immutable."
    records = [
        SourceRecord("hub", HUB * 3, title="Release notes"),
        SourceRecord("guide", f"{FILLER} {answer}", title="Models guide"),
        *(SourceRecord(f"page{i}", f"Page {i} covers routing topic {i}.", title=f"Page {i}") for i in range(3)),
    ]
    await Indexer(graph, vectors, embedder, chunker=TokenChunker(CHUNK, 8)).aindex(records)
    pipeline = presets.minimal(vectors, embedder, graph)
    question = "Release frozen models immutable instances"
    plain = pipeline.with_passages(Passages(graph, vectors, embedder, hub_share=1.0))
    assert (await plain.aretrieve(question, top_k=2))[0].document_id == "hub"
    damped = await pipeline.aretrieve(question, top_k=2)
    assert damped[0].document_id == "guide"
    with pytest.raises(InvalidInput, match="hub_share must be a number"):
        Passages(graph, vectors, embedder, hub_share=0.0)
