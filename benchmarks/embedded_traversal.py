"""2-hop neighbourhoods on the embedded store, beside networkx.

100,000 documents and 500,000 relations. For one seed and for 50 seeds: the store's
``related(depth=2)`` (all of the neighbourhood, and capped at 100 as the graph stage asks),
and networkx BFS (``single_source_shortest_path_length`` with cutoff 2 on an undirected
``Graph``, merged over the seeds) on the same graph.

    python benchmarks/embedded_traversal.py [--documents N] [--relations M] [--queries Q] [--out FILE]
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments, batches, latency_ms, synthetic_documents, synthetic_edges, write_results

from graphfuse import Relation
from graphfuse.stores import SQLiteGraphStore


def networkx_related(graph: nx.Graph, seeds: list[int], depth: int) -> dict[int, int]:
    found: dict[int, int] = {}
    for seed in seeds:
        for node, distance in nx.single_source_shortest_path_length(graph, seed, cutoff=depth).items():
            if distance and (node not in found or distance < found[node]):
                found[node] = distance
    for seed in seeds:
        found.pop(seed, None)
    return found


async def main() -> None:
    args = arguments("embedded_traversal", __doc__.splitlines()[0], documents=100_000, relations=500_000, queries=200)
    n = args.documents
    src, dst, _ = synthetic_edges(n, args.relations)
    rng = np.random.default_rng(3)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(zip(src.tolist(), dst.tolist(), strict=True))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteGraphStore(Path(tmp) / "graph.sqlite")
        print(f"building {n} documents / {args.relations} relations ...", flush=True)
        for docs in batches(synthetic_documents(n), 20_000):
            await store.store_documents(docs)
        pairs = list(zip(src.tolist(), dst.tolist(), strict=True))
        for part in batches(pairs, 100_000):
            await store.create_relations([Relation(f"doc-{s:07d}", f"doc-{t:07d}") for s, t in part])
        started = time.perf_counter()
        await store.related(["doc-0000000"], depth=1)
        build_s = time.perf_counter() - started
        # networkx's graph is millions of Python objects: without this, every full garbage
        # collection triggered by either side walks them and lands in the p99 of both.
        gc.collect()
        gc.freeze()

        for n_seeds in (1, 50):
            for limit in (None, 100):
                ours, theirs, sizes = [], [], []
                for _ in range(args.queries):
                    seeds = rng.choice(n, n_seeds, replace=False).tolist()
                    ids = [f"doc-{s:07d}" for s in seeds]
                    t = time.perf_counter()
                    related = await store.related(ids, depth=2, limit=limit)
                    ours.append(time.perf_counter() - t)
                    sizes.append(len(related))
                    if limit is None:
                        t = time.perf_counter()
                        expected = networkx_related(graph, seeds, 2)
                        theirs.append(time.perf_counter() - t)
                        got = {r.id: r.distance for r in related}
                        if got != {f"doc-{k:07d}": v for k, v in expected.items()}:
                            raise SystemExit("the store and networkx disagree on a neighbourhood")
                label = f"{n_seeds} seed(s), depth 2, limit {limit}"
                rows.append(
                    {"what": f"store.related: {label}", **latency_ms(ours), "mean_results": float(np.mean(sizes))}
                )
                if theirs:
                    rows.append({"what": f"networkx BFS: {label}", **latency_ms(theirs)})
        await store.close()
    parameters = {
        "documents": n,
        "relations": args.relations,
        "queries": args.queries,
        "adjacency_build_s (first traversal after writes)": round(build_s, 3),
        "checked_equal_to_networkx": True,
    }
    write_results(args.out, "embedded_traversal", parameters, rows)


if __name__ == "__main__":
    asyncio.run(main())
