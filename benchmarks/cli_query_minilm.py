"""``graphfuse query`` wall time on a MiniLM store: the default preset (multihop) against ``--preset bm25``.

Indexes the bundled sample (``src/graphfuse/data/sample/corpus.jsonl``, 400 passages) with
``--embedder local`` (all-MiniLM-L6-v2; indexing loads torch), or reuses ``--store``, then runs
fresh ``graphfuse query`` processes in alternation, ``--repeat`` times each:

- ``bm25``: ``--preset bm25`` (no embedder);
- ``multihop``: the default preset; the query is embedded by the numpy runtime (no torch);
- ``minimal``: vector search only;
- ``multihop, torch query``: the same with the query embedded by sentence-transformers (what
  every query paid before the numpy runtime), for comparison.

``cold`` is each command's first run with a bytecode cache of its own, empty
(``PYTHONPYCACHEPREFIX``: what the first call after installing pays, compiling every module it
imports); the medians are warm runs (bytecode cached, the OS file cache warm). Also reports an in-process
query (the store opened once, ``pipeline.aretrieve`` timed) for reference.

    python benchmarks/cli_query_minilm.py [--store DIR] [--repeat 7] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, machine

SAMPLE = Path(__file__).resolve().parent.parent / "src" / "graphfuse" / "data" / "sample" / "corpus.jsonl"
QUESTION = "Who was the director of the film that won the award?"
TORCH_QUERY = (
    "import sys\n"
    "from graphfuse.embedders import LocalEmbedder\n"
    "LocalEmbedder._light_encoder = lambda self: None  # embed the query with sentence-transformers\n"
    "from graphfuse.cli import main\n"
    "sys.argv = ['graphfuse', *sys.argv[1:]]\n"
    "main()\n"
)


def run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return time.perf_counter() - start


async def in_process(store: Path, repeat: int) -> dict[str, float]:
    from graphfuse.stores import aopen_store

    async with await aopen_store(store, mode="ro") as opened:
        pipeline = await opened.apipeline("multihop")
        t = time.perf_counter()
        await pipeline.aretrieve(QUESTION, top_k=10)
        first = time.perf_counter() - t
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            await pipeline.aretrieve(QUESTION, top_k=10)
            times.append(time.perf_counter() - t)
    return {"first_query_ms": round(first * 1000, 1), "warm_query_ms_median": round(statistics.median(times) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/cli_query_minilm.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="a MiniLM store of the sample (default: index one)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "cli_query_minilm.json")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cli-query-minilm-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    try:
        store = args.store
        index_s = None
        if store is None:
            store = tmp / "store"
            t = time.perf_counter()
            index = ["index", str(SAMPLE), "--store", str(store), "--embedder", "local"]
            subprocess.run(
                [sys.executable, "-m", "graphfuse.cli", *index],
                check=True,
                stdout=subprocess.DEVNULL,
                env=env,
            )
            index_s = round(time.perf_counter() - t, 1)
        query = [sys.executable, "-m", "graphfuse.cli", "query", QUESTION, "--store", str(store), "--json"]
        commands = {
            "bm25": [*query, "--preset", "bm25"],
            "multihop": query,
            "minimal": [*query, "--preset", "minimal"],
            "multihop, torch query": [sys.executable, "-c", TORCH_QUERY, *query[3:]],
        }
        cold = {
            name: round(run(cmd, env | {"PYTHONPYCACHEPREFIX": str(tmp / f"pycache-cold-{i}")}), 3)
            for i, (name, cmd) in enumerate(commands.items())
        }
        for cmd in commands.values():
            run(cmd, env)  # fill the shared bytecode cache
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                samples[name].append(run(cmd, env))
        medians = {k: statistics.median(v) for k, v in samples.items()}
        rows = [
            {
                "case": name,
                "command": shlex.join(["graphfuse", *commands[name][3:]]).replace(str(store), "STORE")
                + (" (query embedded by sentence-transformers)" if "torch" in name else ""),
                "cold_s": cold[name],
                "warm_median_s": round(medians[name], 3),
                "warm_min_s": round(min(samples[name]), 3),
                "ratio_to_bm25": round(medians[name] / medians["bm25"], 2),
            }
            for name in commands
        ]
        payload: dict[str, Any] = {
            "benchmark": "cli_query_minilm",
            "machine": machine(),
            "parameters": {"corpus": "bundled sample (400 passages)", "embedder": "local (all-MiniLM-L6-v2)"}
            | {"repeat": args.repeat, "index_s": index_s, "question": QUESTION},
            "results": rows,
            "in_process_multihop": asyncio.run(in_process(store, args.repeat)),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
