"""CPU time of the integration chains (reports only): what integrations_overhead.py measures, in
``time.process_time`` instead of wall-clock, so that waiting for a core on a loaded machine is left out.

Same inputs as ``integrations_llamaindex.py`` (50 nodes, the four-postprocessor chain against
``TimeWeightedPostprocessor``) and ``integrations_langchain.py`` (the four-runnable chain's overhead
above the retriever against ``EnsembleRetriever``'s); the variants run interleaved, p50 per call.
Beside them, the floors under any such chain (LlamaIndex: three steps that only copy each node
with one more signal, then a re-wrap; LangChain: four runnables that return their input) and the
same LlamaIndex work as one step (one read, the three stages, one fusion, one copy per node,
through ``graphfuse.records``), and the same four postprocessors / runnables as one
``SignalChainPostprocessor`` / ``SignalChainRunnable``.
Writes ``benchmarks/results/integrations_cpu_time.json``.

Run: ``python benchmarks/integrations_cpu_time.py [--rounds 150]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import integrations_langchain as lcb  # noqa: E402
import integrations_llamaindex as lib  # noqa: E402


def cpu_p50(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    for _ in range(5):
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            started = time.process_time()
            fn()
            samples[name].append(time.process_time() - started)
    return {k: statistics.median(v) * 1000 for k, v in samples.items()}


def main() -> None:
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_core.runnables import RunnableLambda
    from langchain_graphfuse import (
        AccessPopularityRunnable,
        PageRankRunnable,
        SignalChainRunnable,
        TemporalDecayRunnable,
        WeightedFusion,
    )
    from llama_index.core.postprocessor import TimeWeightedPostprocessor
    from llama_index.postprocessor.graphfuse import (
        AccessPostprocessor,
        PageRankPostprocessor,
        SignalChainPostprocessor,
        TemporalDecayPostprocessor,
        WeightedFusionPostprocessor,
    )
    from llama_index.retrievers.graphfuse.nodes import NodeMapping, nodes_from_hits, read_nodes

    from graphfuse import Query, run_sync
    from graphfuse.records import fuse, run_stages
    from graphfuse.scoring import WeightedScorer
    from graphfuse.stages import AccessPopularity, PageRank, TemporalDecay

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--out", default=str(HERE / "results" / "integrations_cpu_time.json"))
    args = parser.parse_args()
    rng = random.Random(7)
    nodes = lib.make_nodes(50, rng)
    graph = asyncio.run(lib.make_graph(50, rng))
    chain = [
        TemporalDecayPostprocessor(clock=lambda: lib.NOW),
        PageRankPostprocessor(graph),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.2, "pagerank": 0.15, "access": 0.15}),
    ]
    combined = SignalChainPostprocessor(chain[:3], fusion=chain[3])
    baseline = TimeWeightedPostprocessor(time_decay=0.99, top_k=50, now=lib.NOW.timestamp(), time_access_refresh=False)

    def li_chain() -> Any:
        out = nodes
        for post in chain:
            out = post.postprocess_nodes(out)
        return out

    copy_only, rewrap = lib.CopyOnly(), lib.Rewrap()

    def li_floor() -> Any:
        out = nodes
        for post in (copy_only, copy_only, copy_only, rewrap):
            out = post.postprocess_nodes(out)
        return out

    mapping, query = NodeMapping(), Query("(no query)")
    stages = [
        TemporalDecay(clock=lambda: lib.NOW),
        PageRank(graph),
        AccessPopularity(),
    ]
    scorer = WeightedScorer({"semantic": 0.5, "temporal": 0.2, "pagerank": 0.15, "access": 0.15})

    def li_one_step() -> Any:
        hits = run_sync(run_stages(stages, query, read_nodes(nodes, mapping)))
        return nodes_from_hits(fuse(hits, scorer), mapping, fused=True)

    li = cpu_p50(
        {
            "time_weighted": lambda: baseline.postprocess_nodes(nodes),
            "chain": li_chain,
            "copy_on_write_floor": li_floor,
            "one_step": li_one_step,
            "signal_chain": lambda: combined.postprocess_nodes(nodes),
        },
        args.rounds,
    )
    docs, store = lcb.corpus(random.Random(7))
    a = RunnableLambda(lambda q: list(docs), name="a")
    b = RunnableLambda(lambda q: list(reversed(docs)), name="b")
    lc_chain = (
        a
        | TemporalDecayRunnable(clock=lambda: lcb.NOW)
        | PageRankRunnable(store)
        | AccessPopularityRunnable()
        | WeightedFusion({"retrieval": 0.4, "temporal": 0.2, "pagerank": 0.2, "access": 0.2})
    )
    lc_combined = a | SignalChainRunnable(
        [TemporalDecayRunnable(clock=lambda: lcb.NOW), PageRankRunnable(store), AccessPopularityRunnable()],
        fusion=WeightedFusion({"retrieval": 0.4, "temporal": 0.2, "pagerank": 0.2, "access": 0.2}),
    )
    ensemble = EnsembleRetriever(retrievers=[a, b], weights=[0.5, 0.5])
    noop = a | lcb.Noop() | lcb.Noop() | lcb.Noop() | lcb.Noop()
    lc = cpu_p50(
        {
            "baseline": lambda: a.invoke("q"),
            "chain": lambda: lc_chain.invoke("q"),
            "ensemble": lambda: ensemble.invoke("q"),
            "noop_chain": lambda: noop.invoke("q"),
            "signal_chain": lambda: lc_combined.invoke("q"),
        },
        args.rounds,
    )
    overhead = {k: lc[k] - lc["baseline"] for k in ("chain", "ensemble", "noop_chain", "signal_chain")}
    out = {
        "benchmark": "integrations_cpu_time",
        "rounds": args.rounds,
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "llamaindex_cpu_ms": {k: round(v, 4) for k, v in li.items()},
        "llamaindex_chain_ratio_vs_time_weighted": round(li["chain"] / li["time_weighted"], 2),
        "llamaindex_ratio_vs_time_weighted": {
            k: round(v / li["time_weighted"], 2) for k, v in li.items() if k != "time_weighted"
        },
        "langchain_cpu_ms": {k: round(v, 4) for k, v in lc.items()},
        "langchain_overhead_ratio_vs_ensemble": round(overhead["chain"] / overhead["ensemble"], 2),
        "langchain_overhead_ms": {k: round(v, 4) for k, v in overhead.items()},
        "langchain_noop_chain_overhead_ratio_vs_ensemble": round(overhead["noop_chain"] / overhead["ensemble"], 2),
        "langchain_signal_chain_overhead_ratio_vs_ensemble": round(overhead["signal_chain"] / overhead["ensemble"], 2),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
