"""LocalVectorStore search, 100,000 x 384, top 50.

Unit vectors with a little cluster structure; queries are perturbed stored vectors.
Reports p50/p99 without a filter, with a 10 % tenant filter, with a 1 % range filter and with
``min_score`` (target: p50 < 10 ms unfiltered), in memory and persisted (same code path
once loaded), plus the time to reopen a persisted store.

    python benchmarks/embedded_vector_search.py [--vectors N] [--dimension D] [--queries Q] [--out FILE]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments, latency_ms, write_results

from graphfuse import VectorRecord
from graphfuse.stores import LocalVectorStore


def clustered(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((256, d)).astype(np.float32)
    data = centres[rng.integers(0, 256, n)] + 0.6 * rng.standard_normal((n, d)).astype(np.float32)
    out: np.ndarray = data / np.linalg.norm(data, axis=1, keepdims=True)
    return out


async def measure(store: LocalVectorStore, queries: np.ndarray, **kwargs: object) -> dict[str, float]:
    samples: list[float] = []
    for q in queries:
        t = time.perf_counter()
        await store.search(q.tolist(), limit=50, **kwargs)  # type: ignore[arg-type]
        samples.append(time.perf_counter() - t)
    stats: dict[str, float] = latency_ms(samples[5:])
    return stats


async def main() -> None:
    args = arguments("embedded_vector_search", __doc__.splitlines()[0], vectors=100_000, dimension=384, queries=200)
    n, d = args.vectors, args.dimension
    data = clustered(n, d)
    rng = np.random.default_rng(1)
    picks = rng.integers(0, n, args.queries + 5)
    queries = data[picks] + 0.3 * rng.standard_normal((picks.size, d)).astype(np.float32)
    records = [
        VectorRecord(f"doc-{i:07d}", row, {"tenant": f"t{i % 10}", "year": 2000 + i % 100})
        for i, row in enumerate(data.tolist())
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.sqlite"
        for label, location in (("in memory", None), ("persisted", path)):
            store = LocalVectorStore(location)
            t = time.perf_counter()
            for i in range(0, n, 10_000):
                await store.upsert(records[i : i + 10_000])
            upsert_s = time.perf_counter() - t
            rows.append({"store": label, "query": "top 50", **await measure(store, queries)})
            rows.append(
                {
                    "store": label,
                    "query": "top 50, tenant filter (10 %)",
                    **await measure(store, queries, filter={"tenant": "t3"}),
                }
            )
            rows.append(
                {
                    "store": label,
                    "query": "top 50, year == 2042 (1 %)",
                    **await measure(store, queries, filter={"year": {"$gte": 2042, "$lt": 2043}}),
                }
            )
            rows.append(
                {"store": label, "query": "top 50, min_score 0.5", **await measure(store, queries, min_score=0.5)}
            )
            rows[-4]["upsert_per_s"] = n / upsert_s
            await store.close()
        t = time.perf_counter()
        reopened = LocalVectorStore(path)
        reopen_s = time.perf_counter() - t
        await reopened.close()
    parameters = {
        "vectors": n,
        "dimension": d,
        "queries": args.queries,
        "target_p50_ms": 10,
        "reopen_s": round(reopen_s, 3),
    }
    write_results(args.out, "embedded_vector_search", parameters, rows)


if __name__ == "__main__":
    asyncio.run(main())
