"""Damaged, truncated and read-only store files: each is detected and named.

Every test damages a real store built by `graphfuse index`: truncating a file, rewriting rows
with SQLite, overwriting bytes in the middle of the file, removing permissions.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import PermissionDenied, StoreCorrupted
from graphfuse.cli import app
from graphfuse.stores import LocalStore, acheck_store

runner = CliRunner()
GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
N = 20


def _docs(n: int, words: int = 10) -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{i}",
            "title": f"Topic {i}",
            "text": f"Topic {i} is about orchard {i}. " + " ".join(f"w{i}x{j}" for j in range(words)),
            "links": [f"d{(i + 1) % n}"],
        }
        for i in range(n)
    ]


def _build(top: Path, n: int = N, words: int = 10) -> tuple[Path, Path]:
    source = top / "docs.jsonl"
    source.write_text("\n".join(json.dumps(d) for d in _docs(n, words)) + "\n")
    store = top / "s"
    result = runner.invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return store, source


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for s in statements:
            conn.execute(s)
        conn.commit()
    finally:
        conn.close()


def _no_traceback(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.output


def _files(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def _commands(store: Path, source: Path) -> dict[str, list[str]]:
    return {
        "index": ["index", str(source), "--store", str(store), "--embedder", "hashing"],
        "query": ["query", "orchard", "--store", str(store)],
        "context": ["context", "orchard", "--store", str(store)],
        "delete": ["delete", "d1", "--store", str(store)],
    }


@pytest.mark.parametrize("name", ["vectors.sqlite", "graph.sqlite"])
def test_a_truncated_file_is_corruption_for_every_command_and_check_repairs_it(tmp_path: Path, name: str) -> None:
    store, source = _build(tmp_path)
    (store / name).write_bytes(b"")
    for leftover in ("-wal", "-shm"):
        (store / f"{name}{leftover}").unlink(missing_ok=True)
    for what, args in _commands(store, source).items():
        out = _no_traceback(args)
        assert name in out, (what, out)
        assert "graphfuse check" in out, (what, out)
    assert (store / name).stat().st_size == 0  # nothing re-created it behind the user's back
    report = json.loads(_no_traceback(["check", "--store", str(store), "--json"]))
    assert any(name in line and "empty (0 bytes)" in line for line in report["integrity"]), report
    repaired = runner.invoke(app, ["check", "--store", str(store), "--repair"])
    assert f"re-created the empty {name}" in repaired.output, repaired.output
    # The original index command, as check advises, now brings every document back.
    again = runner.invoke(app, _commands(store, source)["index"])
    assert again.exit_code == 0, again.output
    after = json.loads(runner.invoke(app, ["check", "--store", str(store), "--json"]).output)
    assert after["ok"], after
    assert (after["documents"], after["vectors"]) == (N, N)


@pytest.mark.parametrize("lost", ["vectors", "chunks"])
def test_the_unchanged_skip_rewrites_a_document_whose_units_are_gone(tmp_path: Path, lost: str) -> None:
    source = tmp_path / "docs.jsonl"
    long_text = " ".join(f"Sentence {k} of the long one mentions orchard {k}." for k in range(400))
    docs = [*_docs(4), {"id": "long", "title": "Long", "text": long_text}]
    source.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    store = tmp_path / "s"
    args = ["index", str(source), "--store", str(store), "--embedder", "hashing"]
    assert runner.invoke(app, args).exit_code == 0
    before = json.loads(runner.invoke(app, ["check", "--store", str(store), "--json"]).output)
    assert before["ok"]
    if lost == "vectors":
        _sql(
            store / "vectors.sqlite",
            "DELETE FROM vectors WHERE id = 'd2' OR id LIKE 'long#%'",
            "UPDATE meta SET value = value + 1 WHERE key = 'generation'",
        )
    else:
        _sql(
            store / "graph.sqlite",
            "PRAGMA foreign_keys = ON",
            "DELETE FROM documents WHERE id = 'long#1'",
            "UPDATE meta SET value = value + 1 WHERE key = 'generation'",
        )
    assert runner.invoke(app, args).exit_code == 0
    after = json.loads(runner.invoke(app, ["check", "--store", str(store), "--json"]).output)
    assert after["ok"], after
    assert (after["documents"], after["vectors"]) == (before["documents"], before["vectors"])


def test_wrong_size_vectors_and_non_json_metadata_are_named(tmp_path: Path) -> None:
    store, source = _build(tmp_path)
    _sql(
        store / "vectors.sqlite",
        "UPDATE vectors SET vector = x'0000803f' WHERE id = 'd7'",
        "UPDATE vectors SET metadata = '{oops' WHERE id = 'd2'",
    )
    _sql(store / "graph.sqlite", "UPDATE documents SET metadata = 'not json' WHERE id = 'd5'")
    report = json.loads(_no_traceback(["check", "--store", str(store), "--json"]))
    assert report["damaged_rows"] == 3
    named = "\n".join(report["damaged"])
    assert "vectors.sqlite: vector 'd7' is 4 bytes" in named
    assert "vectors.sqlite: vector 'd2' has metadata that is not a JSON object" in named
    assert "graph.sqlite: document 'd5' has metadata that is not a JSON object" in named
    for what, args in _commands(store, source).items():
        out = _no_traceback(args)
        assert "damaged" in out, (what, out)
        assert "graphfuse check" in out, (what, out)
    with pytest.raises(StoreCorrupted, match="'d7'"):
        LocalStore.open(store, mode="ro")


def test_check_reports_pages_overwritten_in_the_middle_of_graph_sqlite(tmp_path: Path) -> None:
    store, _ = _build(tmp_path, n=300, words=60)
    graph = store / "graph.sqlite"
    size = graph.stat().st_size
    assert size > 64 * 4096
    with open(graph, "r+b") as f:
        for offset in (size // 3, size // 2, 2 * size // 3):
            f.seek(offset)
            f.write(b"\xa5" * 4096)
    out = _no_traceback(["check", "--store", str(store)])
    assert "integrity: graph.sqlite" in out
    assert out.strip().endswith("inconsistent")
    report = json.loads(_no_traceback(["check", "--store", str(store), "--json"]))
    assert report["integrity"]
    assert all(line.startswith(("graph.sqlite", "vectors.sqlite", "manifest.json")) for line in report["integrity"])
    assert not report["ok"]
    repaired = _no_traceback(["check", "--store", str(store), "--repair"])
    assert "left as they are" in repaired


def test_stale_manifest_counts_are_a_note_not_an_inconsistency(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["counts"] = {"documents": 0, "relations": 0, "vectors": 0}
    (store / "manifest.json").write_text(json.dumps(manifest))
    result = runner.invoke(app, ["check", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "note: the manifest's counts are stale" in result.output
    assert result.output.strip().endswith("ok")
    report = json.loads(runner.invoke(app, ["check", "--store", str(store), "--json"]).output)
    assert report["ok"]
    assert report["manifest"]["documents"] == [0, N]


def test_query_never_writes_a_missing_or_stale_corpus_index(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    (store / "corpus_index.npz").unlink()
    before = _files(store)
    for _ in range(2):
        result = runner.invoke(app, ["query", "orchard", "--store", str(store), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)
        assert "rebuilt in memory" in result.stderr
        assert "graphfuse check --repair" in result.stderr
        assert _files(store) == before
    report = json.loads(runner.invoke(app, ["check", "--store", str(store), "--json"]).output)
    assert report["ok"]
    assert any("corpus_index.npz is missing or older" in n for n in report["notes"])
    repaired = runner.invoke(app, ["check", "--store", str(store), "--repair"])
    assert "rewrote corpus_index.npz" in repaired.output
    assert (store / "corpus_index.npz").is_file()
    quiet = runner.invoke(app, ["query", "orchard", "--store", str(store), "--json"])
    assert "rebuilt in memory" not in quiet.stderr


def _unprivileged(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NOBODY, GRAPHFUSE, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def shared_top() -> Any:
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="graphfuse-perm-"))
    top.chmod(0o755)
    yield top
    for p in [top, *top.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(top)


@pytest.mark.slow
def test_a_read_only_store_is_queried_without_writing_and_named_as_permission(shared_top: Path) -> None:
    store, source = _build(shared_top)
    (store / "corpus_index.npz").unlink()
    for p in [store, *store.iterdir()]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    before = _files(store)
    if os.geteuid() != 0:
        result = runner.invoke(app, ["query", "orchard", "--store", str(store), "--json"])
        assert result.exit_code == 0, result.output
        assert _files(store) == before
        out = _no_traceback(_commands(store, source)["index"])
        assert "permission denied" in out
        assert "damaged" not in out
        return
    # As root chmod stops no write: the same run as an unprivileged user, where it can.
    if shutil.which("setpriv") is None or _unprivileged("--help").returncode != 0:
        result = runner.invoke(app, ["query", "orchard", "--store", str(store), "--json"])
        assert result.exit_code == 0, result.output
        assert _files(store) == before  # no file written or modified, even with the right to
        pytest.skip("running as root without a usable setpriv: the permission part cannot be exercised")
    proc = _unprivileged("query", "orchard", "--store", str(store), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)
    assert "rebuilt in memory" in proc.stderr
    assert _files(store) == before
    proc = _unprivileged("index", str(source), "--store", str(store), "--embedder", "hashing")
    assert proc.returncode == 1
    assert "permission denied" in proc.stderr
    assert "damaged" not in proc.stderr
    assert "Traceback" not in proc.stderr
    (store / "graph.sqlite").chmod(0o000)
    proc = _unprivileged("check", "--store", str(store))
    assert proc.returncode == 1
    assert "graph.sqlite: cannot be read: permission denied" in proc.stdout
    assert "Traceback" not in proc.stderr


async def test_a_damaged_store_raises_from_the_hierarchy(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    (store / "vectors.sqlite").write_bytes(b"")
    with pytest.raises(StoreCorrupted, match=r"vectors\.sqlite.*empty"):
        LocalStore.open(store)
    report = await acheck_store(store)
    assert not report.ok
    assert issubclass(PermissionDenied, PermissionError)
