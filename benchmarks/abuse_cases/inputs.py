"""Abuse cases for source files: small inputs that ask for unbounded work, files outside the
folder, and the faults that must be one line (unreadable, vanished, a named pipe, a full disk).

Loaded by ``benchmarks/abuse_probe.py`` by path (this file imports nothing from the others).
Each case builds its hostile input in the temporary directory it is given, reads it with
``read_sources`` / ``records_from_loaded`` or runs ``graphfuse index`` (in-process through typer's
runner, or as a real process where a hang or another user is what is probed) and raises
``AssertionError`` naming what did not hold.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.indexing import read_sources, records_from_loaded

GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
_runner = CliRunner()


def _cli(*args: str) -> tuple[int, str]:
    result = _runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"graphfuse {' '.join(args)} raised {result.exception!r} (a traceback)")
    if "Traceback" in result.output:
        raise AssertionError(f"graphfuse {' '.join(args)} printed a traceback: {result.output[-600:]}")
    return result.exit_code, " ".join(result.output.split())


def _index(tmp: Path, *paths: Path, extra: tuple[str, ...] = ()) -> tuple[int, str]:
    return _cli("index", *map(str, paths), "--store", str(tmp / "store"), "--embedder", "hashing", *extra)


def _read(paths: list[Path], **kwargs: Any) -> tuple[list[str], list[tuple[str, str]]]:
    skipped: list[tuple[str, str]] = []
    records = read_sources(paths, on_skip=lambda p, why: skipped.append((p, why)), **kwargs)
    return [r.id for r in records], skipped


@contextmanager
def _peak(limit: int, what: str) -> Iterator[None]:
    """Python allocations inside stay under ``limit`` bytes at their peak."""
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if peak > limit:
        raise AssertionError(f"{what}: {peak / 2**20:.1f} MiB allocated at the peak (bound {limit / 2**20:.0f} MiB)")


def _expect_invalid(fn: Callable[[], Any], *needles: str) -> str:
    try:
        fn()
    except InvalidInput as exc:
        message = str(exc)
        missing = [n for n in needles if n not in message]
        if missing:
            raise AssertionError(f"the error does not name {missing}: {message}") from None
        return message
    raise AssertionError(f"no InvalidInput (expected one naming {needles})")


def _laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "---\n" + "\n".join(lines) + "\n---\n# Laughs\n\nText.\n"


# -- unbounded work from small inputs ----------------------------------------------------------


def yaml_alias_bomb(tmp: Path) -> None:
    folder = tmp / "notes"
    folder.mkdir()
    (folder / "fine.md").write_text("# Fine\n\nA note.\n")
    for levels in (9, 12):  # 10**9 and 10**12 values once expanded, under 700 bytes written
        bomb = folder / "laughs.md"
        bomb.write_text(_laughs(levels))
        with _peak(32 * 2**20, f"a {levels}-level alias bomb"):
            _expect_invalid(lambda: list(read_sources([folder])), "laughs.md: front matter", "values")
        code, out = _index(tmp, folder)
        if code != 1 or "laughs.md" not in out or out.count("error:") != 1:
            raise AssertionError(f"graphfuse index on the bomb: exit {code}, {out[-400:]}")
    (folder / "laughs.md").write_text("---\nloop: &a [1, *a]\n---\nText.\n")
    _expect_invalid(lambda: list(read_sources([folder])), "laughs.md", "refers to itself")
    _expect_invalid(
        lambda: records_from_loaded([("n", _laughs(12), {"source": "n.md"})], path_key="source"), "document 0", "n.md"
    )


def host_metadata_cycles_and_bombs(tmp: Path) -> None:
    meta: dict[str, Any] = {"source": "a.txt"}
    meta["self"] = meta
    _expect_invalid(lambda: records_from_loaded([("a", "text", meta)]), "document 0 ('a')", "refers to itself")
    nested: list[Any] = [1]
    nested.append({"back": nested})
    _expect_invalid(lambda: records_from_loaded([("b", "text", {"n": nested})]), "document 0 ('b')", "itself")
    shared: list[Any] = ["x"] * 10
    for _ in range(11):
        shared = [shared] * 10
    with _peak(16 * 2**20, "metadata of 10**12 shared values"):
        _expect_invalid(lambda: records_from_loaded([("c", "text", {"s": shared})]), "document 0 ('c')")


def metadata_cap_per_record(tmp: Path) -> None:
    source = tmp / "docs.jsonl"
    rows = [
        {"id": "ok", "text": "t", "metadata": {"tags": ["a"] * 500}},
        {"id": "big", "text": "t", "metadata": {"blob": "b" * 70_000}},
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code, out = _index(tmp, source)
    if code != 1 or "docs.jsonl:2" not in out or "bytes as JSON" not in out:
        raise AssertionError(f"70 kB of metadata was not refused naming docs.jsonl:2: exit {code}, {out[-400:]}")
    if (tmp / "store").exists():
        raise AssertionError("the store was created before the input was refused")


def sparse_file_refused_from_size(tmp: Path) -> None:
    folder = tmp / "notes"
    folder.mkdir()
    (folder / "fine.md").write_text("# Fine\n\nA note.\n")
    with (folder / "huge.md").open("wb") as f:
        f.truncate(4 * 2**30)  # 4 GiB of holes
    with _peak(8 * 2**20, "a folder with a 4 GiB sparse file"):
        ids, skipped = _read([folder])
    if ids != ["fine.md"] or len(skipped) != 1 or "over the" not in skipped[0][1]:
        raise AssertionError(f"the sparse file was not skipped from its size: {ids}, {skipped}")
    code, out = _index(tmp, folder / "huge.md")
    if code != 1 or "huge.md: 4 GiB, over the" not in out:
        raise AssertionError(f"naming the sparse file: exit {code}, {out[-300:]}")


def binary_sniff_bounded(tmp: Path) -> None:
    blob = tmp / "disk.img.txt"
    with blob.open("wb") as f:
        f.truncate(512 * 2**20)
    with _peak(2**20, "telling a 512 MiB file of NUL bytes is binary, under a 1 GiB limit"):
        _expect_invalid(lambda: _read([blob], max_file_bytes=2**30), "a binary file")


def large_text_file_not_loaded(tmp: Path) -> None:
    folder = tmp / "notes"
    folder.mkdir()
    line = b"a hundred megabytes of ordinary text, every line like this one.\n"
    with (folder / "log.txt").open("wb") as f:
        for _ in range(100 * 2**20 // len(line)):
            f.write(line)
    (folder / "note.txt").write_text("a short note\n")
    with _peak(8 * 2**20, "a folder with a 100 MB text file"):
        ids, skipped = _read([folder])
    if ids != ["note.txt"] or [Path(p).name for p, _ in skipped] != ["log.txt"]:
        raise AssertionError(f"the 100 MB file was not skipped: {ids}, {skipped}")
    code, out = _index(tmp, folder, extra=("--max-file-size", "1MiB"))
    if code != 0 or "log.txt: 100 MiB, over the 1 MiB limit" not in out:
        raise AssertionError(f"--max-file-size 1MiB: exit {code}, {out[-400:]}")
    lines = tmp / "one-line.jsonl"
    with lines.open("wb") as f:
        f.write(b'{"id": "x", "text": "')
        f.write(b"y" * (3 * 2**20))
        f.write(b'"}\n')
    with _peak(4 * 2**20, "a 3 MiB JSONL line under a 1 MiB limit"):
        _expect_invalid(lambda: _read([lines], max_file_bytes=2**20), "one-line.jsonl:1", "a line longer than")


# -- files outside the folder ------------------------------------------------------------------


def symlinks_stay_in_the_folder(tmp: Path) -> None:
    (tmp / "secret.txt").write_text("SECRETWORD\n")
    folder = tmp / "vault"
    folder.mkdir()
    (folder / "note.md").write_text("# Note\n\ninside\n")
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    (folder / "secret.txt").symlink_to("../secret.txt")
    (folder / "etc").symlink_to("/etc")
    (folder / "up").symlink_to("..")
    (folder / "alias.md").symlink_to("note.md")
    ids, skipped = _read([folder])
    if ids != ["note.md"]:
        raise AssertionError(f"links out of the folder were followed: {ids}")
    named = sorted(Path(p).name for p, _ in skipped)
    if named != ["alias.md", "etc", "passwd.txt", "secret.txt", "up"]:
        raise AssertionError(f"the skipped links were not all said: {skipped}")
    code, out = _index(tmp, folder)
    if code != 0 or "passwd.txt: a symbolic link to /etc/passwd, outside the folder" not in out:
        raise AssertionError(f"graphfuse index did not say it skipped the link to /etc/passwd: {out[-600:]}")
    code, out = _cli("query", "SECRETWORD root", "--store", str(tmp / "store"), "--json")
    if "SECRETWORD" in out or "root:x:" in out:
        raise AssertionError("text from outside the folder was served")
    ids, skipped = _read([folder], follow_symlinks=True)
    if "secret.txt" not in ids or "passwd.txt" not in ids or any(i.startswith("up/") for i in ids):
        raise AssertionError(f"follow_symlinks: {ids}")


def follow_symlinks_walks_loops_once(tmp: Path) -> None:
    folder = tmp / "a"
    (folder / "b" / "c").mkdir(parents=True)
    (folder / "b" / "c" / "leaf.md").write_text("# Leaf\n\ntext\n")
    (folder / "b" / "c" / "top").symlink_to("../..")
    (folder / "b" / "self").symlink_to(".")
    (tmp / "out").mkdir()
    (tmp / "out" / "far.md").write_text("# Far\n\ntext\n")
    (tmp / "out" / "back").symlink_to(folder)
    (folder / "out").symlink_to(tmp / "out")
    for follow in (False, True):
        ids, _ = _read([folder], follow_symlinks=follow)
        expected = ["b/c/leaf.md", "out/far.md"] if follow else ["b/c/leaf.md"]
        if ids != expected:
            raise AssertionError(f"follow_symlinks={follow}: read {ids}, expected {expected}")


# -- one line where a traceback was ---------------------------------------------------------------


def fifo_never_blocks(tmp: Path) -> None:
    folder = tmp / "notes"
    folder.mkdir()
    (folder / "note.txt").write_text("text\n")
    os.mkfifo(folder / "pipe.md")
    os.mkfifo(tmp / "named.txt")
    for args, expect_code, needle in (
        ([str(folder)], 0, "pipe.md: a named pipe (FIFO), not a regular file"),
        ([str(tmp / "named.txt")], 1, "named.txt: a named pipe (FIFO), not a regular file"),
        (["--chat", "whatsapp", str(tmp / "named.txt")], 1, "named.txt: a named pipe (FIFO), not a regular file"),
    ):
        try:
            proc = subprocess.run(
                [GRAPHFUSE, "index", *args, "--store", str(tmp / "store"), "--embedder", "hashing"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"graphfuse index {args} blocked on a named pipe") from None
        err = " ".join(proc.stderr.split())
        if proc.returncode != expect_code or needle not in err or "Traceback" in err or "no such file" in err:
            raise AssertionError(f"graphfuse index {args}: exit {proc.returncode}, {err[-400:]}")


def vanished_and_swapped_files(tmp: Path) -> None:
    (tmp / "secret.txt").write_text("SECRETWORD\n")
    folder = tmp / "notes"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.jsonl"):
        (folder / name).write_text('{"id": "d", "text": "t"}\n' if name.endswith("jsonl") else f"{name}\n")
    (folder / "z.bin").write_bytes(b"\0")  # listed last: its callback comes after the listing, before any read

    def change(path: str) -> None:
        (folder / "b.txt").unlink()
        (folder / "c.txt").unlink()
        (folder / "c.txt").symlink_to(tmp / "secret.txt")
        (folder / "d.jsonl").unlink()

    skipped: list[tuple[str, str]] = []
    read = list(read_sources([folder], on_skip=lambda p, why: skipped.append((p, why)), on_unsupported=change))
    if [r.id for r in read] != ["a.txt"] or any("SECRETWORD" in r.text for r in read):
        raise AssertionError(f"read after the changes: {[r.id for r in read]}")
    reasons = {Path(p).name: why for p, why in skipped}
    if set(reasons) != {"b.txt", "c.txt", "d.jsonl"} or "replaced" not in reasons["c.txt"]:
        raise AssertionError(f"the vanished and swapped files were not said: {skipped}")


def unreadable_file_skipped(tmp: Path) -> None:
    top = tmp / "shared"
    folder = top / "notes"
    folder.mkdir(parents=True)
    for p in (tmp, top, folder):
        p.chmod(0o755)
    (folder / "ok.md").write_text("# Ok\n\nreadable\n")
    locked = folder / "locked.md"
    locked.write_text("# Locked\n\nno\n")
    locked.chmod(0o000)
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            raise AssertionError("running as root without setpriv: cannot make a file unreadable to probe it")
        (top / "store").mkdir()
        # Root without the capabilities that bypass file permissions (wherever the checkout is).
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]

    def index(path: Path) -> tuple[int, str]:
        command = [*prefix, GRAPHFUSE, "index", str(path), "--store", str(top / "store"), "--embedder", "hashing"]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        return proc.returncode, " ".join(proc.stderr.split())

    try:
        code, err = index(folder)
        if code != 0 or f"skipped {locked}: permission denied" not in err or "Traceback" in err:
            raise AssertionError(f"an unreadable file in a folder: exit {code}, {err[-400:]}")
        code, err = index(locked)
        if code != 1 or f"error: {locked}: permission denied" not in err or "Traceback" in err:
            raise AssertionError(f"an unreadable file named itself: exit {code}, {err[-400:]}")
    finally:
        locked.chmod(0o644)


def disk_full_is_one_line_and_rerunnable(tmp: Path) -> None:
    source = tmp / "docs.jsonl"
    docs = [{"id": f"d{i}", "title": f"T{i}", "text": " ".join(f"w{i}x{j}" for j in range(150))} for i in range(200)]
    source.write_text("\n".join(json.dumps(d) for d in docs[:20]) + "\n")
    more = tmp / "more.jsonl"
    more.write_text("\n".join(json.dumps(d) for d in docs[20:]) + "\n")
    clean = tmp / "clean"
    if _cli("index", str(source), str(more), "--store", str(clean), "--embedder", "hashing")[0] != 0:
        raise AssertionError("the clean run failed")
    connect = sqlite3.connect

    def small_disk(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # SQLite itself answers SQLITE_FULL past a few pages
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0] + 6}")
        return conn

    def full(*paths: Path) -> None:
        sqlite3.connect = small_disk  # type: ignore[assignment]
        try:
            code, out = _index(tmp, *paths)
        finally:
            sqlite3.connect = connect  # type: ignore[assignment]
        if code != 1 or "no space left on the disk" not in out or "damaged" in out or out.count("error:") != 1:
            raise AssertionError(f"a full disk: exit {code}, {out[-500:]}")

    full(source, more)  # the disk is full as the store is created: nothing is left of it
    if (tmp / "store").exists():
        raise AssertionError(f"a store whose creation failed was left: {sorted(os.listdir(tmp / 'store'))}")
    if _index(tmp, source)[0] != 0:
        raise AssertionError("indexing the first documents failed")
    full(source, more)  # the disk fills up part-way through
    code, out = _index(tmp, source, more)
    if code != 0:
        raise AssertionError(f"the same command after space came back: exit {code}, {out[-400:]}")

    def rows(store: Path) -> list[Any]:
        conn = sqlite3.connect(f"file:{store / 'graph.sqlite'}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT id, content, metadata FROM documents ORDER BY id").fetchall()
        finally:
            conn.close()

    if rows(tmp / "store") != rows(clean):
        raise AssertionError("after the re-run the store differs from a clean run")
    code, out = _cli("check", "--store", str(tmp / "store"))
    if code != 0:
        raise AssertionError(f"check after the re-run: {out[-400:]}")


CASES = [
    ("inputs/yaml-alias-bomb-front-matter-refused", True, yaml_alias_bomb),
    ("inputs/host-metadata-cycles-and-bombs-named", True, host_metadata_cycles_and_bombs),
    ("inputs/metadata-capped-per-record", True, metadata_cap_per_record),
    ("inputs/sparse-file-refused-from-size", True, sparse_file_refused_from_size),
    ("inputs/binary-sniff-reads-a-few-kib", True, binary_sniff_bounded),
    ("inputs/large-text-file-not-loaded", True, large_text_file_not_loaded),
    ("inputs/symlinks-stay-in-the-folder", True, symlinks_stay_in_the_folder),
    ("inputs/follow-symlinks-walks-loops-once", True, follow_symlinks_walks_loops_once),
    ("inputs/fifo-never-blocks", True, fifo_never_blocks),
    ("inputs/vanished-and-swapped-files-skipped", True, vanished_and_swapped_files),
    ("inputs/unreadable-file-skipped", True, unreadable_file_skipped),
    ("inputs/disk-full-one-line-and-rerunnable", True, disk_full_is_one_line_and_rerunnable),
]
