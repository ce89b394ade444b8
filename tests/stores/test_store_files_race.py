"""Store directory files: permissions, racing creators, `check` opening as the commands do."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import StoreCorrupted
from graphfuse.cli import app
from graphfuse.stores import LocalStore

runner = CliRunner()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _index(tmp_path: Path, store: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text("\n".join(json.dumps({"id": f"d{i}", "text": f"orchard {i}"}) for i in range(3)) + "\n")
    result = runner.invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_the_manifest_has_the_data_files_permissions(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        store = tmp_path / "store"
        _index(tmp_path, store)
    finally:
        os.umask(old)
    expected = 0o666 & ~mask
    for name in ("manifest.json", "graph.sqlite", "vectors.sqlite"):
        assert _mode(store / name) == expected, name
    # A store whose data files were opened to a group later: the next write follows them.
    for name in ("graph.sqlite", "vectors.sqlite"):
        os.chmod(store / name, 0o640)
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "x", "text": "more orchard"}) + "\n")
    assert runner.invoke(app, ["index", str(more), "--store", str(store)]).exit_code == 0
    assert _mode(store / "manifest.json") == 0o640


def test_an_open_waits_for_the_store_another_process_is_creating(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    LocalStore.open(directory)  # what the winner writes ...
    manifest = (directory / "manifest.json").read_bytes()
    (directory / "manifest.json").unlink()  # ... before its manifest lands

    def land() -> None:
        time.sleep(0.5)
        (directory / "manifest.json").write_bytes(manifest)

    writer = threading.Thread(target=land)
    writer.start()
    try:
        store = LocalStore.open(directory)  # the loser: opens the winner's store
    finally:
        writer.join()
    assert store.manifest["format"] == "graphfuse-store"


def test_an_interrupted_creation_says_half_written_and_how_to_go_on(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    LocalStore.open(directory)
    (directory / "manifest.json").unlink()
    past = time.time() - 60
    for p in directory.iterdir():
        os.utime(p, (past, past))
    with pytest.raises(StoreCorrupted, match=r"half-written.*retry in a moment.*remove the directory"):
        LocalStore.open(directory)
    (directory / "notes.txt").write_text("mine")
    with pytest.raises(StoreCorrupted, match="not a GraphFuse store"):
        LocalStore.open(directory)


def _create(path: str, start: Any, out: Any) -> None:
    start.wait()
    try:
        from graphfuse.stores import LocalStore

        LocalStore.open(path)
        out.put("ok")
    except Exception as exc:  # reported to the parent
        out.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_processes_racing_to_create_one_store_all_open_it(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    for round_ in range(5):
        path = str(tmp_path / f"store{round_}")
        start, out = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_create, args=(path, start, out)) for _ in range(4)]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(60)
        outcomes = [out.get(timeout=5) for _ in procs]
        assert outcomes == ["ok"] * 4, outcomes


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m: m.update(version=99), "format version 99"),
        (lambda m: m.update(components={"embedder": 1}), "does not name the store's components"),
        (lambda m: m["components"].update(embedder="no-such-embedder"), "no-such-embedder"),
        (lambda m: m["components"].update(vector_store="memory"), "keeps nothing"),
    ],
)
def test_check_refuses_what_every_other_command_refuses(tmp_path: Path, change: Any, said: str) -> None:
    store = tmp_path / "store"
    _index(tmp_path, store)
    manifest = json.loads((store / "manifest.json").read_text())
    change(manifest)
    (store / "manifest.json").write_text(json.dumps(manifest))
    query = runner.invoke(app, ["query", "orchard", "--store", str(store)])
    assert query.exit_code == 1
    assert said in query.output
    check = runner.invoke(app, ["check", "--store", str(store)])
    assert check.exit_code == 1
    assert said in check.output
    assert "inconsistent" in check.output
