"""GraphFuseVectorStore, LangChain's front door, against the CLI on the same folder (reports only).

Usage::

    python benchmarks/langchain_vector_store.py [--corpus DIR] [--queries queries.jsonl]
        [--embedder local|hashing] [--rounds 5] [--json OUT]

``DIR`` is a folder of markdown files (default: this repository's ``docs/``); ``queries.jsonl``
has ``{"id", "question", "gold_ids"}`` a line, gold ids being file paths relative to ``DIR``
(e.g. docs_pydantic: ``--corpus docs_pydantic/corpus --queries docs_pydantic/queries.jsonl``).
In one run:

- **indexing**: the folder loaded with LangChain's ``DirectoryLoader``/``TextLoader`` and indexed
  with ``GraphFuseVectorStore.from_documents(docs, GraphFuseEmbeddings(LocalEmbedder()), path=...)``,
  against what ``graphfuse index DIR --store S --embedder local`` does, in this process
  (``read_sources``, ``Indexer.for_records``, ``refresh_corpus_indexes``), after a warm-up of
  both on three files, ``--index-rounds`` times each, alternating which goes first (each
  loads its own model); and ``graphfuse index`` itself once, as a subprocess (process start
  and imports included). Wall-clock seconds.
- **recall**: page-level Recall@2/@5 of ``store.as_retriever(search_kwargs={"k": 5})`` on the
  LangChain store against the ``multihop`` preset on the CLI's store, read as ``graphfuse query
  --preset multihop`` reads it (``open_store(S, mode="ro")``, ``store.pipeline("multihop")``).
- **overhead**: ``as_retriever().invoke(q)`` against the preset's own ``Pipeline.retrieve`` on
  the same (LangChain-built) store, round-robin over every question for ``--rounds`` rounds
  (so load from other processes hits both alike); the ratio of total times.

Writes benchmarks/results/langchain_vector_store.json. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "langchain_vector_store.json"
K = 5
DEFAULT_QUESTIONS = [
    "How do I serve a store over HTTP with API keys?",
    "Which metadata keys does LlamaIndex keep out of the prompt?",
    "How does the multihop preset use personalized PageRank?",
    "How do I index a WhatsApp chat export?",
    "What does graphfuse check repair?",
]


def _queries(path: str | None) -> list[dict[str, Any]]:
    if path is None:
        return [{"id": f"q{i}", "question": q, "gold_ids": []} for i, q in enumerate(DEFAULT_QUESTIONS)]
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _page(doc_id: str, parent: object, folder: str) -> str:
    page = parent if isinstance(parent, str) and parent else doc_id
    return os.path.relpath(page, folder) if os.path.isabs(page) or page.startswith(folder) else page


def _recall(ranked: list[list[str]], queries: list[dict[str, Any]]) -> dict[str, float] | None:
    from graphfuse.evaluation import recall_at_k

    scored = [(r, q["gold_ids"]) for r, q in zip(ranked, queries, strict=True) if q["gold_ids"]]
    if not scored:
        return None
    return {f"recall@{k}": round(sum(recall_at_k(r, g, k) for r, g in scored) / len(scored), 4) for k in (2, K)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT / "docs"))
    parser.add_argument("--queries", default=None)
    parser.add_argument("--embedder", default="local", choices=("local", "hashing"))
    parser.add_argument("--rounds", type=int, default=5, help="search rounds over the questions")
    parser.add_argument("--index-rounds", type=int, default=2, help="timed indexings per door")
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community announces its sunset
        from langchain_community.document_loaders import DirectoryLoader, TextLoader
    from langchain_graphfuse import GraphFuseEmbeddings, GraphFuseVectorStore

    from graphfuse import run_sync
    from graphfuse.embedders import HashingEmbedder, LocalEmbedder
    from graphfuse.indexing import Indexer, IndexReport, read_sources
    from graphfuse.stores import aopen_store

    folder = str(Path(args.corpus).resolve())
    queries = _queries(args.queries)
    questions = [q["question"] for q in queries]
    tmp = Path(tempfile.mkdtemp(prefix="lc-vs-bench-"))
    load_avg = os.getloadavg()[0]

    docs = DirectoryLoader(folder, glob="**/*.md", loader_cls=TextLoader).load()

    def embeddings() -> GraphFuseEmbeddings:  # a new instance per store: each loads its model, as a user's would
        return GraphFuseEmbeddings(LocalEmbedder() if args.embedder == "local" else HashingEmbedder())

    async def index_in_process(target_dir: Path, paths: list[str]) -> IndexReport:
        # What `graphfuse index` does, in this process (no process start).
        records = list(read_sources(paths))
        async with await aopen_store(target_dir, create=True, embedder=args.embedder) as target:
            indexer = Indexer.for_records(records, target.graph, target.vectors, target.embedder)
            indexed = await indexer.aindex(records)
            await target.arefresh_corpus_indexes()
            return indexed

    def langchain_index(target_dir: Path, loaded: list[Any]) -> GraphFuseVectorStore:
        return GraphFuseVectorStore.from_documents(loaded, embeddings(), path=target_dir)

    # Warm-up on three documents through both paths (imports, torch, tokenizers), then the timed
    # runs alternate which door goes first, so neither gets a warmer machine.
    few = sorted(str(p) for p in Path(folder).rglob("*.md"))[:3]
    run_sync(index_in_process(tmp / "warm-cli", few))
    langchain_index(tmp / "warm-langchain", docs[:3]).close()
    timings: dict[str, list[float]] = {"langchain": [], "cli": []}
    store = report = None
    for n in range(args.index_rounds):
        for door in ("cli", "langchain") if n % 2 == 0 else ("langchain", "cli"):
            started = time.perf_counter()
            if door == "cli":
                report = run_sync(index_in_process(tmp / f"cli-inprocess-{n}", [folder]))
            else:
                if store is not None:
                    store.close()
                store = langchain_index(tmp / f"langchain-{n}", docs)
            timings[door].append(round(time.perf_counter() - started, 2))
    assert store is not None
    assert report is not None
    # ... and the CLI as a user runs it (a subprocess: process start and imports included).
    started = time.perf_counter()
    command = [sys.executable, "-m", "graphfuse.cli", "index", folder, "--store", str(tmp / "cli")]
    done = subprocess.run(
        [*command, "--embedder", args.embedder],
        capture_output=True,
        text=True,
        env={**os.environ, "GRAPHFUSE_LOAD_PLUGINS": ""},
    )
    cli_s = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr)

    # Recall: the LangChain retriever vs multihop on the CLI's store, read as `graphfuse query` reads it.
    retriever = store.as_retriever(search_kwargs={"k": K})
    lc_ranked = [[_page(d.id, None, folder) for d in retriever.invoke(q)] for q in questions]

    async def cli_ranked() -> list[list[str]]:
        async with await aopen_store(tmp / "cli", mode="ro") as cli:
            pipeline = await cli.apipeline("multihop")
            out = []
            for q in questions:
                results = await pipeline.aretrieve(q, top_k=K)
                out.append([_page(r.id, r.document.metadata.get("parent_id"), folder) for r in results])
            return out

    cli_pages = run_sync(cli_ranked())

    # Overhead: the same store, the retriever against the preset's own pipeline, round-robin.
    pipeline = store.pipeline()
    for q in questions[:3]:  # warm both (first-call caches, lazy imports)
        retriever.invoke(q)
        pipeline.retrieve(q, top_k=K)
    t_retriever = t_pipeline = 0.0
    for _ in range(args.rounds):
        for q in questions:
            started = time.perf_counter()
            retriever.invoke(q)
            t_retriever += time.perf_counter() - started
            started = time.perf_counter()
            pipeline.retrieve(q, top_k=K)
            t_pipeline += time.perf_counter() - started
    calls = args.rounds * len(questions)
    store.close()

    same_top = sum(a == b for a, b in zip(lc_ranked, cli_pages, strict=True))
    result = {
        "corpus": args.corpus,
        "queries": args.queries,
        "embedder": args.embedder,
        "documents": len(docs),
        "indexing_seconds": {
            "langchain_from_documents": timings["langchain"],
            "cli_steps_in_process": timings["cli"],
            "ratio_of_bests": round(min(timings["langchain"]) / min(timings["cli"]), 3),
            "cli_graphfuse_index_subprocess": round(cli_s, 2),
            "cli_report": {"documents": report.documents, "chunks": report.chunks, "relations": report.relations},
        },
        "recall": {
            "langchain_as_retriever": _recall(lc_ranked, queries),
            "cli_multihop": _recall(cli_pages, queries),
            "same_top5_pages": f"{same_top}/{len(questions)}",
        },
        "overhead": {
            "calls": calls,
            "as_retriever_invoke_ms": round(1000 * t_retriever / calls, 3),
            "pipeline_retrieve_ms": round(1000 * t_pipeline / calls, 3),
            "ratio": round(t_retriever / t_pipeline, 3),
        },
        "load_average_at_start": round(load_avg, 2),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "measured": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=2))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
