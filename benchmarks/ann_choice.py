"""Choosing the approximate vector index (usearch vs faiss HNSW) and the filter strategy.

Synthetic passages (Zipf vocabulary) embedded with the HashingEmbedder (384 d), ``--n``
vectors, ``--queries`` held-out queries. For each engine and setting: build rate (two
threads), single-query p50 and recall@10 against exact numpy; and for faiss, a 10 % tenant
filter applied inside the graph walk (pre-filter: ``IDSelectorBitmap``) vs after it
(post-filter: top 100, then the filter), at the same ``efSearch``.

    python benchmarks/ann_choice.py [--n 20000] [--queries 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, machine
from scale_1m import embed_chunk

TENANTS = 10


def recall(found: list[list[int]], exact: np.ndarray) -> float:
    return round(float(np.mean([len(set(f) & set(e.tolist())) / 10 for f, e in zip(found, exact, strict=True)])), 4)


def timed(fn: Any, queries: np.ndarray) -> tuple[float, list[list[int]]]:
    lat, found = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(fn(q))
        lat.append(time.perf_counter() - t)
    return round(statistics.median(lat) * 1000, 3), found


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/ann_choice.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path, default=RESULTS / "ann_choice.json")
    args = parser.parse_args()
    x = embed_chunk((0, args.n, 0))[2]
    queries = embed_chunk((0, args.queries, 99))[2]
    scores = x @ queries.T
    exact = np.argsort(-scores, axis=0)[:10].T
    tenant = np.arange(args.n) % TENANTS == 3
    exact_f = np.argsort(-np.where(tenant[:, None], scores, -9), axis=0)[:10].T
    rows: list[dict[str, Any]] = []

    from usearch.index import Index

    for dtype in ("f32", "f16", "i8"):
        index = Index(ndim=x.shape[1], metric="cos", dtype=dtype, connectivity=16, expansion_add=128)
        t = time.perf_counter()
        index.add(np.arange(args.n), x, threads=2)
        build = args.n / (time.perf_counter() - t)
        for ef in (64, 128, 256):
            index.expansion_search = ef
            p50, found = timed(lambda q, index=index: index.search(q, 10, threads=1).keys.tolist(), queries)
            rows.append(
                {
                    "engine": f"usearch {dtype} M16 efC128",
                    "ef": ef,
                    "build_per_s": round(build),
                    "p50_ms": p50,
                    "recall_at_10": recall(found, exact),
                }
            )
    import faiss

    for m, efc in ((16, 40), (32, 40)):
        faiss.omp_set_num_threads(2)
        index = faiss.IndexHNSWFlat(x.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = efc
        t = time.perf_counter()
        index.add(x)
        build = args.n / (time.perf_counter() - t)
        faiss.omp_set_num_threads(1)
        bits = np.packbits(tenant, bitorder="little")
        selector = faiss.IDSelectorBitmap(args.n, faiss.swig_ptr(bits))
        for ef in (64, 128, 256):
            plain = faiss.SearchParametersHNSW(efSearch=ef)
            pre = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
            p50, found = timed(lambda q, p=plain, i=index: i.search(q[None], 10, params=p)[1][0].tolist(), queries)
            p50_pre, found_pre = timed(
                lambda q, p=pre, i=index: i.search(q[None], 10, params=p)[1][0].tolist(), queries
            )

            def post(q: np.ndarray, p: Any = plain, i: Any = index) -> list[int]:
                labels = i.search(q[None], 100, params=p)[1][0]
                return [int(label) for label in labels if label >= 0 and tenant[label]][:10]

            p50_post, found_post = timed(post, queries)
            rows.append(
                {
                    "engine": f"faiss HNSWFlat M{m} efC{efc}",
                    "ef": ef,
                    "build_per_s": round(build),
                    "p50_ms": p50,
                    "recall_at_10": recall(found, exact),
                    "filter_pre_p50_ms": p50_pre,
                    "filter_pre_recall": recall(found_pre, exact_f),
                    "filter_post100_p50_ms": p50_post,
                    "filter_post100_recall": recall(found_post, exact_f),
                }
            )
    payload = {
        "benchmark": "ann_choice",
        "machine": machine(),
        "parameters": vars(args) | {"out": str(args.out)},
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
