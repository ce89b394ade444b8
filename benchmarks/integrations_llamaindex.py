"""Overhead of GraphFuse's LlamaIndex postprocessor chain vs LlamaIndex's TimeWeightedPostprocessor.

Same 50 nodes, same run: each postprocessor alone and our chain (temporal + PageRank + access +
weighted fusion, sync and async paths) against ``TimeWeightedPostprocessor``. The synchronous
variants are timed round-robin (one call of each per round, order rotated), so load from other
processes on a shared machine hits them alike; the load average is recorded. Also
``ContextPostprocessor`` packing 50 passages (~80 tokens each) into a 4000-token context, beside
the core's ``build_context`` on the same passages as results (the adapter's own cost is the
difference). Also the floor of copy-on-write: a postprocessor that only copies each node with one
more signal, and four such steps (three copies, then new ``NodeWithScore`` objects, as fusion makes).
Reports the p50 per call in milliseconds and the ratios; writes
``benchmarks/results/integrations_llamaindex.json``. Reports only.

Run: ``python benchmarks/integrations_llamaindex.py [--repeat 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from llama_index.core.postprocessor import TimeWeightedPostprocessor
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    ContextPostprocessor,
    PageRankPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse.nodes import SIGNALS_KEY

from graphfuse import Document, Relation, Result
from graphfuse.context import build_context, get_token_counter
from graphfuse.stores import InMemoryGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
RESULTS = Path(__file__).resolve().parent / "results" / "integrations_llamaindex.json"


class CopyOnly(BaseNodePostprocessor):
    """The floor of any copy-on-write postprocessor: a copy of each node carrying one more signal, nothing else."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        out = []
        for n in nodes:
            signals = {**n.node.metadata.get(SIGNALS_KEY, {}), "copy": 0.5}
            node = n.node.model_copy(update={"metadata": {**n.node.metadata, SIGNALS_KEY: signals}})
            out.append(NodeWithScore(node=node, score=n.score))
        return out


class Rewrap(BaseNodePostprocessor):
    """The floor of a fusion step: new ``NodeWithScore`` objects (the nodes reused), sorted."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return sorted((NodeWithScore(node=n.node, score=n.score) for n in nodes), key=lambda n: -(n.score or 0.0))


def make_nodes(n: int, rng: random.Random) -> list[NodeWithScore]:
    out = []
    for i in range(n):
        created = NOW - timedelta(hours=rng.randint(0, 24 * 365))
        meta = {
            "created_at": created.isoformat(),
            "__last_accessed__": created.timestamp(),
            "access_count": rng.randint(0, 2000),
        }
        out.append(NodeWithScore(node=TextNode(id_=f"n{i}", text=f"passage {i}", metadata=meta), score=rng.random()))
    return out


QUERY = "Which station did the engineer who rebuilt the harbour crane work at?"
WORDS = [
    "harbour",
    "crane",
    "engineer",
    "station",
    "rebuilt",
    "river",
    "turbine",
    "council",
    "flood",
    "bridge",
    "tower",
    "north",
]


def make_passages(n: int, rng: random.Random) -> list[NodeWithScore]:
    """``n`` passages of five sentences (~80 tokens) each, best first."""
    out = []
    for i in range(n):
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + f" in year {1900 + i}." for _ in range(5)
        ]
        node = TextNode(id_=f"p{i}", text=" ".join(sentences), metadata={"title": f"Passage {i}"})
        out.append(NodeWithScore(node=node, score=1.0 - i / (2 * n)))
    return out


async def make_graph(n: int, rng: random.Random) -> InMemoryGraphStore:
    store = InMemoryGraphStore()
    await store.store_documents([Document(f"n{i}", f"passage {i}") for i in range(n)])
    pairs = {tuple(sorted(rng.sample(range(n), 2))) for _ in range(3 * n)}
    await store.create_relations([Relation(f"n{a}", f"n{b}") for a, b in pairs])
    await store.pagerank()  # warm the store's PageRank cache, as a long-running service would have
    return store


def p50_ms(fn: Callable[[], Any], repeat: int) -> float:
    for _ in range(5):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def p50_ms_round_robin(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """p50 of each function in ms, timed round-robin (one call of each per round, order rotated)."""
    names = list(fns)
    for _ in range(5):
        for name in names:
            fns[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(repeat):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            fn = fns[name]
            started = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


async def p50_ms_async(fn: Callable[[], Any], repeat: int) -> float:
    for _ in range(5):
        await fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    nodes = make_nodes(args.nodes, rng)
    graph = asyncio.run(make_graph(args.nodes, rng))
    chain = [
        TemporalDecayPostprocessor(clock=lambda: NOW),
        PageRankPostprocessor(graph),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.2, "pagerank": 0.15, "access": 0.15}),
    ]
    baseline = TimeWeightedPostprocessor(
        time_decay=0.99, top_k=args.nodes, now=NOW.timestamp(), time_access_refresh=False
    )

    def ours_sync_upto(posts: list[Any], inp: list[NodeWithScore]) -> list[NodeWithScore]:
        for post in posts:
            inp = post.postprocess_nodes(inp)
        return inp

    def ours_sync() -> list[NodeWithScore]:
        out = nodes
        for post in chain:
            out = post.postprocess_nodes(out)
        return out

    async def ours_async() -> list[NodeWithScore]:
        out = nodes
        for post in chain:
            out = await post.apostprocess_nodes(out)
        return out

    load_before = os.getloadavg()
    # Each postprocessor alone on the same 50 nodes (fusion on the chain's output, which carries signals).
    fused_input = ours_sync_upto(chain[:-1], nodes)
    timed: dict[str, Callable[[], Any]] = {"TimeWeightedPostprocessor": lambda: baseline.postprocess_nodes(nodes)}
    for post in chain:
        inp = fused_input if post is chain[-1] else nodes
        timed[type(post).__name__] = lambda post=post, inp=inp: post.postprocess_nodes(inp)
    timed["chain"] = ours_sync
    copy_only, rewrap = CopyOnly(), Rewrap()
    floor_chain = [copy_only, copy_only, copy_only, rewrap]
    timed["copy_only"] = lambda: copy_only.postprocess_nodes(nodes)
    timed["copy_only_chain"] = lambda: ours_sync_upto(floor_chain, nodes)
    p50s = p50_ms_round_robin(timed, args.repeat)
    theirs = p50s.pop("TimeWeightedPostprocessor")
    ours = p50s.pop("chain")
    floor = {"copy_only": p50s.pop("copy_only"), "copy_only_chain": p50s.pop("copy_only_chain")}
    each = p50s
    ours_a = asyncio.run(p50_ms_async(ours_async, args.repeat))
    # Context packing: the postprocessor vs the core's build_context on the same passages.
    passages = make_passages(args.nodes, rng)
    as_results = [
        Result(Document(p.node.node_id, p.node.get_content(), dict(p.node.metadata)), p.score or 0.0, {})
        for p in passages
    ]
    counter = get_token_counter()
    context_ms: dict[str, dict[str, float]] = {}
    for fmt in ("passages", "evidence"):
        packer = ContextPostprocessor(budget=4000, format=fmt, counter=counter)
        context_ms[fmt] = {
            "context_postprocessor": round(
                p50_ms(lambda packer=packer: packer.postprocess_nodes(passages, query_str=QUERY), args.repeat), 4
            ),
            "core_build_context": round(
                p50_ms(
                    lambda fmt=fmt: build_context(QUERY, as_results, budget=4000, format=fmt, counter=counter),
                    args.repeat,
                ),
                4,
            ),
        }
    packed = ContextPostprocessor(budget=4000, counter=counter).context(passages, QUERY)
    result = {
        "benchmark": "integrations_llamaindex",
        "nodes": args.nodes,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "load_average_1_5_15": [round(x, 2) for x in load_before],
        "p50_ms": {
            "graphfuse_chain_sync": round(ours, 4),
            "graphfuse_chain_async": round(ours_a, 4),
            "llamaindex_time_weighted": round(theirs, 4),
        },
        "p50_ms_each_postprocessor": {k: round(v, 4) for k, v in each.items()},
        "ratio_each_vs_time_weighted": {k: round(v / theirs, 2) for k, v in each.items()},
        "ratio_sync_vs_time_weighted": round(ours / theirs, 2),
        # What copy-on-write alone costs: one node copy per node (three steps) and a re-wrap (fusion).
        "p50_ms_copy_on_write_floor": {k: round(v, 4) for k, v in floor.items()},
        "ratio_copy_on_write_floor_vs_time_weighted": {k: round(v / theirs, 2) for k, v in floor.items()},
        "ratio_async_vs_time_weighted": round(ours_a / theirs, 2),
        "context_4000_tokens_from_passages": {
            "counter": counter.name,
            "context_tokens": packed.tokens,
            "sources": len(packed.sources),
            "p50_ms": context_ms,
        },
        "note": "our chain computes four signals (temporal, PageRank from the graph store, access, fusion); "
        "TimeWeightedPostprocessor computes one recency term",
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    for name, ratio in result["ratio_each_vs_time_weighted"].items():
        print(f"ratio ({name} / TimeWeightedPostprocessor): {ratio}x")
    print(f"ratio (sync chain / TimeWeightedPostprocessor): {result['ratio_sync_vs_time_weighted']}x")
    print(f"ratio (async chain / TimeWeightedPostprocessor): {result['ratio_async_vs_time_weighted']}x")
    for name, ratio in result["ratio_copy_on_write_floor_vs_time_weighted"].items():
        print(f"ratio ({name}, the copy-on-write floor / TimeWeightedPostprocessor): {ratio}x")
    for fmt, ms in context_ms.items():
        print(
            f"ContextPostprocessor {fmt}: {ms['context_postprocessor']} ms "
            f"(core build_context {ms['core_build_context']} ms)"
        )


if __name__ == "__main__":
    main()
