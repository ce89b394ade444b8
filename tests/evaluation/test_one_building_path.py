"""`graphfuse eval` builds a store and its corpus inputs as `graphfuse index` and `graphfuse query` do.

The same JSONL corpus goes through the CLI's `index` and through `evaluate_files` at the CLI's
chunk size: the two stores must hold the same documents and relations, and a preset must be
built with the same corpus inputs (BM25 by document, subject and passage, titles, timeline,
entities) by eval as by a store directory's `pipeline` (what `graphfuse query` runs).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _server_world import served
from typer.testing import CliRunner

from graphfuse import Pipeline, presets
from graphfuse.cli import app
from graphfuse.evaluation import evaluate_files
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


async def _compare(cli_dir: Path, eval_dir: Path, spy: _Spy) -> None:
    cli, evaluated = await aopen_store(cli_dir, create=False), await aopen_store(eval_dir, create=False)
    try:
        assert await _contents(cli) == await _contents(evaluated)
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


@pytest.mark.parametrize("entity_graph", [False, True])
def test_eval_and_the_cli_build_the_same_store_and_corpus_inputs(tmp_path: Path, entity_graph: bool, spy: _Spy) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    queries = _write(tmp_path / "queries.jsonl", QUERIES)
    flag = "--entity-graph" if entity_graph else "--no-entity-graph"
    args = ["index", str(corpus), "--store", str(tmp_path / "cli"), "--embedder", "hashing", flag]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = evaluate_files(
        corpus,
        queries,
        ["spy"],
        store_dir=tmp_path / "eval",
        embedder_name="hashing",
        max_tokens=256,  # graphfuse index's chunk size
        entity_extractors=["text"] if entity_graph else None,
    )
    assert report.index is not None
    assert report.index.documents == len(CORPUS)
    assert len(spy.built) == 1
    asyncio.run(_compare(tmp_path / "cli", tmp_path / "eval", spy))


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
