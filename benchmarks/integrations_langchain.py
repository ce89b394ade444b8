"""Overhead of the GraphFuse LangChain runnables next to LangChain's EnsembleRetriever (reports only).

Same inputs for everything: 50 LangChain Documents (ids in an in-memory GraphFuse graph with
links, timestamps, access counts), served by two static retrievers (one in order, one
reversed). Measured per call, p50 over many repetitions, in one run:

- ``baseline``: the static retriever alone;
- ``graphfuse_chain``: retriever | TemporalDecayRunnable | PageRankRunnable | AccessPopularityRunnable | WeightedFusion
  (sync ``invoke`` and async ``ainvoke``);
- ``graphfuse_rrf_sources``: RunnableParallel(a, b) | WeightedFusion(mode="rrf");
- ``ensemble``: langchain_classic's EnsembleRetriever([a, b]) (weighted RRF);
- ``noop_chain``: the retriever and four runnables that return their input (LangChain's own
  per-step cost: callbacks, config, the sequence), the floor under any four-runnable chain.

The synchronous variants are timed round-robin (one call of each per round), so load from
other processes on a shared machine hits them alike. Overhead = p50 minus the baseline's p50;
the load average at the start is recorded.
Writes benchmarks/results/integrations_langchain.json.
Run: python benchmarks/integrations_langchain.py [--repeats 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import langchain_core
from langchain_classic.retrievers import EnsembleRetriever
from langchain_core.documents import Document as LCDocument
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, RunnableParallel
from langchain_graphfuse import AccessPopularityRunnable, PageRankRunnable, TemporalDecayRunnable, WeightedFusion

import graphfuse
from graphfuse import Document, Relation
from graphfuse.stores import InMemoryGraphStore

N_DOCS = 50
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
RESULTS = Path(__file__).resolve().parent / "results" / "integrations_langchain.json"


def corpus(rng: random.Random) -> tuple[list[LCDocument], InMemoryGraphStore]:
    docs = []
    for i in range(N_DOCS):
        created = NOW - timedelta(days=rng.randint(0, 720))
        docs.append(
            LCDocument(
                id=f"d{i}",
                page_content=f"document {i} about topic {i % 7}",
                metadata={"created_at": created.isoformat(), "access_count": rng.randint(0, 2000)},
            )
        )
    store = InMemoryGraphStore()

    async def load() -> None:
        await store.store_documents([Document(d.id or "", d.page_content, {}) for d in docs])
        pairs = {tuple(sorted(rng.sample(range(N_DOCS), 2))) for _ in range(120)}
        await store.create_relations([Relation(f"d{a}", f"d{b}") for a, b in pairs])
        await store.pagerank()  # build the index once, as a long-running service would have

    asyncio.run(load())
    return docs, store


def p50_sync(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """p50 of each function, timed round-robin (one call of each per round, order rotated).

    Interleaving keeps the comparison fair on a shared machine: a burst of load from another
    process slows every variant alike instead of whichever happened to be running.
    """
    names = list(fns)
    for _ in range(min(20, repeats)):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(repeats):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            fn = fns[name]
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(values) for name, values in times.items()}


def p50_async(fn: Callable[[], Awaitable[Any]], repeats: int) -> float:
    async def run() -> float:
        for _ in range(min(20, repeats)):
            await fn()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            await fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    return asyncio.run(run())


class Noop(Runnable[Any, Any]):
    """A runnable that returns its input, run the way every runnable is (callbacks, config)."""

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(_same, input, config)


def _same(value: Any) -> Any:
    return value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    docs, store = corpus(random.Random(7))
    a: RunnableLambda[str, list[LCDocument]] = RunnableLambda(lambda q: list(docs), name="a")
    b: RunnableLambda[str, list[LCDocument]] = RunnableLambda(lambda q: list(reversed(docs)), name="b")
    clock = lambda: NOW  # noqa: E731
    chain = (
        a
        | TemporalDecayRunnable(clock=clock)
        | PageRankRunnable(store)
        | AccessPopularityRunnable()
        | WeightedFusion({"retrieval": 0.4, "temporal": 0.2, "pagerank": 0.2, "access": 0.2})
    )
    sources = RunnableParallel(a=a, b=b) | WeightedFusion(mode="rrf")
    ensemble = EnsembleRetriever(retrievers=[a, b], weights=[0.5, 0.5])
    noop = a | Noop() | Noop() | Noop() | Noop()
    query = "topic 3"

    # Sanity: everything returns the 50 documents.
    assert len(chain.invoke(query)) == N_DOCS
    assert len(sources.invoke(query)) == N_DOCS
    assert len(ensemble.invoke(query)) == N_DOCS

    r = args.repeats
    load = os.getloadavg()
    timings = p50_sync(
        {
            "baseline": lambda: a.invoke(query),
            "graphfuse_chain": lambda: chain.invoke(query),
            "graphfuse_rrf_sources": lambda: sources.invoke(query),
            "ensemble": lambda: ensemble.invoke(query),
            "noop_chain": lambda: noop.invoke(query),
        },
        r,
    )
    timings["graphfuse_chain_async"] = p50_async(lambda: chain.ainvoke(query), r)
    base = timings["baseline"]
    overhead_ms = {k: round((v - base) * 1000, 3) for k, v in timings.items() if k != "baseline"}
    ens = overhead_ms["ensemble"]
    ratios = {k: round(v / ens, 2) for k, v in overhead_ms.items() if k != "ensemble" and ens > 0}
    out = {
        "benchmark": "integrations_langchain",
        "documents": N_DOCS,
        "repeats": r,
        "load_average_1_5_15": [round(x, 2) for x in load],
        "p50_ms": {k: round(v * 1000, 3) for k, v in timings.items()},
        "p50_overhead_ms": overhead_ms,
        "overhead_ratio_vs_ensemble": ratios,
        # What the four GraphFuse runnables add above four runnables that do nothing.
        "graphfuse_chain_above_noop_ms": round(overhead_ms["graphfuse_chain"] - overhead_ms["noop_chain"], 3),
        "ensemble_from": "langchain_classic.retrievers.EnsembleRetriever",
        "versions": {
            "graphfuse": graphfuse.__version__,
            "langchain_core": langchain_core.__version__,
            "python": platform.python_version(),
        },
        "machine": platform.machine(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    for name, ms in overhead_ms.items():
        ratio = ratios.get(name)
        suffix = f"  ({ratio}x EnsembleRetriever)" if ratio is not None else ""
        print(f"{name:24s} p50 overhead {ms:8.3f} ms{suffix}")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
