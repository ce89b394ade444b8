"""The non-model stages on the embedded store.

100,000 documents and 500,000 relations in a SQLiteGraphStore on disk. Each query starts
from 50 seed candidates (as the semantic stage would hand over: ids and a ``semantic``
signal) and runs hydrate -> graph expansion (depth 2, capped at 100) -> temporal decay ->
PageRank -> access popularity -> weighted scoring. Reports p50/p99 per stage and end to end
(targets: p50 < 5 ms, p99 < 20 ms), warm (adjacency built and PageRank persisted first).

    python benchmarks/embedded_stages.py [--documents N] [--relations M] [--queries Q] [--out FILE]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments, batches, latency_ms, synthetic_documents, synthetic_relations, write_results

from graphfuse import Candidate, Document, Pipeline, Query, RunContext, Stage
from graphfuse.hosts import StageRunContext
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import AccessPopularity, GraphExpansion, Hydrate, PageRank, TemporalDecay
from graphfuse.stores import SQLiteGraphStore

SEEDS = 50


class Seeds:
    """Stands in for the semantic stage: hands over fixed candidates (ids + semantic signal)."""

    name = "seeds"

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return list(self.candidates)


async def main() -> None:
    args = arguments("embedded_stages", __doc__.splitlines()[0], documents=100_000, relations=500_000, queries=300)
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteGraphStore(Path(tmp) / "graph.sqlite")
        print(f"building {args.documents} documents / {args.relations} relations ...", flush=True)
        for docs in batches(synthetic_documents(args.documents), 10_000):
            await store.store_documents(docs)
        for rels in batches(synthetic_relations(args.documents, args.relations), 50_000):
            await store.create_relations(rels)
        started = time.perf_counter()
        await store.refresh_pagerank()
        warm_s = time.perf_counter() - started

        stages: list[Stage] = [
            Hydrate(store),
            GraphExpansion(store, depth=2, max_expansion=100),
            TemporalDecay(),
            PageRank(store),
            AccessPopularity(),
        ]
        scorer = WeightedScorer()
        seeds = Seeds()
        pipeline = Pipeline([seeds, *stages], scorer=scorer)
        query = Query("benchmark query")
        per_stage: dict[str, list[float]] = {s.name: [] for s in stages}
        per_stage["scoring"] = []
        end_to_end: list[float] = []
        pipeline_run: list[float] = []
        sizes: list[int] = []
        for q in range(args.queries + 10):
            picks = rng.choice(args.documents, SEEDS, replace=False)
            seeds.candidates = [
                Candidate(Document(f"doc-{i:07d}"), {"semantic": float(s)})
                for i, s in zip(picks.tolist(), rng.random(SEEDS).tolist(), strict=True)
            ]
            # Stage by stage, timing each.
            candidates: Sequence[Candidate] = seeds.candidates
            context = StageRunContext()
            total_start = time.perf_counter()
            for stage in stages:
                t = time.perf_counter()
                candidates = await stage.run(query, candidates, context)
                if q >= 10:
                    per_stage[stage.name].append(time.perf_counter() - t)
            t = time.perf_counter()
            scorer.score(candidates)
            done = time.perf_counter()
            # The same work through Pipeline (adds validation, tracing, sorting and Result objects).
            p = time.perf_counter()
            await pipeline.aretrieve(query, top_k=10)
            p_done = time.perf_counter()
            if q >= 10:  # the first queries warm caches
                per_stage["scoring"].append(done - t)
                end_to_end.append(done - total_start)
                pipeline_run.append(p_done - p)
                sizes.append(len(candidates))
        await store.close()

    rows = [{"stage": name, **latency_ms(samples)} for name, samples in per_stage.items()]
    rows.append({"stage": "all stages + scoring", **latency_ms(end_to_end)})
    rows.append({"stage": "Pipeline.aretrieve (same stages)", **latency_ms(pipeline_run)})
    parameters = {
        "documents": args.documents,
        "relations": args.relations,
        "queries": args.queries,
        "seed_candidates": SEEDS,
        "graph_depth": 2,
        "max_expansion": 100,
        "mean_candidates_scored": float(np.mean(sizes)),
        "warm_up_s (adjacency build + PageRank persist)": round(warm_s, 3),
        "targets": {"p50_ms": 5, "p99_ms": 20},
    }
    write_results(args.out, "embedded_stages", parameters, rows)


if __name__ == "__main__":
    asyncio.run(main())
