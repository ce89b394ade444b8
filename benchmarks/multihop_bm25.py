"""BM25 speed: GraphFuse's scipy-sparse ``BM25Index`` against ``rank_bm25.BM25Okapi`` on one corpus.

Usage: ``python benchmarks/multihop_bm25.py CORPUS.jsonl QUERIES.jsonl`` (the eval's file formats).
Reports build time and the median/p95 per-query scoring time of both, and how often their top-5
agree (they differ on purpose in idf: Lucene's always-positive form against Okapi's with an
epsilon floor). Reports; asserts nothing.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np
from rank_bm25 import BM25Okapi

from graphfuse.multihop import BM25Index, bm25_tokens


def main(corpus_path: str, queries_path: str) -> None:
    with open(corpus_path, encoding="utf-8") as fh:
        corpus = [json.loads(line) for line in fh if line.strip()]
    with open(queries_path, encoding="utf-8") as fh:
        questions = [json.loads(line)["question"] for line in fh if line.strip()]
    texts = [(c["id"], f"{c.get('title') or ''} {c['text']}") for c in corpus]
    t = time.perf_counter()
    ours = BM25Index(texts)
    ours_build = time.perf_counter() - t
    t = time.perf_counter()
    theirs = BM25Okapi([bm25_tokens(text) for _, text in texts])
    theirs_build = time.perf_counter() - t
    ours_times, theirs_times, agree = [], [], 0
    for q in questions:
        t = time.perf_counter()
        a = ours.scores(q)
        ours_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = theirs.get_scores(bm25_tokens(q))
        theirs_times.append(time.perf_counter() - t)
        agree += len(set(np.argsort(-a)[:5].tolist()) & set(np.argsort(-b)[:5].tolist()))
    result = {
        "documents": len(texts),
        "queries": len(questions),
        "graphfuse_build_s": round(ours_build, 3),
        "rank_bm25_build_s": round(theirs_build, 3),
        "graphfuse_query_ms_p50": round(1000 * statistics.median(ours_times), 3),
        "graphfuse_query_ms_p95": round(1000 * float(np.percentile(ours_times, 95)), 3),
        "rank_bm25_query_ms_p50": round(1000 * statistics.median(theirs_times), 3),
        "rank_bm25_query_ms_p95": round(1000 * float(np.percentile(theirs_times, 95)), 3),
        "top5_overlap": round(agree / (5 * len(questions)), 3),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
