"""open_store with an embedder object, the store's default preset, and Indexer.stored_records."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stores import GIVEN_EMBEDDER, InMemoryGraphStore, LocalVectorStore, aopen_store

RECORDS = [
    SourceRecord("apples", "Apples grow in orchards near the Pears.", title="Apples", links=("pears",)),
    SourceRecord(
        "pears",
        "Pears are picked in late summer.",
        title="Pears",
        metadata={"tenant": "acme", "aliases": ["pear"]},
        created_at=datetime(2026, 1, 2, tzinfo=timezone.utc),
    ),
    SourceRecord("notes", "Untitled notes on " + " ".join(f"word{i}" for i in range(400)), links=("missing",)),
]


class Configured:
    """An embedder no registered name rebuilds (a host's configured model)."""

    model_id = "configured-v1"
    dimension = 16

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await HashingEmbedder(16).embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        return await HashingEmbedder(16).embed_query(text)


async def test_an_embedder_object_that_a_name_rebuilds_is_recorded_by_that_name(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    async with await aopen_store(tmp_path / "s", create=True, embedder=embedder) as store:
        assert store.embedder is embedder  # used as it is, not built again
        assert store.components["embedder"] == "hashing"
        await Indexer(store.graph, store.vectors, store.embedder).aindex(RECORDS)
    done = CliRunner().invoke(app, ["query", "apples orchards", "--store", str(tmp_path / "s"), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)[0]["id"] == "apples"


async def test_an_embedder_object_no_name_rebuilds_opens_only_when_given_again(tmp_path: Path) -> None:
    directory = tmp_path / "s"
    async with await aopen_store(directory, create=True, embedder=Configured()) as store:
        assert store.components["embedder"] == GIVEN_EMBEDDER
        await Indexer(store.graph, store.vectors, store.embedder).aindex(RECORDS)
    for named in (None, "hashing", GIVEN_EMBEDDER):
        with pytest.raises(InvalidInput, match=r"given in Python \('.*Configured:configured-v1:16'\)"):
            await aopen_store(directory, embedder=named)
    done = CliRunner().invoke(app, ["query", "apples", "--store", str(directory)])
    assert done.exit_code != 0
    assert "given in Python" in done.output
    async with await aopen_store(directory, embedder=Configured()) as again:
        assert [r.id for r in await (await again.apipeline()).aretrieve("apples orchards", top_k=1)] == ["apples"]
    with pytest.raises(InvalidInput, match="was built with embedder"):
        await aopen_store(directory, embedder=HashingEmbedder(16))
    with pytest.raises(InvalidInput, match="registered name or a graphfuse Embedder"):
        await aopen_store(directory, embedder=object())  # type: ignore[arg-type]


async def test_the_pipeline_default_is_the_stores_default_preset(tmp_path: Path) -> None:
    async with await aopen_store(tmp_path / "s", create=True, embedder="hashing") as store:
        await Indexer(store.graph, store.vectors, store.embedder).aindex(RECORDS)
        assert store.default_preset == "multihop"
        default = await store.apipeline()
        multihop = await store.apipeline("multihop")
        assert [s.name for s in default.stages] == [s.name for s in multihop.stages]
        assert [r.id for r in await default.aretrieve("pears", top_k=2)] == [
            r.id for r in await multihop.aretrieve("pears", top_k=2)
        ]


async def test_stored_records_read_back_what_was_indexed() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(32)
    indexer = Indexer.for_records(RECORDS, graph, vectors, embedder)
    first = await indexer.aindex(RECORDS)
    assert first.documents == 3
    back = await Indexer(graph, vectors, embedder).astored_records()
    assert [r.id for r in back] == ["apples", "notes", "pears"]
    by_id = {r.id: r for r in back}
    assert by_id["apples"] == RECORDS[0]
    assert by_id["pears"] == RECORDS[1]
    # A link to a document not in the store is no relation, but it is read back: it resolves once
    # that document arrives.
    assert by_id["notes"] == RECORDS[2]
    again = await Indexer.for_records(back, graph, vectors, embedder).aindex(back)
    assert (again.documents, again.skipped) == (0, 3)  # indexed again: unchanged, nothing written
    assert Indexer(graph, vectors, embedder).stored_records() == back


async def test_refresh_manifest_writes_the_counts_while_open(tmp_path: Path) -> None:
    store = await aopen_store(tmp_path / "s", create=True, embedder="hashing")
    try:
        await Indexer(store.graph, store.vectors, store.embedder).aindex(RECORDS)
        manifest = await store.arefresh_manifest()
        on_disk = json.loads((tmp_path / "s" / "manifest.json").read_text())
        assert manifest["counts"] == on_disk["counts"]
        assert on_disk["counts"]["documents"] == await store.graph.count_documents() > 3  # chunk nodes too
    finally:
        await store.aclose()
