"""Indexing throughput with the plain-text entity graph, embedding excluded.

Usage: ``python benchmarks/textgraph_indexing.py CORPUS.jsonl [CORPUS.jsonl ...] [--out FILE]``.
Each corpus is indexed (titles stripped, as a title-less corpus) into the in-memory graph store
and local vector store with ``TextEntityExtractor`` and ``entity_graph=True``; the embedder returns
a constant 8-dimensional vector, so the time is extraction, graph building and store writes. Also
reports the extraction alone and the graph's size. Reports; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, write_results

from graphfuse.evaluation import load_corpus, strip_titles
from graphfuse.indexing import ENTITY_PREFIX, Indexer, TextEntityExtractor, TokenChunker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


class _ConstantEmbedder:
    dimension = 8

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] * 8 for _ in texts]

    async def embed_query(self, text: str) -> list[float]:
        return [1.0] * 8


async def measure(path: Path) -> dict[str, object]:
    corpus = strip_titles(load_corpus(path))
    extractor = TextEntityExtractor()
    started = time.perf_counter()
    for r in corpus:
        extractor.extract(r.text)
    extraction = time.perf_counter() - started
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    indexer = Indexer(
        graph,
        vectors,
        _ConstantEmbedder(),
        chunker=TokenChunker(max_tokens=512, overlap=32),
        extractors=[extractor],
        entity_graph=True,
        batch_size=256,
    )
    started = time.perf_counter()
    report = await indexer.aindex(corpus)
    elapsed = time.perf_counter() - started
    entities = len([d async for d in graph.iter_documents() if d.id.startswith(ENTITY_PREFIX)])
    return {
        "corpus": path.parent.name,
        "passages": len(corpus),
        "extract_per_s": round(len(corpus) / extraction),
        "index_s": round(elapsed, 2),
        "index_per_s": round(len(corpus) / elapsed),
        "entities": entities,
        "relations": report.relations,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/textgraph_indexing.py", description=__doc__)
    parser.add_argument("corpora", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=RESULTS / "textgraph_indexing.json")
    args = parser.parse_args()
    rows = [await measure(p) for p in args.corpora]
    write_results(args.out, "textgraph_indexing", {"embedder": "constant (excluded)"}, rows)


if __name__ == "__main__":
    asyncio.run(main())
