"""Hostile source files: each failure mode is one line (a file skipped, or an error naming it).

Every test builds its own hostile input in ``tmp_path``: a YAML alias bomb, metadata that refers
to itself or is too large, a sparse file of gigabytes, symbolic links out of the folder, a named
pipe, a file that may not be read, a file removed between listing and reading, a disk that
fills up while indexing. See docs/reliability.md, "Source files are bounded".
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import DiskFull, InvalidInput, PermissionDenied
from graphfuse.cli import app
from graphfuse.indexing import (
    MAX_FILE_BYTES,
    MAX_METADATA_BYTES,
    MAX_METADATA_VALUES,
    SourceRecord,
    read_slack,
    read_sources,
    records_from_loaded,
)
from graphfuse.stores import LocalStore, LocalVectorStore

runner = CliRunner()
GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
# Root without the capabilities that bypass file permissions: a 0o000 file is then unreadable to it,
# wherever the test runs (an unprivileged user may not reach a checkout in a private directory).
NOBODY = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _bomb(levels: int = 9) -> str:
    """A YAML "billion laughs": each level a list of ten aliases of the one before (10**levels)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "---\n" + "\n".join(lines) + "\n---\n# Laughs\n\nSome text.\n"


def _read(paths: Any, **kwargs: Any) -> tuple[list[SourceRecord], list[tuple[str, str]]]:
    skipped: list[tuple[str, str]] = []
    records = list(read_sources(paths, on_skip=lambda p, why: skipped.append((p, why)), **kwargs))
    return records, skipped


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


# -- 1. unbounded work from small inputs ------------------------------------------------------


def test_a_yaml_alias_bomb_in_front_matter_fails_at_once_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "ok.md").write_text("# Fine\n\nA note.\n")
    bomb = folder / "laughs.md"
    bomb.write_text(_bomb(9))  # 10**9 strings once expanded; a few hundred bytes written
    assert bomb.stat().st_size < 600
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput, match=r"laughs\.md: front matter: metadata holds more than 10000 values"):
            _read([folder])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20  # (the expansion took 2.7 GB)
    code, out = _cli("index", str(folder), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 1
    assert "laughs.md: front matter" in out
    assert out.count("error:") == 1
    assert not (tmp_path / "s").exists()  # read and refused before the store was touched


def test_a_yaml_alias_that_contains_itself_is_named(tmp_path: Path) -> None:
    note = tmp_path / "loop.md"
    note.write_text("---\nloop: &a [1, *a]\n---\nText.\n")
    with pytest.raises(InvalidInput, match=r"loop\.md: front matter: metadata\['loop'\]\[1\] refers to itself"):
        _read([note])


def test_the_hosts_front_matter_and_metadata_are_bounded_alike() -> None:
    with pytest.raises(InvalidInput, match=r"document 0 \('n'\), notes/laughs\.md: front matter: .*10000 values"):
        records_from_loaded([("n", _bomb(9), {"source": "notes/laughs.md"})], path_key="source")
    shared: list[Any] = ["x" * 10] * 10
    for _ in range(8):
        shared = [shared] * 10  # a Python "billion laughs": 10**9 strings through shared lists
    with pytest.raises(InvalidInput, match=r"document 0 \('d'\): metadata (holds|takes) more than"):
        records_from_loaded([("d", "text", {"big": shared})])
    with pytest.raises(InvalidInput, match=r"record 'd': metadata (holds|takes) more than"):
        SourceRecord("d", "text", metadata={"big": shared})


def test_self_referencing_metadata_is_one_error_naming_the_document() -> None:
    meta: dict[str, Any] = {"a": 1}
    meta["self"] = meta
    with pytest.raises(InvalidInput, match=r"document 0 \('d'\): metadata\['self'\] refers to itself"):
        records_from_loaded([("d", "text", meta)])
    listed: list[Any] = [1]
    listed.append(listed)
    with pytest.raises(InvalidInput, match=r"record 'r': metadata\['l'\]\[1\] refers to itself"):
        SourceRecord("r", "text", metadata={"l": listed})


def test_metadata_is_capped_per_record(tmp_path: Path) -> None:
    ok = {"tags": ["t"] * 100, "note": "n" * 1000}
    assert SourceRecord("r", "text", metadata=ok).metadata["note"] == "n" * 1000
    with pytest.raises(InvalidInput, match=f"record 'r': metadata takes more than {MAX_METADATA_BYTES} bytes"):
        SourceRecord("r", "text", metadata={"blob": "x" * (MAX_METADATA_BYTES + 1)})
    with pytest.raises(InvalidInput, match=f"more than {MAX_METADATA_VALUES} values"):
        SourceRecord("r", "text", metadata={"ids": list(range(MAX_METADATA_VALUES + 1))})
    source = tmp_path / "docs.jsonl"
    big = {"id": "b", "text": "t", "metadata": {"blob": "y" * (MAX_METADATA_BYTES + 10)}}
    source.write_text(json.dumps({"id": "a", "text": "t"}) + "\n" + json.dumps(big) + "\n")
    with pytest.raises(InvalidInput, match=r"docs\.jsonl:2: record 'b': metadata takes more than"):
        _read([source])


async def test_the_server_refuses_oversized_metadata_per_document(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from _server_world import served

    async with served(tmp_path) as w:
        doc = {"id": "big", "text": "ACMEWORD text", "metadata": {"blob": "z" * (MAX_METADATA_BYTES + 1)}}
        r = await w.ingest("acme", [doc])
        assert r.status_code == 422, r.text
        assert "documents[0]" in r.text
        assert f"more than {MAX_METADATA_BYTES} bytes" in r.text


def test_a_sparse_file_of_gigabytes_is_refused_from_its_size(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "ok.md").write_text("# Fine\n\nA note.\n")
    sparse = folder / "huge.md"
    with sparse.open("wb") as f:
        f.truncate(2 * 2**30)  # 2 GiB of holes: nothing on disk, 2 GiB to whoever reads it
    tracemalloc.start()
    try:
        records, skipped = _read([folder])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [r.id for r in records] == ["ok.md"]
    assert skipped == [
        (str(sparse), "2 GiB, over the 8 MiB limit for one file (max_file_bytes or --max-file-size raises it)")
    ]
    assert peak < 5 * 2**20
    with pytest.raises(InvalidInput, match=r"huge\.md: 2 GiB, over the 8 MiB limit"):
        _read([sparse])


def test_only_the_first_bytes_are_read_to_tell_a_binary_file(tmp_path: Path) -> None:
    blob = tmp_path / "image.md"
    with blob.open("wb") as f:
        f.truncate(256 * 2**20)  # NUL bytes, under a raised limit: the sniff says binary
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput, match=r"image\.md: a binary file, not text"):
            _read([blob], max_file_bytes=2**30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_the_size_limit_is_configurable_and_applies_to_jsonl_lines(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "small.txt").write_text("small text\n")
    (folder / "large.txt").write_text("word " * 50_000)  # 250,000 bytes
    records, skipped = _read([folder], max_file_bytes=100_000)
    assert [r.id for r in records] == ["small.txt"]
    assert skipped
    assert "244 KiB, over the 97.7 KiB limit" in skipped[0][1]
    records, skipped = _read([folder], max_file_bytes=300_000)
    assert sorted(r.id for r in records) == ["large.txt", "small.txt"]
    assert not skipped
    lines = tmp_path / "docs.jsonl"
    lines.write_text(
        json.dumps({"id": "a", "text": "t"}) + "\n" + json.dumps({"id": "b", "text": "w " * 60_000}) + "\n"
    )
    with pytest.raises(InvalidInput, match=r"docs\.jsonl:2: a line longer than 97\.7 KiB"):
        _read([lines], max_file_bytes=100_000)
    assert len(_read([lines])[0]) == 2  # (under the default)
    with pytest.raises(InvalidInput, match="max_file_bytes must be a positive number"):
        _read([lines], max_file_bytes=0)
    code, out = _cli(
        "index", str(folder), "--store", str(tmp_path / "s"), "--embedder", "hashing", "--max-file-size", "100KB"
    )
    assert code == 0, out
    assert "skipped" in out
    assert "large.txt" in out
    assert "indexed 1 documents" in out
    code, out = _cli("index", str(folder), "--store", str(tmp_path / "s"), "--max-file-size", "lots")
    assert code == 1
    assert "--max-file-size: 'lots' is not a size" in out


def test_max_file_size_reads_sizes_as_gnu_tools_do(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.md")  # (the size is read first: a good one reaches the path)
    for good in ("5000", "8MiB", "8M", "1.5 GiB", "100KB", "2k"):
        code, out = _cli("index", missing, "--store", str(tmp_path / "s"), "--max-file-size", good)
        assert code == 1
        assert "missing.md: no such file or directory" in out, good
    for bad in ("", "-1", "0", "12 parsecs", "1e9", "M"):
        code, out = _cli("index", missing, "--store", str(tmp_path / "s"), "--max-file-size", bad)
        assert code == 1
        assert "--max-file-size:" in out, bad
    assert MAX_FILE_BYTES == 8 * 2**20


# -- 2. files outside the folder ---------------------------------------------------------------


def _linked_folder(tmp_path: Path) -> Path:
    (tmp_path / "secret.txt").write_text("SECRETWORD from outside the folder\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "far.md").write_text("# Far\n\nFARWORD from a folder outside\n")
    folder = tmp_path / "vault"
    (folder / "sub").mkdir(parents=True)
    (folder / ".private").mkdir()
    (folder / "note.md").write_text("# Note\n\nA note inside.\n")
    (folder / "sub" / "deep.md").write_text("# Deep\n\nDeeper inside.\n")
    (folder / ".private" / "kept.md").write_text("# Kept\n\nHidden, reached through a link.\n")
    (folder / "secret.txt").symlink_to("../secret.txt")
    (folder / "far").symlink_to(outside)
    (folder / "alias.md").symlink_to("note.md")
    (folder / "again").symlink_to("sub")
    (folder / "sub" / "loop").symlink_to("..")
    (folder / "kept.md").symlink_to(".private/kept.md")
    (folder / "gone.md").symlink_to("nowhere.md")
    return folder


def test_symbolic_links_out_of_the_folder_are_skipped_and_said(tmp_path: Path) -> None:
    folder = _linked_folder(tmp_path)
    records, skipped = _read([folder])
    assert sorted(r.id for r in records) == ["kept.md", "note.md", "sub/deep.md"]
    assert not any("SECRETWORD" in r.text or "FARWORD" in r.text for r in records)
    why = {Path(p).name: reason for p, reason in skipped}
    assert why["secret.txt"].startswith(f"a symbolic link to {tmp_path / 'secret.txt'}, outside the folder")
    assert "--follow-symlinks" in why["secret.txt"]
    assert why["far"].startswith("a symbolic link to the folder")
    assert "outside the folder" in why["far"]
    assert why["alias.md"] == "a symbolic link to note.md, which is read already"
    assert why["again"] == "a symbolic link to sub, which is read already"
    assert why["loop"] == "a symbolic link to the folder itself, which is read already"
    assert why["gone.md"] == "a broken symbolic link (to nowhere.md)"
    assert len(skipped) == 6
    code, out = _cli("index", str(folder), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 0, out
    assert "secret.txt: a symbolic link" in " ".join(out.split())
    assert "indexed 3 documents" in out


def test_follow_symlinks_reads_outside_once_and_walks_loops_once(tmp_path: Path) -> None:
    folder = _linked_folder(tmp_path)
    (tmp_path / "elsewhere" / "back").symlink_to(folder)  # a loop through the outside folder
    records, skipped = _read([folder], follow_symlinks=True)
    assert sorted(r.id for r in records) == ["far/far.md", "kept.md", "note.md", "secret.txt", "sub/deep.md"]
    assert any("SECRETWORD" in r.text for r in records)
    assert {Path(p).name for p, _ in skipped} == {"alias.md", "again", "loop", "gone.md", "back"}
    code, out = _cli("index", str(folder), "--store", str(tmp_path / "s"), "--embedder", "hashing", "--follow-symlinks")
    assert code == 0, out
    assert "indexed 5 documents" in out


def test_a_file_swapped_for_a_link_after_listing_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("SECRETWORD\n")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("first\n")
    (folder / "b.txt").write_text("second\n")
    (folder / "c.bin").write_bytes(b"\0")  # listed after b.txt: its callback is our moment to swap

    def swap(path: str) -> None:  # (b.txt is listed by now, not read yet)
        (folder / "b.txt").unlink()
        (folder / "b.txt").symlink_to(tmp_path / "secret.txt")

    skipped: list[tuple[str, str]] = []
    reading = read_sources([folder], on_skip=lambda p, why: skipped.append((p, why)), on_unsupported=swap)
    assert [r.id for r in reading] == ["a.txt"]
    assert skipped == [(str(folder / "b.txt"), "it was replaced after the folder was listed")]


# -- 3. one line where a traceback was -----------------------------------------------------------


def test_a_file_removed_between_listing_and_reading_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name in ("a.md", "b.md", "c.jsonl"):
        (folder / name).write_text("# A\n\ntext\n" if name.endswith(".md") else '{"id": "c", "text": "t"}\n')
    (folder / "z.bin").write_bytes(b"\0")  # listed last: its callback comes after the listing, before any read

    def remove(path: str) -> None:
        (folder / "b.md").unlink()
        (folder / "c.jsonl").unlink()

    skipped: list[tuple[str, str]] = []
    reading = read_sources([folder], on_skip=lambda p, why: skipped.append((p, why)), on_unsupported=remove)
    assert [r.id for r in reading] == ["a.md"]
    assert skipped == [
        (str(folder / "b.md"), "it was removed after the folder was listed"),
        (str(folder / "c.jsonl"), "it was removed after the folder was listed"),
    ]


def _fifo(path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    os.mkfifo(path)
    return path


def test_a_named_pipe_is_never_opened_for_reading(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "ok.txt").write_text("text\n")
    pipe = _fifo(folder / "pipe.md")  # opening it for reading would block until a writer comes
    records, skipped = _read([folder])
    assert [r.id for r in records] == ["ok.txt"]
    assert skipped == [(str(pipe), "a named pipe (FIFO), not a regular file")]
    with pytest.raises(InvalidInput, match=r"pipe\.md: a named pipe \(FIFO\), not a regular file"):
        _read([pipe])
    code, out = _cli("index", str(pipe), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 1
    assert "pipe.md: a named pipe (FIFO), not a regular file" in out
    assert "no such file" not in out
    (tmp_path / "dangling.md").symlink_to("missing.md")
    with pytest.raises(InvalidInput, match=r"dangling\.md: a broken symbolic link \(to missing\.md\)"):
        _read([tmp_path / "dangling.md"])


def test_a_named_pipe_given_as_a_chat_export_is_named_not_read(tmp_path: Path) -> None:
    pipe = _fifo(tmp_path / "WhatsApp Chat.txt")
    code, out = _cli("index", "--chat", "whatsapp", str(pipe), "--store", str(tmp_path / "s"))
    assert code == 1
    assert "WhatsApp Chat.txt: a named pipe (FIFO), not a regular file" in " ".join(out.split())
    export = tmp_path / "slack"
    (export / "general").mkdir(parents=True)
    _fifo(export / "general" / "2024-03-14.json")
    with pytest.raises(InvalidInput, match=r"2024-03-14\.json: a named pipe \(FIFO\), not a regular file"):
        read_slack(export)


@pytest.fixture
def shared_top() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are private to the user running it)."""
    top = Path(tempfile.mkdtemp(prefix="graphfuse-eacces-"))
    top.chmod(0o755)
    yield top
    for p in [top, *top.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(top)


@pytest.mark.slow
def test_an_unreadable_file_is_skipped_in_a_folder_and_named_itself(shared_top: Path) -> None:
    folder = shared_top / "notes"
    folder.mkdir()
    (folder / "ok.md").write_text("# Ok\n\nreadable\n")
    locked = folder / "locked.md"
    locked.write_text("# Locked\n\nnot for you\n")
    locked.chmod(0o000)
    (folder / "closed").mkdir()
    (folder / "closed" / "inner.md").write_text("# Inner\n\ntext\n")
    (folder / "closed").chmod(0o000)
    if os.geteuid() != 0:
        records, skipped = _read([folder])
        assert [r.id for r in records] == ["ok.md"]
        assert sorted(skipped) == [
            (str(folder / "closed"), "a folder that cannot be listed: Permission denied"),
            (str(locked), "permission denied"),
        ]
        with pytest.raises(PermissionDenied, match=r"locked\.md: permission denied"):
            _read([locked])
        return
    # As root, chmod stops no read: the same run without the capabilities that bypass it.
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: an unreadable file cannot be made (root reads every file)")
    store = shared_top / "store"
    store.mkdir()
    proc = subprocess.run(
        [*NOBODY, GRAPHFUSE, "index", str(folder), "--store", str(store), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0 and "Permission denied" in proc.stderr and "locked" not in proc.stderr:
        pytest.skip(f"the unprivileged user cannot run graphfuse here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"skipped {locked}: permission denied" in " ".join(proc.stderr.split())
    assert f"skipped {folder / 'closed'}: a folder that cannot be listed" in " ".join(proc.stderr.split())
    assert "indexed 1 documents" in proc.stdout
    proc = subprocess.run(
        [*NOBODY, GRAPHFUSE, "index", str(locked), "--store", str(store), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"error: {locked}: permission denied" in proc.stderr


# -- disk full -------------------------------------------------------------------------------------


def _corpus(tmp_path: Path, n: int = 300) -> Path:
    source = tmp_path / "docs.jsonl"
    docs = [{"id": f"d{i}", "title": f"Topic {i}", "text": " ".join(f"w{i}x{j}" for j in range(120))} for i in range(n)]
    source.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return source


def _contents(store_dir: Path) -> tuple[list[Any], list[Any]]:
    """Every document (chunks too) with its text and metadata, and every vector, as stored."""
    graph = sqlite3.connect(f"file:{store_dir / 'graph.sqlite'}?mode=ro", uri=True)
    vectors = sqlite3.connect(f"file:{store_dir / 'vectors.sqlite'}?mode=ro", uri=True)
    try:
        docs = graph.execute("SELECT id, content, metadata, created_at FROM documents ORDER BY id").fetchall()
        vecs = vectors.execute("SELECT id, vector, metadata FROM vectors ORDER BY id").fetchall()
    finally:
        graph.close()
        vectors.close()
    return docs, vecs


@pytest.mark.slow
def test_a_full_disk_in_sqlite_is_one_line_and_the_same_command_completes_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite itself answers SQLITE_FULL: each connection may grow its file by a few pages only
    (``PRAGMA max_page_count``, set through ``sqlite3.connect``, the standard seam)."""
    source = _corpus(tmp_path)
    clean = tmp_path / "clean"
    assert _cli("index", str(source), "--store", str(clean), "--embedder", "hashing")[0] == 0
    store = tmp_path / "s"
    assert _cli("index", str(source), "--store", str(store), "--embedder", "hashing")[0] == 0
    (source.with_name("more.jsonl")).write_text(
        "\n".join(json.dumps({"id": f"m{i}", "text": "more " * 400 + str(i)}) for i in range(200)) + "\n"
    )
    connect = sqlite3.connect

    def small_disk(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 8}")
        return conn

    monkeypatch.setattr(sqlite3, "connect", small_disk)
    code, out = _cli("index", str(source), str(source.with_name("more.jsonl")), "--store", str(store))
    assert code == 1
    assert "no space left on the disk" in out
    assert "damaged" not in out
    assert out.count("error:") == 1
    monkeypatch.undo()
    code, out = _cli("check", "--store", str(store))  # an interrupted run, as kill -9 leaves one
    assert "damaged" not in out
    assert code == 0 or "pending documents (an index run did not finish)" in out, out
    code, out = _cli("index", str(source), "--store", str(store), "--prune")
    assert code == 0, out
    assert _contents(store) == _contents(clean)


def test_a_store_whose_creation_meets_a_full_disk_is_not_left_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _corpus(tmp_path, 20)
    connect = sqlite3.connect

    def full_disk(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.execute("PRAGMA max_page_count = 1")  # (a new file: not even its schema fits)
        return conn

    monkeypatch.setattr(sqlite3, "connect", full_disk)
    code, out = _cli("index", str(source), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 1
    assert "no space left on the disk" in out
    monkeypatch.undo()
    assert not (tmp_path / "s").exists()  # (a half-written directory would be refused by the next run)
    code, out = _cli("index", str(source), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 0, out


def test_a_full_disk_writing_the_manifest_leaves_the_old_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _corpus(tmp_path, 20)
    store = tmp_path / "s"
    assert _cli("index", str(source), "--store", str(store), "--embedder", "hashing")[0] == 0
    before = (store / "manifest.json").read_bytes()

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(DiskFull, match=r"no space left on the disk to write manifest\.json") as caught:
        _refresh(store)
    assert caught.value.errno == errno.ENOSPC
    assert isinstance(caught.value, OSError)
    monkeypatch.undo()
    assert (store / "manifest.json").read_bytes() == before
    assert not [p for p in store.iterdir() if p.name.startswith(".manifest-")]


def _refresh(store_dir: Path) -> None:
    import asyncio

    async def run() -> None:
        store = LocalStore.open(store_dir)
        try:
            await store.arefresh_manifest()
        finally:
            await store.graph.close()
            await store.vectors.close()

    asyncio.run(run())


def test_any_other_full_disk_error_is_one_line_in_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _corpus(tmp_path, 20)

    async def no_space(self: LocalVectorStore, records: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "s" / "vectors.sqlite"))

    monkeypatch.setattr(LocalVectorStore, "upsert", no_space)
    code, out = _cli("index", str(source), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 1
    assert "error: no space left on the disk writing" in out
    assert "vectors.sqlite" in out
    monkeypatch.undo()
    code, out = _cli("index", str(source), "--store", str(tmp_path / "s"), "--embedder", "hashing")
    assert code == 0, out
    assert "indexed 20 documents" in out


@pytest.mark.slow
def test_a_real_full_disk_on_a_small_tmpfs(tmp_path: Path) -> None:
    """The real thing where it can be had: root, and a kernel that lets it mount a tmpfs."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root; the SQLite and manifest tests above simulate a full disk")
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=False).returncode:
        pytest.skip("this machine does not let root mount a tmpfs")
    try:
        source = _corpus(tmp_path)
        code, out = _cli("index", str(source), "--store", str(disk / "s"), "--embedder", "hashing")
        assert code == 1
        assert "no space left on the disk" in out
        assert out.count("error:") == 1
        assert "damaged" not in out
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        code, out = _cli("check", "--store", str(disk / "s"))  # an interrupted run, as kill -9 leaves one
        assert "damaged" not in out
        assert code == 0 or "pending documents (an index run did not finish)" in out, out
        code, out = _cli("index", str(source), "--store", str(disk / "s"))
        assert code == 0, out
        assert _cli("check", "--store", str(disk / "s"))[0] == 0
        clean = tmp_path / "clean"
        assert _cli("index", str(source), "--store", str(clean), "--embedder", "hashing")[0] == 0
        assert _contents(disk / "s") == _contents(clean)
    finally:
        subprocess.run(["umount", str(disk)], check=False)
