"""Context assembly speed: a 4k-token context from 50 results, and a 100-node graph neighbourhood.

Usage (from the project root)::

    python benchmarks/context_assembly.py [--repeats 200]

Times ``graphfuse.context.abuild_context`` (retrieval excluded) with the cl100k_base counter:
``passages`` and ``evidence`` over 50 synthetic results (about 120 tokens each) into a 4,000-token
budget, and ``graph`` over 10 retrieved documents whose neighbourhood in an in-memory graph store
holds 100 nodes; and ``evidence`` over 10 results scored with the local MiniLM embedder's
sentence similarity (embedding every sentence: what ``retrieve_context`` does by default).
Writes ``benchmarks/results/context_assembly.json``; asserts nothing.
"""

from __future__ import annotations

import asyncio
import random
import time

from _common import arguments, latency_ms, write_results

from graphfuse import Document, Embedder, GraphFuseError, Relation, Result
from graphfuse.context import GraphCaps, abuild_context, get_token_counter
from graphfuse.plugins import get_registry
from graphfuse.stores import InMemoryGraphStore

WORDS = "river city film director born museum painter harbour station league team album novel war".split()  # noqa: SIM905


def passage(rng: random.Random, i: int) -> Document:
    sentences = []
    for _ in range(6):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        sentences.append(" ".join(words).capitalize() + f" Entity{rng.randint(0, 99)}.")
    return Document(f"d{i}", " ".join(sentences), {"title": f"Entity{i}"})


async def main() -> None:
    args = arguments("context_assembly", __doc__.splitlines()[0], repeats=200)
    rng = random.Random(0)
    counter = get_token_counter()
    query = "Which painter was born in the harbour city of Entity3?"
    docs = [passage(rng, i) for i in range(100)]
    results = [Result(d, 1.0 - i / 100, {}) for i, d in enumerate(docs[:50])]
    store = InMemoryGraphStore()
    await store.store_documents(docs)
    relations = {(f"d{i}", f"d{rng.randrange(100)}") for i in range(100) for _ in range(3)}
    await store.create_relations([Relation(s, t, "MENTIONS", 0.5) for s, t in relations if s != t])
    rows = []
    cases = [
        ("passages, 50 results, 4000 tokens", results, 4000, "passages", None),
        ("evidence, 50 results, 4000 tokens", results, 4000, "evidence", None),
        ("graph, 100-node neighbourhood", results[:10], 4000, "graph", GraphCaps(max_entities=100, max_relations=200)),
    ]
    embedders: dict[str, Embedder] = {}
    try:
        embedders["evidence + sentence similarity (local MiniLM), 10 results, 600 tokens"] = get_registry().create(
            "embedder", "local"
        )
    except GraphFuseError as exc:  # graphfuse[local] not installed: the case is left out, and said so
        print(f"no local embedder ({exc}); the sentence-similarity case is skipped")
    for label in embedders:
        cases.append((label, results[:10], 600, "evidence", None))
    for label, rs, budget, fmt, caps in cases:
        samples = []
        ctx = None
        embedder = embedders.get(label)
        repeats = args.repeats if embedder is None else max(3, args.repeats // 20)
        # One untimed call first: loading the tokenizer or the embedding model is not assembly.
        await abuild_context(
            query, rs, budget=budget, format=fmt, counter=counter, graph_store=store, caps=caps, embedder=embedder
        )
        for _ in range(repeats):
            started = time.perf_counter()
            ctx = await abuild_context(
                query, rs, budget=budget, format=fmt, counter=counter, graph_store=store, caps=caps, embedder=embedder
            )
            samples.append(time.perf_counter() - started)
        assert ctx is not None
        rows.append({"case": label, "tokens": ctx.tokens, "sources": len(ctx.sources), **latency_ms(samples)})
    write_results(args.out, "context_assembly", {"repeats": args.repeats, "counter": counter.name}, rows)


if __name__ == "__main__":
    asyncio.run(main())
