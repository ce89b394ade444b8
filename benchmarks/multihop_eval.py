"""Multi-hop retrieval quality and latency on the benchmark sets (dev halves), every pipeline.

Usage (from the project root)::

    python benchmarks/multihop_eval.py ../shared/data [--sets 2wikimultihopqa,musique,hotpotqa]
        [--pipelines vector,bm25,hybrid,standard,multihop,llamaindex-fusion] [--stores DIR] [--embedder local]
        [--max-tokens N]

For each set it runs what ``graphfuse eval --corpus <set>/corpus.jsonl --queries <set>/queries.jsonl
--store <stores>/<set> --max-tokens N`` runs (the store directories and their embedding caches are reused, so a
second run embeds nothing) and writes ``benchmarks/results/multihop/<set>.json`` and
``<set>/report.md`` + ``recall.png``. It reports numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from graphfuse.defaults import CHUNK_TOKENS
from graphfuse.evaluation import evaluate_files, markdown_table, write_report

RESULTS = Path(__file__).parent / "results" / "multihop"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="directory holding <set>/corpus.jsonl and <set>/queries.jsonl")
    parser.add_argument("--sets", default="2wikimultihopqa,musique,hotpotqa")
    parser.add_argument("--pipelines", default="vector,bm25,hybrid,standard,multihop,llamaindex-fusion")
    parser.add_argument("--stores", default=".graphfuse-bench", help="parent directory of the per-set stores")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--max-tokens", type=int, default=CHUNK_TOKENS, help="chunk size (default: eval's, 256)")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in args.sets.split(","):
        root = Path(args.data) / name
        started = time.perf_counter()
        report = evaluate_files(
            root / "corpus.jsonl",
            root / "queries.jsonl",
            args.pipelines.split(","),
            store_dir=Path(args.stores) / name,
            embedder_name=args.embedder,
            max_tokens=args.max_tokens,
        )
        data = report.as_json()
        data["set"] = name
        data["embedder"] = args.embedder
        data["max_tokens"] = args.max_tokens
        data["seconds"] = round(time.perf_counter() - started, 1)
        (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        write_report(report, RESULTS / name, title=f"{name} (dev, {args.embedder} embedder)")
        print(f"## {name}\n\n{markdown_table(report)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
