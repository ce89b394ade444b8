"""BM25 in GraphFuse's uses: its scipy-sparse ``BM25Index`` against ``bm25s``.

Usage::

    python benchmarks/multihop_bm25.py DATA_DIR [--sets docs_pydantic,hotpotqa,...]
        [--store docs_pydantic=STORE_DIR ...] [--out FILE]

Every ``DATA_DIR/<set>/`` holding ``corpus.jsonl`` and ``queries.jsonl`` (the eval's formats) is
indexed as the ``multihop`` preset indexes it (title + text, :func:`graphfuse.multihop.bm25_tokens`,
k1 1.2, b 0.75, Lucene's idf); ``--store SET=DIR`` takes the set's passage index from a store
directory instead (``graphfuse index`` of a documentation folder: its pages split into chunks).
bm25s gets the same tokens, parameters and idf (``method="lucene"``, float64), so any ranking
difference is the library's, not the inputs'. Three uses are timed per query:

- ``passage``: the BM25 stage's search (top 50 over the passage index);
- ``holding``: which of 50 hits hold a word of 8 names (the bridge stage's check);
- ``merged``: an index of groups of passages scored as one text (built once per corpus: the
  document-evidence stage's page index), against bm25s indexing the groups' joined tokens;
- ``load``: the index read back from what a store keeps (ours from its term counts, as the
  corpus cache does; bm25s from its own ``save`` files).

It also reports the share of top-10 lists equal to ours and the largest score difference (bm25s's
scores times k1 + 1: its Lucene form leaves that constant factor out).
Reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, write_results

from graphfuse.multihop import BM25Index, bm25_tokens

SETS = "docs_pydantic,hotpotqa,lihua_world,musique,2wikimultihopqa"


def _ms(times: list[float]) -> float:
    return round(1000 * statistics.median(times), 3)


def _corpus(directory: Path) -> tuple[list[tuple[str, str]], list[str]]:
    with (directory / "corpus.jsonl").open(encoding="utf-8") as fh:
        corpus = [json.loads(line) for line in fh if line.strip()]
    with (directory / "queries.jsonl").open(encoding="utf-8") as fh:
        questions = [json.loads(line)["question"] for line in fh if line.strip()]
    return [(c["id"], f"{c.get('title') or ''} {c['text']}") for c in corpus], questions


async def _store_passages(store: str) -> tuple[list[tuple[str, str]], BM25Index]:
    """The store's passage index (as its ``multihop`` pipeline reads it) and each passage's indexed text."""
    from graphfuse.multihop import CorpusCache
    from graphfuse.stores import aopen_store

    directory = await aopen_store(store, mode="ro")
    try:
        bm25, _ = await CorpusCache(directory.path).aindexes(directory.graph, save=False)
        index = bm25.passages if bm25.passages is not None else bm25
        texts = {}
        async for doc in directory.graph.iter_documents():
            title = doc.metadata.get("title")
            text = doc.content or ""
            texts[doc.id] = f"{title} {text}" if isinstance(title, str) and title.strip() else text
    finally:
        await directory.aclose()
    return [(i, texts[i]) for i in index.ids], index


def measure(name: str, texts: list[tuple[str, str]], questions: list[str], ours: BM25Index | None) -> dict[str, Any]:
    ids = [i for i, _ in texts]
    t = time.perf_counter()
    tokens = [bm25_tokens(text) for _, text in texts]
    tokenise_s = time.perf_counter() - t
    ours_build = None  # read back from the store's corpus cache: no build to time
    if ours is None:
        t = time.perf_counter()
        ours = BM25Index(texts)
        ours_build = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    theirs = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
    theirs.index(tokens, show_progress=False)
    theirs_build = time.perf_counter() - t
    row_of = {d: k for k, d in enumerate(ids)}
    rank = np.empty(len(ids), dtype=np.int64)
    rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    times: dict[str, list[float]] = defaultdict(list)
    same_top10 = 0
    max_gap = 0.0
    for q in questions:
        t = time.perf_counter()
        mine = ours.search(q, 50)
        times["ours_passage"].append(time.perf_counter() - t)
        t = time.perf_counter()
        query = list(dict.fromkeys(bm25_tokens(q)))  # a repeated term counts once, as in BM25Index
        scores = theirs.get_scores(query)
        hits = np.flatnonzero(scores > 0)
        hits = hits[np.lexsort((rank[hits], -scores[hits]))][:50]  # ties by id, as BM25Index.search
        times["bm25s_passage"].append(time.perf_counter() - t)
        their_ids = [ids[i] for i in hits.tolist()]
        same_top10 += [i for i, _ in mine[:10]] == their_ids[:10]
        mine_scores = ours.scores(q)
        # bm25s's Lucene form leaves out the constant factor k1 + 1 (as Lucene 8 does): same order.
        max_gap = max(max_gap, float(np.abs(mine_scores - 2.2 * scores).max()) if len(ids) else 0.0)
        names = " ".join(query[:8])
        hit_ids = [i for i, _ in mine]
        t = time.perf_counter()
        ours.holding(names, hit_ids)
        times["ours_holding"].append(time.perf_counter() - t)
        t = time.perf_counter()
        held = theirs.get_scores(bm25_tokens(names)) > 0
        _ = {d for d in hit_ids if held[row_of[d]]}
        times["bm25s_holding"].append(time.perf_counter() - t)
    # merged: groups of passages (by page for a chunked store, else by title) scored as one text.
    groups: dict[str, list[str]] = defaultdict(list)
    for doc_id, text in texts:
        groups[doc_id.split("#")[0] if "#" in doc_id else text.split(" ")[0]].append(doc_id)
    t = time.perf_counter()
    ours.merged(groups)
    ours_merged = time.perf_counter() - t
    t = time.perf_counter()
    joined = [[tok for d in members for tok in tokens[row_of[d]]] for members in groups.values()]
    merged = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
    merged.index(joined, show_progress=False)
    theirs_merged = time.perf_counter() - t
    # load: an index read back from what a store keeps (ours: term counts; bm25s: its save files).
    counts = ours._term_counts()
    t = time.perf_counter()
    BM25Index.from_term_counts(ids, ours._vocab, counts, ours._lengths, ours.metadata)
    ours_load = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as saved:
        theirs.save(saved)
        t = time.perf_counter()
        bm25s.BM25.load(saved)
        theirs_load = time.perf_counter() - t
    return {
        "set": name,
        "passages": len(ids),
        "queries": len(questions),
        "tokenise_s": round(tokenise_s, 2),
        "ours_build_s": ours_build,
        "bm25s_build_s": round(theirs_build, 3),
        "ours_load_ms": round(1000 * ours_load, 2),
        "bm25s_load_ms": round(1000 * theirs_load, 2),
        "ours_passage_ms": _ms(times["ours_passage"]),
        "bm25s_passage_ms": _ms(times["bm25s_passage"]),
        "same_top10": round(same_top10 / max(1, len(questions)), 3),
        "max_score_gap": float(f"{max_gap:.3g}"),
        "ours_holding_ms": _ms(times["ours_holding"]),
        "bm25s_holding_ms": _ms(times["bm25s_holding"]),
        "groups": len(groups),
        "ours_merged_ms": round(1000 * ours_merged, 2),
        "bm25s_merged_ms": round(1000 * theirs_merged, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/multihop_bm25.py", description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="directory of <set>/corpus.jsonl + queries.jsonl")
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--store", action="append", default=[], help="SET=STORE_DIR: the set's passages from a store")
    parser.add_argument("--out", type=Path, default=RESULTS / "multihop_bm25.json")
    args = parser.parse_args()
    stores = dict(s.split("=", 1) for s in args.store)
    rows = []
    for name in args.sets.split(","):
        texts, questions = _corpus(args.data / name)
        index = None
        if name in stores:
            texts, index = asyncio.run(_store_passages(stores[name]))
        rows.append(measure(name, texts, questions, index))
        print(json.dumps(rows[-1]), flush=True)
    parameters = {"k1": 1.2, "b": 0.75, "idf": "lucene", "bm25s": bm25s.__version__, "stores": stores}
    write_results(args.out, "multihop_bm25", parameters, rows)


if __name__ == "__main__":
    main()
