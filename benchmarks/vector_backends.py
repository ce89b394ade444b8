"""Why LocalVectorStore is numpy exact search: the embedded candidates, measured side by side.

For N x 384 clustered unit vectors (default 10,000 and 100,000), top 50, with and without a
10 % payload filter: LocalVectorStore (numpy, exact), qdrant-edge-py (Qdrant's Rust engine
in process, HNSW after ``optimize()``) and qdrant-client local mode (pure Python; only at
the smaller size by default, it is a linear scan in Python). Reports p50/p99, build time
and recall@50 against exact search.

    python benchmarks/vector_backends.py [--sizes 10000,100000] [--queries Q] [--qdrant-client-max N] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, latency_ms, write_results
from embedded_vector_search import clustered

from graphfuse import VectorRecord
from graphfuse.stores import LocalVectorStore

DIMENSION = 384
LIMIT = 50


def recall(found: list[list[int]], exact: list[list[int]]) -> float:
    return float(np.mean([len(set(f) & set(e)) / max(1, len(e)) for f, e in zip(found, exact, strict=True)]))


def run_queries(search: Any, queries: np.ndarray) -> tuple[dict[str, float], list[list[int]]]:
    samples, results = [], []
    for q in queries:
        t = time.perf_counter()
        hits = search(q)
        samples.append(time.perf_counter() - t)
        results.append(hits)
    return latency_ms(samples), results


async def local_store(data: np.ndarray, tenants: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    store = LocalVectorStore()
    t = time.perf_counter()
    await store.upsert([VectorRecord(str(i), data[i].tolist(), {"tenant": int(tenants[i])}) for i in range(len(data))])
    build = time.perf_counter() - t
    loop_rows = []
    for label, flt in (("no filter", None), ("filter 10 %", {"tenant": 3})):
        samples, results = [], []
        for q in queries:
            t = time.perf_counter()
            hits = await store.search(q.tolist(), limit=LIMIT, filter=flt)
            samples.append(time.perf_counter() - t)
            results.append([int(h.id) for h in hits])
        loop_rows.append(
            {
                "engine": "LocalVectorStore (numpy exact)",
                "query": label,
                **latency_ms(samples),
                "build_s": build,
                "_results": results,
            }
        )
    await store.close()
    return loop_rows


def qdrant_edge(data: np.ndarray, tenants: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    import qdrant_edge as q

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        config = q.EdgeConfig(vectors={"": q.EdgeVectorParams(size=DIMENSION, distance=q.Distance.Cosine)})
        shard = q.EdgeShard.create(tmp, config)
        for i in range(0, len(data), 5000):
            shard.update(
                q.UpdateOperation.upsert_points(
                    [
                        q.Point(j, data[j].tolist(), {"tenant": int(tenants[j])})
                        for j in range(i, min(len(data), i + 5000))
                    ]
                )
            )
        shard.optimize()
        build = time.perf_counter() - t
        flt = q.Filter(must=[q.FieldCondition(key="tenant", match=q.MatchValue(3))])
        for label, f in (("no filter", None), ("filter 10 %", flt)):
            stats, results = run_queries(
                lambda v, f=f: [
                    int(p.id)
                    for p in shard.query(q.QueryRequest(limit=LIMIT, query=q.Query.Nearest(v.tolist()), filter=f))
                ],
                queries,
            )
            rows.append(
                {
                    "engine": "qdrant-edge-py 0.9 (HNSW, optimised)",
                    "query": label,
                    **stats,
                    "build_s": build,
                    "_results": results,
                }
            )
        shard.close()
    return rows


def qdrant_client_local(data: np.ndarray, tenants: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(":memory:")
    t = time.perf_counter()
    client.create_collection("b", vectors_config=models.VectorParams(size=DIMENSION, distance=models.Distance.COSINE))
    for i in range(0, len(data), 2000):
        client.upsert(
            "b",
            [
                models.PointStruct(id=j, vector=data[j].tolist(), payload={"tenant": int(tenants[j])})
                for j in range(i, min(len(data), i + 2000))
            ],
        )
    build = time.perf_counter() - t
    flt = models.Filter(must=[models.FieldCondition(key="tenant", match=models.MatchValue(value=3))])
    rows = []
    for label, f in (("no filter", None), ("filter 10 %", flt)):
        stats, results = run_queries(
            lambda v, f=f: [
                int(p.id) for p in client.query_points("b", query=v.tolist(), limit=LIMIT, query_filter=f).points
            ],
            queries,
        )
        rows.append(
            {
                "engine": "qdrant-client local mode (:memory:)",
                "query": label,
                **stats,
                "build_s": build,
                "_results": results,
            }
        )
    client.close()
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/vector_backends.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "vector_backends.json")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--qdrant-client-max", type=int, default=10_000)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"{n} vectors ...", flush=True)
        data = clustered(n, DIMENSION)
        tenants = np.arange(n) % 10
        rng = np.random.default_rng(1)
        queries = data[rng.integers(0, n, args.queries)] + 0.3 * rng.standard_normal((args.queries, DIMENSION)).astype(
            np.float32
        )
        block = await local_store(data, tenants, queries)
        exact = {r["query"]: r["_results"] for r in block}
        engines = [block, qdrant_edge(data, tenants, queries)]
        if n <= args.qdrant_client_max:
            engines.append(qdrant_client_local(data, tenants, queries))
        for engine_rows in engines:
            for r in engine_rows:
                r["recall@50"] = recall(r.pop("_results"), exact[r["query"]])
                rows.append({"vectors": n, **r})
    write_results(args.out, "vector_backends", {"dimension": DIMENSION, "limit": LIMIT, "queries": args.queries}, rows)


if __name__ == "__main__":
    asyncio.run(main())
