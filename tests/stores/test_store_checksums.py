"""`graphfuse check` detects damaged vectors: checksums, NaN/infinity, stray vectors.

Every vector row is written with a CRC-32 of its id, vector and metadata; `check` verifies each
row and names the vector and its document, the store refuses to load a damaged one, and
`check --repair` deletes damaged vectors (the next index embeds them again). A row without a
checksum was written by something else: it is damage like a wrong one.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import struct
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import StoreCorrupted
from graphfuse.cli import app
from graphfuse.stores import LocalStore, acheck_store

runner = CliRunner()


def _docs(n: int, words: int = 12) -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{i}",
            "title": f"Topic {i}",
            "text": f"Topic {i} is about orchard number {i}. " + " ".join(f"w{i}x{j}" for j in range(words)),
        }
        for i in range(n)
    ]


def _index(tmp_path: Path, n: int = 30, words: int = 12, store: Path | None = None) -> tuple[Path, Path]:
    source = tmp_path / "docs.jsonl"
    source.write_text("\n".join(json.dumps(d) for d in _docs(n, words)) + "\n")
    store = store or tmp_path / "store"
    result = runner.invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return store, source


def _check(store: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["check", "--store", str(store), "--json", *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout)


def _sql(path: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    with sqlite3.connect(path) as c:
        for sql, params in statements:
            c.execute(sql, params)
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")


def _rows(path: Path) -> Any:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    c.text_factory = bytes
    try:
        rows = sorted(c.execute("SELECT * FROM vectors").fetchall(), key=repr)  # a damaged id may be NULL
        return rows, c.execute("SELECT * FROM meta").fetchall()
    finally:
        c.close()


def _set_value(store: Path, doc_id: str, position: int, value: float, resum: bool = False) -> None:
    path = store / "vectors.sqlite"
    with sqlite3.connect(path) as c:
        blob, meta = c.execute("SELECT vector, metadata FROM vectors WHERE id = ?", (doc_id,)).fetchone()
        data = bytearray(blob)
        data[4 * position : 4 * position + 4] = struct.pack("<f", value)
        c.execute("UPDATE vectors SET vector = ? WHERE id = ?", (bytes(data), doc_id))
        if resum:  # as if it had been written so: only the NaN check can see it
            from graphfuse.stores._vector_file import row_checksum

            c.execute("UPDATE vectors SET checksum = ? WHERE id = ?", (row_checksum(doc_id, bytes(data), meta), doc_id))
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")


def test_new_stores_keep_a_checksum_per_vector(tmp_path: Path) -> None:
    store, _ = _index(tmp_path)
    with sqlite3.connect(store / "vectors.sqlite") as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == 2
        assert c.execute("SELECT count(*) FROM vectors WHERE checksum IS NULL").fetchone()[0] == 0
    code, report = _check(store)
    assert code == 0
    assert report["ok"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.5])
def test_a_changed_vector_is_named_by_check_and_refused_by_every_command(tmp_path: Path, value: float) -> None:
    store, source = _index(tmp_path)
    _set_value(store, "d7", 3, value)
    code, report = _check(store)
    assert code == 1
    assert report["damaged_rows"] == 1
    assert report["damaged_vectors"] == 1
    assert "'d7'" in report["damaged"][0]
    assert "checksum" in report["damaged"][0]
    for args in (["query", "orchard", "--store", str(store)], ["index", str(source), "--store", str(store)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 1
        assert "'d7'" in result.output
        assert "graphfuse check" in result.output
    with pytest.raises(StoreCorrupted, match=r"'d7'.*checksum"):
        LocalStore.open(store, mode="ro")


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_nan_or_infinity_is_named_even_with_a_matching_checksum(tmp_path: Path, value: float) -> None:
    store, _ = _index(tmp_path)
    _set_value(store, "d4", 0, value, resum=True)
    code, report = _check(store)
    assert code == 1
    assert report["damaged_rows"] == 1
    assert "'d4'" in report["damaged"][0]
    assert "NaN or infinity" in report["damaged"][0]
    with pytest.raises(StoreCorrupted, match=r"'d4'.*NaN or infinity"):
        LocalStore.open(store, mode="ro")


def test_a_damaged_chunk_vector_names_its_document(tmp_path: Path) -> None:
    store, _ = _index(tmp_path, n=4, words=900)  # long texts: several chunks each
    with sqlite3.connect(store / "vectors.sqlite") as c:
        chunk = c.execute("SELECT id FROM vectors WHERE id LIKE 'd2#%' LIMIT 1").fetchone()[0]
    _set_value(store, chunk, 1, 0.25)
    code, report = _check(store)
    assert code == 1
    assert f"vector '{chunk}' (document 'd2')" in report["damaged"][0]


def test_repair_deletes_damaged_vectors_and_index_embeds_them_again(tmp_path: Path) -> None:
    store, source = _index(tmp_path)
    _set_value(store, "d3", 2, float("nan"))
    _set_value(store, "d9", 5, 0.125)
    code, report = _check(store, "--repair")
    assert code == 1
    assert any("deleted 2 damaged vectors" in line for line in report["repairs"])
    assert report["documents_without_vectors"] == 2
    assert report["damaged_rows"] == 0
    result = runner.invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    code, report = _check(store)
    assert code == 0
    assert report["vectors"] == 30


@pytest.mark.slow
def test_random_byte_damage_that_changes_data_is_always_detected(tmp_path: Path) -> None:
    """The probe's finding (4 of 30 random byte corruptions changed rankings with `check` exit 0)."""
    base, _ = _index(tmp_path)
    original = _rows(base / "vectors.sqlite")
    rng = random.Random(38)
    changed = 0
    for trial in range(40):
        store = tmp_path / f"t{trial}"
        shutil.copytree(base, store)
        path = store / "vectors.sqlite"
        data = bytearray(path.read_bytes())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            differs = _rows(path) != original
        except (sqlite3.Error, UnicodeDecodeError):  # a damaged schema's column names do not decode
            differs = True  # unreadable is a change too
        code, _ = _check(store)
        if differs:
            changed += 1
            assert code == 1, f"trial {trial}: the data changed and check said ok"
        shutil.rmtree(store)
    assert changed >= 20  # most random damage lands in the rows: the test exercises the checksums


def test_a_row_without_a_checksum_is_damage_that_repair_deletes(tmp_path: Path) -> None:
    store, source = _index(tmp_path)
    _sql(store / "vectors.sqlite", ("UPDATE vectors SET checksum = NULL WHERE id = ?", ("d4",)))
    code, report = _check(store)
    assert code == 1
    assert report["damaged_vectors"] == 1
    assert "'d4'" in report["damaged"][0]
    assert "no checksum" in report["damaged"][0]
    with pytest.raises(StoreCorrupted, match=r"'d4'.*checksum"):
        LocalStore.open(store, mode="ro")
    code, report = _check(store, "--repair")
    assert any("deleted 1 damaged vectors" in line for line in report["repairs"]), report["repairs"]
    assert runner.invoke(app, ["index", str(source), "--store", str(store)]).exit_code == 0
    code, report = _check(store)
    assert code == 0, report
    assert report["vectors"] == 30


def test_a_vector_file_of_another_format_version_is_refused(tmp_path: Path) -> None:
    store, _ = _index(tmp_path)
    with sqlite3.connect(store / "vectors.sqlite") as c:
        c.execute("PRAGMA user_version=1")
    with pytest.raises(StoreCorrupted, match="has format version 1; this GraphFuse reads version 2"):
        LocalStore.open(store, mode="ro")
    code, report = _check(store)
    assert code == 1
    assert "format version 1" in json.dumps(report)


async def test_stray_vectors_of_entity_nodes_are_reported_and_repaired(tmp_path: Path) -> None:
    store, _ = _index(tmp_path)
    from graphfuse import Document, VectorRecord

    async with LocalStore.open(store) as opened:
        entity = Document("graphfuse:entity:orchard", "orchard", {"graphfuse_kind": "entity", "name": "orchard"})
        await opened.graph.store_documents([entity])
        dimension = opened.vectors.dimension
        assert dimension is not None
        # What a document id in the entity namespace left behind before ids were reserved.
        stray = [VectorRecord("graphfuse:entity:orchard", [1.0] * dimension), VectorRecord("gone", [1.0] * dimension)]
        await opened.vectors.upsert(stray)
    report = await acheck_store(store)
    assert not report.ok
    assert report.vectors_without_documents == 2
    assert set(report.examples["vectors_without_documents"]) == {"graphfuse:entity:orchard", "gone"}
    after = await acheck_store(store, repair=True)
    assert after.ok
    assert after.vectors == 30
    assert any("deleted 2 vectors" in r for r in after.repairs)
    async with LocalStore.open(store, mode="ro") as opened:
        assert await opened.graph.get_documents(["graphfuse:entity:orchard"])  # the entity node stays
