"""Ingest into a LocalStore, embedding excluded (target >= 5,000 docs/s).

Documents go to the graph store, precomputed 384-d vectors to the vector store and
5 relations per document to the graph, in batches of ``--batch`` documents, as an indexer
would after embedding. Reports documents/s for each part and for the whole.

    python benchmarks/embedded_ingest.py [--documents N] [--batch B] [--out FILE]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments, synthetic_documents, synthetic_relations, write_results
from embedded_vector_search import clustered

from graphfuse import Relation, VectorRecord
from graphfuse.stores import LocalStore


async def main() -> None:
    args = arguments("embedded_ingest", __doc__.splitlines()[0], documents=100_000, batch=1_000)
    n, size = args.documents, args.batch
    documents = synthetic_documents(n)
    relations = synthetic_relations(n, 5 * n)
    vectors = clustered(n, 384)
    # Relations of a batch may only point at documents already stored: send each relation
    # with the batch that stores the later of its two ends.
    by_batch: list[list[Relation]] = [[] for _ in range((n + size - 1) // size)]
    for r in relations:
        by_batch[max(int(r.source[4:]), int(r.target[4:])) // size].append(r)
    spent = {"documents": 0.0, "vectors": 0.0, "relations": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore.open(Path(tmp) / ".graphfuse")
        started = time.perf_counter()
        for b, start in enumerate(range(0, n, size)):
            docs = documents[start : start + size]
            t = time.perf_counter()
            await store.graph.store_documents(docs)
            t2 = time.perf_counter()
            await store.vectors.upsert(
                [VectorRecord(d.id, vectors[start + k].tolist(), dict(d.metadata)) for k, d in enumerate(docs)]
            )
            t3 = time.perf_counter()
            await store.graph.create_relations(by_batch[b])
            t4 = time.perf_counter()
            spent["documents"] += t2 - t
            spent["vectors"] += t3 - t2
            spent["relations"] += t4 - t3
        total = time.perf_counter() - started
        manifest = await store.arefresh_manifest()
        await store.aclose()
    rows = [
        {"part": "graph.store_documents", "seconds": spent["documents"], "documents_per_s": n / spent["documents"]},
        {"part": "vectors.upsert (384-d)", "seconds": spent["vectors"], "documents_per_s": n / spent["vectors"]},
        {
            "part": "graph.create_relations (5 per doc)",
            "seconds": spent["relations"],
            "documents_per_s": n / spent["relations"],
        },
        {"part": "all of it", "seconds": total, "documents_per_s": n / total},
    ]
    parameters = {
        "documents": n,
        "relations": 5 * n,
        "batch": size,
        "target_documents_per_s": 5000,
        "counts": manifest["counts"],
    }
    write_results(args.out, "embedded_ingest", parameters, rows)


if __name__ == "__main__":
    asyncio.run(main())
