"""Run ``multihop`` on documentation stores under the fusion variants of ``variants.patch`` (not landed).

Usage (from the project root, after ``git apply benchmarks/results/multihop/httpx_docs/granularity/variants.patch``)::

    GF_VARIANT=pf python benchmarks/results/multihop/httpx_docs/granularity/grid.py 1,3,5 \\
        LABEL=STORE_DIR:QUERIES.jsonl[:CAP] ...

For every store and ``FUSED_WEIGHT`` multiplier (``GF_FW``; the patch reads ``GF_VARIANT``,
``GF_FW``, ``GF_PPR``, ``GF_SEEDF``, ``GF_TOPN``, ``GF_PB`` when the pipeline is built) it prints
Recall@2, Recall@5 and nDCG@10 of the top 10 results, each scored as its page, at most ``CAP``
results per page when given (as ``benchmarks/passages_docs.py --caps``). It asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _queries(path: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


async def _main(multipliers: list[str], specs: list[str]) -> None:
    from graphfuse.evaluation import ndcg_at_k, recall_at_k
    from graphfuse.stores import aopen_store

    for spec in specs:
        label, _, where = spec.partition("=")
        store_dir, queries_path, *rest = where.split(":")
        queries = _queries(queries_path)
        shape = {"max_per_document": int(rest[0])} if rest else {}
        async with await aopen_store(store_dir, mode="ro") as store:
            for m in multipliers:
                os.environ["GF_FW"] = m
                pipeline = await store.apipeline("multihop")
                totals = [0.0, 0.0, 0.0]
                for q in queries:
                    pages = [r.document_id for r in await pipeline.aretrieve(q["question"], top_k=10, **shape)]
                    gold = q["gold_ids"]
                    totals[0] += recall_at_k(pages, gold, 2)
                    totals[1] += recall_at_k(pages, gold, 5)
                    totals[2] += ndcg_at_k(pages, gold, 10)
                print(label, m, "/".join(f"{t / len(queries):.3f}" for t in totals), flush=True)


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1].split(","), sys.argv[2:]))
