"""Numbers that break filters for everyone: refused at every door, harmless when stored.

An integer beyond 64 bits or a NaN/infinity in metadata is refused by the core types, the stores'
encoding, the readers, the indexer and the server, naming the key; a value stored by other means
(``10**400``) never makes a filter fail, on any path (typed columns, SQLite, the server).
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import Document, InvalidInput, MetadataFilter, Relation, VectorRecord
from graphfuse.cli import app
from graphfuse.indexing import SourceRecord, records_from_loaded
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore
from graphfuse.stores._vector_file import row_checksum

runner = CliRunner()

BAD = [
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param(-math.inf, "-inf", id="-inf"),
    pytest.param(2**63, "64 bits", id="2**63"),
    pytest.param(-(2**63) - 1, "64 bits", id="-2**63-1"),
    pytest.param(10**400, "64 bits", id="10**400"),
]


@pytest.mark.parametrize(("value", "said"), BAD)
@pytest.mark.parametrize("nested", [False, True])
def test_core_types_refuse_the_number_naming_the_key(value: Any, said: str, nested: bool) -> None:
    metadata = {"deep": {"list": [1, value]}} if nested else {"year": value}
    key = "['deep']['list'][1]" if nested else "['year']"
    builders = {
        "document 'd'": lambda: Document("d", "t", metadata),
        "vector 'v'": lambda: VectorRecord("v", [1.0], metadata),
        "relation 'a'": lambda: Relation("a", "b", metadata=metadata),
        "record 'r'": lambda: SourceRecord("r", "text", metadata=metadata),
    }
    for owner, build in builders.items():
        with pytest.raises(InvalidInput, match=said) as caught:
            build()
        assert owner in str(caught.value)
        assert key in str(caught.value)


@pytest.mark.parametrize(("value", "said"), BAD)
def test_host_records_refuse_the_number_naming_document_and_key(value: Any, said: str) -> None:
    loaded = [("ok", "fine", {"n": 1}), ("bad", "text", {"page": {"score": value}})]
    with pytest.raises(InvalidInput, match=said) as caught:
        records_from_loaded(loaded)
    assert "document 1 ('bad')" in str(caught.value)
    assert "['page']['score']" in str(caught.value)


def test_the_64_bit_bounds_and_other_values_pass() -> None:
    metadata = {"hi": 2**63 - 1, "lo": -(2**63), "f": 1e308, "b": True, "s": "10**400", "n": None}
    assert Document("d", "t", metadata).metadata == metadata
    # Non-JSON values still pass the core type (a host's query-time metadata); stores refuse them.
    Document("d", "t", {"when": object()})


def test_self_referencing_and_shared_metadata_end() -> None:
    shared: list[Any] = [1.0]
    for _ in range(80):
        shared = [shared, shared]  # 2**80 paths, 80 containers
    cyclic: dict[str, Any] = {"n": 1}
    cyclic["self"] = cyclic
    Document("d", "t", {"shared": shared, "cyclic": cyclic})


@pytest.mark.parametrize("value", [10**400, 2**63, -(2**63) - 1])
def test_filter_values_out_of_range_are_refused(value: int) -> None:
    for spec in ({"year": value}, {"year": {"$gte": value}}, {"year": {"$in": [1, value]}}):
        with pytest.raises(InvalidInput, match=r"filter 'year'.*64 bits"):
            MetadataFilter.parse(spec)


async def test_stores_refuse_numbers_even_from_trusted_documents(tmp_path: Path) -> None:
    bad = Document.trusted("d", "t", {"year": 10**400})
    for store in (SQLiteGraphStore(tmp_path / "g.sqlite"), InMemoryGraphStore()):
        try:
            with pytest.raises(InvalidInput, match=r"document 'd'.*'year'.*64 bits"):
                await store.store_documents([Document("ok", "t"), bad])
            assert await store.get_documents(["ok"]) == {}  # nothing half-written
        finally:
            await store.close()


@pytest.mark.parametrize(
    ("vector", "said"),
    [
        ([1.0, math.nan, 0.0], "NaN or infinity"),
        ([1.0, math.inf, 0.0], "NaN or infinity"),
        ([1e39, 0.0, 0.0], "float32 range"),
        ([0.0, 0.0, 0.0], "all zeros"),
    ],
)
async def test_vector_store_refuses_values_it_cannot_keep(tmp_path: Path, vector: list[float], said: str) -> None:
    async with LocalVectorStore(tmp_path / "v.sqlite") as store:
        with pytest.raises(InvalidInput, match=f"vector 'bad'.*{said}"):
            await store.upsert([VectorRecord("ok", [1.0, 0.0, 0.0]), VectorRecord("bad", vector)])
        assert await store.count() == 0


async def test_large_finite_vectors_are_normalised_without_overflow() -> None:
    async with LocalVectorStore() as store:
        # Squared, 1e30 overflows float32: the norm must not be infinity (a stored zero vector).
        await store.upsert([VectorRecord("big", [1e30, 1e30, 0.0]), VectorRecord("tiny", [0.0, 1e-60, 1e-60])])
        hits = await store.search([1.0, 1.0, 0.0], limit=2)
        assert hits[0].id == "big"
        assert hits[0].score == pytest.approx(1.0, abs=1e-6)
        assert (await store.search([0.0, 1.0, 1.0], limit=1))[0].score == pytest.approx(1.0, abs=1e-6)


# -- through the CLI: refused at the door, and a value stored by other means -----------------------------


def _write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return path


def test_index_refuses_the_record_naming_file_line_and_key(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text(
        '{"id": "a", "text": "apples", "metadata": {"year": 2020}}\n'
        '{"id": "b", "text": "pears", "metadata": {"year": ' + "9" * 400 + "}}\n"
        '{"id": "c", "text": "plums", "metadata": {"score": NaN}}\n'
    )
    result = runner.invoke(app, ["index", str(source), "--store", str(tmp_path / "store"), "--embedder", "hashing"])
    assert result.exit_code == 1
    assert "docs.jsonl:2" in result.output
    assert "record 'b'" in result.output
    assert "'year'" in result.output
    assert "64 bits" in result.output
    assert not (tmp_path / "store").exists()  # nothing half-written


def _legacy_big_int(store: Path, doc_id: str) -> None:
    """Write ``year: 10**400`` into a document's stored metadata directly, as no GraphFuse writer lets it be written."""
    with sqlite3.connect(store / "graph.sqlite") as c:
        meta = json.loads(c.execute("SELECT metadata FROM documents WHERE id = ?", (doc_id,)).fetchone()[0])
        meta["year"] = 10**400
        c.execute("UPDATE documents SET metadata = ? WHERE id = ?", (json.dumps(meta), doc_id))
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    with sqlite3.connect(store / "vectors.sqlite") as c:
        for vid, vector, text in c.execute("SELECT id, vector, metadata FROM vectors").fetchall():
            meta = json.loads(text)
            if vid == doc_id or meta.get("parent_id") == doc_id:
                meta["year"] = 10**400
                text = json.dumps(meta)
                c.execute(
                    "UPDATE vectors SET metadata = ?, checksum = ? WHERE id = ?",
                    (text, row_checksum(vid, vector, text), vid),
                )
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")


@pytest.mark.parametrize("preset", ["multihop", "standard", "minimal"])
def test_a_stored_big_integer_breaks_no_filter(tmp_path: Path, preset: str) -> None:
    docs = [
        {"id": "a", "text": "apples from the orchard", "metadata": {"year": 2020}},
        {"id": "b", "text": "apples and pears", "metadata": {"year": 2020}},
        {"id": "c", "text": "apples in the cellar", "metadata": {"year": 1990}},
    ]
    store = tmp_path / "store"
    args = ["index", str(_write(tmp_path / "d.jsonl", docs)), "--store", str(store), "--embedder", "hashing"]
    assert runner.invoke(app, args).exit_code == 0
    _legacy_big_int(store, "a")
    for spec, expected in (
        ({"year": {"$gte": 2000}}, {"a", "b"}),
        ({"year": 2020}, {"b"}),
        ({"year": {"$lt": 2000}}, {"c"}),
        ({"year": {"$gt": 1e300}}, {"a"}),
    ):
        query = ["query", "apples", "--store", str(store), "--preset", preset, "--json", "--filter", json.dumps(spec)]
        result = runner.invoke(app, query)
        assert result.exit_code == 0, result.output
        assert {r["document_id"] for r in json.loads(result.stdout)} == expected, spec
