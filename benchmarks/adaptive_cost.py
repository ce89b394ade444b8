"""Cost of the adaptive fusion step: AdaptiveScorer.score against WeightedScorer.score, per query.

Candidate lists shaped like the multihop preset's (``--candidates`` per query, semantic, bm25,
ppr, bridge and entity signals at random), scored ``--queries`` times, alternating the two
scorers; prints and writes (``--out``) the p50/p95 in milliseconds and the machine load.

    python benchmarks/adaptive_cost.py --out benchmarks/results/multihop/adaptive_cost.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

from graphfuse import Candidate, Document
from graphfuse.multihop import MULTIHOP_WEIGHTS
from graphfuse.scoring import AdaptiveScorer, WeightedScorer


def _candidates(rng: random.Random, n: int) -> list[Candidate]:
    out = []
    for i in range(n):
        signals = {"semantic": rng.random(), "ppr": rng.random()}
        for name, p in (("bm25", 0.5), ("bridge", 0.2), ("entity", 0.05)):
            if rng.random() < p:
                signals[name] = rng.random()
        out.append(Candidate(Document(f"d{i}"), signals))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = random.Random(7)
    lists = [_candidates(rng, args.candidates) for _ in range(50)]
    scorers = {"weighted": WeightedScorer(MULTIHOP_WEIGHTS), "adaptive": AdaptiveScorer(MULTIHOP_WEIGHTS)}
    times: dict[str, list[float]] = {name: [] for name in scorers}
    for q in range(args.queries):
        cands = lists[q % len(lists)]
        for name, scorer in scorers.items():  # alternating, so load hits both alike
            started = time.perf_counter()
            scorer.score(cands)
            times[name].append((time.perf_counter() - started) * 1000)
    result = {
        "candidates_per_query": args.candidates,
        "queries": args.queries,
        "load_1min": os.getloadavg()[0],
        **{
            name: {
                "p50_ms": statistics.median(t),
                "p95_ms": sorted(t)[int(0.95 * len(t)) - 1],
            }
            for name, t in times.items()
        },
    }
    result["adaptive_extra_p50_ms"] = result["adaptive"]["p50_ms"] - result["weighted"]["p50_ms"]
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
