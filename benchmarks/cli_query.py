"""A warm ``graphfuse query --preset multihop`` against a ``minimal`` one, side by side.

Indexes ``CORPUS`` (a ``.jsonl`` of ``{"id", "text", "title"?}``) into a temporary store with
``graphfuse index`` (which also writes the persisted BM25/title indexes), then runs, in
alternation, ``--repeat`` times each:

- ``minimal``: semantic search + hydrate;
- ``multihop`` warm: the BM25 index and title linker loaded from ``corpus_index.npz``;
- ``multihop`` cold: the same after deleting ``corpus_index.npz`` (the rebuild every call
  paid before the cache; the call writes the file again).

Each is a fresh ``graphfuse`` process (wall time, median). Also reports the CLI's import time
(``python -X importtime -c "import graphfuse.cli"``: total and the largest modules).

    python benchmarks/cli_query.py CORPUS [--embedder hashing] [--repeat 7] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

GRAPHFUSE = [sys.executable, "-m", "graphfuse.cli"]
QUESTION = "Who was the director of the film that won the award?"


def run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def import_times() -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import graphfuse.cli"], capture_output=True, text=True, check=True
    ).stderr
    rows = []
    for line in out.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), len(m.group(3)) // 2, m.group(4)))
    total = next((c for c, _, name in rows if name == "graphfuse.cli"), 0)
    top = sorted((r for r in rows if r[1] <= 2 and r[2] != "graphfuse.cli"), reverse=True)[:12]
    timings = [run([sys.executable, "-c", "import graphfuse.cli"]) for _ in range(3)]
    help_runs = [run([*GRAPHFUSE, "--help"]) for _ in range(3)]
    return {
        "import_graphfuse_cli_ms (importtime)": round(total / 1000, 1),
        "python_-c_import_graphfuse.cli_s (median of 3)": round(statistics.median(timings), 3),
        "graphfuse_--help_s (median of 3)": round(statistics.median(help_runs), 3),
        "largest_imports_ms": {name: round(c / 1000, 1) for c, _, name in top},
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/cli_query.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a .jsonl corpus ({id, text, title?} per line)")
    parser.add_argument("--embedder", default="hashing", help="registered embedder for the store (default hashing)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "cli_query.json")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="cli-query-"))
    store = tmp / "store"
    try:
        t = time.perf_counter()
        subprocess.run(
            [*GRAPHFUSE, "index", str(args.corpus), "--store", str(store), "--embedder", args.embedder],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        index_s = time.perf_counter() - t
        query = [*GRAPHFUSE, "query", QUESTION, "--store", str(store), "--json", "--preset"]
        cache = store / "corpus_index.npz"
        run([*query, "minimal"])  # warm the OS file cache once
        run([*query, "multihop"])
        samples: dict[str, list[float]] = {"minimal": [], "multihop (warm)": [], "multihop (cold: no cache file)": []}
        for _ in range(args.repeat):
            samples["minimal"].append(run([*query, "minimal"]))
            samples["multihop (warm)"].append(run([*query, "multihop"]))
            cache.unlink()
            samples["multihop (cold: no cache file)"].append(run([*query, "multihop"]))
        medians = {k: statistics.median(v) for k, v in samples.items()}
        rows = [
            {
                "command": f"graphfuse query --preset {k.split()[0]}",
                "case": k,
                "median_s": round(v, 3),
                "min_s": round(min(samples[k]), 3),
                "ratio_to_minimal": round(v / medians["minimal"], 3),
            }
            for k, v in medians.items()
        ]
        payload = {
            "benchmark": "cli_query",
            "machine": machine(),
            "parameters": {
                "corpus": args.corpus.name,
                "passages": sum(1 for _ in args.corpus.open(encoding="utf-8")),
                "embedder": args.embedder,
                "repeat": args.repeat,
                "index_s": round(index_s, 1),
            },
            "results": rows,
            "startup": import_times(),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
