"""Sweep the ``multihop`` preset's ``fused`` weight on documentation stores (public API only).

Usage (from the project root, stores filled by ``graphfuse eval --store`` or ``graphfuse index``)::

    python benchmarks/results/multihop/httpx_docs/fused_weight_sweep.py OUT.json \\
        LABEL=STORE_DIR:QUERIES.jsonl[:CAP] ...

For every store and weight (``default`` = the preset's own, then 0 ... 1000) it runs
``store.pipeline("multihop", weights={**MULTIHOP_WEIGHTS, "fused": w})`` on the questions and
records Recall@2, Recall@5 and nDCG@10, each result slot scored as its page
(``Result.document_id``), top 10, at most ``CAP`` results per page when given (as
``benchmarks/passages_docs.py --caps``), else the pipeline's default. It prints and writes
numbers; it asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WEIGHTS = ["default", 0, 10, 20, 30, 40, 50, 60, 80, 100, 120, 160, 200, 300, 1000]


def _queries(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


async def _sweep(label: str, store_dir: str, queries_path: str, cap: int | None) -> dict[str, Any]:
    from graphfuse.evaluation import ndcg_at_k, recall_at_k
    from graphfuse.multihop import MULTIHOP_WEIGHTS
    from graphfuse.stores import aopen_store

    queries = _queries(queries_path)
    shape: dict[str, Any] = {} if cap is None else {"max_per_document": cap}
    row: dict[str, list[float]] = {}
    async with await aopen_store(store_dir, mode="ro") as store:
        for w in WEIGHTS:
            options = {} if w == "default" else {"weights": {**MULTIHOP_WEIGHTS, "fused": float(w)}}
            pipeline = await store.apipeline("multihop", **options)
            totals = [0.0, 0.0, 0.0]
            for q in queries:
                pages = [r.document_id for r in await pipeline.aretrieve(q["question"], top_k=10, **shape)]
                gold = q["gold_ids"]
                totals[0] += recall_at_k(pages, gold, 2)
                totals[1] += recall_at_k(pages, gold, 5)
                totals[2] += ndcg_at_k(pages, gold, 10)
            row[str(w)] = [round(t / len(queries), 4) for t in totals]
            print(label, w, "/".join(f"{x:.3f}" for x in row[str(w)]), flush=True)
    return {"store": store_dir, "queries": queries_path, "max_per_document": cap, "by_weight": row}


async def _main(specs: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {"metrics": "recall@2, recall@5, ndcg@10", "stores": {}}
    for spec in specs:
        label, _, where = spec.partition("=")
        store_dir, queries_path, *rest = where.split(":")
        results["stores"][label] = await _sweep(label, store_dir, queries_path, int(rest[0]) if rest else None)
    return results


if __name__ == "__main__":
    report = asyncio.run(_main(sys.argv[2:]))
    Path(sys.argv[1]).write_text(json.dumps(report, indent=1), encoding="utf-8")
