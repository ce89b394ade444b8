"""Repeated-query latency with and without the result cache, on the bundled sample (reports, never asserts).

Indexes the bundled 2WikiMultihopQA sample (``graphfuse.data.sample_corpus``) into a temporary
store with the default embedder (MiniLM when ``graphfuse[local]`` is installed, else hashing),
then, for each preset, asks every sample question ``--repeats`` times: without the cache
(``cache=False``), and through a :class:`graphfuse.ResultCache` on the in-process
``InMemoryCacheStore`` and on a private ``redis-server`` (started on a free loopback port when
the binary and ``graphfuse-redis`` are installed). The first cached call of each question is the
miss (it runs the pipeline and stores the results); the rest are hits. Writes
``benchmarks/results/result_cache.json``.

    python benchmarks/result_cache.py [--repeats 5] [--embedder hashing] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, latency_ms, write_results

from graphfuse import CacheStore, Pipeline, Query, Result, ResultCache
from graphfuse.data import sample_corpus, sample_questions
from graphfuse.indexing import Indexer, read_sources
from graphfuse.stores import InMemoryCacheStore, aopen_store, default_embedder

PRESETS = ("minimal", "standard", "multihop")


def _call(pipeline: Pipeline, question: str) -> Callable[[], Awaitable[list[Result]]]:
    return lambda: pipeline.aretrieve(question, top_k=10)


async def _time(call: Any) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def run(repeats: int, embedder: str, redis_url: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    with sample_corpus() as corpus:
        records = list(read_sources([corpus]))
    questions = [q.question for q in sample_questions()]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="graphfuse-bench-") as tmp:
        store = await aopen_store(Path(tmp) / "store", create=True, embedder=embedder)
        try:
            await Indexer.for_records(records, store.graph, store.vectors, store.embedder).aindex(records)
            await store.arefresh_corpus_indexes()
            backends: dict[str, CacheStore] = {"memory": InMemoryCacheStore(max_items=1024)}
            if redis_url is not None:
                from graphfuse_redis import RedisCacheStore

                backends["redis"] = RedisCacheStore(redis_url, namespace="bench")
            for preset in PRESETS:
                pipeline = await store.apipeline(preset)
                for q in questions[:3]:  # warm up: the model, lazily built indexes
                    await pipeline.aretrieve(q, top_k=10, cache=False)
                plain = [await _time(_call(pipeline, q)) for _ in range(repeats) for q in questions]
                rows.append({"preset": preset, "cache": "none", "calls": len(plain), **latency_ms(plain)})
                for name, cache_store in backends.items():
                    rc = ResultCache(cache_store, [store.graph, store.vectors])
                    cached = pipeline.with_result_cache(rc, name=f"preset:{preset}")
                    misses, hits = [], []
                    for q in questions:
                        misses.append(await _time(_call(cached, q)))
                        hits.extend([await _time(_call(cached, q)) for _ in range(repeats)])
                    for kind, samples in (("miss", misses), ("hit", hits)):
                        row = {"preset": preset, "cache": f"{name} {kind}", "calls": len(samples)}
                        rows.append({**row, **latency_ms(samples)})
                    assert rc.counts["hits"] == len(hits), rc.counts  # a benchmark of hits must measure hits
            # What the cache adds to a miss: the stores' generations, a get, encoding, a re-check, a
            # set (the pipeline replaced by results at hand, so only the cache's own work is timed).
            results = await (await store.apipeline("minimal")).aretrieve(questions[0], top_k=10)

            async def at_hand() -> list[Result]:
                return results

            for name, cache_store in backends.items():
                rc = ResultCache(cache_store, [store.graph, store.vectors])
                overhead = []
                for i in range(20 * repeats):
                    query = Query(f"{questions[i % len(questions)]} #{i}")
                    started = time.perf_counter()
                    await rc.fetch("bench", query, (10,), at_hand)
                    overhead.append(time.perf_counter() - started)
                row = {"preset": "(none)", "cache": f"{name} miss overhead", "calls": len(overhead)}
                rows.append({**row, **latency_ms(overhead)})
            for cache_store in backends.values():
                await cache_store.close()
            info = {"documents": await store.graph.count_documents(), "questions": len(questions)}
        finally:
            await store.aclose()
    return rows, info


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/result_cache.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "result_cache.json")
    parser.add_argument("--repeats", type=int, default=5, help="hits timed per question")
    parser.add_argument("--embedder", default=None, help="registered embedder (default: local, else hashing)")
    args = parser.parse_args()
    embedder = args.embedder or default_embedder()[0]
    with ExitStack() as stack:
        redis_url = None
        if shutil.which("redis-server") and importlib.util.find_spec("graphfuse_redis"):
            from redis_cache import redis_server

            redis_url = stack.enter_context(redis_server())
        rows, info = asyncio.run(run(args.repeats, embedder, redis_url))
    parameters = {"embedder": embedder, "repeats": args.repeats, "top_k": 10, **info}
    write_results(args.out, "result_cache", parameters, rows)


if __name__ == "__main__":
    main()
