"""Reserved ids: the entity namespace is refused at every door.

A document id starting with ``graphfuse:entity:`` (:data:`graphfuse.indexing.ENTITY_PREFIX`) would
overwrite or delete an entity node the indexer wrote and leave a stray vector; the readers, the
indexer, ``graphfuse index``/``delete`` and the hosts' records refuse it, naming the id, while
the indexer's own entity writes go on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import (
    ENTITY_PREFIX,
    Indexer,
    SourceRecord,
    TextEntityExtractor,
    read_sources,
    records_from_loaded,
)
from graphfuse.stores import LocalStore, acheck_store

runner = CliRunner()
ENTITY = ENTITY_PREFIX + "apple"


def test_source_record_refuses_the_namespace() -> None:
    with pytest.raises(InvalidInput, match=f"record id '{ENTITY}' is reserved"):
        SourceRecord(ENTITY, "text")
    SourceRecord("graphfuse-entity-apple", "text")  # only the prefix is reserved
    SourceRecord("notes/graphfuse:entity:apple", "text")


def test_readers_and_host_records_refuse_it(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text(json.dumps({"id": "ok", "text": "fine"}) + "\n" + json.dumps({"id": ENTITY, "text": "x"}) + "\n")
    with pytest.raises(InvalidInput, match=f"docs.jsonl:2.*'{ENTITY}' is reserved"):
        list(read_sources([source]))
    with pytest.raises(InvalidInput, match=f"'{ENTITY}' is reserved"):
        records_from_loaded([(ENTITY, "text", {})])
    with pytest.raises(InvalidInput, match=f"'{ENTITY}' is reserved"):
        records_from_loaded([(None, "text", {"id": ENTITY})], id_key="id")


async def test_indexer_writes_entities_but_refuses_deleting_them(tmp_path: Path) -> None:
    async with LocalStore.open(tmp_path / "store") as store:
        indexer = Indexer(
            store.graph, store.vectors, HashingEmbedder(32), extractors=[TextEntityExtractor()], entity_graph=True
        )
        records = [
            SourceRecord("a", "Marie Curie worked in Paris with Pierre Curie."),
            SourceRecord("b", "Pierre Curie and Marie Curie shared the prize in Paris."),
        ]
        await indexer.aindex(records)
        entities = [d.id async for d in store.graph.iter_documents() if d.id.startswith(ENTITY_PREFIX)]
        assert entities, "the indexer's own entity nodes are still written"
        before = await store.graph.count_documents()
        with pytest.raises(InvalidInput, match=f"'{entities[0]}' is reserved"):
            await indexer.adelete(["a", entities[0]])
        assert await store.graph.count_documents() == before  # nothing deleted, not even 'a'
    assert (await acheck_store(tmp_path / "store")).ok


def test_cli_index_and_delete_refuse_it(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text(json.dumps({"id": "fine", "text": "apples"}) + "\n")
    store = tmp_path / "store"
    assert runner.invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing"]).exit_code == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": ENTITY, "text": "apples"}) + "\n")
    result = runner.invoke(app, ["index", str(bad), "--store", str(store)])
    assert result.exit_code == 1
    assert f"'{ENTITY}' is reserved" in result.output
    for extra in ([], ["--missing-ok"]):
        result = runner.invoke(app, ["delete", ENTITY, "--store", str(store), *extra])
        assert result.exit_code == 1
        assert f"'{ENTITY}' is reserved" in result.output
    code = runner.invoke(app, ["check", "--store", str(store)]).exit_code
    assert code == 0
