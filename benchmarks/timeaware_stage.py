"""Time-aware stage latency: ``parse_time`` and ``TimeAware.run`` per question.

Usage: ``python benchmarks/timeaware_stage.py QUERIES.jsonl [QUERIES.jsonl ...] [--out FILE]``.
Each question runs through the stage with 50 dated candidates, a 10k-document timeline and a
reference time (so relative expressions are read too). Reports p50/p99/mean in milliseconds and
how many questions had a window or were ordering questions. Reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, latency_ms, write_results

from graphfuse import Candidate, Document, Query
from graphfuse.hosts import StageRunContext
from graphfuse.timeaware import TimeAware, Timeline, parse_time


async def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/timeaware_stage.py", description=__doc__)
    parser.add_argument("queries", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=RESULTS / "timeaware_stage.json")
    args = parser.parse_args()
    questions = []
    for path in args.queries:
        with path.open(encoding="utf-8") as fh:
            questions += [json.loads(line)["question"] for line in fh if line.strip()]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    timeline = Timeline((f"d{i}", start + timedelta(hours=i)) for i in range(10_000))
    candidates = [Candidate(Document(f"d{i * 97}", created_at=start + timedelta(hours=i * 97))) for i in range(50)]
    stage = TimeAware(timeline)
    reference = datetime(2026, 12, 31, tzinfo=timezone.utc)
    parse, run = [], []
    found = 0
    for q in questions:
        t = time.perf_counter()
        parsed = parse_time(q, reference)
        parse.append(time.perf_counter() - t)
        found += bool(parsed.windows or parsed.order)
        query = Query(q, options={"time": {"reference": reference}})
        t = time.perf_counter()
        await stage.run(query, candidates, StageRunContext())
        run.append(time.perf_counter() - t)
    rows = [
        {"what": "parse_time", "questions": len(questions), **latency_ms(parse)},
        {"what": "TimeAware.run (50 candidates)", "questions": len(questions), **latency_ms(run)},
    ]
    rows[0]["with_time_or_order"] = found
    write_results(args.out, "timeaware_stage", {"timeline": 10_000, "candidates": 50}, rows)


if __name__ == "__main__":
    asyncio.run(main())
