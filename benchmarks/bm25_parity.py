"""BM25 parity: GraphFuse's ``BM25Index`` against a plain BM25, recall side by side on every set.

Usage: ``python benchmarks/bm25_parity.py DATA_DIR [--out FILE]``: every ``DATA_DIR/<set>/``
holding ``corpus.jsonl`` and ``queries.jsonl`` (the eval's formats) is measured.

The plain BM25 is ``rank_bm25.BM25Okapi`` (k1 1.5, b 0.75, its epsilon-floored idf) over
lower-cased ``[a-z0-9]+`` tokens of title + text, as the benchmark READMEs define it. GraphFuse's
is ``BM25Index`` with its defaults (its own tokeniser: letters and digits, joined names split,
accents folded, stopwords dropped; Lucene's idf). Both rank title + text; recall is
|top-k ∩ gold| / |gold| averaged over the questions. Reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, write_results

from graphfuse.multihop import BM25Index

_PLAIN = re.compile(r"[a-z0-9]+")


def _recall(ranked: list[str], gold: list[str], k: int) -> float:
    return len(set(ranked[:k]) & set(gold)) / len(gold)


def measure(directory: Path) -> dict[str, Any]:
    with (directory / "corpus.jsonl").open(encoding="utf-8") as fh:
        corpus = [json.loads(line) for line in fh if line.strip()]
    with (directory / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    ids = [c["id"] for c in corpus]
    texts = [f"{c.get('title') or ''} {c['text']}" for c in corpus]
    started = time.perf_counter()
    plain = BM25Okapi([_PLAIN.findall(t.lower()) for t in texts], k1=1.5, b=0.75)
    plain_build = time.perf_counter() - started
    started = time.perf_counter()
    ours = BM25Index(zip(ids, texts, strict=True))
    ours_build = time.perf_counter() - started
    scores: dict[str, list[float]] = {
        k: [] for k in ("plain_r2", "plain_r5", "plain_r10", "ours_r2", "ours_r5", "ours_r10")
    }
    for q in queries:
        s = plain.get_scores(_PLAIN.findall(q["question"].lower()))
        top = [ids[i] for i in np.argsort(-s, kind="stable")[:10]]
        mine = [doc_id for doc_id, _ in ours.search(q["question"], 10)]
        for k in (2, 5, 10):
            scores[f"plain_r{k}"].append(_recall(top, q["gold_ids"], k))
            scores[f"ours_r{k}"].append(_recall(mine, q["gold_ids"], k))
    row: dict[str, Any] = {"set": directory.name, "passages": len(corpus), "queries": len(queries)}
    for key, values in scores.items():
        row[key] = round(float(np.mean(values)), 3)
    row["plain_build_s"] = round(plain_build, 2)
    row["ours_build_s"] = round(ours_build, 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/bm25_parity.py", description=__doc__)
    parser.add_argument("data", type=Path, help="directory of <set>/corpus.jsonl + queries.jsonl")
    parser.add_argument("--out", type=Path, default=RESULTS / "bm25_parity.json")
    args = parser.parse_args()
    sets = sorted(p for p in args.data.iterdir() if (p / "corpus.jsonl").is_file() and (p / "queries.jsonl").is_file())
    rows = [measure(p) for p in sets]
    write_results(args.out, "bm25_parity", {"plain": "rank_bm25.BM25Okapi k1=1.5 b=0.75 [a-z0-9]+"}, rows)


if __name__ == "__main__":
    main()
