"""PageRank over 1,000,000 relations, beside networkx.pagerank.

Three timings on the same random graph (200,000 documents, 1,000,000 relations, hubs):
the store's first ``pagerank()`` after a write (reads SQLite, builds the CSR, iterates),
the power iteration alone on the CSR, and ``networkx.pagerank`` on a ``DiGraph`` (graph
construction not counted). Also reports how closely the two agree. Target: < 2 s.

    python benchmarks/embedded_pagerank.py [--documents N] [--relations M] [--out FILE]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments, batches, synthetic_documents, synthetic_edges, timed, write_results

from graphfuse import Relation
from graphfuse.stores import SQLiteGraphStore, pagerank_scores


async def main() -> None:
    args = arguments("embedded_pagerank", __doc__.splitlines()[0], documents=200_000, relations=1_000_000)
    n, m = args.documents, args.relations
    src, dst, _ = synthetic_edges(n, m)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteGraphStore(Path(tmp) / "graph.sqlite")
        print(f"building {n} documents / {m} relations ...", flush=True)
        for docs in batches(synthetic_documents(n), 20_000):
            await store.store_documents(docs)
        pairs = list(zip(src.tolist(), dst.tolist(), strict=True))
        for part in batches(pairs, 100_000):
            await store.create_relations([Relation(f"doc-{s:07d}", f"doc-{t:07d}") for s, t in part])
        started = time.perf_counter()
        scores = await store.pagerank()
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        await store.pagerank()
        cached_s = time.perf_counter() - started
        await store.close()
    rows.append(
        {"what": "store.pagerank(), first call after a write (read SQLite, build CSR, iterate)", "seconds": first_s}
    )
    rows.append({"what": "store.pagerank(), cached (every score as a dict)", "seconds": cached_s})

    weights = np.ones(m)
    ours_s, ours = timed(lambda: pagerank_scores(n, src, dst, weights))
    rows.append({"what": "power iteration on the CSR (scipy), alone", "seconds": ours_s})

    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(pairs)
    nx_s, theirs = timed(lambda: nx.pagerank(graph, alpha=0.85, tol=1e-6))
    rows.append({"what": "networkx.pagerank (DiGraph built beforehand)", "seconds": nx_s})

    reference = np.array([theirs[i] for i in range(n)])
    reference /= reference.max()
    top_ours = set(np.argsort(-ours)[:100].tolist())
    top_nx = set(np.argsort(-reference)[:100].tolist())
    store_vs_ours = max(abs(scores[f"doc-{i:07d}"] - ours[i]) for i in range(0, n, 997))
    parameters = {
        "documents": n,
        "relations": m,
        "target_s": 2.0,
        "speedup_vs_networkx": round(nx_s / ours_s, 1),
        "max_abs_difference_vs_networkx (max-normalised)": float(np.abs(ours - reference).max()),
        "top100_overlap_vs_networkx": len(top_ours & top_nx),
        "store_vs_direct_max_abs_difference": store_vs_ours,
    }
    write_results(args.out, "embedded_pagerank", parameters, rows)


if __name__ == "__main__":
    asyncio.run(main())
