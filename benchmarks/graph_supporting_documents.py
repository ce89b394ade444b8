"""How many documents the graph format's SUPPORTING TEXT should quote: the design's one, or three.

The GraphRAG design (spec 003) serializes a subgraph as ENTITIES / RELATIONSHIPS / SUPPORTING
TEXT "(top-1 doc, max 300 chars)"; GraphFuse's ``GraphCaps.max_documents`` is 3. This runs
``graphfuse eval``'s context measurement (answer in context, mean tokens) for the ``graph``
format once per value of ``max_documents``, on the same store and the same rankings::

    python benchmarks/graph_supporting_documents.py --set hotpotqa --store /tmp/gsd-hotpotqa \
        --embedder local --budgets 35%,50% --max-documents 1,3 \
        --json benchmarks/results/context/graph_supporting_documents_hotpotqa.json
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from graphfuse.context import GraphCaps
from graphfuse.evaluation import aevaluate_files, parse_context_budgets

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"  # ../shared/data from the repository


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    corpus = args.data / args.set / "corpus.jsonl"
    queries = args.data / args.set / "queries.jsonl"
    budgets = parse_context_budgets(args.budgets)
    out: dict[str, Any] = {"set": args.set, "budgets": args.budgets, "embedder": args.embedder, "runs": {}}
    for n in [int(x) for x in args.max_documents.split(",")]:
        report = await aevaluate_files(
            corpus,
            queries,
            ["vector", "multihop"],
            store_dir=args.store,
            embedder_name=args.embedder,
            context_budgets=budgets,
            graph_caps=GraphCaps(max_documents=n),
        )
        assert report.context is not None
        curve = report.context.curve
        out["runs"][str(n)] = {
            "budgets": report.context.budgets,
            "questions": next(iter(report.context.entries.values())).n,
            **{
                key: [dataclasses.asdict(m) for m in metrics]
                for key, metrics in curve.items()
                if key.endswith("/graph") or key.endswith("/evidence")
            },
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="hotpotqa")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--budgets", default="35%,50%")
    parser.add_argument("--max-documents", default="1,3")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    for n, run in result["runs"].items():
        for key in ("multihop/graph", "vector/graph"):
            cells = ", ".join(
                f"{b}: {m['answer_in_context']:.3f} ({m['context_tokens']:.0f})"
                for b, m in zip(run["budgets"], run.get(key, []), strict=False)
            )
            print(f"max_documents={n} {key}: {cells}")


if __name__ == "__main__":
    main()
