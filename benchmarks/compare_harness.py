"""Answer comparison harness: overhead per question and a full run against a local chat server.

1. Overhead: 100 questions x 3 pipelines (llm_only, basic_rag, graphrag) + judging with an
   in-process generator that answers instantly, so what is timed is the harness alone
   (prompt building, token checks, metrics, judging logic, aggregation; with and without the
   on-disk cache). Retrieval is a fixed context (retrieval has its own benchmarks).
2. End to end: the real ``openai`` SDK (graphfuse-openai's generator) against
   ``graphfuse.testing.ChatCompletionsServer`` (in its own process) answering every request
   after 50 ms, concurrency 8: 100 questions x 3 pipelines, each answer judged (600 requests).
   ``ideal_seconds`` is requests x 50 ms / 8; ``harness_cpu_seconds`` the CPU this process used.
   The machine's load average is recorded: on a shared 2-core machine it dominates.

Run: ``python benchmarks/compare_harness.py`` (writes benchmarks/results/compare_harness.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, write_results

from graphfuse.compare import (
    CompareCache,
    CompareQuestion,
    Generation,
    Judge,
    acompare_pipelines,
    basic_rag,
    graphrag,
    llm_only,
)

CONTEXT = " ".join(f"Passage {i}: the river Elbe flows through Dresden and Hamburg." for i in range(40))


class FixedContext:
    def __repr__(self) -> str:
        return "FixedContext()"

    async def acontext(self, query: str, *, budget: int, format: str = "passages", top_k: int | None = None) -> Any:
        return {"text": CONTEXT, "tokens": 480, "counter": "fixed", "sources": [], "dropped": []}


class InstantGenerator:
    model = "instant"

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation:
        user = messages[-1]["content"]
        if "Answer to grade:" in user:
            verdict = {"score": 8, "correctness": 8, "completeness": 7, "clarity": 9, "relevance": 9}
            return Generation(json.dumps({**verdict, "reasoning": "fine"}), 200, 40, "provider", 0.0)
        return Generation("Hamburg", 600, 2, "provider", 0.0)


def questions(n: int) -> list[CompareQuestion]:
    return [CompareQuestion(f"q{i}", f"Which city on the Elbe is number {i}?", ("Hamburg",)) for i in range(n)]


def pipelines() -> dict[str, Any]:
    source = FixedContext()
    return {"llm_only": llm_only(), "basic_rag": basic_rag(source), "graphrag": graphrag(source)}


async def overhead(n: int, cache_dir: Path | None) -> list[dict[str, Any]]:
    generator = InstantGenerator()
    cache = None if cache_dir is None else CompareCache(cache_dir / "cache.sqlite")
    started = time.perf_counter()
    await acompare_pipelines(questions(n), pipelines(), generator, judge=Judge(generator), concurrency=8, cache=cache)
    elapsed = time.perf_counter() - started
    row: dict[str, Any] = {
        "run": "overhead, instant generator" + (", cache (cold)" if cache else ""),
        "questions": n,
        "pipelines": 3,
        "seconds": elapsed,
        "ms_per_question": elapsed * 1000 / n,
        "load_average_1m": os.getloadavg()[0],
    }
    if cache is not None:
        started = time.perf_counter()
        await acompare_pipelines(questions(n), pipelines(), generator, judge=Judge(generator), cache=cache)
        warm = time.perf_counter() - started
        cache.close()
        return [row, {**row, "run": "overhead, everything from the cache", "seconds": warm,
                      "ms_per_question": warm * 1000 / n}]  # fmt: skip
    return [row]


# The model server runs in its own process, as a real one would: its CPU is not the harness's.
SERVER = """
import sys
from graphfuse.testing import ChatCompletionsServer
server = ChatCompletionsServer(default_answer="Hamburg", delay=float(sys.argv[1])).start()
print(server.url, flush=True)
sys.stdin.read()
"""


async def end_to_end(url: str, n: int, delay: float, concurrency: int) -> dict[str, Any]:
    from graphfuse_openai import OpenAIGenerator

    from graphfuse.testing import ChatCompletionsServer

    async with OpenAIGenerator("gpt-4o-mini", api_key=ChatCompletionsServer.api_key, base_url=url) as generator:
        # One warm-up call: the SDK's first client creation is not part of a run.
        await generator.agenerate([{"role": "user", "content": "hi"}])
        cpu, started = time.process_time(), time.perf_counter()
        report = await acompare_pipelines(
            questions(n), pipelines(), generator, judge=Judge(generator), concurrency=concurrency
        )
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    summary = report.to_dict()["pipelines"]
    requests = sum(s["answers"] + (s["judge"] or {}).get("verdicts", 0) for s in summary.values())
    return {
        "run": f"end to end, openai SDK, server {delay * 1000:.0f} ms, concurrency {concurrency}",
        "questions": n,
        "pipelines": 3,
        "requests": requests,
        "seconds": elapsed,
        "ideal_seconds": requests * delay / concurrency,
        "harness_cpu_seconds": cpu,
        "ms_per_question": elapsed * 1000 / n,
        "pass_rate": summary["basic_rag"]["judge"]["pass_rate"],
        "errors": sum(s["errors"] for s in summary.values()),
        "load_average_1m": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/compare_harness.py", description=__doc__)
    parser.add_argument("--out", type=Path, default=RESULTS / "compare_harness.json")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    rows += asyncio.run(overhead(args.questions, None))
    with tempfile.TemporaryDirectory() as tmp:
        rows += asyncio.run(overhead(args.questions, Path(tmp)))
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.delay_ms / 1000)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        rows.append(asyncio.run(end_to_end(url, args.questions, args.delay_ms / 1000, args.concurrency)))
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)
    parameters = {"questions": args.questions, "delay_ms": args.delay_ms, "concurrency": args.concurrency}
    write_results(args.out, "compare_harness", parameters, rows)


if __name__ == "__main__":
    main()
