"""What a context costs against retrieval alone, on stores of long documents.

For each ``--store DIR`` (indexed beforehand, e.g. ``graphfuse index docs/ --store DIR``) and the
questions of ``--questions FILE`` (one per line, or JSONL with a ``question`` field), in one
process, warm (the model loaded, one question asked first):

- ``retrieve`` and ``context`` (``graphfuse.context.aretrieve_context``, ``--budget`` tokens, each format): ms per
  question, median over the questions, after ``--repeats`` rounds (a later round finds the
  sentence vectors of an earlier one in the embedder's memo: ``first round`` is reported apart);
- the ``standard`` preset (seven stages, bi-encoder rerank) against ``multihop``: p50 and p95 ms,
  of the first round (cold: nothing of the store in the embedder's memo) and of the last;
- with ``--cli``: ``graphfuse query`` and ``graphfuse context --budget`` as processes (median of
  ``--cli-runs``, one warm-up run each, first question).

Reports only; writes ``benchmarks/results/context_cost.json`` (or ``--out``).

    python benchmarks/context_cost.py --store /tmp/fastapi-store --questions /tmp/fastapi-q.txt --cli
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, write_results

from graphfuse.context import aretrieve_context
from graphfuse.stores import aopen_store


def _questions(path: Path, limit: int) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        out.append(str(json.loads(line)["question"]) if line.startswith("{") else line)
    return out[:limit]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 1)


async def _in_process(store_dir: Path, questions: list[str], budget: int, repeats: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    async with await aopen_store(store_dir) as store:
        preset = store.default_preset
        pipeline = await store.apipeline(preset)
        await pipeline.aretrieve("warm up", 10)
        await aretrieve_context(pipeline, "warm up the context assembly", budget=budget, format="evidence")
        timings: dict[str, list[list[float]]] = {"retrieve": [], "passages": [], "evidence": [], "graph": []}
        for _ in range(repeats):
            per: dict[str, list[float]] = {k: [] for k in timings}
            for q in questions:
                started = time.perf_counter()
                await pipeline.aretrieve(q, 10)
                per["retrieve"].append((time.perf_counter() - started) * 1000)
                for fmt in ("passages", "evidence", "graph"):
                    started = time.perf_counter()
                    await aretrieve_context(pipeline, q, budget=budget, format=fmt)
                    per[fmt].append((time.perf_counter() - started) * 1000)
            for k, v in per.items():
                timings[k].append(v)
        base = statistics.median(timings["retrieve"][-1])
        for k, rounds in timings.items():
            rows.append(
                {
                    "store": store_dir.name,
                    "what": k if k == "retrieve" else f"context {k} (budget {budget})",
                    "preset": preset,
                    "first_round_p50_ms": round(statistics.median(rounds[0]), 1),
                    "last_round_p50_ms": round(statistics.median(rounds[-1]), 1),
                    "last_round_p95_ms": _pct(rounds[-1], 0.95),
                    "x_retrieve": round(statistics.median(rounds[-1]) / base, 2),
                }
            )
        for name in ("multihop", "standard"):
            p = await store.apipeline(name)
            await p.aretrieve("warm up", 10)
            samples = []
            for _ in range(repeats):
                for q in questions:
                    started = time.perf_counter()
                    await p.aretrieve(q, 10)
                    samples.append((time.perf_counter() - started) * 1000)
            rows.append(
                {
                    "store": store_dir.name,
                    "what": f"retrieve, preset {name}",
                    "preset": name,
                    "first_round_p50_ms": round(statistics.median(samples[: len(questions)]), 1),
                    "first_round_p95_ms": _pct(samples[: len(questions)], 0.95),
                    "last_round_p50_ms": _pct(samples[-len(questions) :], 0.5),
                    "last_round_p95_ms": _pct(samples[-len(questions) :], 0.95),
                    "all_p95_ms": _pct(samples, 0.95),
                }
            )
    return rows


def _cli(store_dir: Path, question: str, budget: int, runs: int) -> list[dict[str, Any]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    base = [sys.executable, "-m", "graphfuse.cli"]
    commands = {
        "graphfuse query": [*base, "query", question, "--store", str(store_dir)],
        f"graphfuse context --budget {budget}": [
            *base,
            "context",
            question,
            "--store",
            str(store_dir),
            "--budget",
            str(budget),
        ],
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    for cmd in commands.values():  # one warm-up run each (OS cache, model files)
        subprocess.run(cmd, env=env, capture_output=True, check=True)
    for _ in range(runs):  # alternating, so both see the same load
        for k, cmd in commands.items():
            started = time.perf_counter()
            subprocess.run(cmd, env=env, capture_output=True, check=True)
            times[k].append(time.perf_counter() - started)
    query = statistics.median(times["graphfuse query"])
    return [
        {
            "store": store_dir.name,
            "what": k,
            "median_s": round(statistics.median(v), 2),
            "runs_s": [round(x, 2) for x in v],
            "x_query": round(statistics.median(v) / query, 2),
        }
        for k, v in times.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/context_cost.py", description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, action="append", required=True, help="an indexed store (repeatable)")
    parser.add_argument("--questions", type=Path, action="append", required=True, help="one per --store")
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--limit", type=int, default=10, help="questions per store")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cli", action="store_true", help="also time the CLI commands as processes")
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "context_cost.json")
    args = parser.parse_args()
    if len(args.store) != len(args.questions):
        parser.error("give one --questions per --store")
    rows: list[dict[str, Any]] = []
    for store_dir, qfile in zip(args.store, args.questions, strict=True):
        questions = _questions(qfile, args.limit)
        rows += asyncio.run(_in_process(store_dir, questions, args.budget, args.repeats))
        if args.cli:
            rows += _cli(store_dir, questions[0], args.budget, args.cli_runs)
    parameters = {
        "stores": [str(s) for s in args.store],
        "budget": args.budget,
        "questions_per_store": args.limit,
        "repeats": args.repeats,
        "cli_runs": args.cli_runs if args.cli else 0,
    }
    write_results(args.out, "context_cost", parameters, rows)


if __name__ == "__main__":
    main()
