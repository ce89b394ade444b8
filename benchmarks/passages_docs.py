"""Passage results on a documentation store: recall by page, answers in the passages, hub slots.

Usage::

    python benchmarks/passages_docs.py --store DIR --queries queries.jsonl \\
        [--pipelines bm25,minimal,hybrid,multihop] [--caps 1,2,3] [--json OUT]

``DIR`` is a store directory filled by ``graphfuse index`` or ``graphfuse eval --store``;
``queries.jsonl`` has ``{"id", "question", "gold_ids", "answer"?}`` a line, gold ids being page
ids. For every pipeline and per-document cap it reports, over the first k result slots (each
slot scored as its page, :attr:`graphfuse.Result.document_id`): Recall@2 and @5; how often the
answer string is in the text of the top-5 passages (``answer@5``); the tokens of the top 5 and
of the largest single result; and the top-5 slots held by pages that are no question's gold page
(``never_gold@5``), with the pages holding most of them (hubs crowding answers out).
Nothing here asserts: it prints and writes numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _queries(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    from graphfuse.evaluation import answer_in_text, recall_at_k
    from graphfuse.indexing import RegexTokenizer
    from graphfuse.stores import aopen_store

    queries = _queries(args.queries)
    gold_pages = {g for q in queries for g in q["gold_ids"]}
    caps = [int(c) for c in args.caps.split(",")]
    tok = RegexTokenizer()
    out: dict[str, Any] = {"store": args.store, "queries": args.queries, "n_queries": len(queries), "runs": {}}
    store = await aopen_store(args.store, mode="ro")
    try:
        for name in args.pipelines.split(","):
            pipeline = await store.apipeline(name)
            if args.lexical is not None and pipeline.passages is not None:
                from graphfuse import Passages

                vectors = (store.vectors, store.embedder) if name != "bm25" else (None, None)
                pipeline = pipeline.with_passages(Passages(store.graph, *vectors, lexical=args.lexical))
            for cap in caps:
                r2 = r5 = answers = 0.0
                tokens5: list[int] = []
                largest = 0
                hubs: Counter[str] = Counter()
                answered = 0
                for q in queries:
                    kwargs: dict[str, Any] = {"max_per_document": cap}
                    if args.granularity:
                        kwargs["granularity"] = args.granularity
                    results = await pipeline.aretrieve(q["question"], top_k=10, **kwargs)
                    pages = [r.document_id for r in results]
                    r2 += recall_at_k(pages, q["gold_ids"], 2)
                    r5 += recall_at_k(pages, q["gold_ids"], 5)
                    texts = [r.document.content or "" for r in results]
                    sizes = [len(tok.spans(t)) for t in texts]
                    tokens5.append(sum(sizes[:5]))
                    largest = max([largest, *sizes])
                    hubs.update(p for p in pages[:5] if p not in gold_pages)
                    if q.get("answer"):
                        answered += 1
                        answers += answer_in_text(q["answer"], "\n\n".join(texts[:5]))
                n = len(queries)
                key = f"{name}/cap{cap}"
                out["runs"][key] = {
                    "recall@2": round(r2 / n, 4),
                    "recall@5": round(r5 / n, 4),
                    "answer@5": round(answers / answered, 4) if answered else None,
                    "tokens@5": round(sum(tokens5) / n, 1),
                    "largest_result_tokens": largest,
                    "never_gold@5": sum(hubs.values()),
                    "never_gold_pages": dict(hubs.most_common(5)),
                    "never_gold_by_page": dict(hubs),
                }
                row = out["runs"][key]
                print(
                    f"{key:22s} R@2 {row['recall@2']:.3f} R@5 {row['recall@5']:.3f} answer@5 {row['answer@5']} "
                    f"tok@5 {row['tokens@5']:.0f} largest {largest} never-gold@5 {row['never_gold@5']} "
                    f"{row['never_gold_pages']}",
                    flush=True,
                )
    finally:
        await store.aclose()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--pipelines", default="bm25,minimal,hybrid,multihop")
    parser.add_argument("--caps", default="1,2,3")
    parser.add_argument("--granularity", default=None)
    parser.add_argument("--lexical", type=float, default=None, help="Passages(lexical=...) instead of the default")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    result = asyncio.run(_run(args))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
