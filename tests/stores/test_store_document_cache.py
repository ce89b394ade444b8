"""The embedded graph store's decoded-document cache: never a stale read, bounded, optional."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphfuse import Document, InvalidInput
from graphfuse.stores import SQLiteGraphStore
from graphfuse.stores._document_cache import DocumentCache


def _docs(n: int, text: str = "v1") -> list[Document]:
    return [Document(f"d{i}", f"{text} {i}", {"n": i, "tag": "even" if i % 2 == 0 else "odd"}) for i in range(n)]


async def test_a_write_through_another_store_object_is_read_at_once(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    reader, writer = SQLiteGraphStore(path), SQLiteGraphStore(path)
    try:
        await writer.store_documents(_docs(3))
        assert (await reader.get_documents(["d0", "d1"]))["d0"].content == "v1 0"  # now held decoded
        await writer.store_documents([Document("d0", "v2 0", {"n": 0})])
        got = await reader.get_documents(["d0", "d1"])
        assert got["d0"].content == "v2 0"
        assert dict(got["d0"].metadata) == {"n": 0}
        await writer.delete_documents(["d1"])
        assert set(await reader.get_documents(["d0", "d1", "d2"])) == {"d0", "d2"}
    finally:
        await reader.close()
        await writer.close()


async def test_a_write_by_another_process_is_read_at_once(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    store = SQLiteGraphStore(path)
    try:
        await store.store_documents(_docs(2))
        assert (await store.get_document("d1")).content == "v1 1"
        script = textwrap.dedent(
            f"""
            import asyncio
            from graphfuse import Document
            from graphfuse.stores import SQLiteGraphStore

            async def main():
                s = SQLiteGraphStore({str(path)!r})
                await s.store_documents([Document("d1", "from another process")])
                await s.close()

            asyncio.run(main())
            """
        )
        await asyncio.to_thread(subprocess.run, [sys.executable, "-c", script], check=True, timeout=60)
        assert (await store.get_document("d1")).content == "from another process"
    finally:
        await store.close()


async def test_own_writes_and_the_filter_apply_to_held_documents(tmp_path: Path) -> None:
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    try:
        await store.store_documents(_docs(4))
        ids = ["d0", "d1", "d2", "d3"]
        assert set(await store.get_documents(ids)) == set(ids)
        assert set(await store.get_documents(ids, filter={"tag": "even"})) == {"d0", "d2"}
        await store.store_documents([Document("d2", "v2 2", {"n": 2, "tag": "odd"})])
        assert set(await store.get_documents(ids, filter={"tag": "even"})) == {"d0"}
        assert (await store.get_document("d2")).content == "v2 2"
    finally:
        await store.close()


@pytest.mark.parametrize("size", [0, 40, 10_000_000])
async def test_every_cache_size_reads_what_is_stored(tmp_path: Path, size: int) -> None:
    store = SQLiteGraphStore(tmp_path / "g.sqlite", document_cache=size)
    try:
        await store.store_documents(_docs(50))
        for _ in range(3):  # read over and over, in different orders and overlaps
            for start in (0, 7, 31):
                ids = [f"d{i}" for i in range(start, min(50, start + 25))] + ["missing"]
                got = await store.get_documents(ids)
                assert list(got) == ids[:-1]
                assert all(got[i].content == f"v1 {i[1:]}" for i in got)
    finally:
        await store.close()


@pytest.mark.parametrize("size", [-1, 1.5, True, "big"])
def test_a_bad_cache_size_is_refused(tmp_path: Path, size: object) -> None:
    with pytest.raises(InvalidInput, match="document_cache"):
        SQLiteGraphStore(tmp_path / "g.sqlite", document_cache=size)  # type: ignore[arg-type]


def test_the_cache_holds_one_generation_within_its_size() -> None:
    cache = DocumentCache(max_chars=30)
    a, b, c = Document("a", "x" * 10), Document("b", "y" * 10), Document("c", "z" * 10)
    cache.add([(a, 2), (b, 2)], generation=1)
    assert cache.lookup(["a", "b", "c"], 1) == ({"a": a, "b": b}, ["c"])
    assert cache.lookup(["a"], 2) == ({}, ["a"])  # another generation: nothing held counts
    cache.lookup(["a"], 1)  # a is now the most recently used
    cache.add([(c, 2)], generation=1)  # 39 characters > 30: the least recently used (b) goes
    assert cache.lookup(["a", "b", "c"], 1) == ({"a": a, "c": c}, ["b"])
    cache.add([(b, 2)], generation=2)  # a new generation empties it first
    assert len(cache) == 1
    assert cache.lookup(["a", "b"], 2) == ({"b": b}, ["a"])
    cache.add([(Document("big", "w" * 100), 0)], generation=2)  # larger than the cache: not kept
    assert cache.lookup(["big"], 2) == ({}, ["big"])
    assert DocumentCache(0).max_chars == 0
    off = DocumentCache(0)
    off.add([(a, 2)], generation=1)
    assert len(off) == 0
