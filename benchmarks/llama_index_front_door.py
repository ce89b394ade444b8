"""LlamaIndex's front door (VectorStoreIndex over GraphFuseVectorStore) against the CLI on one folder.

Usage::

    python benchmarks/llama_index_front_door.py DATA [--embedder local] [--repeat 3] [--embed-passages] [--json OUT]

``DATA`` is a documentation retrieval set laid out as ``docs_pydantic`` is: ``corpus/`` (the
markdown pages, gold ids are their paths relative to it) and ``queries.jsonl`` (``{"id",
"question", "gold_ids"}`` a line). Three measurements, each in one run:

- **indexing**: wall time of ``graphfuse index corpus --store A --embedder E`` and of the front
  door (``SimpleDirectoryReader(corpus, recursive=True, filename_as_id=True)`` then
  ``VectorStoreIndex.from_documents`` into ``GraphFuseVectorStore(B, embedder=E)`` with
  ``GraphFuseEmbedding`` of the same embedder), each a fresh process (imports and model load
  included in both);
- **recall by page**: R@2/R@5 of ``graphfuse query --preset multihop`` (the store's pipeline,
  as the command builds it) on A, and of ``index.as_retriever(similarity_top_k=k).retrieve(q)``
  on B, a node counted as its file (``similarity_top_k=5``: the idiom; and the first 5 distinct
  files of ``similarity_top_k=10``);
- **overhead**: on store B, ``index.as_retriever(similarity_top_k=5).retrieve(q)`` against the
  preset's own ``Pipeline.retrieve(q, 5)`` (``open_store(B).pipeline("multihop")``, the same
  embedder), timed round-robin over the questions, ``--repeat`` rounds; the ratio of the medians.

The questions whose gold pages in the first two differ are listed, with each gold page's vector
score in both. ``--embed-passages``: ``GraphFuseVectorStore(B, ..., embed_model=)`` embeds its
passages itself; ``--chunk-size N``: ``Settings.chunk_size``; ``--exclude-file-path``: the
documents' ``excluded_embed_metadata_keys`` take ``file_path``; ``--stores DIR`` keeps the
stores there and reuses them (no indexing time then); ``--repeat 0`` skips the overhead.

Writes ``benchmarks/results/llama_index_front_door[_VARIANT].json`` (or ``--json``). Reports only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RESULTS = Path(__file__).resolve().parent / "results" / "llama_index_front_door.json"


def _embedder(name: str) -> Any:
    from graphfuse.plugins import EMBEDDER, get_registry

    return get_registry().create(EMBEDDER, name)


def _front_door_index(corpus: Path, store: Path, args: argparse.Namespace) -> None:
    """What a LlamaIndex user runs (a phase of its own, in a fresh process)."""
    from llama_index.core import Settings, SimpleDirectoryReader, StorageContext, VectorStoreIndex

    if args.chunk_size is not None:  # LlamaIndex's node parser: SentenceSplitter(chunk_size=1024) by default
        Settings.chunk_size = args.chunk_size
    from llama_index.retrievers.graphfuse import GraphFuseEmbedding
    from llama_index.vector_stores.graphfuse import GraphFuseVectorStore

    embed_model = GraphFuseEmbedding(_embedder(args.embedder))
    if args.embed_passages:
        vector_store = GraphFuseVectorStore(store, embedder=args.embedder, embed_model=embed_model)
    else:
        vector_store = GraphFuseVectorStore(store, embedder=args.embedder)
    documents = SimpleDirectoryReader(str(corpus), recursive=True, filename_as_id=True).load_data()
    if args.exclude_file_path:  # LlamaIndex's own switch: keep the reader's file_path out of the embed text
        for document in documents:
            document.excluded_embed_metadata_keys.append("file_path")
    VectorStoreIndex.from_documents(
        documents, storage_context=StorageContext.from_defaults(vector_store=vector_store), embed_model=embed_model
    )
    vector_store.close()


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def _pages(ranked: list[str], k: int) -> list[str]:
    return list(dict.fromkeys(ranked))[:k]


def _recall(runs: list[tuple[list[str], list[str]]], k: int) -> float:
    from graphfuse.evaluation import recall_at_k

    return round(sum(recall_at_k(_pages(r, k), g, k) for r, g in runs) / len(runs), 4)


async def _measure(args: argparse.Namespace, cli_store: Path, li_store: Path) -> dict[str, Any]:
    from llama_index.core import VectorStoreIndex
    from llama_index.retrievers.graphfuse import GraphFuseEmbedding
    from llama_index.vector_stores.graphfuse import GraphFuseVectorStore

    from graphfuse.stores import aopen_store

    corpus = (args.data / "corpus").resolve()
    queries = [json.loads(x) for x in (args.data / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x]

    def page(path: str) -> str:
        return Path(path).resolve().relative_to(corpus).as_posix()

    # The CLI: graphfuse query --preset multihop builds this pipeline over the store it opens.
    cli = await aopen_store(cli_store, mode="ro")
    cli_pipeline = await cli.apipeline("multihop")
    cli_runs = []
    cli_semantic: list[dict[str, float]] = []  # each gold page's vector score, when in the top 5
    for q in queries:
        results = await cli_pipeline.aretrieve(q["question"], 5)
        cli_runs.append(([r.document_id for r in results], q["gold_ids"]))
        cli_semantic.append({r.document_id: round(r.signals.get("semantic", 0.0), 3) for r in results})
    await cli.aclose()

    embed_model = GraphFuseEmbedding(_embedder(args.embedder))
    store = GraphFuseVectorStore.from_path(li_store)
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    five, ten = index.as_retriever(similarity_top_k=5), index.as_retriever(similarity_top_k=10)
    li5, li10 = [], []
    li_semantic: list[dict[str, float]] = []
    for q in queries:
        found = five.retrieve(q["question"])
        li5.append(([page(n.node.metadata["file_path"]) for n in found], q["gold_ids"]))
        signals = [(page(n.node.metadata["file_path"]), n.node.metadata["graphfuse_signals"]) for n in found]
        li_semantic.append({p: round(s.get("semantic", 0.0), 3) for p, s in reversed(signals)})
        li10.append(([page(n.node.metadata["file_path"]) for n in ten.retrieve(q["question"])], q["gold_ids"]))
    nodes = len(await store.aget_nodes())
    questions = [
        {
            "id": q.get("id"),
            "gold": q["gold_ids"],
            "cli": _pages(c, 5),
            "front_door": _pages(f, 5),
            "gold_semantic": {g: [cs.get(g), fs.get(g)] for g in q["gold_ids"]},  # [CLI, front door]
        }
        for q, (c, _), (f, _), cs, fs in zip(queries, cli_runs, li5, cli_semantic, li_semantic, strict=True)
        if set(_pages(c, 2)) & set(q["gold_ids"]) != set(_pages(f, 2)) & set(q["gold_ids"])
    ]

    # Overhead on the same store: the front door against the preset's own pipeline, round-robin.
    front: list[float] = []
    preset: list[float] = []
    if args.repeat > 0:
        own = await aopen_store(li_store, mode="ro")
        pipeline = await own.apipeline("multihop")
        for q in queries[:3]:  # warm both (model, caches)
            five.retrieve(q["question"])
            await pipeline.aretrieve(q["question"], 5)
        for _ in range(args.repeat):
            for q in queries:
                t = time.perf_counter()
                pipeline.retrieve(q["question"], 5)  # sync, as the front door's retrieve is
                preset.append(time.perf_counter() - t)
                t = time.perf_counter()
                five.retrieve(q["question"])
                front.append(time.perf_counter() - t)
        await own.aclose()
    store.close()
    overhead: dict[str, Any] = {}
    if front:
        p50_front, p50_preset = statistics.median(front), statistics.median(preset)
        overhead = {
            "retrieve_p50_ms": round(p50_front * 1000, 2),
            "pipeline_retrieve_p50_ms": round(p50_preset * 1000, 2),
            "ratio_p50": round(p50_front / p50_preset, 3),
            "calls_each": len(front),
        }
    return {
        "recall_by_page": {
            "graphfuse query --preset multihop (CLI store)": {"R@2": _recall(cli_runs, 2), "R@5": _recall(cli_runs, 5)},
            "index.as_retriever(similarity_top_k=5)": {"R@2": _recall(li5, 2), "R@5": _recall(li5, 5)},
            "index.as_retriever(similarity_top_k=10), first 5 files": {
                "R@2": _recall(li10, 2),
                "R@5": _recall(li10, 5),
            },
        },
        "front_door_nodes": nodes,
        "distinct_files_in_top5_nodes_mean": round(statistics.mean(len(set(r)) for r, _ in li5), 2),
        "overhead": overhead,
        "questions_gold_in_top2_differs": questions,
    }


def _variant(args: argparse.Namespace) -> str:
    """The front door's settings as a name (its store directory under ``--stores``, its JSON file)."""
    parts = [f"chunk{args.chunk_size}" if args.chunk_size else ""]
    parts += ["embed_passages" if args.embed_passages else "", "no_file_path" if args.exclude_file_path else ""]
    return "_".join(p for p in parts if p)


def _build(cmd: list[str], store: Path, reuse: bool) -> float | None:
    """Seconds ``cmd`` took to build ``store``; ``None`` when ``reuse`` and it is already there."""
    if reuse and (store / "manifest.json").exists():
        return None
    return _timed(cmd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="a documentation set: corpus/ and queries.jsonl")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk-size", type=int, default=None, help="Settings.chunk_size (LlamaIndex: 1024)")
    parser.add_argument(
        "--embed-passages", action="store_true", help="GraphFuseVectorStore(..., embed_model=) embeds its passages"
    )
    parser.add_argument(
        "--exclude-file-path", action="store_true", help="the documents' excluded_embed_metadata_keys += file_path"
    )
    parser.add_argument(
        "--stores", type=Path, default=None, help="keep the stores here and reuse them (no indexing time then)"
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--phase", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpus = args.data / "corpus"
    if args.phase == "front-door-index":
        _front_door_index(corpus, args.store, args)
        return
    variant = _variant(args)
    out_json = args.json or RESULTS.with_name(f"llama_index_front_door{'_' + variant if variant else ''}.json")
    with tempfile.TemporaryDirectory() as tmp:
        where = args.stores or Path(tmp)
        cli_store, li_store = where / "cli", where / f"llama-index{'-' + variant if variant else ''}"
        graphfuse = str(Path(sys.executable).with_name("graphfuse"))
        reuse = args.stores is not None
        cli_cmd = [graphfuse, "index", str(corpus), "--store", str(cli_store), "--embedder", args.embedder]
        cli_seconds = _build(cli_cmd, cli_store, reuse)
        front_cmd = [sys.executable, __file__, str(args.data), "--embedder", args.embedder]
        front_cmd += ["--phase", "front-door-index"]
        front_cmd += ["--store", str(li_store)]
        front_cmd += [] if args.chunk_size is None else ["--chunk-size", str(args.chunk_size)]
        front_cmd += ["--embed-passages"] if args.embed_passages else []
        front_cmd += ["--exclude-file-path"] if args.exclude_file_path else []
        front_seconds = _build(front_cmd, li_store, reuse)
        out: dict[str, Any] = {
            "data": str(args.data),
            "embedder": args.embedder,
            "llama_index_chunk_size": args.chunk_size or 1024,
            "embed_passages": args.embed_passages,
            "exclude_file_path": args.exclude_file_path,
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg()},
            "indexing_seconds": {
                "graphfuse index": None if cli_seconds is None else round(cli_seconds, 2),
                "SimpleDirectoryReader + VectorStoreIndex.from_documents(GraphFuseVectorStore)": (
                    None if front_seconds is None else round(front_seconds, 2)
                ),
                "ratio": None if not (cli_seconds and front_seconds) else round(front_seconds / cli_seconds, 3),
            },
        }
        out.update(asyncio.run(_measure(args, cli_store, li_store)))
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in out.items() if k != "questions_gold_in_top2_differs"}, indent=2))


if __name__ == "__main__":
    main()
