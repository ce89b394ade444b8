"""Two processes writing one vectors.sqlite stay consistent.

The in-memory matrix used to sync before ``BEGIN IMMEDIATE`` and then record the generation
after its own write as current, so a write by another process in between was never loaded
(598 of 600 vectors seen). A write now checks the generation inside its transaction and
reloads when it was behind; deletes share the path.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import sqlite3
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphfuse import VectorRecord
from graphfuse.stores import LocalVectorStore

DIM = 8
PER_PROCESS = 150


def _record(name: str, i: int) -> VectorRecord:
    rng = np.random.default_rng(abs(hash((name, i))) % 2**32)
    return VectorRecord(f"{name}{i}", (rng.random(DIM) + 0.01).tolist(), {"who": name})


def _steps() -> list[tuple[list[int], int | None]]:
    """Batches of 1-3 vectors; now and then the batch's last vector is deleted again."""
    steps: list[tuple[list[int], int | None]] = []
    i = 0
    while i < PER_PROCESS:
        batch = list(range(i, min(i + 1 + i % 3, PER_PROCESS)))
        i += len(batch)
        steps.append((batch, batch[-1] if len(steps) % 4 == 3 else None))
    return steps


async def _work(path: str, name: str, barrier: Barrier) -> tuple[int, int, int]:
    store = LocalVectorStore(path)
    barrier.wait()  # both start writing together
    for batch, gone in _steps():
        await store.upsert([_record(name, k) for k in batch])
        if gone is not None:
            await store.delete([f"{name}{gone}"])
    barrier.wait()  # both finished writing: nobody writes from here on
    seen = await store.count()
    hits = await store.search([1.0] * DIM, limit=10_000)
    await store.close()
    return seen, len(hits), len({h.id for h in hits})


def worker(path: str, name: str, barrier: Barrier, results: Any) -> None:
    results[name] = asyncio.run(_work(path, name, barrier))


@pytest.mark.slow
def test_two_processes_writing_one_file_each_see_every_vector(tmp_path: Path) -> None:
    path = str(tmp_path / "vectors.sqlite")
    LocalVectorStore(path, dimension=DIM)  # created before the race
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        results = manager.dict()
        barrier = ctx.Barrier(2, timeout=120)
        procs = [ctx.Process(target=worker, args=(path, name, barrier, results)) for name in ("a", "b")]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=180)
            assert p.exitcode == 0
        seen = dict(results)
    on_file = sqlite3.connect(path).execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert on_file == 2 * (PER_PROCESS - sum(gone is not None for _, gone in _steps()))
    assert seen == {"a": (on_file, on_file, on_file), "b": (on_file, on_file, on_file)}


async def test_a_write_between_sync_and_transaction_is_not_lost(tmp_path: Path) -> None:
    """The race made deterministic: B writes right after A's sync, before A's transaction."""
    path = tmp_path / "vectors.sqlite"
    a, b = LocalVectorStore(path, dimension=DIM), LocalVectorStore(path)
    await a.upsert([_record("a", 0)])
    original = a._sync
    cut_in = [_record("b", 0), _record("b", 1)]

    def racing_sync() -> None:
        original()
        if cut_in:
            b._upsert([cut_in.pop(), cut_in.pop()])

    a._sync = racing_sync  # type: ignore[method-assign]
    await a.upsert([_record("a", 1)])
    assert await a.count() == 4
    a._sync = original  # type: ignore[method-assign]
    assert await a.count() == 4
    assert {h.id for h in await a.search([1.0] * DIM, limit=10)} == {"a0", "a1", "b0", "b1"}

    cut_in.extend([_record("b", 2), _record("b", 3)])
    a._sync = racing_sync  # type: ignore[method-assign]
    assert await a.delete(["a0"]) == 1
    a._sync = original  # type: ignore[method-assign]
    assert await a.count() == 5
    assert {h.id for h in await a.search([1.0] * DIM, limit=10)} == {"a1", "b0", "b1", "b2", "b3"}
