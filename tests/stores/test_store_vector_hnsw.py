"""LocalVectorStore's approximate (HNSW) index: switching, recall, persistence, rebuilds, crashes.

The threshold is set low so a few thousand small vectors exercise the large-store path.
Recall is measured against the store's own exact scan; nothing here asserts a timing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from graphfuse import InvalidInput, VectorRecord
from graphfuse.stores import LocalVectorStore

DIM = 24
N = 2000
THRESHOLD = 500


def _vectors(n: int = N, seed: int = 0) -> np.ndarray:
    # Clustered data (like embeddings), not uniform noise.
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIM))
    return (centres[rng.integers(0, 40, n)] + 0.6 * rng.normal(size=(n, DIM))).astype(np.float32)


def _records(x: np.ndarray, start: int = 0) -> list[VectorRecord]:
    return [VectorRecord(f"d{start + i}", row.tolist(), {"tenant": (start + i) % 10}) for i, row in enumerate(x)]


async def _filled(path: Path | None, **kwargs: object) -> LocalVectorStore:
    store = LocalVectorStore(path, approximate_threshold=THRESHOLD, **kwargs)  # type: ignore[arg-type]
    await store.upsert(_records(_vectors()))
    return store


async def _recall(store: LocalVectorStore, queries: np.ndarray, flt: dict[str, object] | None = None) -> float:
    found = 0
    for q in queries:
        approx = await store.search(q.tolist(), limit=10, filter=flt)
        exact = await store.search(q.tolist(), limit=10, filter=flt, exact=True)
        found += len({h.id for h in approx} & {h.id for h in exact})
    return found / (10 * len(queries))


def _index_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if ".hnsw" in p.name and not p.name.endswith(".lock"))


async def test_switches_at_the_threshold_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="graphfuse.stores.vectors")
    x = _vectors()
    store = LocalVectorStore(approximate_threshold=THRESHOLD)
    await store.upsert(_records(x[: THRESHOLD - 1]))
    await store.search(x[0].tolist(), limit=5)
    assert store.index_kind == "exact"
    await store.upsert(_records(x[THRESHOLD - 1 : THRESHOLD], start=THRESHOLD - 1))
    hits = await store.search(x[0].tolist(), limit=5)
    assert store.index_kind == "hnsw"
    assert hits[0].id == "d0"
    assert "reached the approximate-index threshold" in caplog.text
    await store.delete(["d0", "d1"])
    await store.search(x[5].tolist(), limit=5)
    assert store.index_kind == "exact"


async def test_never_switches_without_a_threshold() -> None:
    store = LocalVectorStore(approximate_threshold=None)
    await store.upsert(_records(_vectors()))
    await store.search(_vectors(1, seed=3)[0].tolist(), limit=5)
    assert store.index_kind == "exact"


@pytest.mark.slow
async def test_recall_against_exact_with_and_without_a_tenant_filter() -> None:
    store = await _filled(None)
    queries = _vectors(40, seed=7)
    assert await _recall(store, queries) >= 0.95
    assert await _recall(store, queries, {"tenant": 3}) >= 0.95
    assert store.index_kind == "hnsw"


async def test_ef_search_can_be_changed_on_a_built_index() -> None:
    store = await _filled(None)
    queries = _vectors(40, seed=7)
    assert store.ef_search == 192
    store.ef_search = 4  # a narrow beam misses true neighbours...
    narrow = await _recall(store, queries)
    store.ef_search = 128  # ...and a wide one finds them again, without a rebuild
    assert await _recall(store, queries) >= 0.95 > narrow
    assert store.index_kind == "hnsw"
    for bad in (0, -1, True, 2.5, "64"):
        with pytest.raises(InvalidInput, match="ef_search"):
            store.ef_search = bad  # type: ignore[assignment]
    assert store.ef_search == 128  # the last valid value stays


@pytest.mark.slow
async def test_incremental_writes_are_searchable_and_deletes_disappear() -> None:
    store = await _filled(None)
    x = _vectors()
    await store.search(x[0].tolist(), limit=1)  # builds the index
    fresh = _vectors(5, seed=11)
    await store.upsert(_records(fresh, start=N))
    await store.upsert([VectorRecord("d1", fresh[0].tolist(), {"tenant": 1})])  # replace: moves d1
    await store.delete(["d2"])
    top = await store.search(fresh[1].tolist(), limit=1)
    assert top[0].id == f"d{N + 1}"
    near_fresh0 = {h.id for h in await store.search(fresh[0].tolist(), limit=2)}
    assert near_fresh0 == {"d1", f"d{N}"}
    assert "d2" not in {h.id for h in await store.search(x[2].tolist(), limit=10)}
    assert await store.count() == N + 4
    assert await _recall(store, _vectors(20, seed=8)) >= 0.95


@pytest.mark.slow
async def test_index_survives_a_restart(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "v.sqlite"
    store = await _filled(path)
    assert await store.build_index() == "hnsw"
    await store.close()
    assert len(_index_files(path)) == 2  # header + one index file
    caplog.set_level(logging.INFO, logger="graphfuse.stores.vectors")
    reopened = LocalVectorStore(path, approximate_threshold=THRESHOLD)
    assert reopened.index_kind == "hnsw"  # loaded at open, not rebuilt
    assert await _recall(reopened, _vectors(20, seed=9)) >= 0.95
    assert "building" not in caplog.text
    await reopened.close()


@pytest.mark.slow
async def test_own_writes_are_saved_at_close(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "v.sqlite"
    store = await _filled(path)
    await store.build_index()
    await store.upsert(_records(_vectors(3, seed=12), start=N))
    await store.close()
    caplog.set_level(logging.INFO, logger="graphfuse.stores.vectors")
    reopened = LocalVectorStore(path, approximate_threshold=THRESHOLD)
    assert reopened.index_kind == "hnsw"
    hit = await reopened.search(_vectors(3, seed=12)[2].tolist(), limit=1)
    assert hit[0].id == f"d{N + 2}"
    assert "building" not in caplog.text
    await reopened.close()


@pytest.mark.slow
async def test_stale_index_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "v.sqlite"
    store = await _filled(path)
    await store.build_index()
    await store.close()
    # Another writer that never uses the index (it stays below its own threshold).
    other = LocalVectorStore(path, approximate_threshold=None)
    fresh = _vectors(1, seed=13)
    await other.upsert(_records(fresh, start=N))
    await other.close()
    caplog.set_level(logging.INFO, logger="graphfuse.stores.vectors")
    reopened = LocalVectorStore(path, approximate_threshold=THRESHOLD)
    assert reopened.index_kind == "exact"  # the saved index is of an older generation
    hit = await reopened.search(fresh[0].tolist(), limit=1)
    assert hit[0].id == f"d{N}"
    assert reopened.index_kind == "hnsw"
    assert "building" in caplog.text
    await reopened.close()
    assert len(_index_files(path)) == 2  # the old index file is gone


@pytest.mark.slow
async def test_concurrent_writer_makes_a_live_index_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    reader = await _filled(path)
    await reader.build_index()
    writer = LocalVectorStore(path, approximate_threshold=None)
    fresh = _vectors(1, seed=14)
    await writer.upsert(_records(fresh, start=N))
    await writer.close()
    hit = await reader.search(fresh[0].tolist(), limit=1)
    assert hit[0].id == f"d{N}"
    await reader.close()


def _remove_index_files(directory: Path) -> None:
    for p in directory.glob("*.faiss"):
        p.unlink()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["missing", "garbage", "index file gone", "wrong dimension"])
async def test_missing_or_damaged_index_is_rebuilt(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "v.sqlite"
    store = await _filled(path)
    await store.build_index()
    await store.close()
    header = tmp_path / "v.sqlite.hnsw.json"
    if damage == "missing":
        header.unlink()
    elif damage == "garbage":
        header.write_bytes(b"\x00not json")
    elif damage == "index file gone":
        _remove_index_files(tmp_path)
    else:
        meta = json.loads(header.read_text())
        meta["dimension"] = DIM + 1
        header.write_text(json.dumps(meta))
    reopened = LocalVectorStore(path, approximate_threshold=THRESHOLD)
    assert reopened.index_kind == "exact"
    assert await _recall(reopened, _vectors(10, seed=15)) >= 0.95
    assert reopened.index_kind == "hnsw"
    await reopened.close()
    again = LocalVectorStore(path, approximate_threshold=THRESHOLD)
    assert again.index_kind == "hnsw"
    await again.close()


_REBUILD = textwrap.dedent(
    """
    import asyncio, sys
    from graphfuse.stores import LocalVectorStore

    async def main():
        store = LocalVectorStore(sys.argv[1], approximate_threshold=1000)
        print("building", flush=True)
        await store.build_index()
        print("built", flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
    """
)


def _kill_while_rebuilding(path: Path) -> int:
    child = subprocess.Popen([sys.executable, "-c", _REBUILD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "building"
        # Kill it while it writes the index file if we catch that moment, else mid-build.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if any(p.name.endswith(".tmp") for p in path.parent.iterdir()):
                break
            time.sleep(0.001)
        child.send_signal(signal.SIGKILL)
        return child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()


def _leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_kill_during_rebuild_leaves_the_store_usable(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    big = np.random.default_rng(1).normal(size=(8_000, 96)).astype(np.float32)

    async def fill() -> None:
        store = LocalVectorStore(path, approximate_threshold=None)
        await store.upsert([VectorRecord(f"d{i}", row.tolist(), {}) for i, row in enumerate(big)])
        await store.close()

    async def reopen() -> tuple[int, str, str]:
        store = LocalVectorStore(path, approximate_threshold=1000)
        count = await store.count()
        hit = await store.search(big[123].tolist(), limit=1)
        kind = store.index_kind
        await store.close()
        return count, hit[0].id, kind

    asyncio.run(fill())
    assert _kill_while_rebuilding(path) == -signal.SIGKILL
    assert asyncio.run(reopen()) == (8_000, "d123", "hnsw")
    # The rebuild after the crash saved a whole index and swept the leftovers.
    assert not _leftovers(tmp_path)
    assert len(_index_files(path)) == 2


async def test_without_faiss_the_store_stays_exact_and_warns(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # `import faiss` now raises ImportError
    store = await _filled(None)
    hits = await store.search(_vectors()[4].tolist(), limit=1)
    assert hits[0].id == "d4"
    assert store.index_kind == "exact"
    assert "faiss is not installed" in caplog.text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"approximate_threshold": 0}, "approximate_threshold"),
        ({"approximate_threshold": "big"}, "approximate_threshold"),
        ({"approximate_threshold": True}, "approximate_threshold"),
        ({"ef_search": 0}, "ef_search"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        LocalVectorStore(**kwargs)  # type: ignore[arg-type]
