"""Integration overhead, side by side in one run: LlamaIndex and LangChain (reports only).

Runs ``integrations_llamaindex.py`` and ``integrations_langchain.py`` one after the other with
this interpreter and prints their ratios next to each other: each GraphFuse LlamaIndex
postprocessor and the four-postprocessor chain against ``TimeWeightedPostprocessor``, the
LangChain chain's overhead against ``EnsembleRetriever``'s. Writes
``benchmarks/results/integrations_overhead.json`` (or ``--out``).

Run: ``python benchmarks/integrations_overhead.py [--label after] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="current")
    parser.add_argument("--out", default=str(RESULTS / "integrations_overhead.json"))
    args = parser.parse_args()
    for script in ("integrations_llamaindex.py", "integrations_langchain.py"):
        subprocess.run([sys.executable, str(HERE / script)], check=True, capture_output=True, text=True)
    li = json.loads((RESULTS / "integrations_llamaindex.json").read_text(encoding="utf-8"))
    lc = json.loads((RESULTS / "integrations_langchain.json").read_text(encoding="utf-8"))
    out = {
        "benchmark": "integrations_overhead",
        "label": args.label,
        "llamaindex_ratio_vs_time_weighted": {
            **li.get("ratio_each_vs_time_weighted", {}),
            "chain_sync": li["ratio_sync_vs_time_weighted"],
            "chain_async": li["ratio_async_vs_time_weighted"],
        },
        "langchain_overhead_ratio_vs_ensemble": lc["overhead_ratio_vs_ensemble"],
        "llamaindex": li,
        "langchain": lc,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"[{args.label}] LlamaIndex, x TimeWeightedPostprocessor:")
    for name, ratio in out["llamaindex_ratio_vs_time_weighted"].items():
        print(f"  {name:32s} {ratio:6.2f}x")
    print(f"[{args.label}] LangChain, overhead x EnsembleRetriever:")
    for name, ratio in out["langchain_overhead_ratio_vs_ensemble"].items():
        print(f"  {name:32s} {ratio:6.2f}x")


if __name__ == "__main__":
    main()
