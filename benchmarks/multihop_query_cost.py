"""Query cost on a chunked documentation store: hybrid against multihop, in one run.

Usage::

    graphfuse index /work/shared/data/docs_pydantic/corpus --store /tmp/docs-store --embedder local
    python benchmarks/multihop_query_cost.py --store /tmp/docs-store \\
        --queries /work/shared/data/docs_pydantic/queries.jsonl [--rounds 5] [--out FILE]

Both presets run over the same opened store (``open_store(..., mode="ro")``), built once each as
``graphfuse query`` builds them. Every query's vector is computed before timing and handed back by
the embedder instead of being computed again, so the figures are retrieval alone: vector search,
BM25, graph and passages. Queries alternate between the two pipelines, one untimed pass first;
the result is the median, p95 and mean wall time per query (ms), the mean CPU time of the process
(all its threads: on a busy machine the wall time also holds the waits for a CPU slice that each
hand-over to a worker thread risks), and multihop's figures over hybrid's. Reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, write_results

from graphfuse.stores import aopen_store

PIPELINES = ("hybrid", "multihop")


def _questions(path: str) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


async def _run(args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    questions = _questions(args.queries)
    store = await aopen_store(args.store, mode="ro")
    try:
        embedder = store.embedder
        vectors = {q: await embedder.embed_query(q) for q in questions}

        async def precomputed(text: str) -> list[float]:
            return list(vectors[text])

        # The store's own embedder object (its identity is checked), answering from the table.
        embedder.embed_query = precomputed  # type: ignore[method-assign]
        pipelines = {name: await store.apipeline(name) for name in PIPELINES}
        times: dict[str, list[float]] = {name: [] for name in PIPELINES}
        cpu: dict[str, list[float]] = {name: [] for name in PIPELINES}
        for q in questions:  # untimed pass: corpus indexes, caches and lazy imports
            for pipeline in pipelines.values():
                await pipeline.aretrieve(q, top_k=args.top_k)
        for _ in range(args.rounds):
            for q in questions:
                for name, pipeline in pipelines.items():
                    t, c = time.perf_counter(), time.process_time()
                    await pipeline.aretrieve(q, top_k=args.top_k)
                    times[name].append((time.perf_counter() - t) * 1000)
                    cpu[name].append((time.process_time() - c) * 1000)
        count = await store.vectors.count()
    finally:
        await store.aclose()
    rows = []
    for name in PIPELINES:
        ms = sorted(times[name])
        rows.append(
            {
                "pipeline": name,
                "median_ms": round(statistics.median(ms), 2),
                "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
                "mean_ms": round(statistics.fmean(ms), 2),
                "cpu_mean_ms": round(statistics.fmean(cpu[name]), 2),
            }
        )
    rows.append(
        {
            "pipeline": "multihop / hybrid",
            "median_ms": round(rows[1]["median_ms"] / rows[0]["median_ms"], 2),
            "mean_ms": round(rows[1]["mean_ms"] / rows[0]["mean_ms"], 2),
            "cpu_mean_ms": round(rows[1]["cpu_mean_ms"] / rows[0]["cpu_mean_ms"], 2),
        }
    )
    parameters = {
        "store": args.store,
        "queries": args.queries,
        "n_queries": len(questions),
        "rounds": args.rounds,
        "top_k": args.top_k,
        "vectors": count,
    }
    return parameters, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS / "multihop_query_cost.json")
    args = parser.parse_args()
    parameters, rows = asyncio.run(_run(args))
    write_results(args.out, "multihop_query_cost", parameters, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
