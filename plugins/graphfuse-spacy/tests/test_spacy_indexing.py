"""The spaCy extractor builds the text graph: through the Indexer and `graphfuse index`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from graphfuse_spacy import SpacyEntityExtractor
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import ENTITY_PREFIX, Indexer, SourceRecord
from graphfuse.multihop import BM25Index, aentity_matcher, multihop
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, aopen_store

CHATS = [
    SourceRecord("c1", "Yesterday Angela Merkel told me her nephew studies in Heidelberg."),
    SourceRecord("c2", "The university in Heidelberg gave the nephew a prize for physics."),
    SourceRecord("c3", "We should order pizza for the team meeting on Friday."),
]


async def test_indexer_builds_entity_nodes_from_spacy_entities(extractor: SpacyEntityExtractor) -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    report = await Indexer(graph, vectors, embedder, extractors=[extractor], entity_graph=True).aindex(CHATS)
    assert report.documents == 3
    nodes = await graph.get_documents([ENTITY_PREFIX + "angela merkel", ENTITY_PREFIX + "heidelberg"])
    assert sorted(nodes) == [ENTITY_PREFIX + "angela merkel", ENTITY_PREFIX + "heidelberg"]
    assert nodes[ENTITY_PREFIX + "heidelberg"].metadata["mentions"] == 2
    entities = await aentity_matcher(graph)
    assert [k for k, _ in entities.match("Where does Angela Merkel's nephew study?")] == ["angela merkel"]
    pipeline = multihop(graph, vectors, embedder, bm25=BM25Index((r.id, r.text) for r in CHATS), entities=entities)
    results = await pipeline.aretrieve("What prize did Angela Merkel's nephew get?", top_k=2)
    assert sorted(r.id for r in results) == ["c1", "c2"]


def test_cli_index_entity_extractor_spacy(model: str, tmp_path: Path) -> None:
    source = tmp_path / "chats.jsonl"
    source.write_text("".join(json.dumps({"id": r.id, "text": r.text}) + "\n" for r in CHATS))
    store = tmp_path / "store"
    args = ["index", str(source), "--store", str(store), "--embedder", "hashing"]
    args += ["--entity-extractor", f"spacy:{model}"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output

    async def names() -> list[str]:
        opened = await aopen_store(store, create=False)
        try:
            found = await opened.graph.get_documents([ENTITY_PREFIX + "angela merkel", ENTITY_PREFIX + "pizza"])
            return sorted(found)
        finally:
            await opened.aclose()

    # spaCy's entities, not the built-in's capitalised words (it would not take "pizza" either).
    assert asyncio.run(names()) == [ENTITY_PREFIX + "angela merkel"]


def test_cli_index_with_a_model_that_is_not_installed(tmp_path: Path) -> None:
    source = tmp_path / "chats.jsonl"
    source.write_text(json.dumps({"id": "c1", "text": "Angela Merkel"}) + "\n")
    store = tmp_path / "store"
    args = ["index", str(source), "--store", str(store), "--embedder", "hashing"]
    result = CliRunner().invoke(app, [*args, "--entity-extractor", "spacy:en_core_web_nonesuch"])
    assert result.exit_code != 0
    assert "python -m spacy download en_core_web_nonesuch" in result.output
    assert not store.exists()
