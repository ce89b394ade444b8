"""Read-only opening, `graphfuse check` and manifest counts after a kill -9."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import Document, InvalidInput, NotFound, Relation, VectorRecord
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker
from graphfuse.stores import LocalStore, acheck_store

runner = CliRunner()
GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "crash_harness.py"


def _files(directory: Path) -> dict[str, str]:
    # SQLite's -wal/-shm files may appear beside a WAL database even for a read-only reader.
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if not p.name.endswith(("-wal", "-shm"))
    }


@pytest.fixture
def store_dir() -> Iterator[Path]:
    # Outside pytest's private tmp tree so the unprivileged user below can reach it.
    top = Path(tempfile.mkdtemp(prefix="graphfuse-ro-"))
    top.chmod(0o755)
    source = top / "docs.jsonl"
    docs = [
        {"id": "apples", "title": "Apples", "text": "Apples grow in orchards near Pears.", "links": ["pears"]},
        {"id": "pears", "title": "Pears", "text": "Pears are sweet fruit picked in autumn."},
    ]
    source.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    result = runner.invoke(app, ["index", str(source), "--store", str(top / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    yield top / "s"
    for p in [top, *top.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(top)


async def test_read_only_open_queries_and_writes_nothing(store_dir: Path) -> None:
    before = _files(store_dir)
    store = LocalStore.open(store_dir, mode="ro")
    assert store.readonly
    assert sorted((await store.graph.get_documents(["apples", "pears"])).keys()) == ["apples", "pears"]
    assert len(await store.vectors.search([1.0] * store.vectors.dimension, limit=5)) == 2  # type: ignore[operator]
    assert set(await store.graph.pagerank()) == {"apples", "pears"}
    await store.graph.refresh_pagerank()  # a no-op, not an error
    with pytest.raises(InvalidInput, match="read-only"):
        await store.graph.store_documents([Document("x", "y")])
    with pytest.raises(InvalidInput, match="read-only"):
        await store.vectors.upsert([VectorRecord("x", [1.0] * store.vectors.dimension)])  # type: ignore[operator]
    with pytest.raises(InvalidInput, match="read-only"):
        await store.graph.create_relations([Relation("apples", "pears", "X")])
    await store.aclose()
    assert _files(store_dir) == before
    with pytest.raises(NotFound):
        LocalStore.open(store_dir.parent / "missing", mode="ro")
    with pytest.raises(InvalidInput, match="mode"):
        LocalStore.open(store_dir, mode="w")


@pytest.mark.slow
def test_query_works_on_a_store_the_user_cannot_write(store_dir: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the query as an unprivileged user")
    # A checkout inside a private directory (mktemp -d is mode 700) hides the venv from that user.
    probe = subprocess.run([*NOBODY, GRAPHFUSE, "--help"], capture_output=True, timeout=120, check=False)
    if probe.returncode != 0:
        pytest.skip(f"user 65534 cannot run {GRAPHFUSE} from this checkout's location")
    for p in [store_dir, *store_dir.iterdir()]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    before = _files(store_dir)
    proc = subprocess.run(
        [
            *NOBODY,
            GRAPHFUSE,
            "query",
            "apples",
            "--store",
            str(store_dir),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(store_dir.parent)},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["id"] == "apples"
    assert _files(store_dir) == before


def test_check_reports_a_consistent_store(store_dir: Path) -> None:
    result = runner.invoke(app, ["check", "--store", str(store_dir), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"documents", "vectors", "relations", "pending", "dangling_relations", "ok"} <= set(report)
    assert (report["documents"], report["vectors"], report["pending"], report["dangling_relations"]) == (2, 2, 0, 0)
    assert report["relations"] >= 1
    assert report["ok"] is True
    human = runner.invoke(app, ["check", "--store", str(store_dir)])
    assert human.exit_code == 0
    assert human.output.strip().endswith("ok")
    missing = runner.invoke(app, ["check", "--store", str(store_dir.parent / "nope")])
    assert missing.exit_code == 1
    assert "no GraphFuse store" in missing.output


async def test_check_finds_and_repairs_damage(store_dir: Path) -> None:
    store = LocalStore.open(store_dir)
    await store.vectors.upsert([VectorRecord("ghost", [1.0] * store.vectors.dimension)])  # type: ignore[operator]
    await store.vectors.delete(["pears"])  # an indexed document without its vector
    doc = await store.graph.get_document("apples")
    await store.graph.store_documents([Document("apples", doc.content, {**doc.metadata, "graphfuse_state": "pending"})])
    await store.graph.close()
    await store.vectors.close()  # closed without refreshing the manifest, like a killed process
    result = runner.invoke(app, ["check", "--store", str(store_dir), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["ok"] is False
    assert (report["pending"], report["vectors_without_documents"], report["documents_without_vectors"]) == (1, 1, 1)
    assert report["examples"]["vectors_without_documents"] == ["ghost"]
    assert report["manifest"] == {}  # the vector count happens to be unchanged (one added, one removed)
    repaired = runner.invoke(app, ["check", "--store", str(store_dir), "--repair"])
    assert repaired.exit_code == 1  # pending documents need their sources
    assert "repaired: deleted 1 vectors without documents" in repaired.output
    assert "run the same `graphfuse index` command again" in repaired.output
    after = await acheck_store(store_dir)
    assert (after.vectors_without_documents, after.pending) == (0, 1)


def test_manifest_counts_are_right_again_after_a_kill(tmp_path: Path) -> None:
    records = tmp_path / "records.json"
    records.write_text(
        json.dumps(
            [
                {"id": f"d{i}", "title": f"Doc {i}", "text": f"Doc {i} mentions Doc {i + 1}.", "links": []}
                for i in range(40)
            ]
        )
    )
    store = tmp_path / "s"
    proc = subprocess.run(
        [sys.executable, str(HARNESS), "worker", str(store), str(records), "8", "create_relations:3"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == -9  # SIGKILL, after three batches
    stale = json.loads((store / "manifest.json").read_text())["counts"]
    assert stale == {"documents": 0, "relations": 0, "vectors": 0}
    report = runner.invoke(app, ["check", "--store", str(store), "--json"])
    assert report.exit_code == 1
    found = json.loads(report.output)
    assert found["manifest"]["documents"] == [0, found["documents"]]
    assert found["pending"] == 8  # killed inside the third batch, before its commit
    opened = LocalStore.open(store)  # a read-write open brings the counts up to date
    counts = opened.manifest["counts"]
    assert counts == {"documents": found["documents"], "relations": found["relations"], "vectors": found["vectors"]}
    assert json.loads((store / "manifest.json").read_text())["counts"] == counts


def test_indexer_on_a_read_only_store_refuses_before_writing(store_dir: Path) -> None:
    async def go() -> None:
        store = LocalStore.open(store_dir, mode="ro")
        try:
            with pytest.raises(InvalidInput, match="read-only"):
                await Indexer(
                    store.graph,
                    store.vectors,
                    HashingEmbedder(store.vectors.dimension or 8),
                    extractors=[TitleLinker()],
                ).aindex([SourceRecord("n", "new text")])
        finally:
            await store.aclose()

    import asyncio

    before = _files(store_dir)
    asyncio.run(go())
    assert _files(store_dir) == before
