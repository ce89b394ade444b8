"""One writer process and several reader processes on one SQLiteGraphStore file.

The writer adds batches of documents and relations; readers keep reading while it writes.
Every read must see whole batches only (one transaction each), readers must see the
writer's latest data (their cached adjacency is invalidated across processes), and at the
end the counts are exact and ``PRAGMA integrity_check`` is ``ok``.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing as mp
import sqlite3
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest

from graphfuse import Document, Relation
from graphfuse.stores import SQLiteGraphStore

BATCHES = 25
PER_BATCH = 40


def _ids(batch: int) -> list[str]:
    return [f"b{batch:03d}-{i:03d}" for i in range(PER_BATCH)]


async def _write(path: str) -> None:
    store = SQLiteGraphStore(path)
    for b in range(BATCHES):
        ids = _ids(b)
        await store.store_documents([Document(i, f"text {i}", {"batch": b}) for i in ids])
        rels = [Relation(a, c) for a, c in itertools.pairwise(ids)]
        if b:  # chain each batch to the previous one: the graph keeps growing from b000-000
            rels.append(Relation(_ids(b - 1)[-1], ids[0]))
        await store.create_relations(rels)
    await store.close()


def writer(path: str, done: Event) -> None:
    try:
        asyncio.run(_write(path))
    finally:
        done.set()


async def _read(path: str, done: Event) -> list[str]:
    problems: list[str] = []
    store = SQLiteGraphStore(path)
    while True:
        finished = done.is_set()
        count = await store.count_documents()
        if count % PER_BATCH:
            problems.append(f"saw {count} documents: a batch was half-visible")
        reached = await store.related(["b000-000"], depth=3)
        present = await store.get_documents([r.id for r in reached])
        if len(present) != len(reached):
            problems.append("related() returned a document that does not exist")
        ranks = await store.pagerank()
        if ranks and abs(max(ranks.values()) - 1.0) > 1e-9:
            problems.append("pagerank not normalised")
        if finished:
            break
    # After the writer is done, the reader's cached adjacency must follow its last writes.
    last = _ids(BATCHES - 1)
    tail = {r.id for r in await store.related([last[0]], depth=1)}
    if tail != {last[1], _ids(BATCHES - 2)[-1]}:
        problems.append(f"reader did not see the last batch's relations: {sorted(tail)}")
    if await store.count_documents() != BATCHES * PER_BATCH:
        problems.append("reader's final count is wrong")
    await store.close()
    return problems


def reader(path: str, done: Event, results: mp.Queue) -> None:  # type: ignore[type-arg]
    try:
        results.put(asyncio.run(_read(path, done)))
    except BaseException as exc:
        results.put([f"reader crashed: {type(exc).__name__}: {exc}"])


@pytest.mark.slow
def test_one_writer_many_readers(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    asyncio.run(SQLiteGraphStore(path).close())  # create the file before the race starts
    ctx = mp.get_context("spawn")
    done = ctx.Event()
    results = ctx.Queue()
    readers = [ctx.Process(target=reader, args=(path, done, results)) for _ in range(3)]
    write = ctx.Process(target=writer, args=(path, done))
    for p in readers:
        p.start()
    write.start()
    write.join(120)
    outcomes = [results.get(timeout=120) for _ in readers]
    for p in readers:
        p.join(30)
    assert write.exitcode == 0
    assert outcomes == [[], [], []]

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == BATCHES * PER_BATCH
    assert conn.execute("SELECT count(*) FROM relations").fetchone()[0] == BATCHES * PER_BATCH - 1
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()
