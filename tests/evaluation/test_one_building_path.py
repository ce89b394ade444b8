"""`graphfuse eval` builds a store and its corpus inputs as `graphfuse index` and `graphfuse query` do.

The same JSONL corpus goes through the CLI's `index` and through `evaluate_files`, both at their
default chunk size or both at one `--max-tokens`: the two stores must hold the same documents and
relations, and a preset must be built with the same corpus inputs (BM25 by document, subject and
passage, titles, timeline, entities) by eval as by a store directory's `pipeline` (what
`graphfuse query` runs). Another `--max-tokens` on `graphfuse index` re-chunks the store.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _server_world import served
from typer.testing import CliRunner

from graphfuse import InvalidInput, Pipeline, presets
from graphfuse.cli import app
from graphfuse.defaults import CHUNK_TOKENS
from graphfuse.evaluation import evaluate_files
from graphfuse.indexing import TokenChunker
from graphfuse.multihop import CORPUS_INPUTS, BM25Index
from graphfuse.stores import StoreDirectory, aopen_store

_LONG = " ".join(
    f"Paragraph {i} of the Aldwych Press history: the press printed maps of Lisbon for Luis Mandoki." for i in range(60)
)
CORPUS = [
    {
        "id": "mandoki",
        "title": "Luis Mandoki",
        "text": "Luis Mandoki is a Mexican film director who directed Gaby: A True Story.",
        "links": ["gaby"],
        "created_at": "2021-03-01T10:00:00+00:00",
    },
    {
        "id": "gaby",
        "title": "Gaby: A True Story",
        "text": "Gaby: A True Story is a 1987 film directed by Luis Mandoki and produced in Mexico City.",
        "metadata": {"aliases": ["Gaby (film)"]},
        "created_at": "2021-03-02T10:00:00+00:00",
    },
    {
        "id": "launder",
        "text": "Frank Launder (1906 - 1997) was a British film director who admired Gaby (film).",
    },
    {"id": "aldwych", "title": "Aldwych Press", "text": _LONG, "created_at": "2021-04-01T10:00:00+00:00"},
]
QUERIES = [{"id": "q1", "question": "Who directed Gaby: A True Story?", "gold_ids": ["mandoki"]}]
QUESTIONS = ["Who directed Gaby?", "Frank Launder director", "maps of Lisbon", "Mexico City film 1987"]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


async def _contents(store: StoreDirectory) -> tuple[dict[str, Any], set[tuple[str, str, str, float]]]:
    docs = {d.id: (d.content, dict(d.metadata), d.created_at) async for d in store.graph.iter_documents()}
    relations = {(r.source, r.target, r.type, r.weight) for r in await store.graph.relations(sorted(docs))}  # type: ignore[attr-defined]
    assert relations
    return docs, relations


def _searches(index: BM25Index | None) -> list[Any]:
    if index is None:
        return [None]
    return [sorted(index.ids)] + [sorted((i, round(s, 9)) for i, s in index.search(q, 10)) for q in QUESTIONS]


def _same_inputs(cli: dict[str, Any], evaluated: dict[str, Any]) -> None:
    assert set(cli) == set(evaluated) == set(CORPUS_INPUTS)
    for what in ("bm25", "bm25.subjects", "bm25.passages"):
        a, b = cli["bm25"], evaluated["bm25"]
        if what != "bm25":
            a, b = getattr(a, what.split(".")[1]), getattr(b, what.split(".")[1])
        assert _searches(a) == _searches(b), what
    for text in [*QUESTIONS, "Gaby (film) and Luis Mandoki and Frank Launder and the Aldwych Press"]:
        assert cli["linker"].extract(text) == evaluated["linker"].extract(text)
    ids = [str(r["id"]) for r in CORPUS] + [f"aldwych#{i}" for i in range(4)]
    assert [cli["timeline"].created_at(i) for i in ids] == [evaluated["timeline"].created_at(i) for i in ids]
    assert (len(cli["timeline"]), cli["timeline"].undated) == (
        len(evaluated["timeline"]),
        evaluated["timeline"].undated,
    )
    assert len(cli["entities"]) == len(evaluated["entities"])


class _Spy:
    """A preset that records the corpus inputs it is built with, then builds ``multihop`` from them."""

    def __init__(self) -> None:
        self.built: list[dict[str, Any]] = []

    def __call__(
        self, *, bm25: BM25Index, linker: Any, timeline: Any = None, entities: Any = None, **components: Any
    ) -> Pipeline:
        self.built.append({"bm25": bm25, "linker": linker, "timeline": timeline, "entities": entities})
        return presets.build("multihop", bm25=bm25, linker=linker, timeline=timeline, entities=entities, **components)


@pytest.fixture
def spy() -> Any:
    recorder = _Spy()
    presets.register("spy", recorder, needs=("graph_store", "vector_store", "embedder", "corpus_indexes"))
    yield recorder
    presets.unregister("spy")


async def _compare(cli_dir: Path, eval_dir: Path, spy: _Spy, chunks: int) -> None:
    cli, evaluated = await aopen_store(cli_dir, create=False), await aopen_store(eval_dir, create=False)
    try:
        assert await _contents(cli) == await _contents(evaluated)
        assert len(await _chunk_ids(cli)) == chunks
        await cli.apipeline("spy")  # as `graphfuse query --preset spy` builds it, from the corpus cache
        by_eval, by_cli = spy.built
        assert by_cli["linker"].lookup("Gaby (film)") == ("gaby",)  # aliases name a document
        assert by_cli["linker"].lookup("Frank Launder") == ("launder",)  # so does a title-less page's subject
        assert by_cli["bm25"].passages is not None  # the long page was split
        _same_inputs(by_cli, by_eval)
        for question in QUESTIONS:
            a = await (await cli.apipeline("multihop")).aretrieve(question, top_k=5)
            b = await (await evaluated.apipeline("multihop")).aretrieve(question, top_k=5)
            assert [(r.id, round(r.score, 9)) for r in a] == [(r.id, round(r.score, 9)) for r in b]
    finally:
        await cli.aclose()
        await evaluated.aclose()


async def _chunk_ids(store: StoreDirectory) -> list[str]:
    return sorted([d.id async for d in store.graph.iter_documents() if "#" in d.id])


def _long_page_chunks(max_tokens: int = CHUNK_TOKENS) -> int:
    return len(TokenChunker.sized(max_tokens).split(_LONG))


def _eval_cli(corpus: Path, queries: Path, store: Path, *options: str) -> None:
    # `graphfuse eval` itself: its defaults are the ones under test.
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "spy"]
    result = CliRunner().invoke(app, [*args, "--store", str(store), "--embedder", "hashing", *options])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("entity_graph", [False, True])
def test_eval_and_the_cli_build_the_same_store_and_corpus_inputs(tmp_path: Path, entity_graph: bool, spy: _Spy) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    flag = "--entity-graph" if entity_graph else "--no-entity-graph"
    args = ["index", str(corpus), "--store", str(tmp_path / "cli"), "--embedder", "hashing", flag]
    result = CliRunner().invoke(app, args)  # no --max-tokens: the default chunk size
    assert result.exit_code == 0, result.output
    report = evaluate_files(  # no max_tokens either
        corpus,
        queries,
        ["spy"],
        store_dir=tmp_path / "eval",
        embedder_name="hashing",
        entity_extractors=["text"] if entity_graph else None,
    )
    assert report.index is not None
    assert report.index.documents == len(CORPUS)
    assert len(spy.built) == 1
    assert _long_page_chunks() > 1  # the long page is split at the default size
    asyncio.run(_compare(tmp_path / "cli", tmp_path / "eval", spy, _long_page_chunks()))


def test_the_eval_command_builds_the_store_index_builds_without_options(tmp_path: Path, spy: _Spy) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    result = CliRunner().invoke(app, ["index", str(corpus), "--store", str(tmp_path / "cli"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    _eval_cli(corpus, queries, tmp_path / "eval")
    asyncio.run(_compare(tmp_path / "cli", tmp_path / "eval", spy, _long_page_chunks()))


def test_index_at_another_size_builds_eval_s_store_at_that_size_and_rechunks(tmp_path: Path, spy: _Spy) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    store = tmp_path / "cli"
    index = ["index", str(corpus), "--store", str(store), "--embedder", "hashing"]
    assert CliRunner().invoke(app, index).exit_code == 0
    default_chunks = asyncio.run(_chunk_ids_of(store))
    assert len(default_chunks) == _long_page_chunks()
    # A smaller size cuts the long page again, into more chunks, and only it: the short pages stay whole.
    result = CliRunner().invoke(app, [*index, "--max-tokens", "200", "--overlap", "8"])
    assert result.exit_code == 0, result.output
    assert "indexed 4 documents" in result.output  # the chunker changed: every document redone
    assert len(asyncio.run(_chunk_ids_of(store))) == len(TokenChunker(200, 8).split(_LONG)) > len(default_chunks)
    again = CliRunner().invoke(app, [*index, "--max-tokens", "200", "--overlap", "8"])
    assert "indexed 0 documents" in again.output
    assert "4 unchanged" in again.output
    _eval_cli(corpus, queries, tmp_path / "eval", "--max-tokens", "200", "--overlap", "8")
    asyncio.run(_compare(store, tmp_path / "eval", spy, len(TokenChunker(200, 8).split(_LONG))))
    # Back to the default: re-chunked again, to the default store's chunks.
    assert CliRunner().invoke(app, index).exit_code == 0
    assert asyncio.run(_chunk_ids_of(store)) == default_chunks


async def _chunk_ids_of(path: Path) -> list[str]:
    store = await aopen_store(path, create=False)
    try:
        return await _chunk_ids(store)
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--max-tokens", "0"], "--max-tokens"),
        (["--max-tokens", "many"], "--max-tokens"),
        (["--overlap", "-1"], "--overlap"),
        (["--max-tokens", "16", "--overlap", "16"], "--overlap"),
    ],
)
@pytest.mark.parametrize("command", ["index", "eval"])
def test_a_bad_chunk_size_is_refused_naming_the_option(
    tmp_path: Path, command: str, options: list[str], named: str
) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    if command == "index":
        args = ["index", str(corpus)]
    else:
        args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "bm25"]
    result = CliRunner().invoke(app, [*args, "--store", str(tmp_path / "store"), "--embedder", "hashing", *options])
    assert result.exit_code != 0
    assert named in result.output
    assert not (tmp_path / "store").exists()  # refused before any store is made


def test_a_bad_chunk_size_is_invalid_input_from_the_library(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    with pytest.raises(InvalidInput, match=r"overlap \(--overlap\) must be an integer from 0 to 15"):
        evaluate_files(corpus, queries, ["bm25"], store_dir=tmp_path / "store", max_tokens=16, overlap=16)
    with pytest.raises(InvalidInput, match=r"max_tokens \(--max-tokens\) must be a positive integer"):
        TokenChunker.sized(0)
    assert not (tmp_path / "store").exists()


async def test_a_restarted_server_links_new_documents_to_stored_aliases(tmp_path: Path) -> None:
    # The server's ingest learns the titles and aliases the store holds, as one index call would.
    page = {
        "id": "pomology",
        "title": "Pomology",
        "text": "The study of fruit.",
        "metadata": {"aliases": ["Fruit Lore"]},
    }
    async with served(tmp_path, corpus=False) as w:
        assert (await w.ingest("acme", [page])).status_code == 200
    async with served(tmp_path, corpus=False) as w:  # a new service: its title linker is read from the store
        note = {"id": "note", "title": "Orchard Note", "text": "Our Fruit Lore class met in the orchard."}
        assert (await w.ingest("acme", [note])).status_code == 200
        relations = await w.store.graph.relations(["acme/note"])
        assert ("acme/note", "acme/pomology", "MENTIONS") in {(r.source, r.target, r.type) for r in relations}
